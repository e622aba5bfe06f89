//! Block barriers as sm_70 and later run them: sixteen named barriers per block, each
//! released when the threads it waits for have arrived (all threads of the block that have
//! not exited, unless the instruction gives a count). A thread that has exited no longer
//! counts, so the common "out-of-range threads return before __syncthreads()" shape
//! completes, as it does on the hardware. Threads arriving at *different* barrier
//! instructions of one barrier also complete it (the hardware counts arrivals per barrier,
//! not per instruction), but CUDA leaves that undefined, so it is reported as a finding.

use super::ir::{BarRedOp, Flow, Kind, VoteDst};
use super::warp::{Warp, WarpState};

pub const BARRIERS: usize = 16;

#[derive(Debug, Clone, Default)]
struct Slot {
    /// Threads that arrived since the last release.
    arrived: u32,
    /// The count operand of the first arrival, if any.
    expected: Option<u32>,
    /// Distinct barrier instructions the arrivals came through (first few).
    pcs: Vec<u32>,
    /// `bar.red`: threads with the predicate true.
    true_count: u32,
}

#[derive(Debug, Default)]
pub struct Barriers {
    slots: [Slot; BARRIERS],
}

/// A barrier just released whose arrivals came through more than one instruction.
pub struct Mismatch {
    pub id: u8,
    pub first_pc: u32,
    pub other_pc: u32,
}

/// Why no barrier can complete while threads wait.
pub struct Deadlock {
    pub description: String,
    /// A waiting instruction, to name its line.
    pub pc: u32,
}

impl Barriers {
    pub fn reset(&mut self) {
        for slot in &mut self.slots {
            *slot = Slot::default();
        }
    }

    /// Records `threads` threads arriving at barrier `id` through instruction `pc`, of which
    /// `true_count` had the `bar.red` predicate set.
    pub fn arrive(&mut self, id: u8, threads: u32, true_count: u32, pc: u32, expected: Option<u32>) {
        let slot = &mut self.slots[id as usize];
        slot.arrived += threads;
        slot.true_count += true_count;
        if slot.expected.is_none() {
            slot.expected = expected;
        }
        if !slot.pcs.contains(&pc) && slot.pcs.len() < 4 {
            slot.pcs.push(pc);
        }
    }

    /// Releases every barrier whose threads have all arrived, waking their paths and writing
    /// `bar.red` results. Returns whether any was released, and the instruction mismatches.
    pub fn release_ready(&mut self, warps: &mut [Warp], insts: &[super::ir::Inst]) -> (bool, Vec<Mismatch>) {
        let live: u32 = warps.iter().map(|w| w.live().count_ones()).sum();
        let mut released = false;
        let mut mismatches = Vec::new();
        for id in 0..BARRIERS {
            let slot = &self.slots[id];
            if slot.arrived == 0 || slot.arrived < slot.expected.unwrap_or(live) {
                continue;
            }
            let slot = std::mem::take(&mut self.slots[id]);
            released = true;
            if slot.pcs.len() > 1 {
                mismatches.push(Mismatch {
                    id: id as u8,
                    first_pc: slot.pcs[0],
                    other_pc: slot.pcs[1],
                });
            }
            for warp in warps.iter_mut() {
                let mut woke = false;
                for p in 0..warp.parked.len() {
                    let Some(wait) = warp.parked[p].wait.filter(|w| w.id as usize == id) else {
                        continue;
                    };
                    let lanes = warp.parked[p].lanes();
                    warp.parked[p].wait = None;
                    woke = true;
                    if let Kind::Flow(Flow::Bar { red: Some(red), .. }) = &insts[wait.pc as usize].kind {
                        let value = match red.op {
                            BarRedOp::Popc => slot.true_count as u64,
                            BarRedOp::And => (slot.true_count == slot.arrived) as u64,
                            BarRedOp::Or => (slot.true_count > 0) as u64,
                        };
                        write_result(warp, red.d, lanes, value);
                    }
                }
                if woke {
                    warp.state = WarpState::Running;
                }
            }
        }
        (released, mismatches)
    }

    /// With nothing able to run: what every waiting barrier is still missing.
    pub fn deadlock(&self, warps: &[Warp]) -> Option<Deadlock> {
        let live: u32 = warps.iter().map(|w| w.live().count_ones()).sum();
        let waiting: Vec<String> = self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.arrived > 0)
            .map(|(id, s)| {
                format!(
                    "barrier {id} has {} of the {} threads it waits for",
                    s.arrived,
                    s.expected.unwrap_or(live)
                )
            })
            .collect();
        let pc = self.slots.iter().find(|s| s.arrived > 0)?.pcs.first().copied()?;
        Some(Deadlock {
            description: format!(
                "deadlock: every thread of the block that has not exited waits at a barrier that can never complete ({})",
                waiting.join("; ")
            ),
            pc,
        })
    }
}

/// Paths that wait at a warp-level call for threads that can never get there.
pub fn warp_sync_deadlock(warps: &[Warp], insts: &[super::ir::Inst]) -> Option<Deadlock> {
    for w in warps {
        for p in &w.parked {
            let Some(wait) = p.wait.filter(|w| w.id == super::warp::WARP_SYNC) else {
                continue;
            };
            let name = insts[wait.pc as usize].kind.warp_call_name();
            let lanes = w.live() & !p.lanes();
            let lane = lanes.trailing_zeros() as usize;
            let elsewhere = w
                .parked
                .iter()
                .find(|q| q.lanes() & (1 << lane.min(31)) != 0)
                .and_then(|q| q.wait)
                .map_or("is elsewhere".to_string(), |q| {
                    let line = insts[q.pc as usize].line;
                    if q.id == super::warp::WARP_SYNC {
                        format!("waits at another warp-level call (line {line})")
                    } else {
                        format!("waits at __syncthreads() (line {line})")
                    }
                });
            return Some(Deadlock {
                description: format!(
                    "deadlock: {name} (line {}) waits for thread ({},{},{}) named in its member mask, which {elsewhere}",
                    insts[wait.pc as usize].line,
                    w.tid[0][lane.min(31)],
                    w.tid[1][lane.min(31)],
                    w.tid[2][lane.min(31)]
                ),
                pc: wait.pc,
            });
        }
    }
    None
}

fn write_result(warp: &mut Warp, d: VoteDst, lanes: u32, value: u64) {
    match d {
        VoteDst::Reg(r) => {
            let dst = warp.reg_mut(r);
            for (l, slot) in dst.iter_mut().enumerate() {
                if (lanes >> l) & 1 != 0 {
                    *slot = value;
                }
            }
        }
        VoteDst::Pred(p) => {
            let bits = if value != 0 { u32::MAX } else { 0 };
            let pd = &mut warp.preds[p as usize];
            *pd = (*pd & !lanes) | (bits & lanes);
        }
    }
}
