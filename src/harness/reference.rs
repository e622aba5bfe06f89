//! The CPU reference for the course's star stencils (see [`crate::lesson::Stencil`]).

use crate::lesson::Stencil;
use serde::{Deserialize, Serialize};

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

/// Whether element `index` of an n^dims grid (x stride first) lies on a face: it is copied.
pub(super) fn on_border(n: usize, strides: &[usize], index: usize) -> bool {
    strides.iter().any(|&s| {
        let c = (index / s) % n;
        c == 0 || c == n - 1
    })
}

/// Expected output of the stencil on `input` (an n^dims grid). Sums are taken in f64 and
/// rounded once, so the reference is the exact value to within one rounding; the verifier
/// allows for a kernel summing in another order in f32.
pub fn reference_output(stencil: &Stencil, n: u32, input: &[f32]) -> Vec<f32> {
    let strides = strides(stencil, n);
    let mut out = vec![0.0f32; input.len()];
    // Each element depends only on the input: any split over threads gives the same values.
    super::parallel::fill_in_chunks(&mut out, |start, part| {
        for (k, value) in part.iter_mut().enumerate() {
            *value = reference_at(stencil, n as usize, &strides, input, start + k);
        }
    });
    out
}

/// The index distance to the next element along each dimension (x first).
pub(super) fn strides(stencil: &Stencil, n: u32) -> Vec<usize> {
    (0..stencil.dims).map(|d| (n as usize).pow(d)).collect()
}

/// The reference's element `index` (see [`reference_output`]).
#[inline]
pub(super) fn reference_at(stencil: &Stencil, n: usize, strides: &[usize], input: &[f32], index: usize) -> f32 {
    if on_border(n, strides, index) {
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

    const S2: Stencil = super::super::FIVE_POINT;
    const S3: Stencil = Stencil {
        dims: 3,
        centre: 0.25,
        neighbour: 0.125,
    };

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
