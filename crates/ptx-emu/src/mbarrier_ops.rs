//! The mbarrier instructions as the block runner executes them (the model is mbarrier.rs):
//! init, arrive (with a count, a transaction count, a drop, on another block's mbarrier),
//! expect/complete_tx, and the waits, which also land the bulk copies that complete through
//! the mbarrier waited on.

use super::block::BlockRunner;
use super::fault::{EmuFault, EmuFaultKind};
use super::ir::{Addr, AsyncOp, MbarPhase, MemSpace, PReg};
use super::mbarrier::{Asked, Mbarriers};
use super::warp::{Warp, WarpState};

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
