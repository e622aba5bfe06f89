//! What can go wrong inside a launch, in words a learner can act on.

use serde::{Deserialize, Serialize};

/// Where in the launch something happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadPlace {
    pub block: [u32; 3],
    pub thread: [u32; 3],
    /// Source line (from the PTX `.loc`), when known.
    pub line: Option<u32>,
}

impl std::fmt::Display for ThreadPlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [bx, by, bz] = self.block;
        let [tx, ty, tz] = self.thread;
        write!(f, "block ({bx},{by},{bz}) thread ({tx},{ty},{tz})")?;
        if let Some(line) = self.line {
            write!(f, ", line {line}")?;
        }
        Ok(())
    }
}

/// The emulator's hazard kinds are the report's (the JSON names are the enum's, kebab-case).
pub use ptx_emu::FindingKind;

/// A non-fatal problem the emulator saw; the launch went on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub kind: FindingKind,
    pub at: ThreadPlace,
    /// Shared-memory byte offset.
    pub address: u64,
    pub message: String,
    /// How many times this (kind, line) was seen in the launch.
    pub count: u64,
}

impl Finding {
    /// The finding as one sentence that names its line, for places that show no line of
    /// their own (the headline, the grading table). The message itself does not name it: the
    /// run panel links the line beside it, and the CLI prints it once.
    pub fn located(&self) -> String {
        match self.at.line {
            Some(line) => format!("line {line}: {}", self.message),
            None => self.message.clone(),
        }
    }
}

/// An out-of-bounds or misaligned access the kernel's source makes, which the optimised
/// build the GPU runs never executed (the compiler removed or moved it): found on the
/// unoptimised (`-G`) build at a small size (src/trace/unexecuted.rs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnexecutedAccess {
    pub at: ThreadPlace,
    /// The size it was found at.
    pub n: u32,
    pub message: String,
}

impl UnexecutedAccess {
    /// The message, led by its line when known.
    pub fn located(&self) -> String {
        match self.at.line {
            Some(line) => format!("line {line}: {}", self.message),
            None => self.message.clone(),
        }
    }
}

/// A launch that could not complete or cannot be trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum KernelFault {
    /// A global load or store outside every buffer the harness allocated.
    OutOfBounds {
        at: ThreadPlace,
        address: u64,
        bytes: u32,
        write: bool,
        message: String,
    },
    /// A global, shared or local access at an address that is not a multiple of its size.
    Misaligned {
        at: ThreadPlace,
        address: u64,
        bytes: u32,
        write: bool,
        message: String,
    },
    /// The kernel ran past the step budget or the time limit (an endless loop?).
    Timeout {
        message: String,
        /// The source line the emulator's warp was on when it stopped (none on the GPU).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        line: Option<u32>,
    },
    /// A barrier that not every thread of the block can reach, or reached under divergence.
    Barrier {
        at: ThreadPlace,
        message: String,
    },
    /// The kernel uses a PTX feature the emulator does not execute: a limit of the
    /// emulator, not a fault of the kernel.
    Unsupported {
        message: String,
    },
    /// The launch the contract asks for cannot be made with this kernel (its
    /// `__cluster_dims__` differ from the lesson's cluster, say).
    LaunchRefused {
        message: String,
    },
    /// The kernel stopped itself: a failed `assert`, or `__trap()`, in the thread and on the
    /// line `at` names (the emulator; the GPU reports it as a crash).
    Trapped {
        at: ThreadPlace,
        message: String,
    },
    /// The GPU reported an error (illegal address, launch failure) or the worker died.
    Crashed {
        message: String,
    },
    /// The backend itself failed (not the kernel's fault).
    Infrastructure {
        message: String,
    },
    /// The GPU ran the kernel but this user may not read its performance counters (the
    /// driver's default on Linux and Windows: profiling is for administrators). Not the
    /// kernel's fault, and not the end of the run: the sectors are counted elsewhere.
    ProfilingRestricted {
        message: String,
    },
    Cancelled,
}

impl KernelFault {
    pub fn message(&self) -> String {
        match self {
            KernelFault::OutOfBounds { message, .. }
            | KernelFault::Misaligned { message, .. }
            | KernelFault::Timeout { message, .. }
            | KernelFault::Barrier { message, .. }
            | KernelFault::Trapped { message, .. }
            | KernelFault::Unsupported { message }
            | KernelFault::LaunchRefused { message }
            | KernelFault::Crashed { message }
            | KernelFault::Infrastructure { message }
            | KernelFault::ProfilingRestricted { message } => message.clone(),
            KernelFault::Cancelled => "cancelled".into(),
        }
    }

    /// Source line to mark in the editor, when the fault has one.
    pub fn line(&self) -> Option<u32> {
        match self {
            KernelFault::OutOfBounds { at, .. }
            | KernelFault::Misaligned { at, .. }
            | KernelFault::Barrier { at, .. }
            | KernelFault::Trapped { at, .. } => at.line,
            KernelFault::Timeout { line, .. } => *line,
            _ => None,
        }
    }

    pub fn is_infrastructure(&self) -> bool {
        matches!(
            self,
            KernelFault::Infrastructure { .. } | KernelFault::ProfilingRestricted { .. }
        )
    }
}
