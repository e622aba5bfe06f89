//! Hazards the emulator reports without stopping the launch.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// Shared memory read before any thread of the block wrote it in this launch.
    UninitialisedSharedRead,
    /// Two threads touched one shared word, at least one writing, with no barrier between.
    SharedRace,
    /// Threads of one block completed a barrier through different `__syncthreads()` calls
    /// (sm_70 and later count arrivals per barrier, but CUDA leaves this undefined).
    DivergentBarrier,
    /// Threads of two different blocks touched the same global bytes in one launch, at least
    /// one of them writing (nothing orders blocks within a launch).
    GlobalRace,
    /// Shared memory read or written while an asynchronous copy (`cp.async` before its wait,
    /// a bulk copy before its mbarrier phase completed) had yet to write those bytes.
    AsyncCopyInFlight,
    /// A thread read or wrote the shared memory of another block of its cluster, and nothing
    /// (no cluster barrier between the access and that block's exit) kept that block from
    /// exiting first: a block's shared memory is gone once it has exited.
    SharedAfterExit,
    /// `__syncwarp(mask)` executed by a thread its mask does not name. CUDA leaves it
    /// undefined; the emulator orders the named threads only and goes on, so what the
    /// unordered threads then race on is reported too (compute-sanitizer's synccheck and
    /// racecheck both report such a kernel).
    WarpSyncOutsideMask,
}
