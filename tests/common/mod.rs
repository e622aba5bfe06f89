//! Helpers shared by the integration tests.
#![allow(dead_code)]

use haloscope::lesson::{Course, Lesson};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The checkout: `$HALOSCOPE_ROOT`, else where this test was built, else the working
/// directory (test binaries carried to another machine run from the checkout there).
pub fn root() -> PathBuf {
    if let Some(root) = std::env::var_os("HALOSCOPE_ROOT") {
        return root.into();
    }
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if built.join("lessons").is_dir() {
        built
    } else {
        std::env::current_dir().unwrap()
    }
}

/// The haloscope binary: `$HALOSCOPE_BIN`, else the one cargo built for this test.
pub fn binary() -> PathBuf {
    std::env::var_os("HALOSCOPE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_haloscope")))
}

pub fn course() -> Course {
    Course::load(&root().join("lessons")).expect("course directory")
}

pub fn lesson(id: &str) -> Lesson {
    course()
        .get(id)
        .unwrap_or_else(|| panic!("lesson {id}"))
        .as_ref()
        .clone()
}

/// Runs the haloscope binary from the repository root.
pub fn haloscope(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(binary())
        .args(args)
        .current_dir(root())
        .output()
        .expect("run haloscope");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `haloscope run --lesson stencil-1d --kernel <its starter> --json --seed 5 --backend B` as on
/// a machine without a GPU (`HALOSCOPE_NO_GPU`): the exit code and the report.
pub fn run_1d_starter_without_gpu(backend: &str) -> (i32, haloscope::report::RunReport) {
    let out = Command::new(binary())
        .args([
            "run",
            "--lesson",
            "stencil-1d",
            "--json",
            "--seed",
            "5",
            "--backend",
            backend,
            "--kernel",
        ])
        .arg(root().join("kernels/stencil-1d/starter.cu"))
        .env(haloscope::backend_policy::NO_GPU_ENV, "1")
        .current_dir(root())
        .output()
        .expect("run haloscope");
    let report =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    (out.status.code().unwrap_or(-1), report)
}

/// Copies the stencil-2d lesson into `dir/<id>` with its kernels, so tests can break it.
pub fn copy_lesson(dir: &Path, id: &str) -> PathBuf {
    let src = root().join("lessons").join(id);
    let dst = dir.join(id);
    std::fs::create_dir_all(&dst).unwrap();
    for entry in std::fs::read_dir(&src).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dst.join(entry.file_name())).unwrap();
    }
    let kernels = root().join("kernels").join(id);
    let toml = std::fs::read_to_string(dst.join("lesson.toml")).unwrap();
    let toml = toml.replace(&format!("../../kernels/{id}/"), &format!("{}/", kernels.display()));
    std::fs::write(dst.join("lesson.toml"), toml).unwrap();
    dst
}

pub mod app;
pub mod figures;
pub mod h200;

/// A row of docs/known-differences.md's table (see scripts/device/checks/compare-kernel-figures.py).
#[derive(Debug, Clone)]
pub struct KnownDifference {
    pub kernel: String,
    pub field: String,
    pub gpu: String,
    pub emu: String,
    pub kind: String,
    pub reason: String,
}

/// The ```tsv table of docs/known-differences.md: GPU / emulator differences understood
/// and listed with their reason.
pub fn known_differences() -> Vec<KnownDifference> {
    let text = std::fs::read_to_string(root().join("docs/known-differences.md")).expect("docs/known-differences.md");
    let block = text
        .split("```tsv\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("a ```tsv block in docs/known-differences.md");
    let mut lines = block.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#'));
    assert_eq!(
        lines.next(),
        Some("kernel\tfield\tgpu\temu\tkind\treason"),
        "docs/known-differences.md: header"
    );
    lines
        .map(|line| {
            let cells: Vec<&str> = line.split('\t').map(str::trim).collect();
            assert_eq!(cells.len(), 6, "docs/known-differences.md: {line}");
            KnownDifference {
                kernel: cells[0].into(),
                field: cells[1].into(),
                gpu: cells[2].into(),
                emu: cells[3].into(),
                kind: cells[4].into(),
                reason: cells[5].into(),
            }
        })
        .collect()
}

/// `1,363,507,000` as a number.
pub fn figure(text: &str) -> u64 {
    text.replace(',', "").parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// What the emulator must count for `field` of `kernel`: the H200's figure, unless
/// docs/known-differences.md lists a difference there (then the emulator's value it gives,
/// after checking that its GPU value is `h200`).
pub fn expected_emulator_figure(kernel: &str, field: &str, h200: u64) -> u64 {
    match known_differences()
        .into_iter()
        .find(|d| d.kernel == kernel && d.field == field)
    {
        Some(d) => {
            assert_eq!(
                figure(&d.gpu),
                h200,
                "docs/known-differences.md: {kernel} {field}: its GPU value is not the H200's"
            );
            figure(&d.emu)
        }
        None => h200,
    }
}

/// Runs `kernel` (a path under the repository root) for `lesson` on the emulator with a
/// fixed seed, as the CLI's `run --backend emu` does.
#[allow(dead_code)]
pub fn run_on_emulator(lesson: &str, kernel: &str, seed: u64) -> haloscope::report::RunReport {
    let lesson = self::lesson(lesson);
    let path = root().join(kernel);
    let request = haloscope::pipeline::RunRequest::from_file(&path, Some(seed), None).unwrap();
    haloscope::backend_policy::run_lesson(
        &lesson,
        &request,
        haloscope::backend::BackendChoice::Emu,
        &mut |_| {},
        &haloscope::backend::CancelFlag::default(),
    )
}

/// The hazard corpus of `seed` (scripts/hazards/generate.py), generated into a temporary
/// folder named for `purpose`: generated kernels nobody wrote for the test at hand. With
/// `with_tests`, the kernels written for tests/hazards.rs are copied into its tests/ too.
pub fn generated_corpus(seed: u32, purpose: &str, with_tests: bool) -> PathBuf {
    let corpus = std::env::temp_dir().join(format!("haloscope-{purpose}-{}-{seed}", std::process::id()));
    let mut command = Command::new("python3");
    command
        .arg(root().join("scripts/hazards/generate.py"))
        .args(["--seed", &seed.to_string()]);
    if with_tests {
        command.arg("--with-tests");
    }
    let generated = command
        .arg("--out")
        .arg(&corpus)
        .output()
        .expect("python3 runs scripts/hazards/generate.py");
    assert!(
        generated.status.success(),
        "{}",
        String::from_utf8_lossy(&generated.stderr)
    );
    corpus
}
