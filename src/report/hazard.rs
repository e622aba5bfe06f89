//! The hazards of a run sorted into the classes compute-sanitizer's tools report, so that the
//! emulator's checks can be compared with the GPU's ground truth kernel by kernel (the hazard
//! corpus, docs/archive/measurements-log.md) and a learner's `haloscope check` reads the same way.

use super::{FindingKind, KernelFault, RunReport};
use serde::{Deserialize, Serialize};

/// One class of hazard, named after the compute-sanitizer tool that reports it on a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HazardClass {
    /// `--tool memcheck`: a global, shared or local access outside its memory, or misaligned.
    Memcheck,
    /// `--tool racecheck`: two threads of a block touch shared bytes, one writing, unordered.
    Racecheck,
    /// `--tool initcheck --initcheck-address-space all`: a read of memory never written.
    Initcheck,
    /// `--tool synccheck`: a barrier or warp-level call the threads do not reach as CUDA
    /// requires (divergent `__syncthreads()`, a member mask that leaves the caller out).
    Synccheck,
    /// Blocks of one launch touch the same global bytes, one writing (no sanitizer tool
    /// checks this; the emulator does).
    GlobalRace,
    /// The kernel did not finish (an endless loop, a deadlock that is not a barrier misuse).
    Hang,
}

impl HazardClass {
    pub fn name(self) -> &'static str {
        match self {
            HazardClass::Memcheck => "memcheck",
            HazardClass::Racecheck => "racecheck",
            HazardClass::Initcheck => "initcheck",
            HazardClass::Synccheck => "synccheck",
            HazardClass::GlobalRace => "global-race",
            HazardClass::Hang => "hang",
        }
    }
}

/// The classes of a finding: the compute-sanitizer tools that report the same hazard on the
/// H100 (docs/archive/measurements-log.md).
pub fn finding_classes(kind: FindingKind) -> &'static [HazardClass] {
    match kind {
        FindingKind::UninitialisedSharedRead => &[HazardClass::Initcheck],
        FindingKind::SharedRace => &[HazardClass::Racecheck],
        FindingKind::GlobalRace => &[HazardClass::GlobalRace],
        FindingKind::DivergentBarrier | FindingKind::WarpSyncOutsideMask => &[HazardClass::Synccheck],
        // An access to bytes an asynchronous copy has not written yet: racecheck reports a race
        // with the copy.
        FindingKind::AsyncCopyInFlight => &[HazardClass::Racecheck],
        // A read of a neighbour's shared memory that may come after the neighbour exited:
        // racecheck reports "a block that might have already exited", and under memcheck the
        // launch ends with an unspecified launch failure.
        FindingKind::SharedAfterExit => &[HazardClass::Racecheck, HazardClass::Memcheck],
    }
}

/// The class of a fault that ended the run; None for faults that are no hazard of the
/// kernel's memory or synchronisation (unsupported instructions, haloscope's own failures,
/// cancellation, a trap or failed assert).
pub fn fault_class(fault: &KernelFault) -> Option<HazardClass> {
    match fault {
        KernelFault::OutOfBounds { .. } | KernelFault::Misaligned { .. } => Some(HazardClass::Memcheck),
        KernelFault::Barrier { .. } => Some(HazardClass::Synccheck),
        KernelFault::Timeout { .. } => Some(HazardClass::Hang),
        KernelFault::Crashed { .. }
        | KernelFault::Trapped { .. }
        | KernelFault::Unsupported { .. }
        | KernelFault::LaunchRefused { .. }
        | KernelFault::Infrastructure { .. }
        | KernelFault::ProfilingRestricted { .. }
        | KernelFault::Cancelled => None,
    }
}

/// Every hazard class a run found, sorted, each once.
pub fn hazard_classes(report: &RunReport) -> Vec<HazardClass> {
    let mut classes: Vec<HazardClass> = report
        .findings
        .iter()
        .flat_map(|f| finding_classes(f.kind).iter().copied())
        .chain(report.fault.as_ref().and_then(fault_class))
        .collect();
    classes.sort();
    classes.dedup();
    classes
}
