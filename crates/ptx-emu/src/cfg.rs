//! Basic blocks and immediate post-dominators: where the lanes of a divergent branch meet
//! again. The SIMT stack in `warp.rs` reconverges there.

use super::ir::{EXIT, Flow, Inst, Kind};

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
            Kind::Flow(Flow::Bra { target }) => {
                if (target as usize) < n {
                    leader[target as usize] = true;
                }
                if pc + 1 < n {
                    leader[pc + 1] = true;
                }
            }
            Kind::Flow(Flow::Exit) if pc + 1 < n => leader[pc + 1] = true,
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
                Kind::Flow(Flow::Bra { target }) => {
                    let t = if (target as usize) < n {
                        block_of[target as usize]
                    } else {
                        exit
                    };
                    if last.guard.is_some() { vec![t, fall] } else { vec![t] }
                }
                Kind::Flow(Flow::Exit) if last.guard.is_none() => vec![exit],
                Kind::Flow(Flow::Exit) => vec![exit, fall],
                _ => vec![fall],
            }
        })
        .collect();

    // Immediate post-dominators by Cooper, Harvey and Kennedy's iterative algorithm on the
    // reversed graph: linear per pass, so kernels with many inlined calls stay fast.
    let mut predecessors: Vec<Vec<usize>> = vec![Vec::new(); blocks + 1];
    for (b, succ) in successors.iter().enumerate() {
        for &s in succ {
            predecessors[s].push(b);
        }
    }
    // Postorder of the reversed graph from the exit (iterative DFS).
    const NONE: usize = usize::MAX;
    let mut order = vec![NONE; blocks + 1];
    let mut postorder = Vec::with_capacity(blocks + 1);
    let mut visited = vec![false; blocks + 1];
    let mut stack = vec![(exit, 0usize)];
    visited[exit] = true;
    while let Some(&mut (node, ref mut next)) = stack.last_mut() {
        if let Some(&p) = predecessors[node].get(*next) {
            *next += 1;
            if !visited[p] {
                visited[p] = true;
                stack.push((p, 0));
            }
        } else {
            order[node] = postorder.len();
            postorder.push(node);
            stack.pop();
        }
    }
    let mut ipdom = vec![NONE; blocks + 1];
    ipdom[exit] = exit;
    let mut changed = true;
    while changed {
        changed = false;
        for &b in postorder.iter().rev().filter(|&&b| b != exit) {
            let mut new = NONE;
            for &s in &successors[b] {
                if ipdom[s] == NONE {
                    continue;
                }
                new = if new == NONE {
                    s
                } else {
                    let (mut x, mut y) = (s, new);
                    while x != y {
                        while order[x] < order[y] {
                            x = ipdom[x];
                        }
                        while order[y] < order[x] {
                            y = ipdom[y];
                        }
                    }
                    x
                };
            }
            if new != NONE && ipdom[b] != new {
                ipdom[b] = new;
                changed = true;
            }
        }
    }
    let ipdom_start: Vec<u32> = (0..blocks)
        .map(|b| match ipdom[b] {
            d if d == NONE || d == exit => EXIT,
            d => starts[d] as u32,
        })
        .collect();
    (0..n).map(|pc| ipdom_start[block_of[pc]]).collect()
}
