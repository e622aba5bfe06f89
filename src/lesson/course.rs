//! The course: every lesson directory under one `lessons/` folder.

use super::{Lesson, LessonError, load_lesson};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// All lessons found in a course directory. A broken lesson does not hide the others:
/// it is kept in `broken` with its error so the app and CLI can show it.
#[derive(Debug, Clone, Default)]
pub struct Course {
    pub dir: PathBuf,
    /// Shared: the app hands a lesson to every view and background job each frame, and the
    /// text makes a clone costly.
    pub lessons: Vec<Arc<Lesson>>,
    pub broken: Vec<LessonError>,
}

impl Course {
    pub fn load(dir: &Path) -> std::io::Result<Course> {
        let mut course = Course {
            dir: dir.to_path_buf(),
            ..Course::default()
        };
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("lesson.toml").is_file())
            .collect();
        entries.sort();
        for lesson_dir in entries {
            match load_lesson(&lesson_dir) {
                Ok(lesson) => course.lessons.push(Arc::new(lesson)),
                Err(error) => course.broken.push(error),
            }
        }
        course.lessons.sort_by(|a, b| (a.order, &a.id).cmp(&(b.order, &b.id)));
        Ok(course)
    }

    pub fn get(&self, id: &str) -> Option<&Arc<Lesson>> {
        self.lessons.iter().find(|l| l.id == id)
    }

    /// The message for an unknown id: lists what exists, and a broken lesson of that id.
    pub fn unknown_lesson_message(&self, id: &str) -> String {
        if let Some(broken) = self
            .broken
            .iter()
            .find(|e| e.file.parent().and_then(|d| d.file_name()).is_some_and(|n| n == id))
        {
            return format!("lesson `{id}` is broken: {broken}");
        }
        let known: Vec<&str> = self.lessons.iter().map(|l| l.id.as_str()).collect();
        format!(
            "no lesson `{id}` in {} (known: {})",
            self.dir.display(),
            known.join(", ")
        )
    }
}

/// Where the lessons live: `$HALOSCOPE_LESSONS`, else `./lessons`, else `lessons/` beside the
/// executable or its ancestors (an installed or `target/` build), else the source tree it was
/// built from, else the copy inside the binary, unpacked into the data folder (`cargo install`
/// from a git URL leaves no source tree to read).
pub fn default_course_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("HALOSCOPE_LESSONS") {
        return PathBuf::from(dir);
    }
    let cwd = PathBuf::from("lessons");
    if cwd.is_dir() {
        return cwd;
    }
    if let Ok(exe) = std::env::current_exe() {
        for ancestor in exe.ancestors().skip(1) {
            let candidate = ancestor.join("lessons");
            if candidate.join(".course").is_file() {
                return candidate;
            }
        }
    }
    // A package or the portable tarball: `<prefix>/bin/haloscope` beside
    // `<prefix>/share/haloscope/lessons`.
    if let Some(prefix) = std::env::current_exe()
        .ok()
        .and_then(|e| Some(e.parent()?.parent()?.to_path_buf()))
    {
        let shared = prefix.join("share/haloscope/lessons");
        if shared.join(".course").is_file() {
            return shared;
        }
    }
    let source_tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("lessons");
    if source_tree.join(".course").is_file() {
        return source_tree;
    }
    super::embedded::unpacked_course().unwrap_or(source_tree)
}
