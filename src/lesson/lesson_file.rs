//! The lesson contract as it is written in `lessons/<id>/lesson.toml`.
//!
//! These are the serde types only; `load.rs` turns them into a checked [`super::Lesson`].
//! Fields that get a semantic check after parsing are wrapped in `Spanned` so that an
//! error can name the line they came from.

use serde::Deserialize;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LessonFile {
    pub id: Spanned<String>,
    pub title: String,
    /// Position in the course (lessons are listed by this, then by id).
    pub order: i64,
    /// One line shown in the lesson list.
    pub summary: String,
    pub kernel: KernelSection,
    pub launch: LaunchSection,
    pub problem: ProblemSection,
    pub gate: GateSection,
    pub files: FilesSection,
    /// Figures measured on the H200 (docs/archive/measurements-log.md), shown in the chart and quoted in
    /// the text; a test checks them against the emulator.
    #[serde(default)]
    pub figures: Figures,
    #[serde(default)]
    pub learn: Vec<String>,
    #[serde(default)]
    pub hints: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelSection {
    /// Name of the `extern "C" __global__` function the harness launches.
    pub entry: Spanned<String>,
    /// Parameters in order, as C declarations: `"const float* in"`.
    pub params: Spanned<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchSection {
    /// Pinned block dimensions.
    pub block: Spanned<[u32; 3]>,
    /// Grid rule per dimension: `"ceil(n/32)"` or a fixed count like `"3"`.
    pub grid: Spanned<[String; 3]>,
    /// Dynamic shared memory bytes passed at launch.
    pub dynamic_shared_bytes: Spanned<u32>,
    /// Thread-block cluster shape (sm_90 and later): the blocks of each cluster run together
    /// and can read each other's shared memory. The grid is rounded up to whole clusters.
    #[serde(default)]
    pub cluster: Option<Spanned<[u32; 3]>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProblemSection {
    /// 1, 2 or 3: the grid is n, n x n or n x n x n floats.
    pub dims: Spanned<u32>,
    /// Weight of the centre point.
    pub centre: f32,
    /// Weight of each axis neighbour (two per dimension).
    pub neighbour: f32,
    pub verify_sizes: Spanned<Vec<u32>>,
    pub profile_size: Spanned<u32>,
    pub profile_launches: Spanned<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateSection {
    pub metric: Spanned<String>,
    /// The kernel passes when its metric over the profile run is strictly below this.
    pub below: Spanned<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilesSection {
    #[serde(default = "default_text")]
    pub text: Spanned<String>,
    pub starter: Spanned<String>,
    pub solution: Spanned<String>,
    /// The same kernels in Rust, for learners who pick Rust in the app.
    #[serde(default)]
    pub rust_starter: Option<Spanned<String>>,
    #[serde(default)]
    pub rust_solution: Option<Spanned<String>>,
    #[serde(default)]
    pub variants: Vec<VariantEntry>,
}

fn default_text() -> Spanned<String> {
    Spanned::new(0..0, "lesson.md".to_string())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantEntry {
    pub path: Spanned<String>,
    /// What the harness must conclude about this kernel.
    pub expect: Spanned<String>,
    pub note: String,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Figures {
    /// Sectors over the profile run.
    pub starter_sectors: Option<u64>,
    pub solution_sectors: Option<u64>,
    /// Median time per launch on the H200, microseconds.
    pub starter_us: Option<f64>,
    pub solution_us: Option<f64>,
}
