//! Helpers shared by the integration tests.
#![allow(dead_code)]

use haloscope::lesson::{Course, Lesson};
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn course() -> Course {
    Course::load(&root().join("lessons")).expect("course directory")
}

pub fn lesson(id: &str) -> Lesson {
    course().get(id).unwrap_or_else(|| panic!("lesson {id}")).clone()
}

/// Runs the haloscope binary from the repository root.
pub fn haloscope(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_haloscope"))
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
