//! Rust kernels: every lesson's Rust starter and solution compile to PTX with this machine's
//! rustc, verify on the emulator and issue the sectors the H200 measured for them; rustc's
//! diagnostics land on the right lines; a missing toolchain is explained.

mod common;

use haloscope::compile::{CompileFailure, Severity, Target, compile_kernel, rust_toolchain};

/// `haloscope run --backend emu --json` of one kernel: the report as JSON.
fn emulate(lesson: &str, kernel: &str) -> serde_json::Value {
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
    assert_eq!(report["exit_code"], code, "{kernel}");
    report
}

#[test]
fn every_rust_kernel_gives_the_h200_figures() {
    // The H200's sectors, loads, stores and ideal sectors for each Rust kernel (call 6 in
    // docs/archive/measurements-log.md), exactly: where the emulator is known to differ,
    // docs/known-differences.md gives its value and the reason.
    rust_toolchain().expect("this machine's rustc builds nvptx64 kernels");
    let mut wrong = Vec::new();
    for h in common::h200::rust() {
        let report = emulate(h.lesson(), h.kernel);
        if report["verdict"] != h.verdict.as_str() {
            wrong.push(format!(
                "{}: verdict {} (H200 {}): {}",
                h.kernel,
                report["verdict"],
                h.verdict.as_str(),
                report["headline"]
            ));
        }
        for (field, h200) in h.fields() {
            let key = match field {
                "sectors" => "sectors",
                "loads" => "load_sectors",
                "stores" => "store_sectors",
                _ => "ideal_sectors",
            };
            let seen = report["profile"][key].as_u64();
            let expected = common::expected_emulator_figure(h.kernel, field, h200);
            if seen != Some(expected) {
                wrong.push(format!(
                    "{} {field}: emulator {seen:?}, expected {expected} (H200 {h200}; if the emulator now gives the H200's figure, remove the row from docs/known-differences.md)",
                    h.kernel
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
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
