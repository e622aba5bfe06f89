//! `haloscope check`: the kernel's hazards only. The kernel runs on the emulator, checks on,
//! at small sizes (by default the lesson's verification sizes below its profile size, where
//! compute-sanitizer runs on the GPU in reasonable time), and what it found is sorted into
//! the classes of compute-sanitizer's tools (`report::hazard`). The hazard corpus
//! (scripts/hazards/, tests/hazards.rs) compares these classes with the GPU's.

use crate::backend::{BackendChoice, CancelFlag};
use crate::backend_policy::run_lesson;
use crate::compile::RunRequest;
use crate::lesson::Lesson;
use crate::report::hazard::{HazardClass, hazard_classes};
use crate::report::{RunReport, Verdict};
use serde::{Deserialize, Serialize};

/// What `check` found for one kernel.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HazardCheck {
    pub lesson: String,
    pub kernel: String,
    pub sizes: Vec<u32>,
    /// Correct (every element right at every size), or the verdict that says why not.
    pub outcome: CheckOutcome,
    /// The hazard classes found, sorted.
    pub classes: Vec<HazardClass>,
    /// What ended the run early, in words.
    pub fault: Option<String>,
    /// Every finding's message, in the order the report lists them (the first is the
    /// earliest: the headline).
    pub findings: Vec<String>,
}

/// What a check's run came to. In JSON and on the CLI it is one word: `correct`, or the
/// verdict's own word (`kernel-fault`, `wrong-results`, `compile-error`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum CheckOutcome {
    Correct,
    Failed(Verdict),
}

impl CheckOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckOutcome::Correct => "correct",
            CheckOutcome::Failed(verdict) => verdict.as_str(),
        }
    }

    /// The exit codes of `run`: correct is 0, anything else its verdict's code.
    pub fn exit_code(self) -> i32 {
        match self {
            CheckOutcome::Correct => 0,
            CheckOutcome::Failed(verdict) => verdict.exit_code(),
        }
    }
}

impl std::fmt::Display for CheckOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<CheckOutcome> for String {
    fn from(outcome: CheckOutcome) -> String {
        outcome.as_str().to_string()
    }
}

impl TryFrom<String> for CheckOutcome {
    type Error = String;
    fn try_from(word: String) -> Result<CheckOutcome, String> {
        match word.as_str() {
            "correct" => Ok(CheckOutcome::Correct),
            _ => Verdict::parse(&word)
                .map(CheckOutcome::Failed)
                .ok_or_else(|| format!("`{word}` is neither `correct` nor a verdict")),
        }
    }
}

/// Runs `request` on the emulator at `sizes` (the default when empty) and sorts what it found.
pub fn check(lesson: &Lesson, request: &RunRequest, sizes: &[u32]) -> HazardCheck {
    let sizes = if sizes.is_empty() {
        lesson.small_sizes()
    } else {
        sizes.to_vec()
    };
    // The same lesson at the chosen sizes: the last is "profiled" once, which on the emulator
    // reuses its verification launch, so nothing runs twice.
    let mut small = lesson.clone();
    small.verify_sizes = sizes.clone();
    small.profile_size = *sizes.iter().max().expect("at least one size");
    small.profile_launches = 1;
    let report = run_lesson(&small, request, BackendChoice::Emu, &mut |_| {}, &CancelFlag::default());
    summarise(lesson, request, sizes, &report)
}

fn summarise(lesson: &Lesson, request: &RunRequest, sizes: Vec<u32>, report: &RunReport) -> HazardCheck {
    let all_correct = report.sizes.len() == sizes.len() && report.sizes.iter().all(|s| s.passed());
    // A hazard is a kernel fault; a run that got through is judged on its results alone
    // (the gate plays no part here).
    let outcome = match report.verdict {
        Verdict::CompileError
        | Verdict::ContractError
        | Verdict::InfraError
        | Verdict::KernelFault
        | Verdict::EmulatorLimit => CheckOutcome::Failed(report.verdict),
        _ if all_correct => CheckOutcome::Correct,
        _ => CheckOutcome::Failed(Verdict::WrongResults),
    };
    HazardCheck {
        lesson: lesson.id.clone(),
        kernel: request.kernel_file.clone(),
        sizes,
        outcome,
        classes: hazard_classes(report),
        fault: report.fault.as_ref().map(|f| f.message()),
        findings: report.findings.iter().map(|f| f.located()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_is_one_word_both_ways() {
        let all = std::iter::once(CheckOutcome::Correct).chain(Verdict::ALL.into_iter().map(CheckOutcome::Failed));
        for outcome in all {
            let json = serde_json::to_string(&outcome).unwrap();
            assert_eq!(json, format!("\"{outcome}\""));
            assert_eq!(serde_json::from_str::<CheckOutcome>(&json).unwrap(), outcome);
        }
        assert!(serde_json::from_str::<CheckOutcome>("\"fine\"").is_err());
    }
}
