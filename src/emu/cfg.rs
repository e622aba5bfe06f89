//! Basic blocks and immediate post-dominators: where the lanes of a divergent branch meet
//! again. The SIMT stack in `warp.rs` reconverges there.

use super::ir::{EXIT, Inst, Kind};

/// For every instruction, the first instruction of the immediate post-dominator of its basic
/// block, or [`EXIT`].
pub fn reconvergence_points(insts: &[Inst]) -> Vec<u32> {
    let n = insts.len();
    if n == 0 {
        return Vec::new();
    }
    // Leaders: the first instruction, branch targets, and whatever follows a branch or exit.
    let mut leader = vec![false; n];
    leader[0] = true;
    for (pc, inst) in insts.iter().enumerate() {
        match inst.kind {
            Kind::Bra { target } => {
                if (target as usize) < n {
                    leader[target as usize] = true;
                }
                if pc + 1 < n {
                    leader[pc + 1] = true;
                }
            }
            Kind::Exit if pc + 1 < n => leader[pc + 1] = true,
            _ => {}
        }
    }
    let starts: Vec<usize> = (0..n).filter(|&pc| leader[pc]).collect();
    let mut block_of = vec![0usize; n];
    for (b, &start) in starts.iter().enumerate() {
        let end = starts.get(b + 1).copied().unwrap_or(n);
        for slot in &mut block_of[start..end] {
            *slot = b;
        }
    }
    let blocks = starts.len();
    let exit = blocks; // the virtual exit node
    let successors: Vec<Vec<usize>> = (0..blocks)
        .map(|b| {
            let end = starts.get(b + 1).copied().unwrap_or(n) - 1;
            let last = &insts[end];
            let fall = if end + 1 < n { block_of[end + 1] } else { exit };
            match last.kind {
                Kind::Bra { target } => {
                    let t = if (target as usize) < n {
                        block_of[target as usize]
                    } else {
                        exit
                    };
                    if last.guard.is_some() { vec![t, fall] } else { vec![t] }
                }
                Kind::Exit if last.guard.is_none() => vec![exit],
                Kind::Exit => vec![exit, fall],
                _ => vec![fall],
            }
        })
        .collect();

    // Post-dominator sets as bitsets, iterated to a fixed point.
    let words = (blocks + 1).div_ceil(64);
    let full = vec![u64::MAX; words];
    let mut pdom: Vec<Vec<u64>> = vec![full; blocks + 1];
    pdom[exit] = vec![0; words];
    set(&mut pdom[exit], exit);
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..blocks).rev() {
            let mut next = vec![u64::MAX; words];
            for &s in &successors[b] {
                for (w, word) in next.iter_mut().enumerate() {
                    *word &= pdom[s][w];
                }
            }
            set(&mut next, b);
            if next != pdom[b] {
                pdom[b] = next;
                changed = true;
            }
        }
    }

    let ipdom_start: Vec<u32> = (0..blocks)
        .map(|b| {
            // The strict post-dominator whose own set is exactly ours minus us.
            let mut strict = pdom[b].clone();
            strict[b / 64] &= !(1u64 << (b % 64));
            let candidate = (0..=blocks).find(|&d| has(&strict, d) && pdom[d] == strict);
            match candidate {
                Some(d) if d != exit => starts[d] as u32,
                _ => EXIT,
            }
        })
        .collect();
    (0..n).map(|pc| ipdom_start[block_of[pc]]).collect()
}

fn set(bits: &mut [u64], i: usize) {
    bits[i / 64] |= 1u64 << (i % 64);
}

fn has(bits: &[u64], i: usize) -> bool {
    bits.get(i / 64).is_some_and(|w| w & (1u64 << (i % 64)) != 0)
}
