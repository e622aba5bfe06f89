//! The course inside the binary: `lessons/` and the `kernels/` they name, so that a binary
//! installed without its source tree (`cargo install --git ...`, a package) still has its
//! lessons. Unpacked once per version into `<data>/course-<version>/`, keeping the layout (the
//! lesson files name their kernels as `../../kernels/...`).

use include_dir::{Dir, include_dir};
use std::path::{Path, PathBuf};

static LESSONS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/lessons");
static KERNELS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/kernels");

/// The unpacked course's `lessons/` folder in the data folder; `None` (with a line on stderr)
/// when it cannot be written.
pub fn unpacked_course() -> Option<PathBuf> {
    let root = crate::paths::data_dir().join(format!("course-{}", env!("CARGO_PKG_VERSION")));
    match unpack_course(&root) {
        Ok(lessons) => Some(lessons),
        Err(e) => {
            eprintln!("haloscope: cannot unpack the course into {}: {e}", root.display());
            None
        }
    }
}

/// Unpacks the course under `root` (`root/lessons`, `root/kernels`) unless a complete copy is
/// there already; returns the `lessons/` folder.
pub fn unpack_course(root: &Path) -> std::io::Result<PathBuf> {
    let lessons = root.join("lessons");
    // A complete unpacking ends with this marker; an interrupted one is done again.
    let done = root.join(".unpacked");
    if !done.is_file() {
        write_dir(&LESSONS, &lessons)?;
        write_dir(&KERNELS, &root.join("kernels"))?;
        std::fs::write(&done, env!("CARGO_PKG_VERSION"))?;
    }
    Ok(lessons)
}

fn write_dir(dir: &Dir<'_>, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for file in dir.files() {
        let name = file.path().file_name().expect("a file has a name");
        std::fs::write(to.join(name), file.contents())?;
    }
    for sub in dir.dirs() {
        let name = sub.path().file_name().expect("a folder has a name");
        write_dir(sub, &to.join(name))?;
    }
    Ok(())
}
