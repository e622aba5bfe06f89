//! mbarriers: the 64-bit barrier objects in shared memory that asynchronous copies and
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

use super::block::BlockRunner;
use super::fault::{EmuFault, EmuFaultKind};
use super::ir::{Addr, AsyncOp, MbarPhase, MemSpace, PReg};
use super::warp::{Warp, WarpState};

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

impl BlockRunner<'_> {
    /// The shared offset of an mbarrier operand for lane `l`, in block `rank` (the running
    /// block's own unless a `.shared::cluster` address names another).
    fn mbarrier_at(
        &mut self,
        warp: &Warp,
        addr: Addr,
        space: MemSpace,
        l: usize,
        pc: usize,
    ) -> Result<(u32, u64), EmuFault> {
        let address = self.addresses(warp, addr)[l];
        let (rank, offset) = self.shared_place(space, address, 8, pc, warp, l)?;
        Ok((rank, offset))
    }

    /// `mbarrier.init` by lane `l` writes the object's 8 bytes (in block `rank`'s memory).
    fn note_object_write(&mut self, warp: &Warp, l: usize, pc: usize, rank: u32, offset: u64) {
        let mut by = Self::accessor(warp, l, pc);
        if rank != self.cluster.rank {
            by.thread = super::shared::remote_thread(self.cluster.rank, warp.linear[l]);
        }
        let memory = self.shared_of(rank);
        let unchanged = memory.store_unchanged(offset, 8, 0);
        if let Some(h) = memory.note_write(offset, 8, by, unchanged) {
            self.note_hazard_in(warp, l, pc, h, rank);
        }
    }

    /// The mbarriers of block `rank` (the running one or a parked peer).
    fn mbarriers_of(&mut self, rank: u32) -> &mut Mbarriers {
        if rank == self.cluster.rank {
            &mut self.mbars
        } else {
            &mut self.cluster.blocks[rank as usize].mbars
        }
    }

    /// A phase of an mbarrier of block `rank` completed: its waiting warps look again, and
    /// the block's barrier epoch ends (see the module's doc on ordering).
    pub(super) fn mbarrier_phase_completed(&mut self, rank: u32) {
        if rank == self.cluster.rank {
            self.mbar_completions += 1;
            self.end_epoch();
            self.shared.epoch += 1;
        } else {
            let peer = &mut self.cluster.blocks[rank as usize];
            for w in peer.warps.iter_mut() {
                if w.state == WarpState::MbarWait {
                    w.state = WarpState::Running;
                }
            }
            let findings = peer.shared.end_epoch();
            peer.shared.epoch += 1;
            for f in findings {
                self.stats.note_finding(f);
            }
        }
    }

    /// The mbarrier instructions that do not wait, and `cp.async.mbarrier.arrive`'s arrival.
    pub(super) fn mbarrier_op(&mut self, warp: &mut Warp, pc: usize, op: &AsyncOp, m: u32) -> Result<(), EmuFault> {
        let fail = |this: &Self, warp: &Warp, l: usize, reason: String| {
            this.fault(
                EmuFaultKind::Barrier { reason },
                Some(pc as u32),
                Some((warp, l as u32)),
            )
        };
        match *op {
            AsyncOp::MbarInit { addr, count } => {
                let counts = self.read(warp, count);
                for l in super::lanes::active(m) {
                    let (rank, offset) = self.mbarrier_at(warp, addr, MemSpace::Shared, l, pc)?;
                    self.mbarriers_of(rank)
                        .init(offset, counts[l] as u32)
                        .map_err(|r| fail(self, warp, l, r))?;
                    // The object's bytes are written (the checks see them as initialised).
                    self.note_object_write(warp, l, pc, rank, offset);
                }
            }
            AsyncOp::MbarInval { addr } => {
                for l in super::lanes::active(m) {
                    let (rank, offset) = self.mbarrier_at(warp, addr, MemSpace::Shared, l, pc)?;
                    self.mbarriers_of(rank).inval(offset);
                }
            }
            AsyncOp::MbarArrive {
                state,
                addr,
                count,
                tx,
                drop,
                space,
            } => {
                let counts = count.map(|c| self.read(warp, c));
                let txs = tx.map(|t| self.read(warp, t));
                let mut states = [0u64; 32];
                for l in super::lanes::active(m) {
                    let (rank, offset) = self.mbarrier_at(warp, addr, space, l, pc)?;
                    let n = counts.map_or(1, |c| c[l] as u32);
                    let bytes = txs.map_or(0, |t| t[l] as u32);
                    let arrived = self
                        .mbarriers_of(rank)
                        .arrive(offset, n, bytes, drop)
                        .map_err(|r| fail(self, warp, l, r))?;
                    states[l] = arrived.state;
                    if arrived.completed {
                        self.mbarrier_phase_completed(rank);
                    }
                }
                if let Some(d) = state {
                    warp.write_lanes(d, m, |l| states[l]);
                }
            }
            AsyncOp::MbarTx {
                addr,
                tx,
                complete,
                space,
            } => {
                let txs = self.read(warp, tx);
                for l in super::lanes::active(m) {
                    let (rank, offset) = self.mbarrier_at(warp, addr, space, l, pc)?;
                    let done = self
                        .mbarriers_of(rank)
                        .transaction(offset, txs[l] as u32, complete)
                        .map_err(|r| fail(self, warp, l, r))?;
                    if done {
                        self.mbarrier_phase_completed(rank);
                    }
                }
            }
            AsyncOp::MbarPending { d, state } => {
                let states = self.read(warp, state);
                warp.write_lanes(d, m, |l| states[l] & 0xFFFF_FFFF);
            }
            _ => unreachable!("mbarrier_op is handed mbarrier instructions only"),
        }
        Ok(())
    }

    /// One arrival of lane `l` at the mbarrier at `mbar` (its own block's): what a
    /// `cp.async.mbarrier.arrive.noinc` does once the lane's copies have landed.
    pub(super) fn mbarrier_arrive_one(&mut self, warp: &Warp, l: usize, pc: usize, mbar: Addr) -> Result<(), EmuFault> {
        let (rank, offset) = self.mbarrier_at(warp, mbar, MemSpace::Shared, l, pc)?;
        let arrived = self.mbarriers_of(rank).arrive(offset, 1, 0, false).map_err(|reason| {
            self.fault(
                EmuFaultKind::Barrier { reason },
                Some(pc as u32),
                Some((warp, l as u32)),
            )
        })?;
        if arrived.completed {
            self.mbarrier_phase_completed(rank);
        }
        Ok(())
    }

    /// `mbarrier.test_wait` / `try_wait` for lanes `eff`: lands the bulk copies that complete
    /// through the mbarrier (a wait is where the emulator lets them arrive), writes whether
    /// each lane's phase completed into `d`, and says whether no lane's had (the warp then
    /// waits until an mbarrier changes).
    pub(super) fn mbarrier_wait(
        &mut self,
        warp: &mut Warp,
        pc: usize,
        d: PReg,
        addr: Addr,
        phase: MbarPhase,
        eff: u32,
    ) -> Result<bool, EmuFault> {
        let (asked, parity) = match phase {
            MbarPhase::State(s) => (self.read(warp, s), false),
            MbarPhase::Parity(p) => (self.read(warp, p), true),
        };
        let mut done = 0u32;
        for l in super::lanes::active(eff) {
            let (rank, offset) = self.mbarrier_at(warp, addr, MemSpace::Shared, l, pc)?;
            if rank != self.cluster.rank {
                return Err(self.fault(
                    EmuFaultKind::Unsupported {
                        what: "waiting on another block's mbarrier".into(),
                    },
                    Some(pc as u32),
                    Some((warp, l as u32)),
                ));
            }
            self.land_bulk_copies(offset)?;
            let asked = if parity {
                Asked::Parity(asked[l] as u32)
            } else {
                Asked::Phase((asked[l] >> 32) as u32)
            };
            let complete = self.mbars.phase_done(offset, asked).map_err(|reason| {
                self.fault(
                    EmuFaultKind::Barrier { reason },
                    Some(pc as u32),
                    Some((warp, l as u32)),
                )
            })?;
            if complete {
                done |= 1 << l;
            }
        }
        warp.write_pred(d, eff, done);
        Ok(done == 0)
    }
}
