//! The course inside the binary (issue 31, item 1): what an installed haloscope with no source
//! tree unpacks into its data folder must be the whole course, every lesson loading and its
//! kernels in place, and a lesson must run from it.

mod common;

use haloscope::lesson::{Course, unpack_course};
use std::process::Command;

#[test]
fn the_embedded_course_unpacks_whole_and_runs() {
    let root = tempfile::tempdir().unwrap();
    let lessons = unpack_course(root.path()).unwrap();
    let unpacked = Course::load(&lessons).unwrap();
    let source = common::course();
    assert!(unpacked.broken.is_empty(), "{:?}", unpacked.broken);
    let ids = |c: &Course| c.lessons.iter().map(|l| l.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&unpacked), ids(&source));
    for lesson in &unpacked.lessons {
        for kernel in [&lesson.starter, &lesson.solution] {
            assert!(kernel.is_file(), "{}: {} is missing", lesson.id, kernel.display());
            assert!(
                kernel.starts_with(root.path()),
                "{} is outside the unpacked course",
                kernel.display()
            );
        }
    }
    // Unpacking again keeps what is there (the marker says it is complete).
    assert_eq!(unpack_course(root.path()).unwrap(), lessons);

    let solution = root.path().join("kernels/stencil-1d/solution.cu");
    let out = Command::new(common::binary())
        .arg("run")
        .arg("--lessons")
        .arg(&lessons)
        .args(["--lesson", "stencil-1d", "--backend", "emu", "--json", "--kernel"])
        .arg(&solution)
        .current_dir(root.path())
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(report["verdict"], "pass", "{}", report["headline"]);
}
