//! Reads `lesson.toml` + `lesson.md` from a lesson directory and checks the contract.

use super::error::{LessonError, line_col};
use super::field_path::field_at;
use super::grid::{GridDim, GridRule};
use super::lesson_file::LessonFile;
use super::params::{Param, ParamKind};
use super::{Contract, Expectation, Gate, Lesson, SECTOR_METRIC, Stencil, Variant};
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Largest portable thread-block cluster (blocks per cluster; sm_90 allows 16 with an
/// opt-in attribute, 8 everywhere).
const MAX_CLUSTER_BLOCKS: u32 = 8;

/// Largest block the hardware launches (threads per block).
const MAX_THREADS_PER_BLOCK: u32 = 1024;
/// The harness keeps every size small enough to verify on the CPU in seconds: at most a
/// 512^3 grid (2^27 elements; its input and output are 512 MiB each).
const MAX_ELEMENTS: u64 = 1 << 27;

/// Loads and checks the lesson in `dir` (the directory holding `lesson.toml`).
pub fn load_lesson(dir: &Path) -> Result<Lesson, LessonError> {
    let file = dir.join("lesson.toml");
    let text = std::fs::read_to_string(&file).map_err(|e| LessonError {
        file: file.clone(),
        line: None,
        column: None,
        field: None,
        message: format!("cannot read: {e}"),
    })?;
    let checker = Checker {
        file: &file,
        text: &text,
        dir,
    };
    let parsed: LessonFile = toml::from_str(&text).map_err(|e| checker.toml_error(&e))?;
    checker.check(parsed)
}

struct Checker<'a> {
    file: &'a Path,
    text: &'a str,
    dir: &'a Path,
}

impl Checker<'_> {
    fn error_at(&self, field: &str, span: std::ops::Range<usize>, message: String) -> LessonError {
        let (line, column) = if span.is_empty() && span.start == 0 {
            (None, None)
        } else {
            let (l, c) = line_col(self.text, span.start);
            (Some(l), Some(c))
        };
        LessonError {
            file: self.file.to_path_buf(),
            line,
            column,
            field: Some(field.to_string()),
            message,
        }
    }

    fn spanned_error<T>(&self, field: &str, value: &Spanned<T>, message: String) -> LessonError {
        self.error_at(field, value.span(), message)
    }

    /// Turns a TOML/serde error into one that names the field and line.
    fn toml_error(&self, error: &toml::de::Error) -> LessonError {
        let message = error.message().trim().to_string();
        let span = error.span().unwrap_or(0..0);
        let mut field = field_at(self.text, span.start);
        // serde reports a missing field at the table that lacks it; name the field itself.
        if let Some(missing) = message
            .strip_prefix("missing field `")
            .and_then(|rest| rest.split('`').next())
        {
            field = Some(match field {
                Some(table) => format!("{table}.{missing}"),
                None => missing.to_string(),
            });
        }
        let (line, column) = line_col(self.text, span.start);
        LessonError {
            file: self.file.to_path_buf(),
            line: Some(line),
            column: Some(column),
            field,
            message,
        }
    }

    fn check(&self, f: LessonFile) -> Result<Lesson, LessonError> {
        let dir_name = self.dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let id = f.id.get_ref();
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(self.spanned_error("id", &f.id, "use letters, digits and '-'".into()));
        }
        if !dir_name.is_empty() && dir_name != id {
            return Err(self.spanned_error(
                "id",
                &f.id,
                format!("the id `{id}` must match the lesson's directory name `{dir_name}`"),
            ));
        }

        let params = self.check_params(&f.kernel.params)?;
        let entry = f.kernel.entry.get_ref();
        if entry.is_empty() || !entry.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(self.spanned_error(
                "kernel.entry",
                &f.kernel.entry,
                "the entry must be a C identifier".into(),
            ));
        }

        let block = *f.launch.block.get_ref();
        let threads: u64 = block.iter().map(|&b| b as u64).product();
        if block.contains(&0) || threads > MAX_THREADS_PER_BLOCK as u64 {
            return Err(self.spanned_error(
                "launch.block",
                &f.launch.block,
                format!(
                    "each dimension must be positive and the product at most {MAX_THREADS_PER_BLOCK} (got {threads})"
                ),
            ));
        }
        let mut grid = [GridDim::Fixed { count: 1 }; 3];
        for (d, rule) in f.launch.grid.get_ref().iter().enumerate() {
            grid[d] = GridDim::parse(rule).map_err(|m| self.spanned_error("launch.grid", &f.launch.grid, m))?;
        }
        let dynamic_shared_bytes = *f.launch.dynamic_shared_bytes.get_ref();
        let cluster = match &f.launch.cluster {
            Some(spanned) => {
                let shape = *spanned.get_ref();
                let size: u32 = shape.iter().product();
                if shape.contains(&0) || size > MAX_CLUSTER_BLOCKS {
                    return Err(self.spanned_error(
                        "launch.cluster",
                        spanned,
                        format!(
                            "each dimension must be positive and the product at most {MAX_CLUSTER_BLOCKS}, the \
                             portable cluster size (got {size})"
                        ),
                    ));
                }
                Some(shape)
            }
            None => None,
        };

        let dims = *f.problem.dims.get_ref();
        if !(1..=3).contains(&dims) {
            return Err(self.spanned_error(
                "problem.dims",
                &f.problem.dims,
                format!("must be 1, 2 or 3 (got {dims})"),
            ));
        }
        let stencil = Stencil {
            dims,
            centre: f.problem.centre,
            neighbour: f.problem.neighbour,
        };
        let verify_sizes = f.problem.verify_sizes.get_ref().clone();
        if verify_sizes.is_empty() {
            return Err(self.spanned_error(
                "problem.verify_sizes",
                &f.problem.verify_sizes,
                "list at least one size".into(),
            ));
        }
        let profile_size = *f.problem.profile_size.get_ref();
        for (field, spanned, n) in verify_sizes
            .iter()
            .map(|&n| ("problem.verify_sizes", f.problem.verify_sizes.span(), n))
            .chain(std::iter::once((
                "problem.profile_size",
                f.problem.profile_size.span(),
                profile_size,
            )))
        {
            let elements = (n as u64).pow(dims);
            if n < 3 || elements > MAX_ELEMENTS {
                return Err(self.error_at(
                    field,
                    spanned,
                    format!("size {n} is out of range: n must be at least 3 and n^{dims} at most {MAX_ELEMENTS}"),
                ));
            }
        }
        let profile_launches = *f.problem.profile_launches.get_ref();
        if profile_launches == 0 {
            return Err(self.spanned_error(
                "problem.profile_launches",
                &f.problem.profile_launches,
                "must be at least 1".into(),
            ));
        }

        if f.gate.metric.get_ref() != SECTOR_METRIC {
            return Err(self.spanned_error(
                "gate.metric",
                &f.gate.metric,
                format!(
                    "unknown metric `{}`; the supported metric is `{SECTOR_METRIC}`",
                    f.gate.metric.get_ref()
                ),
            ));
        }
        if *f.gate.below.get_ref() == 0 {
            return Err(self.spanned_error("gate.below", &f.gate.below, "must be positive".into()));
        }

        let text_path = self.existing_file("files.text", &f.files.text)?;
        let lesson_text = std::fs::read_to_string(&text_path).map_err(|e| {
            self.spanned_error(
                "files.text",
                &f.files.text,
                format!("cannot read {}: {e}", text_path.display()),
            )
        })?;
        let starter = self.existing_file("files.starter", &f.files.starter)?;
        let solution = self.existing_file("files.solution", &f.files.solution)?;
        let rust_starter = f
            .files
            .rust_starter
            .as_ref()
            .map(|p| self.existing_file("files.rust_starter", p))
            .transpose()?;
        let rust_solution = f
            .files
            .rust_solution
            .as_ref()
            .map(|p| self.existing_file("files.rust_solution", p))
            .transpose()?;
        let mut variants = Vec::new();
        for (i, v) in f.files.variants.iter().enumerate() {
            let field = format!("files.variants.{i}");
            let path = self.existing_file(&format!("{field}.path"), &v.path)?;
            let expect = Expectation::parse(v.expect.get_ref()).ok_or_else(|| {
                self.spanned_error(
                    &format!("{field}.expect"),
                    &v.expect,
                    "expected one of pass, gate-fail, wrong-results, compile-error, kernel-fault".into(),
                )
            })?;
            variants.push(Variant {
                path,
                expect,
                note: v.note.clone(),
            });
        }

        Ok(Lesson {
            id: id.clone(),
            title: f.title,
            order: f.order,
            summary: f.summary,
            dir: self.dir.to_path_buf(),
            text: lesson_text,
            contract: Contract {
                lesson: id.clone(),
                entry: entry.clone(),
                params,
                block,
                grid: GridRule(grid),
                dynamic_shared_bytes,
                cluster,
                stencil,
                verify_sizes,
                profile_size,
                profile_launches,
            },
            gate: Gate {
                metric: f.gate.metric.into_inner(),
                below: f.gate.below.into_inner(),
            },
            starter,
            solution,
            rust_starter,
            rust_solution,
            variants,
            figures: f.figures,
            learn: f.learn,
            hints: f.hints,
        })
    }

    fn check_params(&self, spanned: &Spanned<Vec<String>>) -> Result<Vec<Param>, LessonError> {
        let field = "kernel.params";
        let params = spanned
            .get_ref()
            .iter()
            .map(|decl| Param::parse(decl))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|m| self.spanned_error(field, spanned, m))?;
        let count = |kind| params.iter().filter(|p| p.kind == kind).count();
        if count(ParamKind::ConstFloatPtr) != 1 || count(ParamKind::FloatPtr) != 1 || count(ParamKind::Int) != 1 {
            return Err(self.spanned_error(
                field,
                spanned,
                "the harness passes exactly one `const float*` input, one `float*` output and one `int` size".into(),
            ));
        }
        Ok(params)
    }

    fn existing_file(&self, field: &str, path: &Spanned<String>) -> Result<PathBuf, LessonError> {
        let full = normalize(&self.dir.join(path.get_ref()));
        if full.is_file() {
            Ok(full)
        } else {
            Err(self.spanned_error(field, path, format!("no such file: {}", full.display())))
        }
    }
}

/// `lessons/a/../../kernels/x.cu` -> `kernels/x.cu`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir if matches!(out.components().next_back(), Some(Component::Normal(_))) => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}
