//! The class CI templates (templates/) run exactly as written: the GitHub Classroom
//! autograding tests' `run` commands and the grading lines of the GitHub Actions and GitLab
//! CI jobs, with `haloscope` on the PATH as the templates' setup step leaves it, on a
//! student's repository holding the solution, the starter, or a kernel that does not compile.

mod common;

use std::path::Path;
use std::process::Command;

/// Runs `command` with `sh -c` in `dir` (the student's checkout), haloscope on the PATH and
/// `env` set, as a CI runner would; the exit code.
fn sh(command: &str, dir: &Path, env: &[(&str, &str)]) -> i32 {
    let bin = common::binary();
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("PATH", path)
        .envs(env.iter().copied())
        .status()
        .expect("run sh")
        .code()
        .unwrap_or(-1)
}

/// A student checkout with `stencil.cu` holding `source`.
fn checkout(source: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("stencil.cu"), source).unwrap();
    dir
}

fn kernels() -> [(&'static str, String); 3] {
    let read = |f: &str| std::fs::read_to_string(common::root().join("kernels/stencil-2d").join(f)).unwrap();
    [
        ("solution", read("solution.cu")),
        ("starter", read("starter.cu")),
        ("broken", read("starter.cu").replace("int i = y * n + x;", "int i = ;")),
    ]
}

#[test]
fn the_classroom_autograding_commands_score_each_kind_of_kernel() {
    let text =
        std::fs::read_to_string(common::root().join("templates/github-classroom/.github/classroom/autograding.json"))
            .unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let tests = json["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 2);
    let points: u64 = tests.iter().map(|t| t["points"].as_u64().unwrap()).sum();
    assert_eq!(points, 10);
    for (kind, source) in kernels() {
        let repo = checkout(&source);
        let passed: Vec<bool> = tests
            .iter()
            .map(|t| sh(t["run"].as_str().unwrap(), repo.path(), &[]) == 0)
            .collect();
        let expected = match kind {
            "solution" => vec![true, true],
            "starter" => vec![true, false],
            _ => vec![false, false],
        };
        assert_eq!(passed, expected, "{kind}");
        // The report is left for the student to read.
        let report = std::fs::read_to_string(repo.path().join("haloscope-report.json")).unwrap();
        assert!(report.contains("\"verdict\""), "{kind}");
    }
}

/// The lines of a CI file that run `haloscope run` (after `run:` or `- `).
fn grading_lines(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(common::root().join(file)).unwrap();
    text.lines()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix("run: ").or_else(|| l.strip_prefix("- ")))
        .filter(|l| l.starts_with("haloscope run"))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_ci_job_templates_pass_only_a_passing_kernel() {
    let env = [("LESSON", "stencil-2d"), ("KERNEL", "stencil.cu")];
    for file in [
        "templates/github-actions/haloscope-grade.yml",
        "templates/gitlab-ci/.gitlab-ci.yml",
    ] {
        let lines = grading_lines(file);
        assert_eq!(lines.len(), 1, "{file}: one grading line");
        for (kind, source) in kernels() {
            let repo = checkout(&source);
            let code = sh(&lines[0], repo.path(), &env);
            let expected = match kind {
                "solution" => 0,
                "starter" => 10,
                _ => 12,
            };
            assert_eq!(code, expected, "{file}, {kind}");
        }
    }
}
