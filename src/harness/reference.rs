//! The CPU reference for the course's star stencils (see [`crate::lesson::Stencil`]).

use crate::lesson::Stencil;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// Grid coordinates of an element; `y` and `z` are absent for lower-dimensional lessons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coord {
    pub x: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub y: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub z: Option<u32>,
}

impl std::fmt::Display for Coord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.y, self.z) {
            (Some(y), Some(z)) => write!(f, "({}, {}, {z})", self.x, y),
            (Some(y), None) => write!(f, "({}, {y})", self.x),
            _ => write!(f, "({})", self.x),
        }
    }
}

/// Element `index` of an n^dims grid, x fastest.
pub fn coord_of(stencil: &Stencil, n: u32, index: usize) -> Coord {
    let n = n as usize;
    let x = (index % n) as u32;
    let y = (stencil.dims >= 2).then(|| ((index / n) % n) as u32);
    let z = (stencil.dims >= 3).then(|| (index / (n * n)) as u32);
    Coord { x, y, z }
}

/// The longest run [`for_each_row`] hands over at once.
const MAX_SEGMENT: usize = 4096;

/// One run of consecutive elements within a row of x (see [`for_each_row`]).
pub(super) struct RowRun {
    /// The run's element indices.
    pub segment: Range<usize>,
    /// The x of its first element.
    pub x_start: usize,
    /// Whether the whole row lies on a face of y or z.
    pub on_border: bool,
}

/// Calls `visit` for each run of `range` that lies in one row of x of an n^dims grid (x
/// fastest), in order. Coordinates are divided out once per row, not per element: at the
/// profile sizes (2^24 elements) those divisions were most of the reference's and the
/// verifier's time.
pub(super) fn for_each_row(dims: u32, n: usize, range: Range<usize>, mut visit: impl FnMut(RowRun)) {
    let mut index = range.start;
    while index < range.end {
        let x = index % n;
        let row = index / n;
        let on_border = match dims {
            1 => false,
            2 => row == 0 || row == n - 1,
            _ => {
                let (y, z) = (row % n, row / n);
                y == 0 || y == n - 1 || z == 0 || z == n - 1
            }
        };
        // A long row (1D has one) goes in pieces that stay in the cache.
        let row_end = (index - x + n).min(range.end).min(index + MAX_SEGMENT);
        visit(RowRun {
            segment: index..row_end,
            x_start: x,
            on_border,
        });
        index = row_end;
    }
}

/// The reference's elements of `run` into `out`.
pub(super) fn reference_row(stencil: &Stencil, strides: &[usize], input: &[f32], run: &RowRun, out: &mut [f32]) {
    out.copy_from_slice(&input[run.segment.clone()]);
    fill_interior(stencil, strides, input, run, Interior::Values(out));
}

/// A face point's tolerance: none (it must be an exact copy of its input).
pub(super) const EXACT_ONLY: f64 = -1.0;

/// Each element's rounding scale (see the verifier): the sum of the magnitudes of the
/// stencil's terms at an interior point, [`EXACT_ONLY`] on a face. Computed for a whole
/// run at once, so the verifier's tolerance test has no branch per element.
pub(super) fn tolerance_row(stencil: &Stencil, strides: &[usize], input: &[f32], run: &RowRun, scale: &mut [f64]) {
    scale.fill(EXACT_ONLY);
    fill_interior(stencil, strides, input, run, Interior::Scales(scale));
}

/// What [`fill_interior`] computes at each interior point of a run.
enum Interior<'a> {
    /// The stencil's value.
    Values(&'a mut [f32]),
    /// The sum of the magnitudes of its terms.
    Scales(&'a mut [f64]),
}

/// Fills the interior points of `run` (x from 1 to n - 2, not on a face) of `what`; the
/// face points are left as they are.
fn fill_interior(stencil: &Stencil, strides: &[usize], input: &[f32], run: &RowRun, what: Interior) {
    if run.on_border {
        return;
    }
    // n is the y stride; a 1D grid is one row of the whole input.
    let n = strides.get(1).copied().unwrap_or(input.len());
    let x_end = run.x_start + run.segment.len();
    let (lo_x, hi_x) = (run.x_start.max(1), x_end.min(n - 1));
    if lo_x >= hi_x {
        return;
    }
    let lo = run.segment.start + (lo_x - run.x_start);
    let within = lo_x - run.x_start..hi_x - run.x_start;
    let what = match what {
        Interior::Values(out) => Interior::Values(&mut out[within]),
        Interior::Scales(scale) => Interior::Scales(&mut scale[within]),
    };
    match strides {
        [a] => interior_points(stencil, [*a], input, lo, what),
        [a, b] => interior_points(stencil, [*a, *b], input, lo, what),
        [a, b, c] => interior_points(stencil, [*a, *b, *c], input, lo, what),
        _ => unreachable!("the course's stencils have 1 to 3 dimensions"),
    }
}

/// `what` at each element `lo + k`, every one interior. The stencil's value: the neighbours
/// summed in f64, pair by pair in stride order (x, then y, then z), and rounded once. The
/// scale: |centre| |c| + |neighbour| times the sum of the neighbours' magnitudes, in the
/// same order.
fn interior_points<const D: usize>(stencil: &Stencil, strides: [usize; D], input: &[f32], lo: usize, what: Interior) {
    let len = match &what {
        Interior::Values(out) => out.len(),
        Interior::Scales(scale) => scale.len(),
    };
    let centre = &input[lo..lo + len];
    let below: [&[f32]; D] = strides.map(|s| &input[lo - s..lo - s + len]);
    let above: [&[f32]; D] = strides.map(|s| &input[lo + s..lo + s + len]);
    match what {
        Interior::Values(out) => {
            let (c, nb) = (stencil.centre as f64, stencil.neighbour as f64);
            for k in 0..len {
                let mut neighbours = 0.0f64;
                for d in 0..D {
                    neighbours += below[d][k] as f64 + above[d][k] as f64;
                }
                out[k] = (c * centre[k] as f64 + nb * neighbours) as f32;
            }
        }
        Interior::Scales(scale) => {
            let (c, nb) = (stencil.centre.abs() as f64, stencil.neighbour.abs() as f64);
            for k in 0..len {
                let mut neighbours = 0.0f64;
                for d in 0..D {
                    neighbours += below[d][k].abs() as f64 + above[d][k].abs() as f64;
                }
                scale[k] = c * centre[k].abs() as f64 + nb * neighbours;
            }
        }
    }
}

/// Expected output of the stencil on `input` (an n^dims grid). Sums are taken in f64 and
/// rounded once, so the reference is the exact value to within one rounding; the verifier
/// allows for a kernel summing in another order in f32.
pub fn reference_output(stencil: &Stencil, n: u32, input: &[f32]) -> Vec<f32> {
    let strides = strides(stencil, n);
    let mut out = super::buffers::zeroed_f32(input.len());
    // Each element depends only on the input: any split over threads gives the same values.
    super::parallel::fill_in_chunks(&mut out, |start, part| {
        for_each_row(stencil.dims, n as usize, start..start + part.len(), |run| {
            let into = &mut part[run.segment.start - start..run.segment.end - start];
            reference_row(stencil, &strides, input, &run, into);
        });
    });
    out
}

/// The index distance to the next element along each dimension (x first).
pub(super) fn strides(stencil: &Stencil, n: u32) -> Vec<usize> {
    (0..stencil.dims).map(|d| (n as usize).pow(d)).collect()
}

/// One element of the reference, computed alone: the definition the rows are tested against.
#[cfg(test)]
#[inline]
pub(super) fn reference_at(stencil: &Stencil, strides: &[usize], input: &[f32], index: usize, on_border: bool) -> f32 {
    if on_border {
        return input[index];
    }
    let neighbours: f64 = strides
        .iter()
        .map(|&s| input[index - s] as f64 + input[index + s] as f64)
        .sum();
    (stencil.centre as f64 * input[index] as f64 + stencil.neighbour as f64 * neighbours) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    const S1: Stencil = Stencil {
        dims: 1,
        centre: 0.5,
        neighbour: 0.25,
    };
    const S2: Stencil = super::super::FIVE_POINT;
    const S3: Stencil = Stencil {
        dims: 3,
        centre: 0.25,
        neighbour: 0.125,
    };

    #[test]
    fn the_rows_walk_finds_the_faces_of_any_range() {
        for dims in 1..=3u32 {
            for n in [3usize, 4, 7, MAX_SEGMENT + 3] {
                if dims == 3 && n > 7 {
                    continue;
                }
                let len = n.pow(dims);
                let on_face_by_division = |index: usize| {
                    (0..dims).any(|d| {
                        let c = (index / n.pow(d)) % n;
                        c == 0 || c == n - 1
                    })
                };
                // The faces as the verifier sees them: the points without a tolerance.
                let stencil = [S1, S2, S3][dims as usize - 1];
                let (input, strides) = (vec![0.5f32; len], strides(&stencil, n as u32));
                for (start, end) in [(0, len), (1, len - 2), (n + 1, 2 * n + 3), (len - 1, len), (5, 5)] {
                    let end = end.min(len);
                    let mut seen = Vec::new();
                    for_each_row(dims, n, start..end, |run| {
                        let mut scale = vec![0.0; run.segment.len()];
                        tolerance_row(&stencil, &strides, &input, &run, &mut scale);
                        for (i, s) in run.segment.zip(scale) {
                            seen.push((i, s == EXACT_ONLY));
                        }
                    });
                    let expected: Vec<(usize, bool)> = (start..end).map(|i| (i, on_face_by_division(i))).collect();
                    assert_eq!(seen, expected, "dims {dims}, n {n}, {start}..{end}");
                }
            }
        }
    }

    #[test]
    fn rows_give_the_same_reference_as_element_by_element() {
        for (stencil, n) in [(S1, 10_000u32), (S2, 37), (S3, 13)] {
            let len = (n as usize).pow(stencil.dims);
            let input: Vec<f32> = (0..len).map(|i| ((i * 7919) % 1013) as f32 / 1013.0 - 0.5).collect();
            let strides = strides(&stencil, n);
            let by_rows = reference_output(&stencil, n, &input);
            for (i, value) in by_rows.iter().enumerate() {
                let face = (0..stencil.dims).any(|d| {
                    let c = (i / (n as usize).pow(d)) % n as usize;
                    c == 0 || c == n as usize - 1
                });
                let one = reference_at(&stencil, &strides, &input, i, face);
                assert_eq!(value.to_bits(), one.to_bits(), "element {i} of {}D", stencil.dims);
            }
        }
    }

    #[test]
    fn coordinates_run_x_fastest() {
        assert_eq!(
            coord_of(&S2, 5, 7),
            Coord {
                x: 2,
                y: Some(1),
                z: None
            }
        );
        assert_eq!(
            coord_of(&S3, 4, 4 * 4 * 2 + 4 + 3),
            Coord {
                x: 3,
                y: Some(1),
                z: Some(2)
            }
        );
    }

    #[test]
    fn two_d_cells_by_hand() {
        // 4x4 grid with value = index + 1.
        let input: Vec<f32> = (1..=16).map(|v| v as f32).collect();
        let out = reference_output(&S2, 4, &input);
        // Corners and edges are copies.
        for i in [0, 3, 12, 15, 1, 2, 4, 8, 7, 11, 13, 14] {
            assert_eq!(out[i], input[i], "border cell {i}");
        }
        // (1,1): centre 6, left 5, right 7, up 2, down 10 -> 3 + 0.125*24 = 6.
        assert_eq!(out[5], 0.5 * 6.0 + 0.125 * (5.0 + 7.0 + 2.0 + 10.0));
        // (2,2): centre 11, left 10, right 12, up 7, down 15.
        assert_eq!(out[10], 0.5 * 11.0 + 0.125 * (10.0 + 12.0 + 7.0 + 15.0));
    }

    #[test]
    fn three_d_faces_are_copies_and_centre_uses_seven_points() {
        let n = 3u32;
        let input: Vec<f32> = (0..27).map(|v| (v as f32) * 0.5 + 1.0).collect();
        let out = reference_output(&S3, n, &input);
        // Only (1,1,1) = index 13 is interior.
        for i in (0..27).filter(|&i| i != 13) {
            assert_eq!(out[i], input[i], "face cell {i}");
        }
        let sum = input[12] + input[14] + input[10] + input[16] + input[4] + input[22];
        assert_eq!(out[13], 0.25 * input[13] + 0.125 * sum);
    }

    #[test]
    fn one_d_edges_are_copies() {
        let s1 = Stencil {
            dims: 1,
            centre: 0.5,
            neighbour: 0.25,
        };
        let out = reference_output(&s1, 4, &[1.0, 2.0, 4.0, 8.0]);
        assert_eq!(out, vec![1.0, 0.5 * 2.0 + 0.25 * 5.0, 0.5 * 4.0 + 0.25 * 10.0, 8.0]);
    }
}
