//! Finding the submissions in a folder: kernel files directly in it (the student is the file
//! name), or one folder per student holding a `.cu` or `.rs`.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    pub student: String,
    /// The kernel file, or `None` when the student's folder holds none (the row says so).
    pub file: Option<PathBuf>,
    /// Other kernel files in the student's folder, ignored (the row says which was graded).
    pub ignored: Vec<PathBuf>,
}

fn is_kernel(path: &Path) -> bool {
    path.is_file() && matches!(path.extension().and_then(|e| e.to_str()), Some("cu" | "rs"))
}

fn sorted_entries(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
        .collect();
    entries.sort();
    Ok(entries)
}

/// Every submission under `dir`, by student name; `out` (where the table goes, perhaps
/// inside `dir`) is not a student.
pub fn find(dir: &Path, out: &Path) -> std::io::Result<Vec<Submission>> {
    let mut found = Vec::new();
    let out = std::fs::canonicalize(out).unwrap_or_else(|_| out.to_path_buf());
    for entry in sorted_entries(dir)? {
        if std::fs::canonicalize(&entry).is_ok_and(|e| e == out) {
            continue;
        }
        if is_kernel(&entry) {
            found.push(Submission {
                student: entry
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                file: Some(entry),
                ignored: Vec::new(),
            });
        } else if entry.is_dir() && !entry.join("grades.json").exists() {
            // (A folder holding grades.json is a grading table, not a student.)
            // A `.cu` is preferred to a `.rs`; the first by name otherwise.
            let mut kernels: Vec<PathBuf> = sorted_entries(&entry)?.into_iter().filter(|p| is_kernel(p)).collect();
            kernels.sort_by_key(|p| (p.extension().is_some_and(|e| e == "rs"), p.clone()));
            let student = entry
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let file = (!kernels.is_empty()).then(|| kernels.remove(0));
            found.push(Submission {
                student,
                file,
                ignored: kernels,
            });
        }
    }
    Ok(found)
}

/// What decides a submission's grade besides the run's seed: its text, the lesson's
/// contract file and the backend asked for, under this haloscope version. Equal hashes let a
/// re-run reuse the earlier row.
pub fn content_hash(source: &[u8], lesson_toml: &[u8], backend: &str) -> String {
    let mut h = Sha256::new();
    for part in [
        source,
        lesson_toml,
        backend.as_bytes(),
        env!("CARGO_PKG_VERSION").as_bytes(),
    ] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The seed of one student's run: from the grading run's seed and the student's name, so a
/// given `--seed` grades everyone the same way again and students still get different data.
pub fn student_seed(run_seed: u64, student: &str) -> u64 {
    let digest = Sha256::digest(student.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    run_seed ^ u64::from_le_bytes(first)
}
