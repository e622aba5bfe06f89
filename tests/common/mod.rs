//! Helpers shared by the integration tests.
#![allow(dead_code)]

use haloscope::lesson::{Course, Lesson};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The checkout: `$HALOSCOPE_ROOT`, else where this test was built, else the working
/// directory (test binaries carried to another machine run from the checkout there).
pub fn root() -> PathBuf {
    if let Some(root) = std::env::var_os("HALOSCOPE_ROOT") {
        return root.into();
    }
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if built.join("lessons").is_dir() {
        built
    } else {
        std::env::current_dir().unwrap()
    }
}

/// The haloscope binary: `$HALOSCOPE_BIN`, else the one cargo built for this test.
pub fn binary() -> PathBuf {
    std::env::var_os("HALOSCOPE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_haloscope")))
}

pub fn course() -> Course {
    Course::load(&root().join("lessons")).expect("course directory")
}

pub fn lesson(id: &str) -> Lesson {
    course().get(id).unwrap_or_else(|| panic!("lesson {id}")).clone()
}

/// Runs the haloscope binary from the repository root.
pub fn haloscope(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(binary())
        .args(args)
        .current_dir(root())
        .output()
        .expect("run haloscope");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Copies the stencil-2d lesson into `dir/<id>` with its kernels, so tests can break it.
pub fn copy_lesson(dir: &Path, id: &str) -> PathBuf {
    let src = root().join("lessons").join(id);
    let dst = dir.join(id);
    std::fs::create_dir_all(&dst).unwrap();
    for entry in std::fs::read_dir(&src).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dst.join(entry.file_name())).unwrap();
    }
    let kernels = root().join("kernels").join(id);
    let toml = std::fs::read_to_string(dst.join("lesson.toml")).unwrap();
    let toml = toml.replace(&format!("../../kernels/{id}/"), &format!("{}/", kernels.display()));
    std::fs::write(dst.join("lesson.toml"), toml).unwrap();
    dst
}
