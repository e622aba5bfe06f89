//! mbarriers, as data: the 64-bit barrier objects in shared memory that asynchronous copies and
//! split arrive/wait synchronisation complete through (`cuda::barrier`, `cuda::pipeline`'s
//! block scope, the bulk copies of the Tensor Memory Accelerator).
//!
//! The model, after the PTX ISA's: an mbarrier has a current phase, a count of arrivals
//! still pending in it (reset to the expected count when a phase completes) and a
//! transaction count (bytes asynchronous copies have yet to deliver, raised by
//! `expect_tx`, lowered by `complete_tx`). A phase completes when both reach zero. The state
//! an `arrive` returns names the phase it arrived in; a wait asks whether that phase (or,
//! with `.parity`, the phase of that parity) has completed.
//!
//! The object's state is kept beside shared memory, by offset, not in its 8 bytes: PTX
//! leaves those opaque, and reading them with `ld` is undefined. `mbarrier.init` still
//! counts as a write of them, so the checks know the bytes are in use.
//!
//! Ordering. A completed phase orders the arrivals before it with the waits after it, for
//! every thread that took part. The shared-memory checks have no per-thread notion of that
//! yet, so a phase completing ends the block's barrier epoch, as a block barrier does: no
//! false race is ever reported between producers and consumers of an mbarrier, at the price
//! of missing a race with a thread that neither arrived nor waited (docs/emulator.md).
//!
//! The instructions that act on them are `BlockRunner` methods in mbarrier_ops.rs.

/// A bulk copy (`cp.async.bulk`) that has not landed: its bytes, where they go, and the
/// mbarrier whose transaction count it completes when it does (async_copy.rs).
#[derive(Debug, Clone, Default)]
pub struct BulkCopy {
    /// Shared offset (the issuing block's own memory).
    pub dst: u64,
    pub data: Vec<u8>,
    /// The mbarrier (shared offset) whose transaction count it completes.
    pub mbar: u64,
    pub pc: u32,
}

/// One mbarrier object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mbarrier {
    /// Byte offset in the owning block's shared memory.
    pub offset: u64,
    /// Arrivals each phase waits for (`mbarrier.init`'s count, less the drops).
    pub expected: u32,
    /// Arrivals still missing in the current phase.
    pub pending: u32,
    /// Bytes still expected from asynchronous copies in the current phase (may dip below
    /// zero when a copy lands before its `expect_tx`, as the ISA allows).
    pub tx: i64,
    /// Phases completed so far: the current phase's number.
    pub phase: u32,
}

/// The mbarriers of one block.
#[derive(Debug, Clone, Default)]
pub struct Mbarriers {
    list: Vec<Mbarrier>,
}

/// What an arrival did.
pub struct Arrived {
    /// The state the instruction returns: the phase arrived in and the arrivals then pending.
    pub state: u64,
    /// Whether the arrival completed the phase.
    pub completed: bool,
}

impl Mbarriers {
    pub fn reset(&mut self) {
        self.list.clear();
    }

    pub fn get(&self, offset: u64) -> Option<&Mbarrier> {
        self.list.iter().find(|b| b.offset == offset)
    }

    fn get_mut(&mut self, offset: u64) -> Result<&mut Mbarrier, String> {
        self.list
            .iter_mut()
            .find(|b| b.offset == offset)
            .ok_or_else(|| format!("the mbarrier at shared byte {offset} is used before mbarrier.init"))
    }

    pub fn init(&mut self, offset: u64, count: u32) -> Result<(), String> {
        if count == 0 || count >= 1 << 20 {
            return Err(format!(
                "mbarrier.init with count {count} (the ISA allows 1 to 2^20 - 1)"
            ));
        }
        self.list.retain(|b| b.offset != offset);
        self.list.push(Mbarrier {
            offset,
            expected: count,
            pending: count,
            tx: 0,
            phase: 0,
        });
        Ok(())
    }

    pub fn inval(&mut self, offset: u64) {
        self.list.retain(|b| b.offset != offset);
    }

    /// `count` arrivals, after raising the transaction count by `tx`; `drop` lowers the
    /// expected count too.
    pub fn arrive(&mut self, offset: u64, count: u32, tx: u32, drop: bool) -> Result<Arrived, String> {
        let b = self.get_mut(offset)?;
        if count > b.pending {
            return Err(format!(
                "{count} arrival(s) at the mbarrier at shared byte {offset}, whose phase waits for only {} more \
                 (more threads arrive than mbarrier.init counted)",
                b.pending
            ));
        }
        b.tx += tx as i64;
        b.pending -= count;
        if drop {
            b.expected -= count;
        }
        let state = ((b.phase as u64) << 32) | b.pending as u64;
        let completed = Self::complete_if_done(b);
        Ok(Arrived { state, completed })
    }

    /// Raises (`complete` false) or lowers the transaction count by `tx` bytes; true when
    /// that completed the phase.
    pub fn transaction(&mut self, offset: u64, tx: u32, complete: bool) -> Result<bool, String> {
        let b = self.get_mut(offset)?;
        if complete {
            b.tx -= tx as i64;
        } else {
            b.tx += tx as i64;
        }
        Ok(Self::complete_if_done(b))
    }

    fn complete_if_done(b: &mut Mbarrier) -> bool {
        if b.pending == 0 && b.tx == 0 {
            b.phase += 1;
            b.pending = b.expected;
            true
        } else {
            false
        }
    }

    /// Whether the phase `asked` names has completed.
    pub fn phase_done(&self, offset: u64, asked: Asked) -> Result<bool, String> {
        let b = self
            .get(offset)
            .ok_or_else(|| format!("the mbarrier at shared byte {offset} is waited on before mbarrier.init"))?;
        Ok(match asked {
            Asked::Phase(p) => b.phase > p,
            // The current phase has the parity of its number; the other parity is the phase
            // just completed.
            Asked::Parity(p) => (b.phase & 1) != (p & 1),
        })
    }

    /// What keeps every mbarrier from completing, for a deadlock message.
    pub fn describe_waiting(&self) -> String {
        let parts: Vec<String> = self
            .list
            .iter()
            .map(|b| {
                format!(
                    "the mbarrier at shared byte {} waits for {} arrival(s) and {} byte(s) in phase {}",
                    b.offset, b.pending, b.tx, b.phase
                )
            })
            .collect();
        parts.join("; ")
    }
}

/// The phase a wait asks about, per lane.
#[derive(Debug, Clone, Copy)]
pub enum Asked {
    /// The phase number an arrive's state named.
    Phase(u32),
    /// `.parity`.
    Parity(u32),
}
