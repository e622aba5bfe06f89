//! The report schema: `RunReport`, everything one run found, as the CLI prints it (`--json`),
//! the GUI shows it and a grader reads it; the exit codes are `Verdict::exit_code`. This module
//! is the bottom of the backend stack: backends, the pipeline, the CLI and the app import it,
//! and it imports nothing from them (only what it carries from below: the compiler's
//! diagnostics, failures and machine-code check, and the harness's per-size verification).

mod fault;
pub mod hazard;
pub mod moves;
pub mod output;
mod profile;

pub use crate::compile::listing::{InstructionAt, InstructionSectors};
pub use fault::{Finding, FindingKind, KernelFault, ThreadPlace, UnexecutedAccess};
pub use output::KernelOutput;
pub use profile::{BulkCopies, GlobalAccess, LineSectors, ProfileBuilder, SectorProfile, SharedStats};

use crate::compile::{CompileFailure, Diagnostic};
use crate::harness::SizeVerification;
use serde::{Deserialize, Serialize};

/// The `--json` schema's version: raised whenever a field is renamed or its meaning changes
/// (added fields with defaults do not raise it). 2: `compile.compiler`, `compiler_version` and
/// `compiler_path` replace `nvrtc_version` and `nvrtc_path`. 3: a misaligned access is a
/// `fault.kind` of its own (`misaligned`, was `crashed`), and findings may be `global-race`.
/// 4: `fault.kind` may be `profiling-restricted` (was `infrastructure`), and a GPU run's
/// `profile.counted_by_emulator_because` says when the emulator counted its sectors.
pub const SCHEMA_VERSION: u32 = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    Emulator,
    Gpu,
}

/// Which backend ran, in words, for reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BackendInfo {
    pub kind: BackendKind,
    /// `NVIDIA H200 (sm_90)` or `PTX emulator, 2 threads`.
    pub device: String,
    /// The GPU drives a display, so the driver's watchdog stops a kernel that runs too long
    /// (about 2 s on Windows; X's limit on Linux): said in the run panel and the CLI.
    #[serde(default)]
    pub display_watchdog: bool,
}

/// What the run panel and the CLI say about a GPU with a display watchdog.
pub const WATCHDOG_NOTE: &str = "this GPU drives a display: its driver stops any kernel that runs longer than a few \
     seconds (CUDA_ERROR_LAUNCH_TIMEOUT). A second GPU without a display avoids it (`--device`)";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Every size verified and the metric is under the gate.
    Pass,
    /// Correct everywhere, but the metric is not under the gate.
    GateFail,
    /// Some element at some size is wrong or never written.
    WrongResults,
    CompileError,
    /// Compiles, but the signature or entry does not match the lesson contract.
    ContractError,
    /// The kernel crashed, hung, raced, read uninitialised shared memory or went out of bounds.
    KernelFault,
    /// The emulator cannot run an instruction the kernel uses: a limit of the emulator, not a
    /// fault of the kernel (a GPU runs it).
    EmulatorLimit,
    /// Not the kernel's fault: no NVRTC, no backend, a broken lesson, a failed worker.
    InfraError,
}

impl Verdict {
    /// Every verdict, in the order of their exit codes.
    pub const ALL: [Verdict; 8] = [
        Verdict::Pass,
        Verdict::GateFail,
        Verdict::WrongResults,
        Verdict::CompileError,
        Verdict::ContractError,
        Verdict::KernelFault,
        Verdict::EmulatorLimit,
        Verdict::InfraError,
    ];

    /// The verdict whose word (`as_str`) is `word`: what reads a verdict back from a file
    /// (a grading table, a ground-truth table) uses, so no copy of the words exists elsewhere.
    pub fn parse(word: &str) -> Option<Verdict> {
        Verdict::ALL.into_iter().find(|v| v.as_str() == word)
    }

    /// The verdict's word in JSON and CSV (`gate-fail`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::GateFail => "gate-fail",
            Verdict::WrongResults => "wrong-results",
            Verdict::CompileError => "compile-error",
            Verdict::ContractError => "contract-error",
            Verdict::KernelFault => "kernel-fault",
            Verdict::EmulatorLimit => "emulator-limit",
            Verdict::InfraError => "infra-error",
        }
    }

    /// Process exit code of `haloscope run` (documented in the README).
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Pass => 0,
            Verdict::GateFail => 10,
            Verdict::WrongResults => 11,
            Verdict::CompileError => 12,
            Verdict::ContractError => 13,
            Verdict::KernelFault => 14,
            Verdict::EmulatorLimit => 15,
            Verdict::InfraError => 20,
        }
    }

    /// Every element right, whatever the sectors: the run counts towards a best figure.
    pub fn is_correct(self) -> bool {
        matches!(self, Verdict::Pass | Verdict::GateFail)
    }

    pub fn label(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::GateFail => "FAIL (gate)",
            Verdict::WrongResults => "FAIL (wrong results)",
            Verdict::CompileError => "FAIL (compile error)",
            Verdict::ContractError => "FAIL (contract)",
            Verdict::KernelFault => "FAIL (kernel fault)",
            Verdict::EmulatorLimit => "NOT RUN (emulator limit)",
            Verdict::InfraError => "ERROR (infrastructure)",
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    pub launches: u32,
    pub median_us: f64,
    pub min_us: f64,
    pub max_us: f64,
    /// One input sweep + one output sweep over the median time, GB/s.
    pub effective_gbps: f64,
    /// The card's measured device-to-device copy bandwidth, GB/s.
    pub copy_gbps: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateResult {
    pub metric: String,
    pub below: u64,
    pub value: u64,
    pub passed: bool,
}

impl GateResult {
    /// "1,362,688,000 sectors, gate: under 740,000,000 — not passed": the figure, what the gate
    /// asks of it, and the outcome, with no inequality that could read as a false statement.
    pub fn sentence(&self) -> String {
        format!(
            "{} sectors, gate: under {} — {}",
            thousands(self.value),
            thousands(self.below),
            if self.passed { "passed" } else { "not passed" }
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageTime {
    pub stage: String,
    pub millis: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompileSummary {
    pub millis: f64,
    /// `NVRTC` for CUDA C++, `rustc` for Rust kernels. (Schema 1 had only NVRTC's fields,
    /// `nvrtc_version` and `nvrtc_path`; such reports still load.)
    #[serde(default)]
    pub compiler: String,
    #[serde(alias = "nvrtc_version")]
    pub compiler_version: String,
    #[serde(alias = "nvrtc_path")]
    pub compiler_path: String,
    pub target: String,
    pub warnings: Vec<Diagnostic>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunReport {
    /// `SCHEMA_VERSION` of the program that wrote the report.
    #[serde(default)]
    pub schema: u32,
    pub haloscope_version: String,
    pub lesson: String,
    pub kernel_file: String,
    pub backend: Option<BackendInfo>,
    pub seed: u64,
    pub verdict: Verdict,
    pub exit_code: i32,
    /// One line saying what happened (it starts with `notice` when there is one).
    pub headline: String,
    /// Why the backend that ran is not the first the choice names (`auto` without a usable
    /// GPU), from the backend policy.
    #[serde(default)]
    pub notice: Option<String>,
    pub compile: Option<CompileSummary>,
    pub compile_failure: Option<CompileFailure>,
    pub sizes: Vec<SizeVerification>,
    pub findings: Vec<Finding>,
    pub fault: Option<KernelFault>,
    pub profile: Option<SectorProfile>,
    pub timing: Option<Timing>,
    pub gate: Option<GateResult>,
    pub stages: Vec<StageTime>,
    /// What the kernel printed (device printf), one entry per launch that printed, in launch
    /// order: each size's verification launch, then the profile launch.
    #[serde(default)]
    pub output: Vec<KernelOutput>,
    /// Accesses the source makes that the optimised build never executed (src/trace/unexecuted.rs):
    /// shown beside the verdict, never part of it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unexecuted: Vec<UnexecutedAccess>,
}

/// `1362688000` -> `1,362,688,000`.
pub fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1362688000` -> `1.36G`.
pub fn compact(value: u64) -> String {
    let v = value as f64;
    if v >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.0}k", v / 1e3)
    } else {
        value.to_string()
    }
}
