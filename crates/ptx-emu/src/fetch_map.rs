//! The fetch map behind the heat-map view: how many times each input element was fetched
//! from global memory in one whole launch, per element (a lane loading it) and per sector
//! (a warp instruction whose request included the element's 32-byte sector), and which
//! source lines fetched it. Only elements inside a window are kept, so a window of a large
//! launch costs memory for the window alone.
//!
//! Counting happens on the general memory path (block_memory.rs): a launch with a fetch map
//! skips the fast paths, which is fine for the small sizes the view asks for.

use super::ir::{AccessKind, MemSpace, Program};

/// Which elements of the lesson's input to count, in grid coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchWindow {
    /// The launch's size and the lesson's dimensions (1, 2 or 3).
    pub n: u32,
    pub dims: u32,
    /// First element (x, y, z) and how many along each axis.
    pub origin: [u32; 3],
    pub extent: [u32; 3],
}

impl FetchWindow {
    /// The whole grid of a size-`n` launch.
    pub fn whole(n: u32, dims: u32) -> FetchWindow {
        let extent = std::array::from_fn(|d| if (d as u32) < dims { n } else { 1 });
        FetchWindow {
            n,
            dims,
            origin: [0; 3],
            extent,
        }
    }

    /// A window of at most `side` elements per axis starting at `origin`, clipped to the grid.
    pub fn window(n: u32, dims: u32, origin: [u32; 3], side: u32) -> FetchWindow {
        let origin = std::array::from_fn(|d| if (d as u32) < dims { origin[d].min(n - 1) } else { 0 });
        let extent = std::array::from_fn(|d| if (d as u32) < dims { side.min(n - origin[d]) } else { 1 });
        FetchWindow {
            n,
            dims,
            origin,
            extent,
        }
    }

    pub fn cells(&self) -> usize {
        self.extent.iter().map(|&e| e as usize).product()
    }

    /// The window cell of input element `element` (linear, x fastest), if it lies inside.
    #[inline]
    pub fn cell_of(&self, element: u64) -> Option<usize> {
        let n = self.n as u64;
        let coord = [element % n, (element / n) % n, element / (n * n)];
        let mut cell = 0usize;
        for d in (0..3).rev() {
            let c = coord[d].checked_sub(self.origin[d] as u64)?;
            if c >= self.extent[d] as u64 {
                return None;
            }
            cell = cell * self.extent[d] as usize + c as usize;
        }
        Some(cell)
    }

    /// Grid coordinates of window cell `cell`.
    pub fn coord_of(&self, cell: usize) -> [u32; 3] {
        let [ex, ey, _] = self.extent;
        let (x, y, z) = (
            cell % ex as usize,
            (cell / ex as usize) % ey as usize,
            cell / (ex * ey) as usize,
        );
        [
            self.origin[0] + x as u32,
            self.origin[1] + y as u32,
            self.origin[2] + z as u32,
        ]
    }
}

/// The counts of one launch (or one host thread's share of it, merged afterwards).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchMap {
    pub window: FetchWindow,
    /// Per window cell: lanes that loaded the element.
    pub loads: Vec<u32>,
    /// Per window cell: warp instructions whose sectors included the element's sector.
    pub sector_fetches: Vec<u32>,
    /// Per window cell: bit `i` set when source line `lines[i]` loaded the element.
    pub line_bits: Vec<u64>,
    /// The source lines with global loads, in bit order (at most 64; later ones share the
    /// last bit).
    pub lines: Vec<u32>,
    /// Sectors of the input fetched by loads in the whole launch, window or not (each warp
    /// instruction's distinct sectors).
    pub input_sectors: u64,
}

impl FetchMap {
    pub fn new(window: FetchWindow, prog: &Program) -> FetchMap {
        let mut lines: Vec<u32> = prog
            .insts
            .iter()
            .filter(|i| {
                matches!(
                    i.access(),
                    Some((AccessKind::Load, MemSpace::Global | MemSpace::Generic))
                )
            })
            .map(|i| i.line)
            .collect();
        lines.sort_unstable();
        lines.dedup();
        let cells = window.cells();
        FetchMap {
            window,
            loads: vec![0; cells],
            sector_fetches: vec![0; cells],
            line_bits: vec![0; cells],
            lines,
            input_sectors: 0,
        }
    }

    fn line_bit(&self, line: u32) -> u64 {
        let i = self.lines.binary_search(&line).unwrap_or(self.lines.len());
        1 << i.min(63)
    }

    /// Lane loads of elements `first..first + count` by `line`.
    pub fn note_load(&mut self, first: u64, count: u64, line: u32) {
        let bit = self.line_bit(line);
        for element in first..first + count {
            if let Some(cell) = self.window.cell_of(element) {
                self.loads[cell] += 1;
                self.line_bits[cell] |= bit;
            }
        }
    }

    /// One warp instruction fetched the 32-byte sector holding elements `first..first + 8`.
    pub fn note_sector(&mut self, first: u64) {
        for element in first..first + 8 {
            if let Some(cell) = self.window.cell_of(element) {
                self.sector_fetches[cell] += 1;
            }
        }
    }

    pub fn merge(&mut self, other: &FetchMap) {
        for (a, b) in self.loads.iter_mut().zip(&other.loads) {
            *a += b;
        }
        for (a, b) in self.sector_fetches.iter_mut().zip(&other.sector_fetches) {
            *a += b;
        }
        for (a, b) in self.line_bits.iter_mut().zip(&other.line_bits) {
            *a |= b;
        }
        self.input_sectors += other.input_sectors;
    }

    /// The source lines whose loads fetched window cell `cell`.
    pub fn lines_of(&self, cell: usize) -> Vec<u32> {
        let bits = self.line_bits[cell];
        self.lines
            .iter()
            .enumerate()
            .filter(|(i, _)| bits >> (*i).min(63) & 1 != 0)
            .map(|(_, &l)| l)
            .collect()
    }
}

/// The fetch map of the input buffer being filled by one host thread: its counts, the
/// input's base address, and the sectors of the warp instruction in progress.
#[derive(Debug, Clone)]
pub struct FetchCounter {
    pub map: FetchMap,
    pub input_base: u64,
    pub input_end: u64,
    pending_sectors: Vec<u64>,
}

impl FetchCounter {
    pub fn new(map: FetchMap, input_base: u64, input_end: u64) -> FetchCounter {
        FetchCounter {
            map,
            input_base,
            input_end,
            pending_sectors: Vec::with_capacity(64),
        }
    }

    /// One lane's load of `bytes` at `at` by source line `line`; loads outside the input
    /// are not the map's business.
    #[inline]
    pub fn lane_load(&mut self, at: u64, bytes: u32, line: u32) {
        if at < self.input_base || at >= self.input_end {
            return;
        }
        let offset = at - self.input_base;
        // Elements are floats: a vector or 8-byte load covers several.
        let first = offset / 4;
        let count = (bytes as u64).div_ceil(4).max(1);
        self.map.note_load(first, count, line);
        let (s0, s1) = (offset >> 5, (offset + bytes as u64 - 1) >> 5);
        self.pending_sectors.extend(s0..=s1);
    }

    /// The warp instruction is complete: each distinct sector counts once.
    pub fn end_instruction(&mut self) {
        if self.pending_sectors.is_empty() {
            return;
        }
        self.pending_sectors.sort_unstable();
        self.pending_sectors.dedup();
        self.map.input_sectors += self.pending_sectors.len() as u64;
        for i in 0..self.pending_sectors.len() {
            self.map.note_sector(self.pending_sectors[i] * 8);
        }
        self.pending_sectors.clear();
    }
}
