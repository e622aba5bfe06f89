//! The start-up CPU check (src/main.rs): the binary is built for x86-64-v3, and on an older
//! CPU it must say so in one line and exit 1 instead of dying on an illegal instruction.
//! Run for real on CPUs emulated by QEMU's user mode (`qemu-user` on Debian; .ci/run
//! installs it): the binary under test is the one `cargo test` built, unchanged.
#![cfg(all(target_arch = "x86_64", target_os = "linux"))]

use std::process::Command;

fn qemu() -> &'static str {
    let found = Command::new("qemu-x86_64")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "qemu-x86_64 not found: this test runs haloscope on emulated older CPUs; install it with \
         `apt-get install qemu-user`"
    );
    "qemu-x86_64"
}

/// Runs `haloscope --version` on QEMU's model of `cpu`: (exit code, stdout, stderr).
fn version_on(cpu: &str) -> (Option<i32>, String, String) {
    let out = Command::new(qemu())
        .args(["-cpu", cpu, env!("CARGO_BIN_EXE_haloscope"), "--version"])
        .output()
        .expect("qemu-x86_64 runs");
    let stderr = String::from_utf8_lossy(&out.stderr)
        .lines()
        // QEMU's own notes about CPU features its emulator leaves out.
        .filter(|l| !l.starts_with("qemu-x86_64: warning"))
        .collect::<Vec<_>>()
        .join("\n");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
    )
}

#[test]
fn a_cpu_without_avx_or_avx2_gets_one_line_and_exit_1() {
    // Westmere: no AVX at all; Sandy Bridge: AVX but no AVX2, FMA or BMI.
    for (cpu, lacks) in [("Westmere", "AVX2 AVX FMA"), ("SandyBridge", "AVX2 FMA F16C")] {
        let (code, stdout, stderr) = version_on(cpu);
        assert_eq!(code, Some(1), "{cpu}: exit code (stderr: {stderr})");
        assert!(stdout.is_empty(), "{cpu}: nothing on stdout, got {stdout}");
        assert_eq!(stderr.lines().count(), 1, "{cpu}: one line, got {stderr}");
        assert!(stderr.contains(&format!("lacks {lacks}")), "{cpu}: {stderr}");
        assert!(
            stderr.contains("-C target-cpu=native"),
            "{cpu}: says how to build for it: {stderr}"
        );
    }
}

#[test]
fn an_x86_64_v3_cpu_starts() {
    let (code, stdout, stderr) = version_on("Haswell");
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert!(stdout.starts_with("haloscope "), "{stdout}");
    assert!(stderr.is_empty(), "{stderr}");
}
