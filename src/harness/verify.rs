//! Element-by-element verification of one launch's output against the CPU reference.

use super::poison::is_poison;
use super::reference::{Coord, coord_of, for_each_row, reference_row, strides, tolerance_row};
use crate::lesson::Stencil;
use serde::{Deserialize, Serialize};

/// How many wrong elements a report lists by coordinate.
pub const MAX_LISTED_MISMATCHES: usize = 8;

/// Relative tolerance for interior points, scaled by the sum of the magnitudes of the terms:
/// covers any f32 summation order (and fused multiply-adds) over seven terms.
const RELATIVE_TOLERANCE: f64 = 2e-6;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mismatch {
    pub at: Coord,
    pub index: usize,
    pub expected: f32,
    /// `None` when the element was never written (it still holds the poison pattern).
    pub got: Option<f32>,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.got {
            Some(got) => write!(f, "at {}: expected {}, got {}", self.at, self.expected, got),
            None => write!(f, "at {}: expected {}, never written", self.at, self.expected),
        }
    }
}

/// The verdict on one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeVerification {
    pub n: u32,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub elements: usize,
    /// Elements written with a wrong value.
    pub wrong: usize,
    /// Elements never written (still poison).
    pub unwritten: usize,
    /// The first few bad elements in index order, wrong and unwritten alike.
    pub first_mismatches: Vec<Mismatch>,
    pub seed: u64,
}

impl SizeVerification {
    pub fn passed(&self) -> bool {
        self.wrong == 0 && self.unwritten == 0
    }

    /// One line for humans: `n=257: 12 wrong, 3 never written of 66049`.
    pub fn summary(&self) -> String {
        if self.passed() {
            format!("n={}: all {} elements correct", self.n, self.elements)
        } else {
            format!(
                "n={}: {} wrong, {} never written of {} elements",
                self.n, self.wrong, self.unwritten, self.elements
            )
        }
    }
}

/// Checks every element of `got` against `expected`. Border points must be exact copies;
/// interior points may differ by rounding only.
pub fn verify_output(
    stencil: &Stencil,
    n: u32,
    input: &[f32],
    expected: &[f32],
    got: &[f32],
) -> (usize, usize, Vec<Mismatch>) {
    verify_with(stencil, n, input, got, Some(expected))
}

/// [`verify_output`] with the reference computed row by row as it goes, for data drawn
/// without it (`SizeData::draw`).
pub fn verify_computing_reference(
    stencil: &Stencil,
    n: u32,
    input: &[f32],
    got: &[f32],
) -> (usize, usize, Vec<Mismatch>) {
    verify_with(stencil, n, input, got, None)
}

/// What one part of the output holds: wrong values, unwritten ones, the first listed.
type Tally = (usize, usize, Vec<Mismatch>);

fn verify_with(stencil: &Stencil, n: u32, input: &[f32], got: &[f32], stored: Option<&[f32]>) -> Tally {
    let strides = strides(stencil, n);
    let n_us = n as usize;
    // On every core; the parts come back in index order, so the listed mismatches are the
    // first ones whatever the split.
    let parts = super::parallel::map_ranges(got.len(), |range| {
        let mut tally: Tally = (0, 0, Vec::new());
        let (mut computed, mut scale) = (Vec::new(), Vec::new());
        for_each_row(stencil.dims, n_us, range, |run| {
            let segment = run.segment.clone();
            let expected: &[f32] = match stored {
                Some(all) => &all[segment.clone()],
                None => {
                    computed.resize(segment.len(), 0.0);
                    reference_row(stencil, &strides, input, &run, &mut computed);
                    &computed
                }
            };
            let row_got = &got[segment.clone()];
            // Most rows are the reference to the bit; the others are counted without a
            // branch per element (a kernel summing in its own order is off by a rounding in
            // a good part of its elements), and only the bad ones are looked at one by one.
            if expected.iter().zip(row_got).all(|(e, g)| e.to_bits() == g.to_bits()) {
                return;
            }
            scale.resize(segment.len(), 0.0);
            tolerance_row(stencil, &strides, input, &run, &mut scale);
            let bad: usize = (0..segment.len())
                .map(|k| !within_tolerance(expected[k], row_got[k], scale[k]) as usize)
                .sum();
            if bad == 0 {
                return;
            }
            for k in 0..segment.len() {
                let (e, g) = (expected[k], row_got[k]);
                if within_tolerance(e, g, scale[k]) {
                    continue;
                }
                let got_value = (!is_poison(g)).then_some(g);
                note_mismatch(&mut tally, stencil, n, segment.start + k, e, got_value);
            }
        });
        tally
    });
    let (mut wrong, mut unwritten, mut first) = (0usize, 0usize, Vec::new());
    for (w, u, f) in parts {
        wrong += w;
        unwritten += u;
        first.extend(f);
    }
    first.truncate(MAX_LISTED_MISMATCHES);
    (wrong, unwritten, first)
}

/// Counts a bad element (`got` None: never written) and lists it while the list has room.
fn note_mismatch(tally: &mut Tally, stencil: &Stencil, n: u32, index: usize, expected: f32, got: Option<f32>) {
    if got.is_some() {
        tally.0 += 1;
    } else {
        tally.1 += 1;
    }
    if tally.2.len() < MAX_LISTED_MISMATCHES {
        tally.2.push(Mismatch {
            at: coord_of(stencil, n, index),
            index,
            expected,
            got,
        });
    }
}

/// Whether `got` passes for `expected`: the same bits, or (at an interior point, where
/// `scale` is the sum of the magnitudes of the stencil's terms) within rounding of it. A
/// face point (`scale` negative) must be an exact copy; NaN and infinity never pass.
#[inline(always)]
fn within_tolerance(expected: f32, got: f32, scale: f64) -> bool {
    expected.to_bits() == got.to_bits() || ((got as f64) - (expected as f64)).abs() <= RELATIVE_TOLERANCE * scale
}

#[cfg(test)]
mod tests {
    use super::super::{poisoned_output, random_inputs, reference_output};
    use super::*;

    const S2: Stencil = super::super::FIVE_POINT;

    fn setup(n: u32) -> (Vec<f32>, Vec<f32>) {
        let input = random_inputs((n * n) as usize, 42);
        let expected = reference_output(&S2, n, &input);
        (input, expected)
    }

    #[test]
    fn a_correct_output_passes() {
        let (input, expected) = setup(33);
        let (w, u, first) = verify_output(&S2, 33, &input, &expected, &expected.clone());
        assert_eq!((w, u, first.len()), (0, 0, 0));
    }

    #[test]
    fn rounding_differences_pass_but_a_wrong_term_fails() {
        let (input, expected) = setup(33);
        let mut got = expected.clone();
        let i = 5 * 33 + 7;
        got[i] = f32::from_bits(expected[i].to_bits() + 2); // two ulps off: rounding
        assert_eq!(verify_output(&S2, 33, &input, &expected, &got).0, 0);
        got[i] = expected[i] + 0.125 * input[i + 1]; // one neighbour counted twice
        let (w, u, first) = verify_output(&S2, 33, &input, &expected, &got);
        assert_eq!((w, u), (1, 0));
        assert_eq!(
            first[0].at,
            Coord {
                x: 7,
                y: Some(5),
                z: None
            }
        );
        assert_eq!(first[0].got, Some(got[i]));
    }

    #[test]
    fn the_reference_computed_as_it_goes_gives_the_same_verdict() {
        // Big enough to be split over threads (the mismatches listed must still be the first).
        let n = 1100;
        let (input, expected) = setup(n);
        let mut got = expected.clone();
        for i in [n as usize + 1, 700 * n as usize + 3, 1000 * n as usize + 5] {
            got[i] = -got[i];
        }
        got[2 * n as usize] = poisoned_output(1)[0];
        let stored = verify_output(&S2, n, &input, &expected, &got);
        assert_eq!((stored.0, stored.1), (3, 1));
        assert_eq!(stored, verify_computing_reference(&S2, n, &input, &got));
    }

    #[test]
    fn borders_must_be_exact_copies() {
        let (input, expected) = setup(33);
        let mut got = expected.clone();
        got[32] = f32::from_bits(expected[32].to_bits() + 1); // (32, 0): one ulp off a copy
        assert_eq!(verify_output(&S2, 33, &input, &expected, &got).0, 1);
    }

    #[test]
    fn unwritten_elements_are_counted_apart_and_listed_in_order() {
        let (input, expected) = setup(33);
        let mut got = poisoned_output(expected.len());
        got[..33 * 20].copy_from_slice(&expected[..33 * 20]);
        got[3] = 1234.0;
        let (w, u, first) = verify_output(&S2, 33, &input, &expected, &got);
        assert_eq!((w, u), (1, 33 * 13));
        assert_eq!(first.len(), MAX_LISTED_MISMATCHES);
        assert_eq!(first[0].got, Some(1234.0));
        assert_eq!(
            first[1].at,
            Coord {
                x: 0,
                y: Some(20),
                z: None
            }
        );
        assert_eq!(first[1].got, None);
    }

    #[test]
    fn nan_and_infinity_are_wrong() {
        let (input, expected) = setup(33);
        let mut got = expected.clone();
        got[40] = f32::NAN;
        got[41] = f32::INFINITY;
        assert_eq!(verify_output(&S2, 33, &input, &expected, &got).0, 2);
    }
}
