//! Warp-level instructions: shuffles, votes, matches, reductions, `activemask` and
//! `__syncwarp`, with the member-mask rules of the `.sync` forms.
//!
//! A `.sync` instruction waits, on the hardware, until every non-exited thread named in its
//! member mask executes it. The emulator does the same: when threads the mask names are on
//! another path (they have not exited, they are at a reconvergence point or in the other
//! side of a branch), the executing lanes park at the instruction and the warp's other
//! paths run on; once every named thread has exited or waits at the same instruction, the
//! waiting paths merge and execute it together. A thread that can never arrive (it waits at
//! a block barrier or another warp-level call) is a deadlock, reported with both lines.
//! Lanes that have exited are read as they were (their registers keep their last values;
//! the hardware leaves such reads undefined).
//!
//! The member mask may differ from lane to lane: `cg::tiled_partition<16>` passes
//! `0x0000ffff` in lanes 0-15 and `0xffff0000` in lanes 16-31. Each lane must be in its own
//! mask; the instruction waits for every thread any executing lane names, and then runs once
//! per group of lanes that passed the same mask, among that group's members.

use super::block::BlockRunner;
use super::fault::{EmuFault, EmuFaultKind};
use super::ir::*;
use super::warp::{WARP_SYNC, Warp};

impl BlockRunner<'_> {
    /// Executes the warp-level instruction at `pc` for lanes `m`; false when it must wait for
    /// threads on another path first (nothing was executed).
    // Out of line: keeps the hot ALU dispatch in `execute` small (its stack frame, too).
    #[inline(never)]
    pub(super) fn warp_op(&mut self, warp: &mut Warp, pc: usize, op: &WarpKind, m: u32) -> Result<bool, EmuFault> {
        if self.cfg.lanes_per_warp != 32 {
            return Err(self.fault(
                EmuFaultKind::Unsupported {
                    what: "warp-level instructions in a run with fewer than 32 lanes per warp".into(),
                },
                Some(pc as u32),
                None,
            ));
        }
        let Some(src) = op.member_mask() else {
            self.warp_op_for(warp, op, m, m);
            return Ok(true);
        };
        let masks = self.read(warp, src);
        // `__syncwarp` by threads outside its mask: a finding, and only the named threads
        // are ordered (those outside go on unordered); for the other `.sync` forms a fault,
        // since their result for such a thread is undefined.
        let outside = lanes_where(m, |l| (masks[l] >> l) & 1 == 0);
        let m = if outside != 0 && matches!(op, WarpKind::WarpSync { .. }) {
            self.note_warp_sync_outside(warp, pc, outside, &masks);
            m & !outside
        } else {
            m
        };
        if m == 0 {
            return Ok(true);
        }
        let ready = self.check_members(warp, pc, op, m, &masks)?;
        if !ready {
            return Ok(false);
        }
        // One group per distinct mask among the executing lanes (almost always one).
        let mut left = m;
        while left != 0 {
            let mask = masks[left.trailing_zeros() as usize] as u32;
            let group = lanes_where(left, |l| masks[l] as u32 == mask);
            self.warp_op_for(warp, op, group, mask & m);
            left &= !group;
        }
        Ok(true)
    }

    /// The warp-level instruction `op` for lanes `m`, among the threads `members` (those of
    /// `m` its member mask names).
    fn warp_op_for(&mut self, warp: &mut Warp, op: &WarpKind, m: u32, members: u32) {
        match op.clone() {
            WarpKind::Shfl {
                mode, d, p, a, b, c, ..
            } => {
                let (a, b, c) = (self.read(warp, a), self.read(warp, b), self.read(warp, c));
                let mut value = [0u64; 32];
                let mut valid = 0u32;
                for l in 0..32usize {
                    if (m >> l) & 1 == 0 {
                        continue;
                    }
                    let lane = l as i32;
                    let bval = (b[l] & 0x1f) as i32;
                    let cval = (c[l] & 0x1f) as i32;
                    let segmask = ((c[l] >> 8) & 0x1f) as i32;
                    let max_lane = (lane & segmask) | (cval & !segmask);
                    let min_lane = lane & segmask;
                    let (j, ok) = match mode {
                        ShflMode::Up => (lane - bval, lane - bval >= max_lane),
                        ShflMode::Down => (lane + bval, lane + bval <= max_lane),
                        ShflMode::Bfly => (lane ^ bval, (lane ^ bval) <= max_lane),
                        ShflMode::Idx => {
                            let j = min_lane | (bval & !segmask);
                            (j, j <= max_lane)
                        }
                    };
                    let source = if ok { j as usize } else { l };
                    value[l] = a[source & 31];
                    if ok {
                        valid |= 1 << l;
                    }
                }
                warp.write_lanes(d, m, |l| value[l] & 0xFFFF_FFFF);
                if let Some(p) = p {
                    warp.write_pred(p, m, valid);
                }
            }
            WarpKind::Vote { mode, d, a, .. } => {
                let pv = warp.preds[a.reg as usize] ^ if a.negate { u32::MAX } else { 0 };
                let set = pv & members;
                match (mode, d) {
                    (VoteMode::Ballot, VoteDst::Reg(r)) => warp.write_lanes(r, m, |_| set as u64),
                    (VoteMode::All, VoteDst::Pred(p)) => {
                        warp.write_pred(p, m, if set == members { u32::MAX } else { 0 })
                    }
                    (VoteMode::Any, VoteDst::Pred(p)) => warp.write_pred(p, m, if set != 0 { u32::MAX } else { 0 }),
                    (VoteMode::Uni, VoteDst::Pred(p)) => {
                        let uniform = set == 0 || set == members;
                        warp.write_pred(p, m, if uniform { u32::MAX } else { 0 })
                    }
                    _ => unreachable!("decoder pairs ballot with a register, the rest with a predicate"),
                }
            }
            WarpKind::Match { all, d, p, a, bits, .. } => {
                let a = self.read(warp, a);
                let value = |l: usize| a[l] & super::alu::mask(bits);
                let mut result = [0u64; 32];
                let mut pbits = 0u32;
                let first = members.trailing_zeros() as usize;
                let all_same = (0..32).all(|l| (members >> l) & 1 == 0 || value(l) == value(first));
                for (l, slot) in result.iter_mut().enumerate() {
                    if (m >> l) & 1 == 0 {
                        continue;
                    }
                    if all {
                        *slot = if all_same { members as u64 } else { 0 };
                        if all_same {
                            pbits |= 1 << l;
                        }
                    } else {
                        *slot = (0..32)
                            .filter(|&k| (members >> k) & 1 != 0 && value(k) == value(l))
                            .fold(0u64, |acc, k| acc | 1 << k);
                    }
                }
                warp.write_lanes(d, m, |l| result[l]);
                if let Some(p) = p {
                    warp.write_pred(p, m, pbits);
                }
            }
            WarpKind::Activemask { d } => warp.write_lanes(d, m, |_| m as u64),
            WarpKind::Redux { op, signed, d, a, .. } => {
                let a = self.read(warp, a);
                let lanes = (0..32usize).filter(|&l| (members >> l) & 1 != 0);
                let v = |l: usize| a[l] & 0xFFFF_FFFF;
                let result = match op {
                    ReduxOp::Add => lanes.fold(0u32, |acc, l| acc.wrapping_add(v(l) as u32)) as u64,
                    ReduxOp::And => lanes.fold(u32::MAX, |acc, l| acc & v(l) as u32) as u64,
                    ReduxOp::Or => lanes.fold(0, |acc, l| acc | v(l) as u32) as u64,
                    ReduxOp::Xor => lanes.fold(0, |acc, l| acc ^ v(l) as u32) as u64,
                    ReduxOp::Min if signed => lanes.map(|l| v(l) as u32 as i32).min().unwrap_or(0) as u32 as u64,
                    ReduxOp::Max if signed => lanes.map(|l| v(l) as u32 as i32).max().unwrap_or(0) as u32 as u64,
                    ReduxOp::Min => lanes.map(v).min().unwrap_or(0),
                    ReduxOp::Max => lanes.map(v).max().unwrap_or(0),
                };
                warp.write_lanes(d, m, |_| result);
            }
            // `__syncwarp(mask)`: the lanes that took part are ordered (memory included).
            WarpKind::WarpSync { .. } => warp.clock.sync(m),
        }
    }

    /// With no path of the warp ready: lets the paths waiting at one warp-level instruction
    /// go on when every thread its mask names has exited or waits there too (merging them
    /// into one path). True when a path was made ready.
    pub(super) fn resolve_warp_sync(&self, warp: &mut Warp) -> Result<bool, EmuFault> {
        let waiting_pcs: Vec<u32> = warp
            .parked
            .iter()
            .filter_map(|p| p.wait.filter(|w| w.id == WARP_SYNC).map(|w| w.pc))
            .collect();
        for pc in waiting_pcs {
            let at_pc = |p: &super::warp::Path| p.wait.is_some_and(|w| w.id == WARP_SYNC && w.pc == pc);
            let waiting = warp.parked.iter().filter(|p| at_pc(p)).fold(0u32, |m, p| m | p.lanes());
            // Only warp-level instructions with a member mask park at WARP_SYNC.
            let Kind::Warp(op) = &self.prog.insts[pc as usize].kind else {
                continue;
            };
            let Some(mask) = op.member_mask() else {
                continue;
            };
            let mask = named_by(&self.read(warp, mask), waiting);
            if mask & warp.live() & !waiting != 0 {
                if matches!(self.prog.insts[pc as usize].kind, Kind::Warp(WarpKind::WarpSync { .. }))
                    && self.release_warp_barriers(warp)
                {
                    return Ok(warp.resume_ready_path());
                }
                continue;
            }
            // Merge every path waiting here into the first one (paths split from one stack
            // have the same frames; lanes are OR-ed frame by frame).
            let mut paths: Vec<super::warp::Path> = Vec::new();
            let mut i = 0;
            while i < warp.parked.len() {
                if at_pc(&warp.parked[i]) {
                    paths.push(warp.parked.swap_remove(i));
                } else {
                    i += 1;
                }
            }
            let mut merged = paths.remove(0);
            for other in paths {
                let same_shape = other.stack.len() == merged.stack.len()
                    && other
                        .stack
                        .iter()
                        .zip(&merged.stack)
                        .all(|(a, b)| a.pc == b.pc && a.rpc == b.rpc);
                if !same_shape {
                    let lane = other.lanes().trailing_zeros();
                    return Err(self.fault(
                        EmuFaultKind::Unsupported {
                            what: "a warp-level call reached by threads of one warp from differently nested branches"
                                .into(),
                        },
                        Some(pc),
                        Some((warp, lane)),
                    ));
                }
                for (a, b) in merged.stack.iter_mut().zip(&other.stack) {
                    a.mask |= b.mask;
                }
            }
            merged.wait = None;
            warp.parked.push(merged);
            return Ok(warp.resume_ready_path());
        }
        Ok(false)
    }

    /// `__syncwarp()` calls at different places of the code synchronise with each other on
    /// sm_70 and later (a warp barrier counts arrivals, not call sites): when every live lane
    /// that the waiting lanes' masks name waits at some `bar.warp.sync`, all of them are
    /// released together, each path going on after its own call. True when it released any.
    fn release_warp_barriers(&self, warp: &mut Warp) -> bool {
        let at_warp_barrier = |p: &super::warp::Path| {
            p.wait.is_some_and(|w| {
                w.id == WARP_SYNC
                    && matches!(
                        self.prog.insts[w.pc as usize].kind,
                        Kind::Warp(WarpKind::WarpSync { .. })
                    )
            })
        };
        let mut waiting = 0u32;
        let mut named = 0u32;
        for p in warp.parked.iter().filter(|p| at_warp_barrier(p)) {
            let lanes = p.lanes();
            waiting |= lanes;
            if let Some(w) = p.wait
                && let Kind::Warp(WarpKind::WarpSync { mask }) = self.prog.insts[w.pc as usize].kind
            {
                named |= named_by(&self.read(warp, mask), lanes);
            }
        }
        if waiting == 0 || named & warp.live() & !waiting != 0 {
            return false;
        }
        for p in warp.parked.iter_mut().filter(|p| at_warp_barrier(p)) {
            p.wait = None;
            if let Some(top) = p.stack.last_mut() {
                top.pc += 1;
            }
        }
        warp.clock.sync(waiting);
        true
    }

    /// Notes the first lane of `outside` that executed the `__syncwarp` at `pc` with a mask
    /// not naming it (the mask travels in the finding's `byte`).
    fn note_warp_sync_outside(&mut self, warp: &Warp, pc: usize, outside: u32, masks: &[u64; 32]) {
        let lane = outside.trailing_zeros() as usize;
        self.note_finding(super::stats::RawFinding {
            kind: super::FindingKind::WarpSyncOutsideMask,
            pc: pc as u32,
            block: self.ctaid,
            thread: [warp.tid[0][lane], warp.tid[1][lane], warp.tid[2][lane]],
            byte: masks[lane] & 0xFFFF_FFFF,
            other_thread: None,
            other_pc: None,
            block_index: self.block_index,
            count: outside.count_ones() as u64,
            seq: 0,
            other_block: None,
            buffer: None,
            same_warp: true,
            peer: None,
        });
    }

    /// The member-mask rules: each executing thread must be in its own mask; false when the
    /// masks name threads that have not exited and are not executing with them (wait).
    fn check_members(
        &self,
        warp: &Warp,
        pc: usize,
        op: &WarpKind,
        m: u32,
        masks: &[u64; 32],
    ) -> Result<bool, EmuFault> {
        let name = op.call_name();
        let outside = lanes_where(m, |l| (masks[l] >> l) & 1 == 0);
        if outside != 0 {
            let lane = outside.trailing_zeros();
            let mask = masks[lane as usize] as u32;
            return Err(self.fault(
                EmuFaultKind::WarpSync {
                    reason: format!(
                        "{name} is executed by a thread that its member mask {mask:#010x} does not name (lane {lane}); CUDA leaves that undefined"
                    ),
                },
                Some(pc as u32),
                Some((warp, lane)),
            ));
        }
        Ok(named_by(masks, m) & !m & warp.live() == 0)
    }
}

/// Every thread the member masks of the lanes of `m` name together.
fn named_by(masks: &[u64; 32], m: u32) -> u32 {
    (0..32)
        .filter(|&l| (m >> l) & 1 != 0)
        .fold(0u32, |named, l| named | masks[l] as u32)
}

/// The lanes of `m` for which `f` holds.
fn lanes_where(m: u32, f: impl Fn(usize) -> bool) -> u32 {
    (0..32)
        .filter(|&l| (m >> l) & 1 != 0 && f(l))
        .fold(0u32, |g, l| g | 1 << l)
}
