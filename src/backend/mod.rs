//! The `Backend` interface: something that launches a compiled kernel as the lesson contract
//! says and reports what happened. Its two implementations live under it: `emu`, the CPU
//! emulator of the PTX, and `gpu`, a worker subprocess driving CUDA through cudarc. Which one
//! a run gets is `crate::backend_policy`'s choice.

pub mod emu;
pub mod gpu;

// What a backend reports is the report schema's (crate::report); re-exported here because
// it is also the interface a backend implements.
pub use crate::report::{
    BackendInfo, BackendKind, Finding, FindingKind, KernelFault, KernelOutput, ThreadPlace, output,
};

use crate::compile::{CompiledKernel, MachineCode, Target};
use crate::harness::SizeVerification;
use crate::lesson::Contract;
use crate::progress::Progress;
use crate::report::{SectorProfile, Timing};
use serde::{Deserialize, Serialize};

/// Which backend the learner asked for; `crate::backend_policy` turns it into one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, Default)]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    #[default]
    Auto,
    Emu,
    Gpu,
}

/// Set from another thread (the GUI's Cancel) to stop a run between or inside launches; the
/// emulator's own flag, so a launch checks the same one.
pub use ptx_emu::CancelFlag;

/// One size checked, plus what the backend noticed while running it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SizeRun {
    pub verification: SizeVerification,
    /// Non-fatal findings (races, reads of unwritten shared memory) from this launch.
    pub findings: Vec<Finding>,
    /// What the kernel printed in this launch (device printf), when it printed anything.
    #[serde(default)]
    pub output: Option<KernelOutput>,
    /// The watched block's accesses, from a backend that traces them (the emulator); never
    /// sent between processes.
    #[serde(skip)]
    pub trace: Option<Trace>,
}

/// The global and shared accesses of the watched block's threads in one launch of size `n`
/// (the diagram and the block replay).
#[derive(Debug, Clone, Default)]
pub struct Trace {
    pub accesses: Vec<ptx_emu::TracedAccess>,
    pub n: u32,
}

/// What [`Backend::start_profile`] began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileStart {
    Nothing,
    /// A measurement runs beside the verification; `profile` waits for its figures.
    Measuring,
    /// The profile size's verification launch started early; its counters are the profile.
    VerificationAhead,
}

pub trait Backend: Send {
    fn info(&self) -> BackendInfo;

    /// What NVRTC must produce for this backend.
    fn target(&self) -> Target;

    /// Launches the kernel once at size `n` on fresh inputs from `seed` into a poisoned output
    /// and verifies every element. A backend whose launch can take seconds says how far it
    /// is through `progress` ([`Progress::Launching`]).
    fn verify_size(
        &mut self,
        lesson: &Contract,
        kernel: &CompiledKernel,
        n: u32,
        seed: u64,
        progress: &mut dyn FnMut(Progress),
        cancel: &CancelFlag,
    ) -> Result<SizeRun, KernelFault>;

    /// Called when a run starts, with the run's seed: a backend that needs a helper process
    /// starts it here, and one that draws its own data can draw it, while the kernel compiles.
    fn prepare(&mut self, _lesson: &Contract, _run_seed: u64) {}

    /// Starts work for the profile alongside the verification, while the kernel is fresh:
    /// the GPU's profiler child measures in parallel ([`ProfileStart::Measuring`]; `profile`
    /// then waits for it), the emulator launches the profile size's verification ahead, whose
    /// counters are the profile ([`ProfileStart::VerificationAhead`]). A run that ends before
    /// `profile` calls `discard_profile`.
    fn start_profile(&mut self, _lesson: &Contract, _kernel: &CompiledKernel, _seed: u64) -> ProfileStart {
        ProfileStart::Nothing
    }

    /// Stops a profile `start_profile` began and nobody will collect.
    fn discard_profile(&mut self) {}

    /// The hazards the last `verify_size` that failed had found before its fault (the
    /// emulator's: a race in the same launch as an out-of-bounds read), taken once; reported
    /// beside the fault.
    fn findings_before_fault(&mut self) -> Vec<Finding> {
        Vec::new()
    }

    /// Global-memory sectors over the contract's profile run, on the input of `seed` (the
    /// verification seed of the profile size: a kernel whose accesses depend on the data
    /// then issues the same sectors on both backends and under ncu for the same run seed).
    /// `machine_code` is what ptxas did to the global accesses, when the check ran: a backend
    /// that counts per PTX instruction books the sectors where the GPU's machine code has them.
    fn profile(
        &mut self,
        lesson: &Contract,
        kernel: &CompiledKernel,
        machine_code: Option<&MachineCode>,
        seed: u64,
        cancel: &CancelFlag,
    ) -> Result<SectorProfile, KernelFault>;

    /// Wall-clock timing of the profile size, where the backend can measure it.
    fn time(
        &mut self,
        _lesson: &Contract,
        _kernel: &CompiledKernel,
        _cancel: &CancelFlag,
    ) -> Result<Option<Timing>, KernelFault> {
        Ok(None)
    }
}
