//! `haloscope check`: the kernel's hazards only. The kernel runs on the emulator, checks on,
//! at small sizes (by default the lesson's verification sizes below its profile size, where
//! compute-sanitizer runs on the GPU in reasonable time), and what it found is sorted into
//! the classes of compute-sanitizer's tools (`report::hazard`). The hazard corpus
//! (scripts/hazards/, tests/hazards.rs) compares these classes with the GPU's.

use crate::backend::{BackendChoice, CancelFlag};
use crate::backends::run_lesson;
use crate::lesson::Lesson;
use crate::pipeline::RunRequest;
use crate::report::hazard::{HazardClass, hazard_classes};
use crate::report::{RunReport, Verdict};
use serde::{Deserialize, Serialize};

/// What `check` found for one kernel.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HazardCheck {
    pub lesson: String,
    pub kernel: String,
    pub sizes: Vec<u32>,
    /// `kernel-fault`, `wrong-results` or `correct` (every element right at every size), or
    /// `compile-error`/`contract-error`/`infra-error` when it never ran.
    pub outcome: String,
    /// The hazard classes found, sorted.
    pub classes: Vec<HazardClass>,
    /// What ended the run early, in words.
    pub fault: Option<String>,
    /// Every finding's message, in the order the report lists them (the first is the
    /// earliest: the headline).
    pub findings: Vec<String>,
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
    let outcome = match report.verdict {
        Verdict::CompileError
        | Verdict::ContractError
        | Verdict::InfraError
        | Verdict::KernelFault
        | Verdict::EmulatorLimit => verdict_name(report.verdict),
        _ if all_correct => "correct".to_string(),
        _ => verdict_name(Verdict::WrongResults),
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

/// A verdict as `--json` spells it (`kernel-fault`).
fn verdict_name(verdict: Verdict) -> String {
    serde_json::to_value(verdict)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
