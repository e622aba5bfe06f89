//! `RunReport`: everything one run found, as the CLI prints it (`--json`) and the GUI shows it.

use crate::backend::{BackendInfo, Finding, KernelFault, KernelOutput};
use crate::compile::{CompileFailure, Diagnostic};
use crate::harness::SizeVerification;
use serde::{Deserialize, Serialize};

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
    /// Not the kernel's fault: no NVRTC, no backend, a broken lesson, a failed worker.
    InfraError,
}

impl Verdict {
    /// Process exit code of `haloscope run` (documented in the README).
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Pass => 0,
            Verdict::GateFail => 10,
            Verdict::WrongResults => 11,
            Verdict::CompileError => 12,
            Verdict::ContractError => 13,
            Verdict::KernelFault => 14,
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
            Verdict::InfraError => "ERROR (infrastructure)",
        }
    }
}

/// Sectors issued by the instructions of one source line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LineSectors {
    pub line: u32,
    pub sectors: u64,
    pub load_sectors: u64,
    pub store_sectors: u64,
    /// The fewest 32-byte sectors that could hold the bytes the active lanes asked for.
    pub ideal_sectors: u64,
    /// Warp-level global loads and stores executed on this line.
    pub global_instructions: u64,
    /// Warp-level instructions of any kind executed on this line, and the sum of their
    /// active lanes: their ratio is the line's average active lanes (32 = no divergence).
    pub warp_instructions: u64,
    pub active_lanes: u64,
}

impl LineSectors {
    pub fn ratio(&self) -> f64 {
        if self.ideal_sectors == 0 {
            0.0
        } else {
            self.sectors as f64 / self.ideal_sectors as f64
        }
    }
    pub fn average_active_lanes(&self) -> f64 {
        if self.warp_instructions == 0 {
            0.0
        } else {
            self.active_lanes as f64 / self.warp_instructions as f64
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SharedStats {
    /// Warp-level shared-memory instructions.
    pub requests: u64,
    /// Extra wavefronts caused by bank conflicts.
    pub bank_conflicts: u64,
}

/// Global-memory sectors over the profile run (the gate's metric).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SectorProfile {
    pub n: u32,
    /// Launches the figures stand for (the contract's count).
    pub launches: u32,
    /// Launches actually executed; fewer than `launches` when one was run and multiplied.
    pub launches_executed: u32,
    pub sectors: u64,
    pub load_sectors: u64,
    pub store_sectors: u64,
    pub ideal_sectors: u64,
    /// Per source line, summed over the launches.
    pub per_line: Vec<LineSectors>,
    pub shared: SharedStats,
    /// Average active lanes per executed warp instruction (32 = no divergence).
    pub average_active_lanes: f64,
    /// Where the figure came from, in words.
    pub source: String,
    /// What the kernel printed during the profile launch(es).
    #[serde(default)]
    pub output: Option<KernelOutput>,
    /// Where ptxas changed the PTX's global memory instructions (the lines to mark), when
    /// the machine-code check ran.
    #[serde(default)]
    pub machine_code: Option<crate::compile::MachineCode>,
    /// Why the machine-code check did not run, when it did not.
    #[serde(default)]
    pub machine_code_unavailable: Option<String>,
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

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StageTime {
    pub stage: String,
    pub millis: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompileSummary {
    pub millis: f64,
    pub nvrtc_version: String,
    pub nvrtc_path: String,
    pub target: String,
    pub warnings: Vec<Diagnostic>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunReport {
    pub haloscope_version: String,
    pub lesson: String,
    pub kernel_file: String,
    pub backend: Option<BackendInfo>,
    pub seed: u64,
    pub verdict: Verdict,
    pub exit_code: i32,
    /// One line saying what happened.
    pub headline: String,
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
}
