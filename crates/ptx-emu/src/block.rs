//! Runs one thread block: its warps in lockstep, the SIMT stack, barriers, and every
//! instruction's semantics. Memory instructions live in `block_memory.rs`.

use super::alu;
use super::barrier::{BARRIERS, Barriers};
use super::block_classes::{AffineTracker, Operands};
use super::cluster::{BlockState, ClusterRun, ClusterShape};
use super::fault::{EmuFault, EmuFaultKind};
use super::fetch_map::{FetchCounter, FetchMap, FetchWindow};
use super::ir::*;
use super::mbarrier::{BulkCopy, Mbarriers};
use super::memory::{GlobalMemory, LOCAL_WINDOW, SHARED_WINDOW};
use super::shared::SharedMemory;
use super::stats::{RawFinding, Tally};
use super::warp::{BarrierWait, CLUSTER_BARRIER, FULL, Frame, WARP_SYNC, Warp, WarpState};
use crate::CancelFlag;
use crate::FindingKind;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};

/// Everything a launch shares between its blocks.
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub params: Vec<u8>,
    pub dynamic_shared: u32,
    pub check_hazards: bool,
    /// Record the memory accesses of every thread of this block (for the read-source
    /// diagram), up to [`TRACE_CAP`] per thread.
    pub watch: Option<[u32; 3]>,
    /// Instructions one warp may execute before the launch is stopped as a runaway.
    pub step_budget: u64,
    /// 32 for real warps; 1 runs every thread alone (the naive baseline of the benchmark).
    pub lanes_per_warp: u32,
    /// Count the input's fetches in this window (the heat map), with the input buffer's
    /// address range.
    pub fetch_map: Option<(FetchWindow, u64, u64)>,
    /// The cluster shape the launch gives (None: the kernel's `__cluster_dims__`, else every
    /// block a cluster of its own). The grid must be a whole number of clusters.
    pub cluster: Option<[u32; 3]>,
    /// Count blocks that provably count alike once per class (block_classes): for launches
    /// that only count. Ignored where it does not apply: checks on, a watched block, a fetch
    /// map, lanes run alone.
    pub count_by_class: bool,
}

impl LaunchConfig {
    /// The launch's cluster shape: the configuration's, else the kernel's own.
    pub fn cluster_shape(&self, prog: &Program) -> ClusterShape {
        match self.cluster.or(prog.cluster_dims) {
            Some(dims) => ClusterShape { dims, explicit: true },
            None => ClusterShape::SINGLE,
        }
    }
}

/// The linear index of block `ctaid` in `grid` (x fastest).
pub fn linear_index(grid: [u32; 3], ctaid: [u32; 3]) -> u64 {
    let [gx, gy, _] = grid.map(|g| g as u64);
    ctaid[0] as u64 + ctaid[1] as u64 * gx + ctaid[2] as u64 * gx * gy
}

/// How one round of a block's scheduler ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Round {
    /// Something happened (a warp ran or gave way, a barrier was released): run again.
    Ran,
    /// Every warp is done.
    Done,
    /// Every warp that is not done waits, and no block barrier can complete: for the
    /// cluster barrier, an mbarrier, or a barrier whose threads wait for one of those.
    Blocked,
}

/// Per-instruction working arrays of the memory instructions (block_memory.rs), reused; only the parts an instruction writes are read.
pub struct Scratch {
    pub(super) store_values: [[u64; 32]; 4],
    pub(super) loaded: [[u64; 32]; 4],
    pub(super) sectors: [u64; 128],
    pub(super) shared_offsets: [(u64, u32); 32],
}

impl Default for Scratch {
    fn default() -> Scratch {
        Scratch {
            store_values: [[0; 32]; 4],
            loaded: [[0; 32]; 4],
            sectors: [0; 128],
            shared_offsets: [(0, 0); 32],
        }
    }
}

pub struct BlockRunner<'a> {
    pub prog: &'a Program,
    pub cfg: &'a LaunchConfig,
    pub mem: &'a GlobalMemory,
    pub warps: Vec<Warp>,
    pub shared: SharedMemory,
    pub barriers: Barriers,
    pub stats: Tally,
    pub ctaid: [u32; 3],
    pub block_index: u64,
    pub abort: &'a AtomicBool,
    pub cancel: &'a CancelFlag,
    /// Whether the block running now is the watched one, and accesses traced per thread.
    pub(super) watching: bool,
    pub(super) traced: Vec<u32>,
    pub(super) scratch: Option<Box<Scratch>>,
    /// The heat map's counts, when the launch asked for them.
    pub(super) fetch: Option<FetchCounter>,
    /// The instruction being executed, set before each: when the emulator itself fails (a
    /// panic, caught by `launch`), it names the kernel's line and PTX instruction.
    pub(super) at_pc: u32,
    /// Findings noted in this runner so far (their `seq`: the order of execution).
    pub(super) findings_noted: u64,
    /// The block's mbarriers, and its bulk copies in flight (mbarrier.rs, async_copy.rs).
    pub(super) mbars: Mbarriers,
    pub(super) bulk: Vec<BulkCopy>,
    /// Phases the block's mbarriers completed: a round wakes the warps waiting on one when
    /// this moved.
    pub(super) mbar_completions: u64,
    /// The last `exit` the block ran, and a thread that ran it (named when a neighbour in the
    /// cluster accessed its memory after it may have gone).
    pub(super) last_exit: Option<(u32, [u32; 3])>,
    /// Follows the running block's values when the launch counts by class (block_classes):
    /// only while a class's representative runs.
    pub(crate) affine: Option<Box<AffineTracker>>,
    /// The cluster being run (a cluster of one block unless the launch has clusters).
    pub(super) cluster: ClusterRun,
}

/// Accesses traced per thread of the watched block: enough for several z steps in 3D.
pub const TRACE_CAP: u32 = 128;

/// How often (in warp instructions) a warp looks at the abort and cancel flags.
const CHECK_EVERY: u64 = 1 << 14;

/// What a control-flow instruction leaves its warp to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Turn {
    /// Run on, from wherever the stack says now.
    Run,
    /// Give way to the block's other warps (`nanosleep`): the warp goes on in the next round.
    GiveWay,
    /// Wait until an mbarrier of the block completes a phase.
    MbarWait,
}

impl<'a> BlockRunner<'a> {
    pub fn new(
        prog: &'a Program,
        cfg: &'a LaunchConfig,
        mem: &'a GlobalMemory,
        abort: &'a AtomicBool,
        cancel: &'a CancelFlag,
    ) -> BlockRunner<'a> {
        let threads = cfg.block.iter().product::<u32>();
        let lanes = cfg.lanes_per_warp.clamp(1, 32);
        let warp_count = threads.div_ceil(lanes) as usize;
        let shared_bytes = prog
            .shared_bytes
            .max(prog.dynamic_shared_offset.unwrap_or(0) + cfg.dynamic_shared as u64);
        let new_warps = || -> Vec<Warp> {
            (0..warp_count)
                .map(|_| {
                    Warp::new(
                        prog.value_regs,
                        prog.pred_regs,
                        prog.local_bytes as usize,
                        lanes as usize,
                    )
                })
                .collect()
        };
        let new_shared = || SharedMemory::with_warp_size(shared_bytes as usize, cfg.check_hazards, lanes);
        let shape = cfg.cluster_shape(prog);
        let mut cluster = ClusterRun::new(shape);
        if shape.size() > 1 {
            // Every block of a cluster gets warps and shared memory of its own to be parked
            // with (the running block's slot holds a spare set: see cluster.rs).
            for st in cluster.blocks.iter_mut() {
                *st = BlockState {
                    warps: new_warps(),
                    shared: new_shared(),
                    ..BlockState::default()
                };
            }
        }
        BlockRunner {
            prog,
            cfg,
            mem,
            warps: new_warps(),
            shared: new_shared(),
            barriers: Barriers::default(),
            stats: Tally::new(prog.insts.len()),
            ctaid: [0; 3],
            block_index: 0,
            abort,
            cancel,
            watching: false,
            traced: Vec::new(),
            scratch: Some(Box::default()),
            fetch: cfg
                .fetch_map
                .map(|(window, base, end)| FetchCounter::new(FetchMap::new(window, prog), base, end)),
            at_pc: 0,
            findings_noted: 0,
            mbars: Mbarriers::default(),
            bulk: Vec::new(),
            mbar_completions: 0,
            last_exit: None,
            affine: None,
            cluster,
        }
    }

    /// Records a finding in the order of execution.
    pub(super) fn note_finding(&mut self, mut finding: RawFinding) {
        finding.seq = self.findings_noted;
        self.findings_noted += 1;
        self.stats.note_finding(finding);
    }

    /// The end of a barrier epoch (a barrier completed, or the block is done): the
    /// uninitialised reads held back in it that no race explains become findings.
    pub(super) fn end_epoch(&mut self) {
        for finding in self.shared.end_epoch() {
            self.stats.note_finding(finding);
        }
    }

    pub fn fault(&self, kind: EmuFaultKind, pc: Option<u32>, warp: Option<(&Warp, u32)>) -> EmuFault {
        let thread = warp.map(|(w, lane)| {
            let l = lane as usize;
            [w.tid[0][l], w.tid[1][l], w.tid[2][l]]
        });
        EmuFault {
            kind,
            pc,
            block: self.ctaid,
            thread,
            block_index: self.block_index,
            findings: Vec::new(),
        }
    }

    /// Sets the runner up to run block `index` (x fastest) from its start.
    pub(super) fn start_block(&mut self, index: u64) {
        let [gx, gy, _] = self.cfg.grid;
        self.block_index = index;
        self.ctaid = [
            (index % gx as u64) as u32,
            ((index / gx as u64) % gy as u64) as u32,
            (index / (gx as u64 * gy as u64)) as u32,
        ];
        let dims = self.cfg.block;
        let threads = dims.iter().product::<u32>();
        let lanes = self.cfg.lanes_per_warp.clamp(1, 32);
        for (w, warp) in self.warps.iter_mut().enumerate() {
            warp.reset(w as u32, w as u32 * lanes, lanes, threads, dims);
        }
        self.shared.reset();
        self.barriers.reset();
        self.mbars.reset();
        self.bulk.clear();
        self.last_exit = None;
        self.watching = self.cfg.watch == Some(self.ctaid);
        if self.watching {
            self.traced = vec![0; threads as usize];
        }
        self.stats.blocks += 1;
    }

    /// Runs block `index` (x fastest) to completion: a cluster of its own.
    pub fn run_block(&mut self, index: u64) -> Result<(), EmuFault> {
        self.start_block(index);
        // The warps leave `self` for the block's run so each can be borrowed beside the rest.
        let mut warps = std::mem::take(&mut self.warps);
        let result = self.schedule(&mut warps);
        self.warps = warps;
        result
    }

    /// Runs the block's rounds until its warps are done; a block alone is its cluster, so
    /// the cluster barrier completes when all its threads arrived.
    fn schedule(&mut self, warps: &mut [Warp]) -> Result<(), EmuFault> {
        loop {
            match self.round(warps)? {
                Round::Ran => {}
                Round::Done => return Ok(()),
                Round::Blocked => {
                    if !self.release_cluster_barrier(warps) {
                        return Err(self.block_deadlock(warps));
                    }
                }
            }
        }
    }

    /// One round of the block: runs its warps round-robin, each until all its paths wait
    /// (at a barrier, an mbarrier) or are done, then releases the block barriers whose
    /// threads have all arrived.
    pub(super) fn round(&mut self, warps: &mut [Warp]) -> Result<Round, EmuFault> {
        let completions = self.mbar_completions;
        for warp in warps.iter_mut() {
            if warp.state == WarpState::Running {
                warp.state = self.run_warp(warp)?;
            }
        }
        if self.mbar_completions != completions {
            Self::wake_mbarrier_waiters(warps);
        }
        // A warp that gave way (`nanosleep`) goes on in the next round. Warps do not give
        // way on their own: a block of warps in an endless loop would then take as many
        // times longer to stop as it has warps.
        if warps.iter().any(|w| w.state == WarpState::Running) {
            return Ok(Round::Ran);
        }
        // Where the barrier is, for the watched block's trace only.
        let waiting_at = if self.watching {
            warps
                .iter()
                .flat_map(|w| w.parked.iter())
                .find_map(|p| p.wait.map(|b| b.pc))
        } else {
            None
        };
        let (released, mismatches) = self.barriers.release_ready(warps, &self.prog.insts);
        if released && self.watching {
            self.trace_barrier(waiting_at);
        }
        for m in mismatches {
            self.note_divergent_barrier(warps, m);
        }
        if released {
            self.end_epoch();
            self.shared.epoch += 1;
            return Ok(Round::Ran);
        }
        if warps.iter().all(|w| w.state == WarpState::Done) {
            self.land_everything(warps);
            self.end_epoch();
            return Ok(Round::Done);
        }
        Ok(Round::Blocked)
    }

    /// Nothing in the block can go on: why, as the fault that stops the launch.
    pub(super) fn block_deadlock(&self, warps: &[Warp]) -> EmuFault {
        let lane = warps.iter().find(|w| w.state == WarpState::AtBarrier);
        let place = lane.map(|w| (w, w.lanes_waiting_at_any().trailing_zeros()));
        if let Some(deadlock) = self
            .barriers
            .deadlock(warps)
            .or_else(|| super::barrier::warp_sync_deadlock(warps, &self.prog.insts))
        {
            return self.fault(
                EmuFaultKind::Barrier {
                    reason: deadlock.description,
                },
                Some(deadlock.pc),
                place,
            );
        }
        let mbar_waiter = warps.iter().find(|w| w.state == WarpState::MbarWait);
        if let Some(w) = mbar_waiter {
            let pc = w.stack.last().map(|f| f.pc.saturating_sub(1));
            let lane = w.stack.last().map_or(0, |f| f.mask.trailing_zeros());
            return self.fault(
                EmuFaultKind::Barrier {
                    reason: format!(
                        "deadlock: threads wait at an mbarrier whose phase can never complete ({})",
                        self.mbars.describe_waiting()
                    ),
                },
                pc,
                Some((w, lane)),
            );
        }
        let pc = warps
            .iter()
            .flat_map(|w| w.parked.iter())
            .find_map(|p| p.wait.filter(|b| b.id == CLUSTER_BARRIER).map(|b| b.pc));
        self.fault(
            EmuFaultKind::Barrier {
                reason: "deadlock: threads wait at the cluster barrier (barrier.cluster.wait, cluster.sync()) for \
                         threads of the block that never arrive"
                    .into(),
            },
            pc,
            place,
        )
    }

    /// The watched block completed a barrier: a mark in its trace, for the replay.
    pub(super) fn trace_barrier(&mut self, pc: Option<u32>) {
        self.trace_mark(pc, super::stats::TraceSpace::Barrier);
    }

    /// A mark of `space` (a barrier of the block or of its cluster) in the watched block's
    /// trace.
    pub(super) fn trace_mark(&mut self, pc: Option<u32>, space: super::stats::TraceSpace) {
        let pc = pc.unwrap_or(0);
        let (line, ptx_line) = self
            .prog
            .insts
            .get(pc as usize)
            .map_or((0, 0), |i| (i.line, i.ptx_line));
        self.stats.trace.push(super::stats::TracedAccess {
            thread: [0; 3],
            store: false,
            pc,
            line,
            ptx_line,
            space,
            buffer: None,
            offset: 0,
            bytes: 0,
            value: 0,
            peer: None,
        });
    }

    /// A barrier completed through two different instructions: say where.
    fn note_divergent_barrier(&mut self, warps: &[Warp], m: super::barrier::Mismatch) {
        let thread_at = |pc: u32| {
            warps.iter().find_map(|w| {
                // The paths have been woken: find one resuming right after `pc`.
                w.parked
                    .iter()
                    .find(|p| p.stack.last().is_some_and(|f| f.pc == pc + 1))
                    .map(|p| {
                        let l = p.lanes().trailing_zeros() as usize;
                        [w.tid[0][l], w.tid[1][l], w.tid[2][l]]
                    })
            })
        };
        let thread = thread_at(m.other_pc).unwrap_or([0; 3]);
        self.note_finding(RawFinding {
            kind: FindingKind::DivergentBarrier,
            pc: m.other_pc,
            block: self.ctaid,
            thread,
            byte: m.id as u64,
            other_thread: thread_at(m.first_pc),
            other_pc: Some(m.first_pc),
            block_index: self.block_index,
            count: 1,
            seq: 0,
            other_block: None,
            buffer: None,
            same_warp: false,
            peer: None,
        });
    }

    /// Runs a warp until it waits at a barrier or all its lanes have exited.
    fn run_warp(&mut self, warp: &mut Warp) -> Result<WarpState, EmuFault> {
        let insts = &self.prog.insts;
        loop {
            let Some(&top) = warp.stack.last() else {
                if warp.resume_ready_path() || self.resolve_warp_sync(warp)? {
                    continue;
                }
                return Ok(if warp.parked.is_empty() {
                    WarpState::Done
                } else {
                    WarpState::AtBarrier
                });
            };
            if top.mask == 0 || top.pc == top.rpc {
                warp.stack.pop();
                continue;
            }
            if warp.merge_or_switch_sibling() {
                continue;
            }
            if top.pc as usize >= insts.len() {
                // Falling off the end of the kernel is a return.
                warp.exit_lanes(top.mask);
                continue;
            }
            // The top path runs straight through instructions that do not steer the warp,
            // until its reconvergence point or a sibling path's instruction (where the stack
            // above has work to do), without looking at the stack each time: that look was a
            // fifth of the interpreter's time.
            let stop = (warp.stretch_end() as usize).min(insts.len());
            let top_index = warp.stack.len() - 1;
            let mut pc = top.pc as usize;
            loop {
                self.at_pc = pc as u32;
                warp.steps += 1;
                if warp.steps.is_multiple_of(CHECK_EVERY) {
                    self.check_in(warp, pc, top.mask)?;
                }
                let inst = &insts[pc];
                let eff = match inst.guard {
                    Some(g) => top.mask & warp.pred(g),
                    None => top.mask,
                };
                if eff != 0 {
                    let s = &mut self.stats.per_pc[pc];
                    s.warp_insts += 1;
                    s.active_lanes += eff.count_ones() as u64;
                    if self.affine.is_some() {
                        self.follow(warp, inst, eff);
                    }
                }
                match &inst.kind {
                    // By reference: a quick form is up to 56 bytes, and copying it out cost as
                    // much as the match.
                    Kind::Quick { quick, .. } => {
                        if eff != 0 {
                            quick.run(warp, eff);
                        }
                    }
                    Kind::Work(work) => {
                        if eff != 0 {
                            self.execute(warp, pc, work, eff)?;
                        }
                    }
                    Kind::Flow(flow) if eff != 0 => {
                        warp.stack[top_index].pc = pc as u32;
                        match self.steer(warp, pc, top_index, top.mask, eff, flow)? {
                            Turn::GiveWay => return Ok(WarpState::Running),
                            Turn::MbarWait => return Ok(WarpState::MbarWait),
                            Turn::Run => {}
                        }
                        break;
                    }
                    Kind::Warp(op) if eff != 0 => {
                        warp.stack[top_index].pc = pc as u32;
                        self.warp_step(warp, pc, top_index, op, eff)?;
                        break;
                    }
                    // With no lane through its guard, a control-flow or warp-level instruction
                    // only moves on to the next instruction, as the others do.
                    Kind::Flow(_) | Kind::Warp(_) => {}
                }
                pc += 1;
                if pc >= stop {
                    warp.stack[top_index].pc = pc as u32;
                    break;
                }
            }
        }
    }

    /// Hands the instruction about to run to the tracker of a class's representative, with
    /// its operands as they are before it writes.
    #[cold]
    fn follow(&mut self, warp: &Warp, inst: &Inst, m: u32) {
        struct Before<'r, 'a> {
            runner: &'r BlockRunner<'a>,
            warp: &'r Warp,
        }
        impl Operands for Before<'_, '_> {
            fn values(&self, src: Src) -> [u64; 32] {
                self.runner.read(self.warp, src)
            }
        }
        let mut tracker = self.affine.take().expect("called only while tracking");
        let rank = self.cluster.rank;
        tracker.step(inst, warp, rank, m, &Before { runner: self, warp }, self.mem);
        self.affine = Some(tracker);
    }

    /// Every [`CHECK_EVERY`] instructions of a warp: stops it when the run was cancelled or
    /// it ran past its step budget (an endless loop).
    #[cold]
    fn check_in(&self, warp: &Warp, pc: usize, active: u32) -> Result<(), EmuFault> {
        if self.abort.load(Ordering::Relaxed) || self.cancel.is_cancelled() {
            return Err(self.fault(EmuFaultKind::Cancelled, Some(pc as u32), None));
        }
        if warp.steps > self.cfg.step_budget {
            let lane = active.trailing_zeros();
            return Err(self.fault(
                EmuFaultKind::Budget { steps: warp.steps },
                Some(pc as u32),
                Some((warp, lane)),
            ));
        }
        Ok(())
    }

    /// Runs the control-flow instruction `flow` at `pc` (the top frame's, `top_index`): a
    /// branch, an exit, a barrier or a `nanosleep`. `active`: the frame's lanes; `eff`: those
    /// its guard lets through.
    fn steer(
        &mut self,
        warp: &mut Warp,
        pc: usize,
        top_index: usize,
        active: u32,
        eff: u32,
        flow: &Flow,
    ) -> Result<Turn, EmuFault> {
        match flow {
            Flow::Bra { target } => {
                let taken = eff;
                let not_taken = active & !eff;
                if not_taken == 0 {
                    warp.stack[top_index].pc = *target;
                } else if taken == 0 {
                    warp.stack[top_index].pc += 1;
                } else {
                    let rpc = self.prog.reconverge[pc];
                    if rpc == warp.stack[top_index].rpc {
                        warp.stack.pop();
                    } else {
                        warp.stack[top_index].pc = rpc;
                    }
                    warp.stack.push(Frame {
                        pc: pc as u32 + 1,
                        mask: not_taken,
                        rpc,
                    });
                    warp.stack.push(Frame {
                        pc: *target,
                        mask: taken,
                        rpc,
                    });
                }
            }
            Flow::Exit => {
                let lane = eff.trailing_zeros() as usize;
                self.last_exit = Some((pc as u32, [warp.tid[0][lane], warp.tid[1][lane], warp.tid[2][lane]]));
                warp.exit_lanes(eff);
                if let Some(frame) = warp.stack.last_mut()
                    && frame.mask != 0
                {
                    frame.pc += 1;
                }
            }
            Flow::Bar { id, count, arrive, red } => {
                if eff == 0 {
                    warp.stack[top_index].pc += 1;
                    return Ok(Turn::Run);
                }
                let lane = eff.trailing_zeros() as usize;
                let id_value = self.read(warp, *id)[lane];
                if id_value >= BARRIERS as u64 {
                    return Err(self.fault(
                        EmuFaultKind::Barrier {
                            reason: format!("barrier number {id_value} is out of range (0..15)"),
                        },
                        Some(pc as u32),
                        Some((warp, lane as u32)),
                    ));
                }
                let expected = count.map(|c| self.read(warp, c)[lane] as u32);
                let true_count = red.map_or(0, |r| (warp.pred(r.p) & eff).count_ones());
                self.barriers
                    .arrive(id_value as u8, eff.count_ones(), true_count, pc as u32, expected);
                if *arrive {
                    warp.stack[top_index].pc += 1;
                    return Ok(Turn::Run);
                }
                warp.park(
                    eff,
                    BarrierWait {
                        id: id_value as u8,
                        pc: pc as u32,
                    },
                    pc as u32 + 1,
                );
            }
            Flow::Yield => {
                warp.stack[top_index].pc += 1;
                return Ok(Turn::GiveWay);
            }
            Flow::MbarWait { d, addr, phase } => {
                warp.stack[top_index].pc += 1;
                if self.mbarrier_wait(warp, pc, *d, *addr, *phase, eff)? && eff == active {
                    return Ok(Turn::MbarWait);
                }
            }
            Flow::ClusterArrive => {
                self.cluster_arrive(warp, pc, eff)?;
                warp.stack[top_index].pc += 1;
            }
            Flow::ClusterWait => {
                self.cluster_wait_check(warp, pc, eff)?;
                warp.park(
                    eff,
                    BarrierWait {
                        id: CLUSTER_BARRIER,
                        pc: pc as u32,
                    },
                    pc as u32 + 1,
                );
            }
        }
        Ok(Turn::Run)
    }

    /// Runs the warp-level instruction `op` at `pc` (the top frame's, `top_index`) for the
    /// lanes `eff`, or parks them there when threads its member mask names are on another
    /// path (they run it together once those arrive).
    fn warp_step(
        &mut self,
        warp: &mut Warp,
        pc: usize,
        top_index: usize,
        op: &WarpKind,
        eff: u32,
    ) -> Result<(), EmuFault> {
        if self.warp_op(warp, pc, op, eff)? {
            warp.stack[top_index].pc += 1;
        } else {
            // Threads the mask names are on another path: wait for them.
            let wait = BarrierWait {
                id: WARP_SYNC,
                pc: pc as u32,
            };
            warp.park(eff, wait, pc as u32);
        }
        Ok(())
    }

    /// Source operand, all 32 lanes.
    #[inline(always)]
    pub fn read(&self, warp: &Warp, src: Src) -> [u64; 32] {
        match src {
            Src::Reg(r) => warp.reg(r).try_into().unwrap(),
            Src::Imm(v) => [v; 32],
            Src::Special(s) => self.special(warp, s),
        }
    }

    /// Source operand, all 32 lanes, without copying a register: a register is borrowed
    /// from the file; an immediate or a special register is written into `scratch` (left
    /// unwritten otherwise: most operands are registers).
    #[inline(always)]
    pub fn lanes<'w>(&self, warp: &'w Warp, src: Src, scratch: &'w mut MaybeUninit<[u64; 32]>) -> &'w [u64; 32] {
        match src {
            Src::Reg(r) => warp.reg(r).try_into().expect("32 lanes"),
            Src::Imm(v) => scratch.write([v; 32]),
            Src::Special(s) => scratch.write(self.special(warp, s)),
        }
    }

    fn special(&self, warp: &Warp, s: Special) -> [u64; 32] {
        let uniform = |v: u64| [v; 32];
        let per_lane = |f: &dyn Fn(usize) -> u64| std::array::from_fn::<u64, 32, _>(f);
        match s {
            Special::Tid(d) => warp.tid[d as usize].map(|t| t as u64),
            Special::Ntid(d) => uniform(self.cfg.block[d as usize] as u64),
            Special::Ctaid(d) => uniform(self.ctaid[d as usize] as u64),
            Special::Nctaid(d) => uniform(self.cfg.grid[d as usize] as u64),
            Special::LaneId => per_lane(&|l| warp.lane_id[l] as u64),
            Special::WarpId => per_lane(&|l| (warp.linear[l] / 32) as u64),
            Special::NWarpId => uniform(self.cfg.block.iter().product::<u32>().div_ceil(32) as u64),
            Special::SmId => uniform(0),
            Special::Clock => uniform(warp.steps & 0xFFFF_FFFF),
            Special::Clock64 | Special::GlobalTimer => uniform(warp.steps),
            Special::GlobalTimerLo => uniform(warp.steps & 0xFFFF_FFFF),
            Special::GlobalTimerHi => uniform(warp.steps >> 32),
            Special::LaneMaskEq => per_lane(&|l| 1u64 << warp.lane_id[l]),
            Special::LaneMaskLt => per_lane(&|l| (1u64 << warp.lane_id[l]) - 1),
            Special::LaneMaskLe => per_lane(&|l| ((1u64 << (warp.lane_id[l] + 1)) - 1) & 0xFFFF_FFFF),
            Special::LaneMaskGt => per_lane(&|l| !((1u64 << (warp.lane_id[l] + 1)) - 1) & 0xFFFF_FFFF),
            Special::LaneMaskGe => per_lane(&|l| !((1u64 << warp.lane_id[l]) - 1) & 0xFFFF_FFFF),
            Special::DynamicSmemSize => uniform(self.cfg.dynamic_shared as u64),
            Special::ClusterCtaid(_)
            | Special::ClusterNctaid(_)
            | Special::ClusterCtarank
            | Special::ClusterNctarank
            | Special::ClusterId(_)
            | Special::NClusterId(_)
            | Special::IsExplicitCluster => uniform(self.cluster_special(s)),
        }
    }

    /// Runs `work`, the instruction at `pc`, for the lanes `m`: each family by its executor.
    fn execute(&mut self, warp: &mut Warp, pc: usize, work: &Work, m: u32) -> Result<(), EmuFault> {
        match work {
            Work::Alu(op) => self.alu(warp, pc, op, m)?,
            Work::Mem(access) => self.load_store(warp, pc, access, m)?,
            Work::Atom(atomic) => self.atomic(warp, pc, atomic.clone(), m)?,
            Work::Numeric(op) => self.numeric(warp, op.clone(), m),
            Work::Call(call) => self.device_call(warp, pc, call.clone(), m)?,
            Work::Async(op) => self.async_op(warp, pc, op, m)?,
            Work::Mapa { d, a, rank, generic } => self.mapa(warp, pc, *d, *a, *rank, *generic, m)?,
            Work::Nop => {}
        }
        Ok(())
    }

    /// The general form of a plain ALU instruction (`execute`'s own family: inlined there).
    #[inline(always)]
    fn alu(&mut self, warp: &mut Warp, pc: usize, op: &Alu, m: u32) -> Result<(), EmuFault> {
        macro_rules! write_lanes {
            ($d:expr, |$l:ident| $value:expr) => {{
                let dst = warp.reg_mut($d);
                if m == FULL {
                    for $l in 0..32 {
                        dst[$l] = $value;
                    }
                } else {
                    super::warp::for_each_lane(m, |$l| dst[$l] = $value);
                }
            }};
        }
        match op {
            Alu::IntBin {
                op,
                bits,
                signed,
                d,
                a,
                b,
            } => {
                // The common widths and operations have loops of their own in `quick`; this
                // is the general case (and the reference the quick forms are tested against).
                let (op, bits, signed) = (*op, *bits, *signed);
                self.map2(warp, m, *d, *a, *b, |x, y| alu::int_bin(op, bits, signed, x, y));
            }
            Alu::IntUn { op, bits, d, a } => {
                let (op, bits) = (*op, *bits);
                self.map1(warp, m, *d, *a, |x| alu::int_un(op, bits, x));
            }
            Alu::MulWide { bits, signed, d, a, b } => {
                let (bits, signed) = (*bits, *signed);
                if signed {
                    self.map2(warp, m, *d, *a, *b, |x, y| {
                        (alu::sext(x, bits).wrapping_mul(alu::sext(y, bits)) as u64) & alu::mask(bits * 2)
                    });
                } else {
                    self.map2(warp, m, *d, *a, *b, |x, y| {
                        ((x & alu::mask(bits)).wrapping_mul(y & alu::mask(bits))) & alu::mask(bits * 2)
                    });
                }
            }
            Alu::Mad {
                part,
                bits,
                signed,
                d,
                a,
                b,
                c,
            } => {
                let (bits, signed) = (*bits, *signed);
                let (d, a, b, c) = (*d, *a, *b, *c);
                match part {
                    MadPart::Lo => self.map3(warp, m, d, a, b, c, |x, y, z| {
                        x.wrapping_mul(y).wrapping_add(z) & alu::mask(bits)
                    }),
                    MadPart::Hi => self.map3(warp, m, d, a, b, c, |x, y, z| {
                        alu::int_bin(IntOp::MulHi, bits, signed, x, y).wrapping_add(z) & alu::mask(bits)
                    }),
                    MadPart::Wide => {
                        if signed {
                            self.map3(warp, m, d, a, b, c, |x, y, z| {
                                (alu::sext(x, bits).wrapping_mul(alu::sext(y, bits)) as u64).wrapping_add(z)
                                    & alu::mask(bits * 2)
                            });
                        } else {
                            self.map3(warp, m, d, a, b, c, |x, y, z| {
                                ((x & alu::mask(bits)) * (y & alu::mask(bits))).wrapping_add(z) & alu::mask(bits * 2)
                            });
                        }
                    }
                }
            }
            Alu::Bfe {
                bits,
                signed,
                d,
                a,
                pos,
                len,
            } => {
                let (a, pos, len) = (self.read(warp, *a), self.read(warp, *pos), self.read(warp, *len));
                let (bits, signed) = (*bits, *signed);
                write_lanes!(*d, |l| {
                    let p = (pos[l] & 0xFF) as u32;
                    let n = (len[l] & 0xFF) as u32;
                    let value = a[l] & alu::mask(bits);
                    if n == 0 {
                        0
                    } else {
                        let shifted = if p >= bits as u32 {
                            if signed && alu::sext(value, bits) < 0 {
                                u64::MAX
                            } else {
                                0
                            }
                        } else if signed {
                            (alu::sext(value, bits) >> p) as u64
                        } else {
                            value >> p
                        };
                        let n = n.min(bits as u32);
                        let field = shifted & alu::mask(n as u8);
                        let out = if signed {
                            alu::sext(field, n as u8) as u64
                        } else {
                            field
                        };
                        out & alu::mask(bits)
                    }
                });
            }
            Alu::Bfi {
                bits,
                d,
                f,
                b,
                pos,
                len,
            } => {
                let (f, b, pos, len) = (
                    self.read(warp, *f),
                    self.read(warp, *b),
                    self.read(warp, *pos),
                    self.read(warp, *len),
                );
                let bits = *bits;
                write_lanes!(*d, |l| {
                    let p = (pos[l] & 0xFF) as u32;
                    let n = ((len[l] & 0xFF) as u32).min(bits as u32);
                    if n == 0 || p >= bits as u32 {
                        b[l] & alu::mask(bits)
                    } else {
                        let field = alu::mask(n as u8) << p;
                        ((b[l] & !field) | ((f[l] << p) & field)) & alu::mask(bits)
                    }
                });
            }
            Alu::FBin {
                op,
                double,
                ftz,
                sat,
                d,
                a,
                b,
            } => {
                let (op, ftz, sat) = (*op, *ftz, *sat);
                if *double {
                    self.map2(warp, m, *d, *a, *b, |x, y| alu::f64_bin(op, ftz, sat, x, y));
                } else {
                    self.map2(warp, m, *d, *a, *b, |x, y| alu::f32_bin(op, ftz, sat, x, y));
                }
            }
            Alu::FFma {
                double,
                ftz,
                sat,
                d,
                a,
                b,
                c,
            } => {
                let (ftz, sat) = (*ftz, *sat);
                if *double {
                    self.map3(warp, m, *d, *a, *b, *c, |x, y, z| alu::f64_fma(sat, x, y, z));
                } else {
                    self.map3(warp, m, *d, *a, *b, *c, |x, y, z| alu::f32_fma(ftz, sat, x, y, z));
                }
            }
            Alu::FUn { op, double, ftz, d, a } => {
                let (op, double, ftz) = (*op, *double, *ftz);
                self.map1(warp, m, *d, *a, |x| alu::f_un(op, double, ftz, x));
            }
            Alu::Setp {
                cmp,
                ty,
                d,
                d_not,
                a,
                b,
                combine,
            } => {
                let (mut sa, mut sb) = (MaybeUninit::uninit(), MaybeUninit::uninit());
                let (a, b) = (self.lanes(warp, *a, &mut sa), self.lanes(warp, *b, &mut sb));
                let mut bits = alu::compare_lanes(*cmp, *ty, |l| a[l], |l| b[l]) & m;
                let mut negated = !bits;
                if let Some((op, p)) = combine {
                    let c = warp.pred(*p);
                    bits = alu::bool_op(*op, bits, c);
                    negated = alu::bool_op(*op, negated, c);
                }
                let pd = &mut warp.preds[*d as usize];
                *pd = (*pd & !m) | (bits & m);
                if let Some(dn) = d_not {
                    let pn = &mut warp.preds[*dn as usize];
                    *pn = (*pn & !m) | (negated & m);
                }
            }
            Alu::Selp { d, a, b, p } => {
                let pm = warp.pred(*p);
                self.map2_indexed(warp, m, *d, *a, *b, |x, y, l| if (pm >> l) & 1 != 0 { x } else { y });
            }
            Alu::Cvt {
                to,
                from,
                round,
                ftz,
                sat,
                d,
                a,
            } => {
                let a = self.read(warp, *a);
                let mut out = [0u64; 32];
                for l in 0..32 {
                    if (m >> l) & 1 != 0 {
                        out[l] = alu::convert(*to, *from, *round, *ftz, *sat, a[l]).map_err(|what| {
                            self.fault(
                                EmuFaultKind::Unsupported { what: what.to_string() },
                                Some(pc as u32),
                                Some((warp, l as u32)),
                            )
                        })?;
                    }
                }
                write_lanes!(*d, |l| out[l]);
            }
            Alu::Mov { d, a } => self.map1(warp, m, *d, *a, |x| x),
            Alu::PredSet { d, op, a, b } => warp.set_pred(*d, m, *op, *a, *b),
            Alu::Pack { d, parts, part_bits } => {
                let values: Vec<[u64; 32]> = parts.iter().map(|p| self.read(warp, *p)).collect();
                let pb = *part_bits;
                write_lanes!(*d, |l| values.iter().enumerate().fold(0u64, |acc, (i, v)| acc
                    | ((v[l] & alu::mask(pb)) << (i as u32 * pb as u32))));
            }
            Alu::Unpack { ds, a, part_bits } => {
                let a = self.read(warp, *a);
                let pb = *part_bits;
                for (i, d) in ds.iter().enumerate() {
                    if let Some(d) = d {
                        write_lanes!(*d, |l| (a[l] >> (i as u32 * pb as u32)) & alu::mask(pb));
                    }
                }
            }
            Alu::Cvta {
                to_generic,
                space,
                d,
                a,
            } => {
                let window = match space {
                    MemSpace::Shared => SHARED_WINDOW,
                    MemSpace::Local => LOCAL_WINDOW,
                    _ => 0, // global, const and param addresses are the same in generic space
                };
                if *to_generic {
                    self.map1(warp, m, *d, *a, |x| x.wrapping_add(window));
                } else {
                    self.map1(warp, m, *d, *a, |x| x.wrapping_sub(window));
                }
            }
        }
        Ok(())
    }

    /// A load or store: the common global, shared and parameter accesses each have a fast
    /// path; everything else, and anything a fast path declines, goes the general way. Out of
    /// line so that `execute` keeps a small stack frame (its prologue is paid by every
    /// instruction).
    #[inline(never)]
    fn load_store(&mut self, warp: &mut Warp, pc: usize, access: &Mem, m: u32) -> Result<(), EmuFault> {
        if !self.global_fast(warp, pc, access, m)
            && !self.shared_fast(warp, pc, access, m)
            && !self.param_fast(warp, access, m)
        {
            self.memory(warp, pc, access, m)?
        }
        Ok(())
    }

    /// Whether the block running now is the watched one (its accesses are traced).
    #[inline]
    pub(super) fn watching(&self) -> bool {
        self.watching
    }

    /// Whether accesses of lane `l` of `warp` are to be traced now.
    #[inline]
    pub fn tracing(&self, warp: &Warp, l: usize) -> bool {
        self.watching && self.traced.get(warp.linear[l] as usize).is_some_and(|&n| n < TRACE_CAP)
    }
}
