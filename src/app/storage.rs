//! The data directory: preferences, per-lesson drafts (autosaved on every edit, so a crash
//! or a kill loses nothing) and attempt histories. Every write is atomic (temp + rename).

use super::state::{LessonProgress, Prefs};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Storage {
    pub dir: PathBuf,
}

/// `$HALOSCOPE_DATA`, else `$XDG_DATA_HOME/haloscope`, else `~/.local/share/haloscope`.
pub fn default_data_dir() -> PathBuf {
    crate::paths::data_dir()
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

impl Storage {
    pub fn new(dir: PathBuf) -> Storage {
        Storage { dir }
    }

    /// `drafts/<lesson>.cu`, or `drafts/<lesson>.rs` for the Rust draft.
    fn draft_path(&self, lesson: &str) -> PathBuf {
        let file = if lesson.ends_with(".rs") {
            lesson.to_string()
        } else {
            format!("{lesson}.cu")
        };
        self.dir.join("drafts").join(file)
    }

    fn progress_path(&self, lesson: &str) -> PathBuf {
        self.dir.join("attempts").join(format!("{lesson}.json"))
    }

    pub fn load_draft(&self, lesson: &str) -> Option<String> {
        std::fs::read_to_string(self.draft_path(lesson)).ok()
    }

    pub fn save_draft(&self, lesson: &str, source: &str) -> std::io::Result<()> {
        write_atomic(&self.draft_path(lesson), source.as_bytes())
    }

    pub fn load_prefs(&self) -> Prefs {
        std::fs::read_to_string(self.dir.join("prefs.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    pub fn save_prefs(&self, prefs: &Prefs) -> std::io::Result<()> {
        write_atomic(
            &self.dir.join("prefs.json"),
            serde_json::to_string_pretty(prefs)?.as_bytes(),
        )
    }

    pub fn load_progress(&self, lesson: &str) -> LessonProgress {
        std::fs::read_to_string(self.progress_path(lesson))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    pub fn save_progress(&self, lesson: &str, progress: &LessonProgress) -> std::io::Result<()> {
        write_atomic(&self.progress_path(lesson), serde_json::to_string(progress)?.as_bytes())
    }

    pub fn exports_dir(&self) -> PathBuf {
        self.dir.join("exports")
    }

    pub fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        write_atomic(path, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::state::Attempt;
    use crate::report::Verdict;

    #[test]
    fn drafts_and_progress_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::new(dir.path().to_path_buf());
        assert_eq!(s.load_draft("x"), None);
        s.save_draft("x", "kernel text").unwrap();
        assert_eq!(s.load_draft("x").as_deref(), Some("kernel text"));
        let mut p = LessonProgress::default();
        p.record(Attempt {
            at: 1,
            verdict: Verdict::GateFail,
            sectors: Some(10),
            median_us: None,
            backend: "emu".into(),
            source: "a".into(),
        });
        p.record(Attempt {
            at: 2,
            verdict: Verdict::Pass,
            sectors: Some(5),
            median_us: None,
            backend: "emu".into(),
            source: "b".into(),
        });
        s.save_progress("x", &p).unwrap();
        let back = s.load_progress("x");
        assert!(back.passed);
        assert_eq!(back.best_sectors, Some(5));
        assert_eq!(back.attempts.len(), 2);
    }
}
