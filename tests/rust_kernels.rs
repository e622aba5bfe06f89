//! Rust kernels: every lesson's Rust starter and solution compile to PTX with this machine's
//! rustc and verify on the emulator, with sectors comparable to the CUDA kernels; rustc's
//! diagnostics land on the right lines; a missing toolchain is explained.

mod common;

use haloscope::compile::{CompileFailure, Severity, Target, compile_kernel, rust_toolchain};

fn sectors(lesson: &str, kernel: &str) -> (u64, String) {
    let (code, out, err) = common::haloscope(&[
        "run",
        "--lesson",
        lesson,
        "--kernel",
        kernel,
        "--backend",
        "emu",
        "--json",
        "--seed",
        "9",
    ]);
    let report: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{kernel}: {e}\n{out}\n{err}"));
    assert!(code == 0 || code == 10, "{kernel}: exit {code}: {}", report["headline"]);
    (
        report["profile"]["sectors"].as_u64().unwrap(),
        report["verdict"].as_str().unwrap().to_string(),
    )
}

#[test]
fn every_rust_kernel_verifies_and_matches_its_cuda_twin() {
    rust_toolchain().expect("this machine's rustc builds nvptx64 kernels");
    for lesson in ["stencil-1d", "stencil-2d", "stencil-3d", "stencil-3d-registers"] {
        for (kernel, verdict) in [("starter", "gate-fail"), ("solution", "pass")] {
            let (rust, rust_verdict) = sectors(lesson, &format!("kernels/{lesson}/{kernel}.rs"));
            let (cuda, _) = sectors(lesson, &format!("kernels/{lesson}/{kernel}.cu"));
            assert_eq!(rust_verdict, verdict, "{lesson} {kernel}.rs");
            let ratio = rust as f64 / cuda as f64;
            eprintln!("{lesson} {kernel}: rust {rust} cuda {cuda} ratio {ratio:.5}");
            assert!(
                (ratio - 1.0).abs() < 0.001,
                "{lesson} {kernel}: rust {rust} vs cuda {cuda}"
            );
        }
    }
}

#[test]
fn rustc_errors_land_on_the_learners_line() {
    let lesson = common::lesson("stencil-2d");
    let source = std::fs::read_to_string(common::root().join("tests/fixtures/kernels/does_not_compile.rs")).unwrap();
    let Err(CompileFailure::Errors { diagnostics, .. }) =
        compile_kernel(&source, "does_not_compile.rs", &lesson, Target::EMULATOR, None)
    else {
        panic!("expected a compile error")
    };
    let error = diagnostics
        .iter()
        .find(|d| d.severity == Severity::Error)
        .expect("an error");
    assert_eq!((error.file.as_str(), error.line), ("does_not_compile.rs", 7), "{error}");
    assert!(error.column.is_some());
}

#[test]
fn a_wrong_rust_signature_is_a_contract_error() {
    let lesson = common::lesson("stencil-2d");
    let source = std::fs::read_to_string(common::root().join("tests/fixtures/kernels/wrong_signature.rs")).unwrap();
    let Err(CompileFailure::Contract { message, .. }) =
        compile_kernel(&source, "wrong_signature.rs", &lesson, Target::EMULATOR, None)
    else {
        panic!("expected a contract error")
    };
    assert!(
        message.contains("stencil2d(in: *const f32, out: *mut f32, n: i32)"),
        "{message}"
    );
}

#[test]
fn a_missing_toolchain_says_how_to_fix_it() {
    let out = std::process::Command::new(common::binary())
        .args([
            "run",
            "--lesson",
            "stencil-2d",
            "--kernel",
            "kernels/stencil-2d/starter.rs",
            "--backend",
            "emu",
        ])
        .current_dir(common::root())
        .env("HALOSCOPE_RUSTC", "/nonexistent/rustc")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(20), "{stdout}");
    assert!(stdout.contains("rustup.rs"), "{stdout}");
}
