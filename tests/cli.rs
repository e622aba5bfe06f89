//! The command line end to end: listing, running, JSON reports and exit codes.

mod common;

use common::haloscope;

#[test]
fn lessons_lists_both() {
    let (code, out, _) = haloscope(&["lessons"]);
    assert_eq!(code, 0);
    assert!(out.contains("stencil-2d") && out.contains("stencil-3d"), "{out}");
    assert!(out.contains("740,000,000"), "{out}");
}

#[test]
fn a_compile_error_exits_12_with_the_line() {
    let (code, out, _) = haloscope(&[
        "run",
        "--lesson",
        "stencil-2d",
        "--kernel",
        "tests/fixtures/kernels/does_not_compile.cu",
        "--backend",
        "emu",
    ]);
    assert_eq!(code, 12, "{out}");
    assert!(out.contains("does_not_compile.cu:"), "{out}");
    assert!(out.contains("FAIL (compile error)"), "{out}");
}

#[test]
fn a_contract_error_exits_13() {
    let (code, out, _) = haloscope(&[
        "run",
        "--lesson",
        "stencil-2d",
        "--kernel",
        "tests/fixtures/kernels/wrong_signature.cu",
        "--backend",
        "emu",
        "--json",
    ]);
    assert_eq!(code, 13, "{out}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("one JSON report");
    assert_eq!(report["verdict"], "contract-error");
    assert_eq!(report["exit_code"], 13);
}

#[test]
fn unknown_lessons_and_missing_files_are_infrastructure_errors() {
    let (code, _, err) = haloscope(&["run", "--lesson", "no-such-lesson"]);
    assert_eq!(code, 20);
    assert!(
        err.contains("no lesson `no-such-lesson`") && err.contains("stencil-2d"),
        "{err}"
    );
    let (code, _, err) = haloscope(&["run", "--lesson", "stencil-2d", "--kernel", "missing.cu"]);
    assert_eq!(code, 20);
    assert!(err.contains("missing.cu"), "{err}");
}

#[test]
fn wrong_results_exit_11_and_list_coordinates() {
    let (code, out, _) = haloscope(&[
        "run",
        "--lesson",
        "stencil-2d",
        "--kernel",
        "tests/fixtures/kernels/copy_only.cu",
        "--backend",
        "emu",
        "--json",
        "--seed",
        "5",
    ]);
    assert_eq!(code, 11, "{out}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let first = &report["sizes"][0];
    assert_eq!(first["n"], 33);
    assert_eq!(first["wrong"], 31 * 31);
    assert_eq!(first["unwritten"], 0);
    assert_eq!(first["first_mismatches"][0]["at"]["x"], 1);
    assert_eq!(first["first_mismatches"][0]["at"]["y"], 1);
}

#[test]
fn unwritten_elements_are_reported_apart() {
    let (code, out, _) = haloscope(&[
        "run",
        "--lesson",
        "stencil-2d",
        "--kernel",
        "tests/fixtures/kernels/skips_last_row.cu",
        "--backend",
        "emu",
        "--json",
    ]);
    assert_eq!(code, 11, "{out}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["sizes"][0]["unwritten"], 33);
    assert_eq!(report["sizes"][0]["wrong"], 0);
    assert!(report["sizes"][0]["first_mismatches"][0]["got"].is_null());
    assert_eq!(report["sizes"][0]["first_mismatches"][0]["at"]["y"], 32);
}

#[test]
fn the_starter_fails_the_gate_and_the_solution_passes() {
    let (code, out, _) = haloscope(&["run", "--lesson", "stencil-2d", "--backend", "emu", "--json"]);
    assert_eq!(code, 10, "{out}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["profile"]["sectors"], 1_362_688_000u64);
    let (code, out, _) = haloscope(&[
        "run",
        "--lesson",
        "stencil-2d",
        "--kernel",
        "kernels/stencil-2d/solution.cu",
        "--backend",
        "emu",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("PASS"), "{out}");
}

#[test]
fn seeds_are_fresh_unless_given() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--lesson",
            "stencil-2d",
            "--kernel",
            "tests/fixtures/kernels/wrong_name.cu",
            "--json",
        ];
        args.extend_from_slice(extra);
        let (_, out, _) = haloscope(&args);
        serde_json::from_str::<serde_json::Value>(&out).unwrap()["seed"]
            .as_u64()
            .unwrap()
    };
    assert_ne!(run(&[]), run(&[]));
    assert_eq!(run(&["--seed", "77"]), 77);
}

/// `haloscope lesson check DIR` with `env`: (exit code, stdout).
fn lesson_check(dir: &std::path::Path, env: &[(&str, &str)]) -> (i32, String) {
    let mut cmd = std::process::Command::new(common::binary());
    cmd.args(["lesson", "check"]).arg(dir).current_dir(common::root());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn lesson_check_fails_when_rustc_cannot_build_the_rust_kernels() {
    // The lesson declares Rust kernels: a machine that cannot build them cannot check it.
    let dir = common::root().join("lessons/stencil-1d");
    let (code, out) = lesson_check(&dir, &[("HALOSCOPE_RUSTC", "/nonexistent/rustc")]);
    assert_eq!(code, 1, "{out}");
    for what in ["rust solution", "rust starter"] {
        assert!(
            out.contains(&format!("{what}: cannot be checked: rustc was not found")),
            "{out}"
        );
    }
    assert!(out.contains("rustup.rs"), "{out}");
    // The CUDA kernels were still checked.
    assert!(out.contains("ok   starter.cu"), "{out}");
}

#[test]
fn lesson_check_fails_when_a_rust_kernel_does_not_compile() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = common::copy_lesson(tmp.path(), "stencil-1d");
    let toml = std::fs::read_to_string(dir.join("lesson.toml")).unwrap();
    let broken = common::root().join("tests/fixtures/kernels/does_not_compile.rs");
    let edited: String = toml
        .lines()
        .map(|l| {
            if l.starts_with("rust_solution") {
                format!("rust_solution = {:?}", broken.display().to_string())
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(edited, toml.trim_end());
    std::fs::write(dir.join("lesson.toml"), edited).unwrap();
    let (code, out) = lesson_check(&dir, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL does_not_compile.rs") && out.contains("expected Pass, got FAIL (compile error)"),
        "{out}"
    );
    assert!(out.contains("ok   starter.rs"), "{out}");
}

#[test]
fn the_gate_and_each_finding_are_said_once_and_truly() {
    let (code, out, _) = haloscope(&["run", "--lesson", "stencil-2d", "--backend", "emu"]);
    assert_eq!(code, 10, "{out}");
    assert!(
        out.contains("gate     1,362,688,000 sectors, gate: under 740,000,000 — not passed"),
        "{out}"
    );
    assert!(!out.contains("1,362,688,000 < 740,000,000"), "{out}");

    let (code, out, _) = haloscope(&[
        "run",
        "--lesson",
        "stencil-2d",
        "--kernel",
        "tests/hazards/syncwarp_tile_2d.cu",
        "--backend",
        "emu",
    ]);
    assert_eq!(code, 14, "{out}");
    let findings: Vec<&str> = out.lines().filter(|l| l.starts_with("finding")).collect();
    assert!(!findings.is_empty(), "{out}");
    assert!(findings[0].starts_with("finding  line 22: shared-memory race"), "{out}");
    for f in findings {
        // `finding  line 22: shared-memory race: ... at line 11: ...`: its own line once.
        let own = f
            .strip_prefix("finding  line ")
            .and_then(|rest| rest.split(':').next())
            .unwrap_or_else(|| panic!("{f}"));
        assert_eq!(f.matches(&format!("line {own}:")).count(), 1, "{f}");
    }
}
