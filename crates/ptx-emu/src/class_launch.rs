//! The launch's first phase when it counts by class (block_classes/ says how a class is
//! found): representatives run one at a time on
//! the caller's thread, each followed by the tracker, and every block still unclassed that
//! meets a representative's conditions is counted with it. What is left (the tracker was
//! refused, or the classes stopped paying) goes to the launch's parallel phase.

use crate::block::BlockRunner;
use crate::block_classes::AffineTracker;
use crate::fault::EmuFault;
use crate::stats::Tally;

/// Classes tried before the rest of the blocks are left to run one by one: a kernel whose
/// blocks all differ (an address that moves by part of a sector, say) gains nothing, and each
/// class costs a pass over the blocks not yet classed.
const MAX_CLASSES: usize = 64;
/// A class with fewer members than this did not pay for its representative: following a
/// block costs several plain runs of it, on one host thread (the 3D solution at the profile
/// size: 0.09 s with 8, 0.11-0.13 s with 16, 0.13-0.15 s with 4; examples timed by hand on
/// 2 cores). Representatives are taken from the middle of the grid outwards (the interior's
/// class first, the corners' last), so the first small class says the rest are small too:
/// they run one by one.
const MIN_MEMBERS: u64 = 8;

/// What the classed phase counted, and the blocks it leaves to run.
pub struct Classed {
    pub tally: Tally,
    /// Linear indices of the blocks not counted yet, in order.
    pub left: Vec<u64>,
    pub classes: usize,
}

/// How far the block at linear index `index` is from the middle of the grid, each dimension
/// as a fraction of its extent: the interior's blocks come first, the corners last.
fn off_centre(grid: [u32; 3], index: u64) -> f64 {
    let at = position(grid, index);
    (0..3)
        .map(|d| (2.0 * at[d] as f64 - (grid[d] as f64 - 1.0)).abs() / grid[d] as f64)
        .sum()
}

/// The block at linear index `index` (x fastest).
fn position(grid: [u32; 3], index: u64) -> [i64; 3] {
    let (gx, gy) = (grid[0] as u64, grid[1] as u64);
    [index % gx, (index / gx) % gy, index / (gx * gy)].map(|v| v as i64)
}

/// Counts the launch's clusters (blocks, without clusters) class by class with `runner`
/// (one cluster per class is run), until every one is counted or classing stops paying.
/// `run` runs one cluster and is the launch's own (it turns a panic into a fault).
pub fn count_by_class(
    runner: &mut BlockRunner,
    run: impl Fn(&mut BlockRunner, u64) -> Result<(), EmuFault>,
) -> Result<Classed, EmuFault> {
    let shape = runner.cfg.cluster_shape(runner.prog);
    // Positions and distances are in clusters.
    let grid = shape.clusters(runner.cfg.grid);
    let units: u64 = grid.iter().map(|&g| g as u64).product();
    let warps = runner.warps.len();
    let mut classed = Classed {
        tally: Tally::new(runner.prog.insts.len()),
        left: (0..units).collect(),
        classes: 0,
    };
    while !classed.left.is_empty() && classed.classes < MAX_CLASSES && !runner.cancel.is_cancelled() {
        let nth = (0..classed.left.len())
            .min_by(|&a, &b| off_centre(grid, classed.left[a]).total_cmp(&off_centre(grid, classed.left[b])))
            .expect("blocks are left");
        let representative = classed.left[nth];
        runner.affine = Some(Box::new(AffineTracker::new(runner.prog.value_regs, warps, shape.dims)));
        let others = std::mem::replace(&mut runner.stats, Tally::new(runner.prog.insts.len()));
        let result = run(runner, representative);
        let one = std::mem::replace(&mut runner.stats, others);
        let tracker = runner.affine.take().expect("the tracker stays with the runner");
        result?;
        classed.classes += 1;
        if tracker.refused.is_some() {
            classed.tally.merge(one);
            classed.left.remove(nth);
            break;
        }
        let at = position(grid, representative);
        let mut members = 0u64;
        classed.left.retain(|&block| {
            let there = position(grid, block);
            let joins = block == representative || tracker.constraints.admit([0, 1, 2].map(|d| there[d] - at[d]));
            members += joins as u64;
            !joins
        });
        classed.tally.add_times(&one, members);
        if members < MIN_MEMBERS {
            break;
        }
    }
    Ok(classed)
}
