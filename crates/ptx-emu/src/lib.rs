//! ptx-emu: a CPU executor of the PTX that NVRTC emits, with warps of 32 lanes in lockstep,
//! exact global-memory sector counts (as `smsp__sass_sectors_mem_global` counts them) and
//! hazard checks (out-of-bounds, uninitialised shared reads, shared and global races,
//! divergent barriers, runaway loops).
//!
//! The API, in the order a caller uses it:
//! 1. [`Program::from_ptx`]: parse a module and decode one entry, once.
//! 2. [`GlobalMemory`]: allocate the kernel's buffers; [`LaunchConfig`]: grid, block,
//!    parameter bytes, checks, the block to watch, a fetch window.
//! 3. [`launch`] with an [`Observer`] (or [`Collect`]) and a [`CancelFlag`]: the counters
//!    come back as [`LaunchStats`]; the watched block's trace, the findings, printf text and
//!    the fetch map come to the observer; a fault that stops the launch is an [`EmuFault`].
//! 4. [`Program::instruction`] says what a pc is (its lines, whether it touches memory).
//!
//! Adding an instruction: this crate's README.md ("Instruction families", "Adding an
//! instruction"): decode it in `decode/`, give it a variant of its family's type in `ir.rs`
//! (`Kind` groups the families by how `run_warp` runs them), execute it in its family's
//! file, add a sample to `coverage.rs`.

mod alu;
mod async_copy;
mod atomic;
mod barrier;
mod bits;
mod block;
mod block_classes;
mod block_memory;
mod cancel;
mod cfg;
mod class_launch;
mod cluster;
mod cluster_run;
mod count_slice;
pub mod coverage;
mod decode;
mod decoded_lines;
mod device_call;
mod fast_memory;
mod fault;
pub mod fetch_map;
mod finding;
mod global_races;
mod ir;
mod lane_loops;
mod lanes;
mod launch;
mod mbarrier;
mod mbarrier_ops;
mod memory;
mod numeric;
mod observe;
mod printf;
pub mod ptx;
mod quick;
mod shared;
mod stats;
mod warp;
mod warp_ops;

pub use block::LaunchConfig;
pub use cancel::CancelFlag;
pub use cluster::check_shape as check_cluster_shape;
pub use decode::decode_entry;
pub use decoded_lines::{Control, DecodedLine, decoded_lines};
pub use fault::{EmuFault, EmuFaultKind};
pub use finding::FindingKind;
pub use ir::{AccessKind, CopyKind, InstructionInfo, Program};
pub use launch::launch;
pub use memory::{BufferId, GlobalMemory};
pub use observe::{Collect, Ignore, Observer};
pub use stats::{
    LaunchStats, PRINTED_BYTES_KEPT, PRINTED_LINES_KEPT, PcStats, Printed, RawFinding, TraceSpace, TracedAccess,
};

/// The text of a panic's payload (a `panic!` message, or a placeholder).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}
