//! Faults found while emulating, with the place they happened.

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmuFaultKind {
    /// Global access outside every buffer.
    OutOfBounds {
        address: u64,
        bytes: u32,
        write: bool,
        described: String,
    },
    Misaligned {
        address: u64,
        bytes: u32,
        write: bool,
        /// Where the address lies, in words (`byte 6 of `in``, `shared memory byte 6`).
        described: String,
    },
    /// Shared or local access past the declared size.
    WindowOutOfBounds {
        space: &'static str,
        offset: u64,
        bytes: u32,
        size: u64,
        write: bool,
    },
    Barrier {
        reason: String,
    },
    /// A warp-level `.sync` instruction whose member mask the threads do not honour.
    WarpSync {
        reason: String,
    },
    /// The kernel executed `trap` or failed a device `assert`.
    Trap {
        message: String,
    },
    Budget {
        steps: u64,
    },
    Unsupported {
        what: String,
    },
    /// The launch itself cannot be made as configured (a cluster shape the grid or the
    /// kernel does not fit).
    Launch {
        reason: String,
    },
    /// The emulator itself failed (a bug of ours: a panic on one of its threads, caught).
    Internal {
        message: String,
    },
    Cancelled,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmuFault {
    pub kind: EmuFaultKind,
    pub pc: Option<u32>,
    pub block: [u32; 3],
    pub thread: Option<[u32; 3]>,
    pub block_index: u64,
    /// The hazards the launch had found when it stopped (in the blocks that ran, and in the
    /// faulting block up to the fault): a race the fault's own block or an earlier one made
    /// is reported beside the fault instead of being lost with the launch.
    pub findings: Vec<crate::stats::RawFinding>,
}
