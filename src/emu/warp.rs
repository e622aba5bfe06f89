//! One warp's state: registers, predicates and the SIMT reconvergence stack.

use super::ir::EXIT;

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
    AtBarrier,
    Done,
}

#[derive(Debug, Default)]
pub struct Warp {
    /// Value registers, 32 lanes each: `vals[reg * 32 + lane]`.
    pub vals: Vec<u64>,
    /// Predicate registers as lane masks.
    pub preds: Vec<u32>,
    pub stack: Vec<Frame>,
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
        self.vals.fill(0);
        self.preds.fill(0);
        self.local.fill(0);
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
        self.exited = 0;
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

    /// Removes `lanes` from every frame (they executed `ret`/`exit`).
    pub fn exit_lanes(&mut self, lanes: u32) {
        self.exited |= lanes;
        for frame in &mut self.stack {
            frame.mask &= !lanes;
        }
    }

    /// Lanes that still run.
    pub fn live(&self) -> u32 {
        self.valid & !self.exited
    }
}
