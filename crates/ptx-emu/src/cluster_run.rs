//! Running a thread-block cluster (cluster.rs says how): the blocks' turns, the cluster
//! barrier, distributed shared memory addresses (`mapa`, `.shared::cluster`), the cluster
//! special registers, and the check that no block's memory is used after it may have exited.

use super::block::{BlockRunner, Round};
use super::block_memory::{Resolved, resolve};
use super::cluster::RemoteUse;
use super::fault::{EmuFault, EmuFaultKind};
use super::ir::{MemSpace, Src};
use super::memory::{CLUSTER_RANK_SHIFT, SHARED_WINDOW};
use super::shared::SharedMemory;
use super::stats::RawFinding;
use super::warp::{CLUSTER_BARRIER, Warp, WarpState};
use crate::FindingKind;

impl BlockRunner<'_> {
    /// The running block's state and the parked state of block `rank` trade places.
    fn swap_block(&mut self, rank: u32) {
        let st = &mut self.cluster.blocks[rank as usize];
        std::mem::swap(&mut self.warps, &mut st.warps);
        std::mem::swap(&mut self.shared, &mut st.shared);
        std::mem::swap(&mut self.barriers, &mut st.barriers);
        std::mem::swap(&mut self.mbars, &mut st.mbars);
        std::mem::swap(&mut self.bulk, &mut st.bulk);
        std::mem::swap(&mut self.ctaid, &mut st.ctaid);
        std::mem::swap(&mut self.block_index, &mut st.block_index);
        std::mem::swap(&mut self.watching, &mut st.watching);
        std::mem::swap(&mut self.traced, &mut st.traced);
        std::mem::swap(&mut self.last_exit, &mut st.last_exit);
        std::mem::swap(&mut self.mbar_completions, &mut st.mbar_completions);
    }

    /// Makes block `rank` the running one (the running one is parked).
    fn switch_to(&mut self, rank: u32) {
        if rank == self.cluster.rank {
            return;
        }
        // The running block's slot holds the spare set: parking the running block there puts
        // the spare in the runner, and taking `rank` out leaves the spare in its slot.
        self.swap_block(self.cluster.rank);
        self.swap_block(rank);
        self.cluster.rank = rank;
    }

    /// Runs cluster `index` (clusters numbered x fastest) to completion.
    pub fn run_cluster(&mut self, index: u64) -> Result<(), EmuFault> {
        let shape = self.cluster.shape;
        let size = shape.size();
        if size == 1 {
            let ctaid = shape.block(self.cfg.grid, index, 0);
            return self.run_block(super::block::linear_index(self.cfg.grid, ctaid));
        }
        // Every block starts: set up in turn as the running block, then parked.
        self.cluster.phase = 0;
        self.cluster.remote_uses.iter_mut().for_each(|u| *u = None);
        for rank in 0..size {
            let ctaid = shape.block(self.cfg.grid, index, rank);
            self.switch_to(rank);
            self.start_block(super::block::linear_index(self.cfg.grid, ctaid));
            self.cluster.blocks[rank as usize].done = false;
        }
        loop {
            let mut ran = false;
            for rank in 0..size {
                if self.cluster.blocks[rank as usize].done {
                    continue;
                }
                self.switch_to(rank);
                let mut warps = std::mem::take(&mut self.warps);
                let round = self.round(&mut warps);
                self.warps = warps;
                match round? {
                    Round::Ran => ran = true,
                    Round::Done => {
                        let phase = self.cluster.phase;
                        let st = &mut self.cluster.blocks[rank as usize];
                        st.done = true;
                        st.exit_phase = phase;
                        ran = true;
                    }
                    Round::Blocked => {}
                }
            }
            if (0..size).all(|r| self.cluster.blocks[r as usize].done) {
                break;
            }
            if ran {
                continue;
            }
            let mut warps = std::mem::take(&mut self.warps);
            let released = self.release_cluster_barrier(&mut warps);
            self.warps = warps;
            if !released {
                return Err(self.cluster_deadlock());
            }
        }
        self.note_exits_before_remote_uses();
        Ok(())
    }

    /// The live threads of every block of the cluster, or `(block rank, warp)`'s lanes not
    /// yet arrived at the cluster barrier: None when all have arrived.
    fn cluster_barrier_missing(&self, running: &[Warp]) -> Option<(u32, usize)> {
        let size = self.cluster.shape.size();
        for rank in 0..size {
            let warps = if rank == self.cluster.rank {
                running
            } else {
                &self.cluster.blocks[rank as usize].warps
            };
            if let Some(w) = warps.iter().position(|w| w.live() & !w.cluster_arrived != 0) {
                return Some((rank, w));
            }
        }
        None
    }

    /// Releases the cluster barrier if every live thread of the cluster has arrived: the
    /// waiting paths wake, the arrivals are cleared and every block's shared memory begins
    /// a new cluster interval. Returns whether it did.
    pub(super) fn release_cluster_barrier(&mut self, running: &mut [Warp]) -> bool {
        let anyone_waits = |warps: &[Warp]| {
            warps
                .iter()
                .any(|w| w.parked.iter().any(|p| p.wait.is_some_and(|b| b.id == CLUSTER_BARRIER)))
        };
        let size = self.cluster.shape.size();
        let waiting = (0..size).any(|r| {
            if r == self.cluster.rank {
                anyone_waits(running)
            } else {
                anyone_waits(&self.cluster.blocks[r as usize].warps)
            }
        });
        if !waiting || self.cluster_barrier_missing(running).is_some() {
            return false;
        }
        self.cluster.phase += 1;
        let watched = (0..size).find(|&r| {
            if r == self.cluster.rank {
                self.watching
            } else {
                self.cluster.blocks[r as usize].watching
            }
        });
        if let Some(rank) = watched {
            // The mark goes into the watched block's trace (the runner's one trace), with the
            // wait its threads were parked at.
            let warps: &[Warp] = if rank == self.cluster.rank {
                running
            } else {
                &self.cluster.blocks[rank as usize].warps
            };
            let pc = warps
                .iter()
                .flat_map(|w| w.parked.iter())
                .find_map(|p| p.wait.filter(|b| b.id == CLUSTER_BARRIER).map(|b| b.pc));
            self.trace_mark(pc, super::stats::TraceSpace::ClusterBarrier);
        }
        let mut findings = Vec::new();
        for rank in 0..size {
            let (warps, shared): (&mut [Warp], &mut SharedMemory) = if rank == self.cluster.rank {
                (&mut *running, &mut self.shared)
            } else {
                let st = &mut self.cluster.blocks[rank as usize];
                (&mut st.warps, &mut st.shared)
            };
            for w in warps.iter_mut() {
                w.cluster_arrived = 0;
                let mut woke = false;
                for p in w.parked.iter_mut() {
                    if p.wait.is_some_and(|b| b.id == CLUSTER_BARRIER) {
                        p.wait = None;
                        woke = true;
                    }
                }
                if woke && w.state != WarpState::Done {
                    w.state = WarpState::Running;
                }
            }
            findings.extend(shared.end_epoch());
            shared.cluster_barrier();
        }
        for f in findings {
            self.stats.note_finding(f);
        }
        true
    }

    /// No block of the cluster can go on and the cluster barrier cannot complete: says who
    /// waits where.
    fn cluster_deadlock(&mut self) -> EmuFault {
        let mut reason = String::from("deadlock: no block of the cluster can go on");
        if let Some((rank, w)) = self.cluster_barrier_missing(&self.warps) {
            self.switch_to(rank);
            let warp = &self.warps[w];
            let lane = (warp.live() & !warp.cluster_arrived).trailing_zeros() as usize;
            let ctaid = self.ctaid;
            let waits_at = warp
                .parked
                .iter()
                .find_map(|p| p.wait)
                .map(|b| self.prog.insts[b.pc as usize].line);
            reason = format!(
                "deadlock: threads wait at the cluster barrier (barrier.cluster.wait, cluster.sync()) for thread \
                 ({},{},{}) of block ({},{},{}), which has not arrived{}",
                warp.tid[0][lane],
                warp.tid[1][lane],
                warp.tid[2][lane],
                ctaid[0],
                ctaid[1],
                ctaid[2],
                match waits_at {
                    Some(line) => format!(" (it waits at line {line})"),
                    None => String::new(),
                }
            );
        }
        let mbars = self.mbars.describe_waiting();
        if !mbars.is_empty() {
            reason.push_str(&format!("; {mbars}"));
        }
        let pc = self
            .warps
            .iter()
            .flat_map(|w| w.parked.iter())
            .find_map(|p| p.wait)
            .map(|b| b.pc);
        self.fault(EmuFaultKind::Barrier { reason }, pc, None)
    }

    /// `barrier.cluster.arrive` for lanes `eff`.
    pub(super) fn cluster_arrive(&mut self, warp: &mut Warp, pc: usize, eff: u32) -> Result<(), EmuFault> {
        let twice = warp.cluster_arrived & eff;
        if twice != 0 {
            let lane = twice.trailing_zeros();
            return Err(self.fault(
                EmuFaultKind::Barrier {
                    reason: "barrier.cluster.arrive twice in one phase of the cluster barrier (each arrive needs its \
                             barrier.cluster.wait)"
                        .into(),
                },
                Some(pc as u32),
                Some((warp, lane)),
            ));
        }
        warp.cluster_arrived |= eff;
        Ok(())
    }

    /// `barrier.cluster.wait` for lanes `eff`: they must have arrived.
    pub(super) fn cluster_wait_check(&self, warp: &Warp, pc: usize, eff: u32) -> Result<(), EmuFault> {
        let missing = eff & !warp.cluster_arrived;
        if missing == 0 {
            return Ok(());
        }
        Err(self.fault(
            EmuFaultKind::Barrier {
                reason: "barrier.cluster.wait without barrier.cluster.arrive first".into(),
            },
            Some(pc as u32),
            Some((warp, missing.trailing_zeros())),
        ))
    }

    /// The cluster special registers.
    pub(super) fn cluster_special(&self, s: super::ir::Special) -> u64 {
        use super::ir::Special::*;
        let shape = self.cluster.shape;
        let (rank, at) = shape.place(self.ctaid);
        let d = |i: u8| i as usize;
        match s {
            ClusterCtaid(i) => at[d(i)] as u64,
            ClusterNctaid(i) => shape.dims[d(i)] as u64,
            ClusterCtarank => rank as u64,
            ClusterNctarank => shape.size() as u64,
            ClusterId(i) => (self.ctaid[d(i)] / shape.dims[d(i)]) as u64,
            NClusterId(i) => shape.clusters(self.cfg.grid)[d(i)] as u64,
            IsExplicitCluster => shape.explicit as u64,
            _ => unreachable!("cluster_special is asked for cluster registers only"),
        }
    }

    /// `mapa`: lane by lane, the address `a` would have in block `rank`'s shared memory.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mapa(
        &mut self,
        warp: &mut Warp,
        pc: usize,
        d: super::ir::Reg,
        a: Src,
        rank: Src,
        generic: bool,
        m: u32,
    ) -> Result<(), EmuFault> {
        let (a, ranks) = (self.read(warp, a), self.read(warp, rank));
        let size = self.cluster.shape.size() as u64;
        let mut out = [0u64; 32];
        for l in super::lanes::active(m) {
            if ranks[l] >= size {
                return Err(self.fault(
                    EmuFaultKind::Barrier {
                        reason: format!(
                            "mapa (map_shared_rank) to block rank {} of a cluster of {size} block(s)",
                            ranks[l]
                        ),
                    },
                    Some(pc as u32),
                    Some((warp, l as u32)),
                ));
            }
            let offset = if generic {
                a[l].wrapping_sub(SHARED_WINDOW)
            } else {
                a[l]
            };
            let offset = offset & ((1 << CLUSTER_RANK_SHIFT) - 1);
            let mapped = ((ranks[l] + 1) << CLUSTER_RANK_SHIFT) | offset;
            out[l] = if generic { mapped + SHARED_WINDOW } else { mapped };
        }
        warp.write_lanes(d, m, |l| out[l]);
        Ok(())
    }

    /// A `Resolved::Peer` that names the running block itself is its own shared memory.
    #[inline]
    pub(super) fn own_or_peer(&self, r: Resolved) -> Resolved {
        match r {
            Resolved::Peer { rank, offset } if rank == self.cluster.rank => Resolved::Shared(offset),
            other => other,
        }
    }

    /// The shared memory of block `rank` of the cluster (the running block's own too).
    pub(super) fn shared_of(&mut self, rank: u32) -> &mut SharedMemory {
        if rank == self.cluster.rank {
            &mut self.shared
        } else {
            &mut self.cluster.blocks[rank as usize].shared
        }
    }

    /// Where a shared address of `bytes` bytes lies: (block rank, offset), checked against
    /// that block's memory and the cluster.
    pub(super) fn shared_place(
        &mut self,
        space: MemSpace,
        address: u64,
        bytes: u32,
        pc: usize,
        warp: &Warp,
        l: usize,
    ) -> Result<(u32, u64), EmuFault> {
        let space = if space == MemSpace::Shared {
            MemSpace::SharedCluster
        } else {
            space
        };
        let (rank, offset) = match self.own_or_peer(resolve(space, address)) {
            Resolved::Shared(offset) => (self.cluster.rank, offset),
            Resolved::Peer { rank, offset } => (rank, offset),
            _ => {
                return Err(self.fault(
                    EmuFaultKind::Unsupported {
                        what: format!("an mbarrier or copy operand that is not a shared address ({address:#x})"),
                    },
                    Some(pc as u32),
                    Some((warp, l as u32)),
                ));
            }
        };
        if rank >= self.cluster.shape.size() {
            return Err(self.window_fault("shared", address, bytes as u64, 0, false, pc, warp, l));
        }
        let size = self.shared_of(rank).size();
        if offset + bytes as u64 > size {
            return Err(self.window_fault("shared", offset, bytes as u64, size, false, pc, warp, l));
        }
        if !super::memory::aligned(offset, bytes.min(16)) {
            return Err(self.misaligned("shared", offset, bytes, false, pc, warp, l));
        }
        Ok((rank, offset))
    }

    /// Remembers an access of lane `l` to block `rank`'s shared memory, for the check that
    /// it happened before that block exited.
    pub(super) fn note_remote_use(&mut self, warp: &Warp, l: usize, pc: usize, rank: u32, byte: u64) {
        let phase = self.cluster.phase;
        let slot = &mut self.cluster.remote_uses[rank as usize];
        if slot.is_none_or(|u| u.phase < phase) {
            *slot = Some(RemoteUse {
                phase,
                block: self.ctaid,
                block_index: self.block_index,
                thread: [warp.tid[0][l], warp.tid[1][l], warp.tid[2][l]],
                pc: pc as u32,
                byte,
            });
        }
    }

    /// At the cluster's end: every block another block accessed in a cluster interval the
    /// block itself did not outlive (no cluster barrier between the access and its exit).
    fn note_exits_before_remote_uses(&mut self) {
        if !self.cfg.check_hazards {
            return;
        }
        let size = self.cluster.shape.size();
        for rank in 0..size {
            let Some(used) = self.cluster.remote_uses[rank as usize] else {
                continue;
            };
            let (exit_phase, owner, exit) = if rank == self.cluster.rank {
                (
                    self.cluster.blocks[rank as usize].exit_phase,
                    self.ctaid,
                    self.last_exit,
                )
            } else {
                let st = &self.cluster.blocks[rank as usize];
                (st.exit_phase, st.ctaid, st.last_exit)
            };
            if used.phase < exit_phase {
                continue;
            }
            self.note_finding(RawFinding {
                kind: FindingKind::SharedAfterExit,
                pc: used.pc,
                block: used.block,
                thread: used.thread,
                byte: used.byte,
                other_thread: exit.map(|(_, t)| t),
                other_pc: exit.map(|(pc, _)| pc),
                block_index: used.block_index,
                count: 1,
                seq: 0,
                other_block: Some(owner),
                buffer: None,
                same_warp: false,
                peer: Some(owner),
            });
        }
    }

    /// After a round: warps that wait at an mbarrier run again if an mbarrier of the block
    /// completed a phase since they began to wait.
    pub(super) fn wake_mbarrier_waiters(warps: &mut [Warp]) {
        for w in warps.iter_mut() {
            if w.state == WarpState::MbarWait {
                w.state = WarpState::Running;
            }
        }
    }
}
