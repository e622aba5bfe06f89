//! Which language a kernel file is written in.

use serde::{Deserialize, Serialize};

/// The language a kernel is written in, from its file name. A lesson offers kernels in
/// each language it has starters for; `compile` picks the compiler from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Cuda,
    Rust,
}

impl Language {
    /// The compiler of this language, in words (progress and reports).
    pub fn compiler(self) -> &'static str {
        match self {
            Language::Cuda => "NVRTC",
            Language::Rust => "rustc",
        }
    }

    pub fn of(source_name: &str) -> Language {
        if source_name.ends_with(".rs") {
            Language::Rust
        } else {
            Language::Cuda
        }
    }
}
