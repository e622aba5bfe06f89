//! The block replay's model: the emulator's trace of the watched block cut into steps, one
//! per warp instruction that touched memory (and one per completed barrier), with what each
//! step did to the shared tile and which global sectors it fetched. The app's replay draws
//! it; this file knows nothing of drawing.

use crate::backend::Trace;
use crate::backend::emu::{TraceSpace, TracedAccess};
use crate::lesson::Lesson;
use crate::trace::reads::{TileShape, coords, watched_block};
use std::collections::BTreeMap;
use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    GlobalLoad,
    GlobalStore,
    SharedStore,
    SharedLoad,
    /// A read or write of another block's tile in the cluster (distributed shared memory).
    NeighbourLoad,
    NeighbourStore,
    Barrier,
    /// The cluster barrier: every thread of every block of the cluster arrived.
    ClusterBarrier,
}

impl StepKind {
    pub fn describe(self) -> &'static str {
        match self {
            StepKind::GlobalLoad => "global load",
            StepKind::GlobalStore => "global store",
            StepKind::SharedStore => "shared store (tile write)",
            StepKind::SharedLoad => "shared load (tile read)",
            StepKind::NeighbourLoad => "read of a neighbour block's tile (distributed shared memory)",
            StepKind::NeighbourStore => "write into a neighbour block's tile (distributed shared memory)",
            StepKind::Barrier => "barrier: every warp of the block arrived",
            StepKind::ClusterBarrier => "cluster barrier: every warp of every block of the cluster arrived",
        }
    }
}

/// One distinct 32-byte sector of a global step and how many lanes used it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SectorUse {
    pub sector: u64,
    pub lanes: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub kind: StepKind,
    /// Warp of the block (0 for a barrier).
    pub warp: u32,
    pub line: u32,
    /// The PTX line of the step's instruction (to find the compiler's move it is part of).
    pub ptx_line: u32,
    /// The step's accesses in the trace.
    pub accesses: Range<usize>,
    /// Global steps: the distinct sectors, in address order.
    pub sectors: Vec<SectorUse>,
    /// Neighbour steps: the block whose tile it read or wrote.
    pub peer: Option<[u32; 3]>,
}

impl Step {
    pub fn lone_lane_sectors(&self) -> usize {
        self.sectors.iter().filter(|s| s.lanes == 1).count()
    }
}

/// A cell of the block's patch (row, column), as the diagram numbers them: the block's own
/// cells at (ty + 1, tx + 1), the halo ring around them.
pub type Cell = (i64, i64);

pub struct Replay {
    pub steps: Vec<Step>,
    pub accesses: Vec<TracedAccess>,
    tile: TileShape,
    block_dims: [u32; 3],
    /// Grid coordinates of the block's first thread.
    origin: [i64; 3],
    n: u32,
    dims: u32,
}

fn kind_of(a: &TracedAccess) -> Option<StepKind> {
    Some(match (a.space, a.store, a.peer.is_some()) {
        (TraceSpace::Global, false, _) => StepKind::GlobalLoad,
        (TraceSpace::Global, true, _) => StepKind::GlobalStore,
        (TraceSpace::Shared, true, false) => StepKind::SharedStore,
        (TraceSpace::Shared, false, false) => StepKind::SharedLoad,
        (TraceSpace::Shared, true, true) => StepKind::NeighbourStore,
        (TraceSpace::Shared, false, true) => StepKind::NeighbourLoad,
        (TraceSpace::Barrier, _, _) => StepKind::Barrier,
        (TraceSpace::ClusterBarrier, _, _) => StepKind::ClusterBarrier,
    })
}

impl StepKind {
    /// A barrier of the block or of its cluster: a mark on the timeline, no warp's step.
    pub fn is_barrier(self) -> bool {
        matches!(self, StepKind::Barrier | StepKind::ClusterBarrier)
    }
}

impl Replay {
    pub fn new(lesson: &Lesson, trace: &Trace) -> Replay {
        let block_dims = lesson.block;
        let warp_of = |t: [u32; 3]| (t[0] + block_dims[0] * (t[1] + block_dims[1] * t[2])) / 32;
        let mut steps: Vec<Step> = Vec::new();
        // Lanes already in the step being built: a lane seen again starts the next step
        // (a loop that runs the same load twice in a row).
        let mut lanes_seen = 0u32;
        for (i, a) in trace.accesses.iter().enumerate() {
            let Some(kind) = kind_of(a) else { continue };
            let warp = if kind.is_barrier() { 0 } else { warp_of(a.thread) };
            let linear = a.thread[0] + block_dims[0] * (a.thread[1] + block_dims[1] * a.thread[2]);
            let lane_bit = 1u32 << (linear % 32);
            let continues = steps.last().is_some_and(|s| {
                s.kind == kind
                    && !kind.is_barrier()
                    && s.warp == warp
                    && s.peer == a.peer
                    && s.accesses.end == i
                    && trace.accesses[s.accesses.start].pc == a.pc
                    && lanes_seen & lane_bit == 0
            });
            if continues {
                let s = steps.last_mut().expect("a step");
                s.accesses.end = i + 1;
                lanes_seen |= lane_bit;
            } else {
                steps.push(Step {
                    kind,
                    warp,
                    line: a.line,
                    ptx_line: a.ptx_line,
                    accesses: i..i + 1,
                    sectors: Vec::new(),
                    peer: a.peer,
                });
                lanes_seen = lane_bit;
            }
        }
        // Once every thread has used up its traced accesses (emu TRACE_CAP), only barrier
        // marks follow: they show nothing new, so the replay ends at the last access.
        while steps.len() > 1 && steps.last().is_some_and(|s| s.kind.is_barrier()) {
            steps.pop();
        }
        for s in &mut steps {
            if matches!(s.kind, StepKind::GlobalLoad | StepKind::GlobalStore) {
                let mut sectors: BTreeMap<(Option<crate::backend::emu::BufferId>, u64), u32> = BTreeMap::new();
                for a in &trace.accesses[s.accesses.clone()] {
                    let key = (a.buffer, a.offset / 32);
                    *sectors.entry(key).or_default() += 1;
                }
                s.sectors = sectors
                    .into_iter()
                    .map(|((_, sector), lanes)| SectorUse { sector, lanes })
                    .collect();
            }
        }
        let ctaid = watched_block(lesson);
        let origin = std::array::from_fn(|d| ctaid[d] as i64 * block_dims[d] as i64);
        Replay {
            steps,
            accesses: trace.accesses.clone(),
            tile: TileShape::for_lesson(lesson),
            block_dims,
            origin,
            n: trace.n,
            dims: lesson.stencil.dims,
        }
    }

    pub fn len(&self) -> usize {
        self.steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Indices of the barrier steps (the block's and its cluster's).
    pub fn barriers(&self) -> Vec<usize> {
        (0..self.steps.len())
            .filter(|&k| self.steps[k].kind.is_barrier())
            .collect()
    }

    /// Warps in the block.
    pub fn warps(&self) -> u32 {
        self.block_dims.iter().product::<u32>().div_ceil(32)
    }

    /// The patch cell of one access: a tile cell for shared memory, the element's place
    /// around the block for global memory (input or output), if it falls in the patch.
    pub fn cell_of(&self, a: &TracedAccess) -> Option<Cell> {
        match a.space {
            // Another block's tile is not this block's patch.
            TraceSpace::Shared if a.peer.is_some() => None,
            TraceSpace::Shared => self.tile.cell_of(a.offset).map(|(r, c)| (r as i64, c as i64)),
            TraceSpace::Global => {
                let c = coords(self.n, self.dims, a.offset / 4);
                let col = c[0] - self.origin[0] + 1;
                let row = if self.dims == 1 { 0 } else { c[1] - self.origin[1] + 1 };
                let (rows, cols) = (self.tile.rows as i64, self.tile.width as i64);
                (row >= 0 && row < rows && col >= 0 && col < cols).then_some((row, col))
            }
            TraceSpace::Barrier | TraceSpace::ClusterBarrier => None,
        }
    }

    /// The cells step `k` touched.
    pub fn cells_of_step(&self, k: usize) -> Vec<Cell> {
        let Some(step) = self.steps.get(k) else {
            return Vec::new();
        };
        self.accesses[step.accesses.clone()]
            .iter()
            .filter_map(|a| self.cell_of(a))
            .collect()
    }

    /// Tile cells written by steps `0..=k`, with the warp that wrote each last.
    pub fn tile_writers(&self, k: usize) -> BTreeMap<Cell, u32> {
        let mut writers = BTreeMap::new();
        for step in self.steps.iter().take(k + 1) {
            if step.kind != StepKind::SharedStore {
                continue;
            }
            for a in &self.accesses[step.accesses.clone()] {
                if let Some(cell) = self.cell_of(a) {
                    writers.insert(cell, step.warp);
                }
            }
        }
        writers
    }

    /// Global sectors fetched or written by steps `0..=k` (summed per warp instruction, as
    /// the hardware counts them).
    pub fn sectors_so_far(&self, k: usize) -> u64 {
        self.steps.iter().take(k + 1).map(|s| s.sectors.len() as u64).sum()
    }

    /// 3D: the z planes a global step's elements lie in (lowest, highest), so the replay can
    /// say when a step reads the plane behind or ahead of the one being staged.
    pub fn z_range(&self, k: usize) -> Option<(i64, i64)> {
        let step = self.steps.get(k)?;
        if self.dims < 3 || !matches!(step.kind, StepKind::GlobalLoad | StepKind::GlobalStore) {
            return None;
        }
        self.accesses[step.accesses.clone()]
            .iter()
            .map(|a| coords(self.n, self.dims, a.offset / 4)[2])
            .fold(None, |r, z| {
                Some(r.map_or((z, z), |(lo, hi): (i64, i64)| (lo.min(z), hi.max(z))))
            })
    }

    /// The z plane being computed at step `k` (3D): one past the last plane whose outputs
    /// were stored before it, or the block's first plane.
    pub fn plane_z(&self, k: usize) -> Option<i64> {
        if self.dims < 3 {
            return None;
        }
        let stored = self.steps[..=k.min(self.steps.len().saturating_sub(1))]
            .iter()
            .rev()
            .find(|s| s.kind == StepKind::GlobalStore)
            .and_then(|s| self.accesses.get(s.accesses.start))
            .map(|a| coords(self.n, self.dims, a.offset / 4)[2] + 1);
        stored.or_else(|| {
            // Before the first store: the plane of the block's first own-cell load.
            self.steps[..=k.min(self.steps.len().saturating_sub(1))]
                .iter()
                .find(|s| s.kind == StepKind::GlobalLoad)
                .and_then(|s| self.accesses.get(s.accesses.start))
                .map(|a| coords(self.n, self.dims, a.offset / 4)[2])
        })
    }

    /// The first step at or after `from` (wrapping) on source line `line`.
    pub fn step_on_line(&self, line: u32, from: usize) -> Option<usize> {
        let n = self.steps.len();
        (0..n).map(|i| (from + i) % n).find(|&k| self.steps[k].line == line)
    }
}
