//! The grading table: one row per submission, written as CSV (for a spreadsheet) and JSON
//! (for the app and for re-runs, which reuse rows whose content hash is unchanged).

use crate::lesson::Lesson;
use crate::report::{RunReport, Verdict};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A row's verdict: the run's own, or why the grading process gave no report. Written as
/// the same kebab-case words either way (`pass`, `gate-fail`, ..., `timeout`, `crashed`,
/// `missing`), so the table's CSV and JSON read as before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum GradeVerdict {
    Run(Verdict),
    NoReport(NoReport),
}

/// Why a submission has no report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoReport {
    /// The child ran past the time limit and was killed.
    Timeout,
    /// The child ended without a report (a signal, out of memory, unreadable output).
    Crashed,
    /// The student's folder held no kernel.
    Missing,
}

impl GradeVerdict {
    pub const PASS: GradeVerdict = GradeVerdict::Run(Verdict::Pass);

    /// The word the table writes.
    pub fn as_str(self) -> &'static str {
        match self {
            GradeVerdict::Run(v) => v.as_str(),
            GradeVerdict::NoReport(NoReport::Timeout) => "timeout",
            GradeVerdict::NoReport(NoReport::Crashed) => "crashed",
            GradeVerdict::NoReport(NoReport::Missing) => "missing",
        }
    }

    /// A row the machine cut short (time limit, crash, infrastructure), to be tried again.
    pub fn cut_short(self) -> bool {
        matches!(
            self,
            GradeVerdict::NoReport(NoReport::Timeout | NoReport::Crashed) | GradeVerdict::Run(Verdict::InfraError)
        )
    }
}

impl std::fmt::Display for GradeVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for GradeVerdict {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GradeRow {
    pub student: String,
    /// The kernel graded, relative to the submissions folder ("" when there was none).
    pub file: String,
    /// `pass`, `gate-fail`, `wrong-results`, `compile-error`, `contract-error`,
    /// `kernel-fault`, `infra-error` (the run's verdict), or `timeout` / `crashed` when the
    /// grading process gave no report, or `missing` when the folder held no kernel.
    pub verdict: GradeVerdict,
    /// `haloscope run`'s exit code (docs/teaching.md); -1 when the process gave none.
    pub exit_code: i32,
    pub sectors: Option<u64>,
    /// The lesson's gate and whether the sectors are under it.
    pub gate: Option<u64>,
    pub gate_passed: Option<bool>,
    pub wrong: u64,
    pub unwritten: u64,
    pub findings: Vec<String>,
    pub compile_errors: Option<String>,
    /// The run's headline, or why there is no run.
    pub message: String,
    pub seed: u64,
    pub haloscope_version: String,
    /// Which backend graded it (`PTX emulator on 1 host thread(s)`, `NVIDIA H200 ...`).
    pub graded_on: String,
    pub content_hash: String,
    pub seconds: f64,
    /// The full report, relative to the table's folder.
    pub report: Option<String>,
}

impl GradeRow {
    /// A row for a submission that produced no report.
    pub fn without_report(
        student: &str,
        file: &str,
        why: NoReport,
        message: String,
        seed: u64,
        hash: String,
    ) -> GradeRow {
        GradeRow {
            student: student.to_string(),
            file: file.to_string(),
            verdict: GradeVerdict::NoReport(why),
            exit_code: -1,
            sectors: None,
            gate: None,
            gate_passed: None,
            wrong: 0,
            unwritten: 0,
            findings: Vec::new(),
            compile_errors: None,
            message,
            seed,
            haloscope_version: env!("CARGO_PKG_VERSION").to_string(),
            graded_on: String::new(),
            content_hash: hash,
            seconds: 0.0,
            report: None,
        }
    }

    pub fn from_report(student: &str, file: &str, lesson: &Lesson, report: &RunReport, hash: String) -> GradeRow {
        let sectors = report.profile.as_ref().map(|p| p.sectors);
        GradeRow {
            student: student.to_string(),
            file: file.to_string(),
            verdict: GradeVerdict::Run(report.verdict),
            exit_code: report.exit_code,
            sectors,
            gate: Some(lesson.gate.below),
            gate_passed: sectors.map(|s| s < lesson.gate.below),
            wrong: report.sizes.iter().map(|s| s.wrong as u64).sum(),
            unwritten: report.sizes.iter().map(|s| s.unwritten as u64).sum(),
            findings: report.findings.iter().map(|f| f.located()).collect(),
            compile_errors: report.compile_failure.as_ref().map(|f| f.headline()),
            message: report.headline.clone(),
            seed: report.seed,
            haloscope_version: report.haloscope_version.clone(),
            graded_on: report.backend.as_ref().map(|b| b.device.clone()).unwrap_or_default(),
            content_hash: hash,
            seconds: 0.0,
            report: None,
        }
    }
}

/// The table as written to `grades.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GradeTable {
    pub lesson: String,
    pub backend: String,
    pub submissions: PathBuf,
    pub rows: Vec<GradeRow>,
}

impl GradeTable {
    pub fn load(path: &Path) -> Result<GradeTable, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{} is not a grading table: {e}", path.display()))
    }

    /// Writes `grades.json` and `grades.csv` into `dir`.
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let json = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        std::fs::write(dir.join("grades.json"), json).map_err(|e| format!("cannot write grades.json: {e}"))?;
        let mut csv =
            csv::Writer::from_path(dir.join("grades.csv")).map_err(|e| format!("cannot write grades.csv: {e}"))?;
        csv.write_record([
            "student",
            "file",
            "verdict",
            "exit_code",
            "sectors",
            "gate",
            "gate_passed",
            "wrong",
            "unwritten",
            "findings",
            "compile_errors",
            "message",
            "seed",
            "haloscope_version",
            "graded_on",
            "content_hash",
            "seconds",
        ])
        .map_err(|e| e.to_string())?;
        let opt = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
        for r in &self.rows {
            csv.write_record([
                r.student.clone(),
                r.file.clone(),
                r.verdict.to_string(),
                r.exit_code.to_string(),
                opt(r.sectors),
                opt(r.gate),
                r.gate_passed.map_or(String::new(), |g| g.to_string()),
                r.wrong.to_string(),
                r.unwritten.to_string(),
                r.findings.join(" | "),
                r.compile_errors.clone().unwrap_or_default(),
                r.message.clone(),
                r.seed.to_string(),
                r.haloscope_version.clone(),
                r.graded_on.clone(),
                r.content_hash.clone(),
                format!("{:.2}", r.seconds),
            ])
            .map_err(|e| e.to_string())?;
        }
        csv.flush().map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod verdict_tests {
    use super::*;

    #[test]
    fn a_grade_verdict_is_written_and_read_as_the_same_word() {
        let all = Verdict::ALL
            .map(GradeVerdict::Run)
            .into_iter()
            .chain([NoReport::Timeout, NoReport::Crashed, NoReport::Missing].map(GradeVerdict::NoReport));
        for verdict in all {
            let json = serde_json::to_string(&verdict).unwrap();
            assert_eq!(json, format!("\"{}\"", verdict.as_str()), "the run's own word");
            assert_eq!(serde_json::from_str::<GradeVerdict>(&json).unwrap(), verdict);
        }
        assert!(GradeVerdict::NoReport(NoReport::Timeout).cut_short());
        assert!(!GradeVerdict::PASS.cut_short());
    }
}
