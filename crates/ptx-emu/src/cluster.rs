//! Thread-block clusters (sm_90): the blocks of a cluster run together on one host thread, so
//! that one can read and write another's shared memory (distributed shared memory: `mapa`,
//! `ld/st.shared::cluster`, generic addresses `mapa` made) and all of them meet at the
//! cluster barrier (`barrier.cluster.arrive` / `.wait`, `cluster.sync()`).
//!
//! The runner runs one block at a time: the running block's state is the runner's own
//! fields (as for a launch without clusters, which is a cluster of one block and takes no
//! detour through here); the others are parked in [`ClusterRun::blocks`] and swapped in
//! for their turn. A turn is one round of the block's scheduler (its warps run until they
//! wait or finish); blocks take turns until all are done. When no block can go on, the
//! cluster barrier is released if every thread of the cluster that has not exited arrived,
//! else the cluster is deadlocked.
//!
//! Two hazards are the cluster's own: an access to another block's shared memory that no
//! cluster barrier orders with that block's accesses (shared.rs, the races), and one that
//! nothing keeps ahead of that block's exit ([`FindingKind::SharedAfterExit`]): a block's
//! shared memory is gone once it has exited, so a block must not leave while a neighbour
//! may still read its tile (a `cluster.sync()` before the end).

use super::barrier::Barriers;
use super::block::{BlockRunner, Round};
use super::block_memory::{Resolved, resolve};
use super::fault::{EmuFault, EmuFaultKind};
use super::ir::{MemSpace, Src};
use super::mbarrier::Mbarriers;
use super::memory::{CLUSTER_RANK_SHIFT, SHARED_WINDOW};
use super::shared::SharedMemory;
use super::stats::RawFinding;
use super::warp::{CLUSTER_BARRIER, Warp, WarpState};
use crate::FindingKind;

/// A launch's cluster shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterShape {
    pub dims: [u32; 3],
    /// Whether the launch or the kernel gave the shape (`%is_explicit_cluster`); without one
    /// every block is a cluster of its own.
    pub explicit: bool,
}

impl ClusterShape {
    pub const SINGLE: ClusterShape = ClusterShape {
        dims: [1, 1, 1],
        explicit: false,
    };

    pub fn size(&self) -> u32 {
        self.dims.iter().product()
    }

    /// The rank of block `ctaid` in its cluster (x fastest) and its position there.
    pub fn place(&self, ctaid: [u32; 3]) -> (u32, [u32; 3]) {
        let [dx, dy, dz] = self.dims;
        let at = [ctaid[0] % dx, ctaid[1] % dy, ctaid[2] % dz];
        (at[0] + at[1] * dx + at[2] * dx * dy, at)
    }

    /// The grid's shape in clusters.
    pub fn clusters(&self, grid: [u32; 3]) -> [u32; 3] {
        [0, 1, 2].map(|d| grid[d] / self.dims[d])
    }

    /// Block `rank` of cluster `index` (clusters numbered x fastest): its grid position.
    pub fn block(&self, grid: [u32; 3], index: u64, rank: u32) -> [u32; 3] {
        let [cx, cy, _] = self.clusters(grid);
        let (cx, cy) = (cx as u64, cy as u64);
        let cluster = [
            (index % cx) as u32,
            ((index / cx) % cy) as u32,
            (index / (cx * cy)) as u32,
        ];
        let [dx, dy, _] = self.dims;
        let at = [rank % dx, (rank / dx) % dy, rank / (dx * dy)];
        [0, 1, 2].map(|d| cluster[d] * self.dims[d] + at[d])
    }
}

/// Why a cluster shape cannot be used for a launch.
pub fn check_shape(shape: [u32; 3], grid: [u32; 3], declared: Option<[u32; 3]>) -> Result<(), String> {
    if shape.contains(&0) {
        return Err(format!("a cluster of {shape:?} blocks"));
    }
    if let Some(d) = declared.filter(|&d| d != shape) {
        return Err(format!(
            "the kernel declares __cluster_dims__({}, {}, {}) but is launched with clusters of {} x {} x {}",
            d[0], d[1], d[2], shape[0], shape[1], shape[2]
        ));
    }
    let size: u32 = shape.iter().product();
    if size > 16 {
        return Err(format!(
            "a cluster of {size} blocks (sm_90 allows at most 16, 8 portably)"
        ));
    }
    if (0..3).any(|d| grid[d] % shape[d] != 0) {
        return Err(format!(
            "the grid of {} x {} x {} blocks is not a whole number of {} x {} x {} clusters",
            grid[0], grid[1], grid[2], shape[0], shape[1], shape[2]
        ));
    }
    Ok(())
}

/// A block of the running cluster while another block has its turn.
pub struct BlockState {
    pub warps: Vec<Warp>,
    pub shared: SharedMemory,
    pub barriers: Barriers,
    pub mbars: Mbarriers,
    pub bulk: Vec<super::async_copy::BulkCopy>,
    pub ctaid: [u32; 3],
    pub block_index: u64,
    pub watching: bool,
    pub traced: Vec<u32>,
    pub last_exit: Option<(u32, [u32; 3])>,
    pub mbar_completions: u64,
    /// Whether all its warps are done, and the cluster barriers completed by then.
    pub done: bool,
    pub exit_phase: u32,
}

impl Default for BlockState {
    fn default() -> BlockState {
        BlockState {
            warps: Vec::new(),
            shared: SharedMemory::with_warp_size(0, false, 32),
            barriers: Barriers::default(),
            mbars: Mbarriers::default(),
            bulk: Vec::new(),
            ctaid: [0; 3],
            block_index: 0,
            watching: false,
            traced: Vec::new(),
            last_exit: None,
            mbar_completions: 0,
            done: false,
            exit_phase: 0,
        }
    }
}

/// The latest access of one block's shared memory from another block of the cluster.
#[derive(Debug, Clone, Copy)]
pub struct RemoteUse {
    /// Cluster barriers completed when it happened.
    pub phase: u32,
    pub block: [u32; 3],
    pub block_index: u64,
    pub thread: [u32; 3],
    pub pc: u32,
    pub byte: u64,
}

/// The cluster a runner is running.
pub struct ClusterRun {
    pub shape: ClusterShape,
    /// The running block's rank.
    pub rank: u32,
    /// Every block of the cluster by rank; the running block's entry is a placeholder
    /// (its state is the runner's own fields).
    pub blocks: Vec<BlockState>,
    /// Cluster barriers completed.
    pub phase: u32,
    /// Per block: the latest access another block made to its shared memory.
    pub remote_uses: Vec<Option<RemoteUse>>,
}

impl ClusterRun {
    pub fn new(shape: ClusterShape) -> ClusterRun {
        ClusterRun {
            shape,
            rank: 0,
            blocks: (0..shape.size()).map(|_| BlockState::default()).collect(),
            phase: 0,
            remote_uses: vec![None; shape.size() as usize],
        }
    }
}

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
