//! One warp's state: registers, predicates and the SIMT reconvergence stack.

use super::alu::bool_op;
use super::ir::{BoolOp, EXIT, PredSrc, PredSrcOrConst};

pub const FULL: u32 = u32::MAX;

/// An entry of the reconvergence stack: run `mask` from `pc` until `rpc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    pub pc: u32,
    pub mask: u32,
    pub rpc: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WarpState {
    #[default]
    Running,
    /// Every path of the warp that has not exited waits at a block barrier.
    AtBarrier,
    /// The warp's lanes all found an mbarrier phase not yet complete (`mbarrier.try_wait`):
    /// it runs again once an mbarrier of its block completes a phase.
    MbarWait,
    Done,
}

/// The `BarrierWait::id` of a path waiting at `barrier.cluster.wait`.
pub const CLUSTER_BARRIER: u8 = u8::MAX - 1;

/// A `cp.async` copy a lane issued that has not landed yet: its bytes, already read from
/// global memory, and where they go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingCopy {
    pub lane: u8,
    /// The lane's commit group (`UNCOMMITTED` until `cp.async.commit_group`).
    pub group: u32,
    /// Shared offset in the warp's own block.
    pub dst: u64,
    pub bytes: u8,
    pub data: [u8; 16],
    /// The `cp.async` instruction.
    pub pc: u32,
}

pub const UNCOMMITTED: u32 = u32::MAX;

/// The `BarrierWait::id` of a path waiting for the rest of its warp at a warp-level `.sync`
/// instruction (not a block barrier).
pub const WARP_SYNC: u8 = u8::MAX;

/// Where a parked path waits: block barrier `id` (or [`WARP_SYNC`]), reached at `pc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarrierWait {
    pub id: u8,
    pub pc: u32,
}

/// A group of the warp's lanes with a reconvergence stack of its own (independent thread
/// scheduling, sm_70 and later): split off when some lanes of a path wait at a block
/// barrier while the warp's other lanes still have work to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    pub stack: Vec<Frame>,
    /// None: ready to run.
    pub wait: Option<BarrierWait>,
}

impl Path {
    pub fn lanes(&self) -> u32 {
        self.stack.iter().fold(0, |m, f| m | f.mask)
    }
}

/// The order that warp-level barriers (`bar.warp.sync`: `__syncwarp(mask)`, a cooperative
/// group tile's `sync()`) put on the memory accesses of one warp's lanes: a vector clock
/// whose entries count the warp's barriers. Every access is stamped with `events` (the
/// barriers so far); `seen[u][r]` is the count up to which lane r's accesses happened before
/// lane u's present. A barrier among some lanes gives each of them everything any of them
/// had seen, and their own accesses so far. (Block barriers order everything; the shared
/// memory's epoch says which side of one an access is.)
#[derive(Debug, Clone)]
pub struct WarpClock {
    pub events: u32,
    pub seen: Box<[[u32; 32]; 32]>,
}

impl Default for WarpClock {
    fn default() -> WarpClock {
        WarpClock {
            events: 0,
            seen: Box::new([[0; 32]; 32]),
        }
    }
}

impl WarpClock {
    /// Before a block: nothing seen (cheap when the last block took no warp barrier).
    pub fn reset(&mut self) {
        if self.events != 0 {
            self.events = 0;
            for row in self.seen.iter_mut() {
                row.fill(0);
            }
        }
    }

    /// A warp-level barrier that `lanes` took part in.
    pub fn sync(&mut self, lanes: u32) {
        self.events += 1;
        let mut joined = [0u32; 32];
        for_each_lane(lanes, |u| {
            for (j, s) in joined.iter_mut().zip(self.seen[u].iter()) {
                *j = (*j).max(*s);
            }
        });
        for_each_lane(lanes, |r| joined[r] = self.events);
        for_each_lane(lanes, |u| self.seen[u] = joined);
    }
}

#[derive(Debug, Default)]
pub struct Warp {
    /// Value registers, 32 lanes each: `vals[reg * 32 + lane]`.
    pub vals: Vec<u64>,
    /// Predicate registers as lane masks.
    pub preds: Vec<u32>,
    pub stack: Vec<Frame>,
    /// The warp's other paths (see [`Path`]); empty while the warp runs as one.
    pub parked: Vec<Path>,
    /// Lanes that hold a thread of the block.
    pub valid: u32,
    pub exited: u32,
    /// Thread index of each lane, per dimension, and linear within the block.
    pub tid: [[u32; 32]; 3],
    pub linear: [u32; 32],
    /// Lane id as the hardware numbers it (thread linear % 32).
    pub lane_id: [u32; 32],
    pub index: u32,
    pub state: WarpState,
    pub steps: u64,
    /// Local memory, `local_bytes` per lane.
    pub local: Vec<u8>,
    /// The order of the lanes' memory accesses that warp-level barriers make.
    pub clock: WarpClock,
    /// Lanes that arrived at the cluster barrier in its current phase.
    pub cluster_arrived: u32,
    /// `cp.async` copies in flight, and each lane's count of committed groups.
    pub copies: Vec<PendingCopy>,
    pub committed: [u32; 32],
    /// The (first, lanes, threads, dims) the lane layout above (`valid`, `tid`, `linear`,
    /// `lane_id`) was computed for: the same for every block of a launch, so computed once
    /// (three divisions per thread were a tenth of a launch).
    layout_for: Option<(u32, u32, u32, [u32; 3])>,
}

impl Warp {
    pub fn new(value_regs: usize, pred_regs: usize, local_bytes: usize, lanes: usize) -> Warp {
        Warp {
            vals: vec![0; value_regs.max(1) * 32],
            preds: vec![0; pred_regs.max(1)],
            stack: Vec::with_capacity(16),
            local: vec![0; local_bytes * lanes],
            ..Warp::default()
        }
    }

    /// Prepares the warp to run threads `first..first + lanes` of a block of `dims`.
    pub fn reset(&mut self, index: u32, first: u32, lanes: u32, threads: u32, dims: [u32; 3]) {
        // Value registers are not cleared between blocks: NVRTC's PTX writes a register before
        // reading it, and a kernel with many inlined calls has thousands of registers, which
        // clearing per block made the bulk of the run time. Predicates are few; clear them.
        self.preds.fill(0);
        // Local memory is not cleared between blocks (it is undefined on a GPU too): with
        // inlined calls it can be many kilobytes per lane, and clearing it per block
        // dominated the run time of kernels that call functions.
        if self.layout_for != Some((first, lanes, threads, dims)) {
            self.lay_out_lanes(first, lanes, threads, dims);
        }
        self.exited = 0;
        self.cluster_arrived = 0;
        self.copies.clear();
        self.committed = [0; 32];
        self.clock.reset();
        self.parked.clear();
        self.stack.clear();
        self.stack.push(Frame {
            pc: 0,
            mask: self.valid,
            rpc: EXIT,
        });
        self.index = index;
        self.state = if self.valid == 0 {
            WarpState::Done
        } else {
            WarpState::Running
        };
        self.steps = 0;
    }

    /// Which lanes hold a thread, and each lane's thread index, linear index and lane id.
    fn lay_out_lanes(&mut self, first: u32, lanes: u32, threads: u32, dims: [u32; 3]) {
        self.layout_for = Some((first, lanes, threads, dims));
        self.valid = 0;
        for lane in 0..32u32 {
            let t = first + lane;
            if lane < lanes && t < threads {
                self.valid |= 1 << lane;
            }
            let t = t.min(threads.saturating_sub(1));
            self.tid[0][lane as usize] = t % dims[0];
            self.tid[1][lane as usize] = (t / dims[0]) % dims[1];
            self.tid[2][lane as usize] = t / (dims[0] * dims[1]);
            self.linear[lane as usize] = t;
            self.lane_id[lane as usize] = t % 32;
        }
    }

    #[inline(always)]
    pub fn reg(&self, r: u16) -> &[u64] {
        let base = r as usize * 32;
        &self.vals[base..base + 32]
    }

    #[inline(always)]
    pub fn reg_mut(&mut self, r: u16) -> &mut [u64] {
        let base = r as usize * 32;
        &mut self.vals[base..base + 32]
    }

    /// Sibling paths of one divergent branch (the frames on top of the stack that share its
    /// reconvergence point `rpc`) run lowest instruction first and merge when they reach the
    /// same instruction before `rpc`, as the hardware runs them: where the two branches of a
    /// short-circuit condition lead into one block (rustc's `x == 0 || y == 0 || x == n - 1
    /// || y == n - 1`), the lanes of both execute that block as one warp instruction, not as
    /// one per path until the post-dominator. Called before the top frame runs; true when it
    /// merged or reordered frames (the caller then looks at the new top).
    #[inline(always)]
    pub fn merge_or_switch_sibling(&mut self) -> bool {
        let len = self.stack.len();
        if len < 2 || self.stack[len - 2].rpc != self.stack[len - 1].rpc {
            return false;
        }
        let top = self.stack[len - 1];
        let mut lowest = len - 1;
        let mut i = len - 1;
        while i > 0 && self.stack[i - 1].rpc == top.rpc {
            i -= 1;
            let f = self.stack[i];
            if f.mask == 0 || f.pc == f.rpc {
                continue;
            }
            if f.pc == top.pc {
                self.stack[len - 1].mask |= f.mask;
                self.stack.remove(i);
                return true;
            }
            if f.pc < self.stack[lowest].pc {
                lowest = i;
            }
        }
        if lowest != len - 1 {
            self.stack.swap(lowest, len - 1);
            return true;
        }
        false
    }

    /// How far the top frame may run before the stack must be looked at again: its
    /// reconvergence point, or the instruction of a sibling path (a frame below it with the
    /// same reconvergence point, see [`merge_or_switch_sibling`](Self::merge_or_switch_sibling)),
    /// where the two merge. Called after that function, so no sibling is behind the top.
    #[inline(always)]
    pub fn stretch_end(&self) -> u32 {
        let (top, below) = self.stack.split_last().expect("a frame to run");
        let mut end = top.rpc;
        for f in below.iter().rev() {
            if f.rpc != top.rpc {
                break;
            }
            if f.mask != 0 && f.pc != f.rpc && f.pc > top.pc {
                end = end.min(f.pc);
            }
        }
        end
    }

    /// Removes `lanes` from every frame (they executed `ret`/`exit`).
    pub fn exit_lanes(&mut self, lanes: u32) {
        self.exited |= lanes;
        for frame in &mut self.stack {
            frame.mask &= !lanes;
        }
    }

    /// Parks the active path's `lanes` at `wait`, to resume at `resume` once released; the
    /// rest of the active path runs on without them.
    pub fn park(&mut self, lanes: u32, wait: BarrierWait, resume: u32) {
        let whole =
            self.stack.last().is_some_and(|top| top.mask == lanes) && self.stack.iter().all(|f| f.mask & !lanes == 0);
        if whole {
            // The usual case: the whole path waits; move its stack, no copy.
            let mut stack = std::mem::take(&mut self.stack);
            if let Some(top) = stack.last_mut() {
                top.pc = resume;
            }
            self.parked.push(Path {
                stack,
                wait: Some(wait),
            });
            return;
        }
        let mut stack: Vec<Frame> = self
            .stack
            .iter()
            .map(|f| Frame {
                mask: f.mask & lanes,
                ..*f
            })
            .collect();
        if let Some(top) = stack.last_mut() {
            top.pc = resume;
        }
        self.parked.push(Path {
            stack,
            wait: Some(wait),
        });
        for frame in &mut self.stack {
            frame.mask &= !lanes;
        }
        // Lanes of the top frame whose guard was false go past the barrier.
        if let Some(top) = self.stack.last_mut()
            && top.mask != 0
        {
            top.pc = wait.pc + 1;
        }
    }

    /// Makes a ready parked path the active one; false when there is none.
    pub fn resume_ready_path(&mut self) -> bool {
        match self.parked.iter().position(|p| p.wait.is_none()) {
            Some(i) => {
                self.stack = self.parked.swap_remove(i).stack;
                true
            }
            None => false,
        }
    }

    /// Lanes that wait at any block barrier.
    pub fn lanes_waiting_at_any(&self) -> u32 {
        self.parked
            .iter()
            .filter(|p| p.wait.is_some())
            .fold(0, |m, p| m | p.lanes())
    }

    /// Writes `value(lane)` into register `d` for the lanes of `m`.
    #[inline(always)]
    pub fn write_lanes(&mut self, d: u16, m: u32, value: impl Fn(usize) -> u64) {
        let dst = self.reg_mut(d);
        for_each_lane(m, |l| dst[l] = value(l));
    }

    /// The lanes where predicate operand `p` (a register, maybe negated) holds.
    #[inline(always)]
    pub fn pred(&self, p: PredSrc) -> u32 {
        self.preds[p.reg as usize] ^ if p.negate { FULL } else { 0 }
    }

    /// The lanes where `p` holds: a predicate operand, or a constant true or false.
    #[inline(always)]
    pub fn pred_or_const(&self, p: PredSrcOrConst) -> u32 {
        match p {
            PredSrcOrConst::Pred(p) => self.pred(p),
            PredSrcOrConst::Const(c) => {
                if c {
                    FULL
                } else {
                    0
                }
            }
        }
    }

    /// `d = a op b` on predicates for the lanes of `m` (`a` alone when there is no `op` or
    /// no `b`: a move, or a `not` through a negated `a`).
    #[inline(always)]
    pub fn set_pred(&mut self, d: u16, m: u32, op: Option<BoolOp>, a: PredSrcOrConst, b: Option<PredSrcOrConst>) {
        let mut bits = self.pred_or_const(a);
        if let (Some(op), Some(b)) = (op, b) {
            bits = bool_op(op, bits, self.pred_or_const(b));
        }
        self.write_pred(d, m, bits);
    }

    /// Sets predicate `p` to `bits` for the lanes of `m`.
    #[inline(always)]
    pub fn write_pred(&mut self, p: u16, m: u32, bits: u32) {
        let pd = &mut self.preds[p as usize];
        *pd = (*pd & !m) | (bits & m);
    }

    /// Lanes that still run.
    pub fn live(&self) -> u32 {
        self.valid & !self.exited
    }
}

/// Calls `f(l)` for each lane `l` of `m`, in lane order, visiting the mask's lanes only: a
/// halo load's one or two lanes per warp cost a few steps, not 32. Lanes in one run (a
/// tile row cut at the grid's edge, a single halo lane: nearly every partial mask) are a
/// counted loop, which the compiler unrolls or vectorises; scattered lanes walk the set
/// bits.
#[inline(always)]
pub fn for_each_lane(m: u32, mut f: impl FnMut(usize)) {
    if m == 0 {
        return;
    }
    if one_run(m) {
        for l in m.trailing_zeros() as usize..(32 - m.leading_zeros()) as usize {
            f(l);
        }
    } else {
        let mut bits = m;
        while bits != 0 {
            f(bits.trailing_zeros() as usize);
            bits &= bits - 1;
        }
    }
}

/// Whether the lanes of `m` (not empty) are one run with no gap.
#[inline(always)]
pub fn one_run(m: u32) -> bool {
    let run = m >> m.trailing_zeros();
    run & run.wrapping_add(1) == 0
}
