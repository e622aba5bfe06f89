//! What to run: the learner's kernel source and where it came from.

use std::path::{Path, PathBuf};

/// What to run.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub source: String,
    /// The file name diagnostics and line info refer to (`starter.cu`).
    pub source_name: String,
    /// Shown in the report: the path the learner gave or `<editor>`.
    pub kernel_file: String,
    pub seed: Option<u64>,
    pub nvrtc_path: Option<PathBuf>,
}

impl RunRequest {
    /// Reads a kernel file into a request; the error names the file.
    pub fn from_file(path: &Path, seed: Option<u64>, nvrtc_path: Option<PathBuf>) -> Result<RunRequest, String> {
        let source =
            std::fs::read_to_string(path).map_err(|e| format!("cannot read kernel {}: {e}", path.display()))?;
        let source_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "kernel.cu".into());
        Ok(RunRequest {
            source,
            source_name,
            kernel_file: path.display().to_string(),
            seed,
            nvrtc_path,
        })
    }
}
