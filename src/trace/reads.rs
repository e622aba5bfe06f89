//! Where each read of one output was served from, worked out from the emulator's trace of
//! the watched block: for the picked thread, the accesses up to its store of one interior
//! output, matched against the stencil's neighbours. This is what the read-source diagram
//! draws, taken from the learner's actual kernel rather than a fixed picture.

use crate::backend::emu::{INPUT, OUTPUT, TraceSpace, TracedAccess};
use crate::lesson::Lesson;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Neighbour {
    Centre,
    Left,
    Right,
    Up,
    Down,
    Behind,
    Ahead,
}

impl Neighbour {
    pub fn offset(self) -> [i64; 3] {
        match self {
            Neighbour::Centre => [0, 0, 0],
            Neighbour::Left => [-1, 0, 0],
            Neighbour::Right => [1, 0, 0],
            Neighbour::Up => [0, -1, 0],
            Neighbour::Down => [0, 1, 0],
            Neighbour::Behind => [0, 0, -1],
            Neighbour::Ahead => [0, 0, 1],
        }
    }

    /// The 3, 5 or 7 points of the lesson's stencil.
    pub fn of_dims(dims: u32) -> &'static [Neighbour] {
        use Neighbour::*;
        match dims {
            1 => &[Centre, Left, Right],
            2 => &[Centre, Left, Right, Up, Down],
            _ => &[Centre, Left, Right, Up, Down, Behind, Ahead],
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Neighbour::Centre => "centre",
            Neighbour::Left => "left",
            Neighbour::Right => "right",
            Neighbour::Up => "up",
            Neighbour::Down => "down",
            Neighbour::Behind => "behind",
            Neighbour::Ahead => "ahead",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReadSource {
    /// A shared-memory load of this tile cell (row, column) of the lesson's tile layout.
    Tile { row: u32, col: u32 },
    /// A shared-memory load returning the neighbour's value, from a tile of another shape.
    Shared { offset: u64 },
    /// A global load of the neighbour's element.
    Global,
    /// Shared memory of another block of the cluster (distributed shared memory): read from
    /// that block's tile cell (row, column) directly, or (`copied`) from the block's own tile
    /// cell (row, column) that a copy from that block's tile filled.
    Neighbour {
        block: [u32; 3],
        row: u32,
        col: u32,
        copied: bool,
    },
    /// No load in this step: the value was already in a register (the register sweep).
    Register,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StencilRead {
    pub neighbour: Neighbour,
    pub source: ReadSource,
    /// Source line of the load that served it (0 for a register).
    pub line: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputReads {
    pub thread: [u32; 3],
    /// Grid coordinates of the output.
    pub output: [u32; 3],
    pub reads: Vec<StencilRead>,
    /// Global loads in the same step that did not serve this output directly (staging the
    /// tile for the block), as element offsets from the output.
    pub staged: Vec<[i64; 3]>,
}

/// The tile layout the lessons use: `rows x (block.x + 2)` floats at shared offset 0, the
/// thread's own cell at (ty + 1, tx + 1) (row 0 for 1D, whose tile is one row).
pub struct TileShape {
    pub width: u32,
    pub rows: u32,
    pub dims: u32,
}

impl TileShape {
    pub fn for_lesson(lesson: &Lesson) -> TileShape {
        let dims = lesson.stencil.dims;
        let rows = if dims == 1 { 1 } else { lesson.block[1] + 2 };
        TileShape {
            width: lesson.block[0] + 2,
            rows,
            dims,
        }
    }

    /// The tile cell of the thread's own output.
    pub fn own_cell(&self, thread: [u32; 3]) -> (i64, i64) {
        if self.dims == 1 {
            (0, thread[0] as i64 + 1)
        } else {
            (thread[1] as i64 + 1, thread[0] as i64 + 1)
        }
    }

    /// The tile cell (row, column) of a shared-memory byte offset, if it is inside the tile.
    pub fn cell_of(&self, offset: u64) -> Option<(u32, u32)> {
        let word = offset / 4;
        (offset.is_multiple_of(4) && word < (self.width * self.rows) as u64)
            .then(|| ((word / self.width as u64) as u32, (word % self.width as u64) as u32))
    }
}

/// Grid coordinates of a linear element index of a size-`n` launch.
pub fn coords(n: u32, dims: u32, element: u64) -> [i64; 3] {
    let n = n as u64;
    let x = element % n;
    let y = if dims >= 2 { (element / n) % n } else { 0 };
    let z = if dims >= 3 { element / (n * n) } else { 0 };
    [x as i64, y as i64, z as i64]
}

fn interior(n: u32, dims: u32, c: [i64; 3]) -> bool {
    (0..dims as usize).all(|d| c[d] > 0 && c[d] < n as i64 - 1)
}

/// The reads of the first interior output `thread` stored in the traced launch of size `n`.
pub fn reads_of(lesson: &Lesson, n: u32, trace: &[TracedAccess], thread: [u32; 3]) -> Option<OutputReads> {
    let dims = lesson.stencil.dims;
    let tile = TileShape::for_lesson(lesson);
    // Every input element the block loaded, and its bits: inputs are random, so a shared load
    // returning exactly an element's bits was served that element from shared memory.
    let loaded: HashMap<[i64; 3], u64> = trace
        .iter()
        .filter(|a| a.space == TraceSpace::Global && !a.store && a.buffer == Some(INPUT))
        .map(|a| (coords(n, dims, a.offset / 4), a.value))
        .collect();
    // Values the block's threads read from other blocks' tiles (a cluster's distributed
    // shared memory), by value: which block they came from, and the element they are.
    let from_peers = peer_values(lesson, n, trace, &tile);
    let mut loaded = loaded;
    for (value, (_, element)) in &from_peers {
        loaded.entry(*element).or_insert(*value);
    }
    let mine: Vec<&TracedAccess> = trace.iter().filter(|a| a.thread == thread).collect();
    let mut start = 0;
    for (i, access) in mine.iter().enumerate() {
        if !(access.store && access.space == TraceSpace::Global && access.buffer == Some(OUTPUT)) {
            continue;
        }
        let output = coords(n, dims, access.offset / 4);
        let step = &mine[start..i];
        start = i + 1;
        if !interior(n, dims, output) {
            continue;
        }
        let mut reads = Vec::new();
        let mut used = vec![false; step.len()];
        for &neighbour in Neighbour::of_dims(dims) {
            let d = neighbour.offset();
            let target = [output[0] + d[0], output[1] + d[1], output[2] + d[2]];
            let value = loaded.get(&target);
            let shared = step
                .iter()
                .enumerate()
                .rev()
                .find(|(_, a)| a.space == TraceSpace::Shared && !a.store && Some(&a.value) == value);
            let global = step.iter().enumerate().rev().find(|(_, a)| {
                a.space == TraceSpace::Global
                    && !a.store
                    && a.buffer == Some(INPUT)
                    && coords(n, dims, a.offset / 4) == target
            });
            let (source, line, index) = match (shared, global) {
                (Some((k, a)), _) => {
                    let (own_row, own_col) = tile.own_cell(thread);
                    let want = (
                        (own_row + if dims == 1 { 0 } else { d[1] }) as u32,
                        (own_col + d[0]) as u32,
                    );
                    let source = match (a.peer, tile.cell_of(a.offset)) {
                        (Some(block), Some((row, col))) => ReadSource::Neighbour {
                            block,
                            row,
                            col,
                            copied: false,
                        },
                        (None, Some(cell)) if cell == want => match from_peers.get(&a.value) {
                            Some((block, _)) => ReadSource::Neighbour {
                                block: *block,
                                row: cell.0,
                                col: cell.1,
                                copied: true,
                            },
                            None => ReadSource::Tile {
                                row: cell.0,
                                col: cell.1,
                            },
                        },
                        _ => ReadSource::Shared { offset: a.offset },
                    };
                    (source, a.line, Some(k))
                }
                (None, Some((k, a))) => (ReadSource::Global, a.line, Some(k)),
                (None, None) => (ReadSource::Register, 0, None),
            };
            if let Some(k) = index {
                used[k] = true;
            }
            reads.push(StencilRead {
                neighbour,
                source,
                line,
            });
        }
        let staged = step
            .iter()
            .enumerate()
            .filter(|(k, a)| !used[*k] && a.space == TraceSpace::Global && !a.store && a.buffer == Some(INPUT))
            .map(|(_, a)| {
                let c = coords(n, dims, a.offset / 4);
                [c[0] - output[0], c[1] - output[1], c[2] - output[2]]
            })
            .collect();
        return Some(OutputReads {
            thread,
            output: [output[0] as u32, output[1] as u32, output[2] as u32],
            reads,
            staged,
        });
    }
    None
}

/// The values the watched block read from other blocks' tiles, each with its block and the
/// grid element that tile cell holds (the lessons' tile layout: own cell at (ty+1, tx+1)).
fn peer_values(
    lesson: &Lesson,
    n: u32,
    trace: &[TracedAccess],
    tile: &TileShape,
) -> HashMap<u64, ([u32; 3], [i64; 3])> {
    let dims = lesson.stencil.dims;
    trace
        .iter()
        .filter(|a| a.space == TraceSpace::Shared && !a.store)
        .filter_map(|a| {
            let block = a.peer?;
            let (row, col) = tile.cell_of(a.offset)?;
            let x = block[0] as i64 * lesson.block[0] as i64 + col as i64 - 1;
            let y = if dims == 1 {
                0
            } else {
                block[1] as i64 * lesson.block[1] as i64 + row as i64 - 1
            };
            let inside = x >= 0 && x < n as i64 && y >= 0 && y < n as i64;
            inside.then_some((a.value, (block, [x, y, 0])))
        })
        .collect()
}

/// The block the emulator traces for the diagram: one away from the corner, so that its
/// outputs are interior at every lesson's largest size.
pub fn watched_block(lesson: &Lesson) -> [u32; 3] {
    match lesson.stencil.dims {
        1 => [1, 0, 0],
        _ => [1, 1, 0],
    }
}
