//! Lessons as data: the checked contract of one lesson, loaded from `lessons/<id>/`.

mod course;
mod embedded;
pub use embedded::{unpack_course, unpacked_course};
mod error;
mod field_path;
mod grid;
mod language;
mod lesson_file;
mod load;
mod params;
mod run_contract;

pub use course::{Course, default_course_dir};
pub use error::LessonError;
pub use grid::{GridDim, GridRule};
pub use language::Language;
pub use lesson_file::Figures;
pub use load::load_lesson;
pub use params::{Param, ParamKind};
pub use run_contract::Contract;

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The only metric gates are written against (see the metric contract in the lessons).
pub const SECTOR_METRIC: &str = "smsp__sass_sectors_mem_global.sum";

/// The computation every lesson of this course checks: an axis-aligned star stencil of
/// radius one on an n^dims grid of floats. Interior points get
/// `centre * c + neighbour * (sum of the 2*dims axis neighbours)`; a point on any face of
/// the grid is copied through unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stencil {
    pub dims: u32,
    pub centre: f32,
    pub neighbour: f32,
}

impl Stencil {
    pub fn elements(&self, n: u32) -> usize {
        (n as usize).pow(self.dims)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expectation {
    Pass,
    GateFail,
    WrongResults,
    CompileError,
    KernelFault,
}

impl Expectation {
    pub fn parse(text: &str) -> Option<Expectation> {
        Some(match text {
            "pass" => Expectation::Pass,
            "gate-fail" => Expectation::GateFail,
            "wrong-results" => Expectation::WrongResults,
            "compile-error" => Expectation::CompileError,
            "kernel-fault" => Expectation::KernelFault,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Variant {
    pub path: PathBuf,
    pub expect: Expectation,
    pub note: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Gate {
    pub metric: String,
    /// Pass when the metric over the whole profile run is strictly below this.
    pub below: u64,
}

/// One lesson, checked and ready to drive the harness.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Lesson {
    pub id: String,
    pub title: String,
    pub order: i64,
    pub summary: String,
    pub dir: PathBuf,
    /// The lesson text (Markdown).
    pub text: String,
    /// What a run needs: signature, launch, sizes, stencil. `lesson.entry` and the like reach
    /// its fields through `Deref`.
    #[serde(flatten)]
    pub contract: Contract,
    pub gate: Gate,
    pub starter: PathBuf,
    pub solution: PathBuf,
    pub rust_starter: Option<PathBuf>,
    pub rust_solution: Option<PathBuf>,
    pub variants: Vec<Variant>,
    pub figures: Figures,
    pub learn: Vec<String>,
    pub hints: Vec<String>,
}

impl std::ops::Deref for Lesson {
    type Target = Contract;
    fn deref(&self) -> &Contract {
        &self.contract
    }
}

impl std::ops::DerefMut for Lesson {
    fn deref_mut(&mut self) -> &mut Contract {
        &mut self.contract
    }
}

impl Lesson {
    /// Starter and solution for a language (Rust falls back to none when not provided).
    pub fn kernels_for(&self, language: Language) -> Option<(&PathBuf, &PathBuf)> {
        match language {
            Language::Cuda => Some((&self.starter, &self.solution)),
            Language::Rust => self.rust_starter.as_ref().zip(self.rust_solution.as_ref()),
        }
    }

    /// Starter and solution in `language`, or the CUDA C++ ones when the lesson has none in it.
    pub fn kernels_or_cuda(&self, language: Language) -> (PathBuf, PathBuf) {
        let (starter, solution) = self.kernels_for(language).unwrap_or((&self.starter, &self.solution));
        (starter.clone(), solution.clone())
    }

    /// The C signature the contract asks for, e.g. `stencil2d(const float* in, float* out, int n)`.
    pub fn signature(&self) -> String {
        let params: Vec<String> = self.params.iter().map(Param::to_string).collect();
        format!("{}({})", self.entry, params.join(", "))
    }
}
