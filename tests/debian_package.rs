//! The Debian package (issue 31, item 2): built by scripts/package/deb.sh (cargo-deb) from the
//! release binary this test run built, then read back with dpkg-deb: its control fields, that
//! it holds the program, the whole course, the desktop entry and the icons at the freedesktop
//! sizes, and that the program unpacked from it finds its course beside itself (no source
//! tree, no working directory help) and runs a lesson.
//!
//! Needs cargo-deb and dpkg-deb. Without them the test says so and passes, unless
//! HALOSCOPE_REQUIRE_DEB=1 (set by .ci/run, which installs cargo-deb), where it fails.
//! The full install on a clean Debian 12 is scripts/package/clean-install-test.sh (needs root).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const ICON_SIZES: [u32; 7] = [16, 32, 48, 64, 128, 256, 512];

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Builds the package into `out` and returns its path; None when the tools are missing and
/// the run does not require them.
fn build_package(out: &Path) -> Option<PathBuf> {
    let required = std::env::var("HALOSCOPE_REQUIRE_DEB").is_ok_and(|v| v == "1");
    let binary = common::binary();
    let release = common::root().join("target/release/haloscope");
    let missing = if !have("cargo-deb") {
        Some("cargo-deb (cargo install cargo-deb --locked)".to_string())
    } else if !have("dpkg-deb") {
        Some("dpkg-deb".to_string())
    } else if binary.canonicalize().ok() != release.canonicalize().ok() {
        // cargo-deb packs target/release/haloscope: only a release test run has built it.
        Some(format!(
            "a release build (this test runs {}; use cargo test --release)",
            binary.display()
        ))
    } else {
        None
    };
    if let Some(what) = missing {
        assert!(!required, "HALOSCOPE_REQUIRE_DEB=1 but this needs {what}");
        eprintln!("debian_package: skipped, needs {what}");
        return None;
    }
    let status = Command::new(common::root().join("scripts/package/deb.sh"))
        .env("NO_BUILD", "1")
        .env("OUT", out)
        .status()
        .unwrap();
    assert!(status.success(), "deb.sh failed");
    let deb = std::fs::read_dir(out)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "deb"))
        .expect("deb.sh made no .deb");
    Some(deb)
}

fn dpkg_deb(args: &[&str], deb: &Path) -> String {
    let out = Command::new("dpkg-deb").args(args).arg(deb).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{} is not a PNG", path.display());
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn the_debian_package_holds_the_app_and_runs_a_lesson_from_itself() {
    let work = tempfile::tempdir().unwrap();
    let Some(deb) = build_package(&work.path().join("out")) else {
        return;
    };

    let control = dpkg_deb(&["--field"], &deb);
    let field = |name: &str| {
        control
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("no {name} in\n{control}"))
            .to_string()
    };
    assert_eq!(field("Package"), "haloscope");
    assert_eq!(field("Architecture"), "amd64");
    let depends = field("Depends");
    // What the window needs at run time (eframe's GL and windowing) and what the first-use
    // NVRTC download needs (certificates), besides the C library cargo-deb finds itself.
    for lib in [
        "libc6",
        "libgl1",
        "libegl1",
        "libxkbcommon0",
        "libx11-6",
        "libwayland-client0",
        "ca-certificates",
    ] {
        assert!(depends.contains(lib), "Depends lacks {lib}: {depends}");
    }

    let listing = dpkg_deb(&["--contents"], &deb);
    let has = |path: &str| listing.lines().any(|l| l.ends_with(&format!(" ./{path}")));
    assert!(has("usr/bin/haloscope"), "{listing}");
    assert!(has("usr/share/applications/haloscope.desktop"));
    for lesson in common::course().lessons {
        for file in ["lesson.toml", "lesson.md"] {
            let path = format!("usr/share/haloscope/lessons/{}/{file}", lesson.id);
            assert!(has(&path), "{path} is not in the package");
        }
        for kernel in [&lesson.starter, &lesson.solution] {
            let rel = kernel.strip_prefix(common::root()).unwrap().display().to_string();
            assert!(
                has(&format!("usr/share/haloscope/{rel}")),
                "{rel} is not in the package"
            );
        }
    }

    let root = work.path().join("root");
    let out = Command::new("dpkg-deb")
        .arg("-x")
        .arg(&deb)
        .arg(&root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let desktop = std::fs::read_to_string(root.join("usr/share/applications/haloscope.desktop")).unwrap();
    for line in ["Type=Application", "Name=haloscope", "Icon=haloscope", "Terminal=false"] {
        assert!(
            desktop.lines().any(|l| l == line),
            "desktop entry lacks {line}:\n{desktop}"
        );
    }
    let exec = desktop.lines().find_map(|l| l.strip_prefix("Exec=")).expect("Exec=");
    assert_eq!(exec.split_whitespace().next(), Some("haloscope"), "{exec}");
    assert!(desktop.contains("Categories=Education;"), "{desktop}");

    for size in ICON_SIZES {
        let icon = root.join(format!("usr/share/icons/hicolor/{size}x{size}/apps/haloscope.png"));
        assert_eq!(png_size(&icon), (size, size), "{}", icon.display());
    }
    assert!(
        root.join("usr/share/icons/hicolor/scalable/apps/haloscope.svg")
            .is_file()
    );

    // The unpacked program, run from an empty folder with an empty data folder: the course
    // must come from usr/share/haloscope beside it.
    let bin = root.join("usr/bin/haloscope");
    let cwd = work.path().join("elsewhere");
    std::fs::create_dir_all(&cwd).unwrap();
    let run = |args: &[&str]| {
        Command::new(&bin)
            .args(args)
            .current_dir(&cwd)
            .env("HALOSCOPE_DATA", work.path().join("data"))
            .env("HALOSCOPE_NO_SETUP", "1")
            .output()
            .unwrap()
    };
    let lessons = run(&["lessons"]);
    let listed = String::from_utf8_lossy(&lessons.stdout);
    assert!(lessons.status.success(), "{}", String::from_utf8_lossy(&lessons.stderr));
    for lesson in common::course().lessons {
        assert!(listed.contains(&lesson.id), "{} not listed:\n{listed}", lesson.id);
    }
    // With no --kernel the lesson's own starter runs: its path says which course was read.
    let starter = run(&["run", "--lesson", "stencil-1d", "--backend", "emu", "--json"]);
    let json = report_json(&starter);
    let kernel_file = PathBuf::from(json["kernel_file"].as_str().unwrap_or_default());
    assert!(
        kernel_file.starts_with(root.join("usr/share/haloscope")),
        "the course was not read from the package: {}",
        kernel_file.display()
    );
    assert_eq!(json["verdict"], "gate-fail", "{}", json["headline"]);
    let solution = root.join("usr/share/haloscope/kernels/stencil-1d/solution.cu");
    let json = report_json(&run(&[
        "run",
        "--lesson",
        "stencil-1d",
        "--backend",
        "emu",
        "--json",
        "--kernel",
        solution.to_str().unwrap(),
    ]));
    assert_eq!(json["verdict"], "pass", "{}", json["headline"]);
}

fn report_json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)))
}
