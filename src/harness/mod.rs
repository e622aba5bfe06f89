//! The correctness harness shared by every backend: seeded inputs, poisoned outputs, the CPU
//! reference and the element-by-element verifier.

pub mod buffers;
mod check;
mod inputs;
pub mod parallel;
mod poison;
mod reference;
mod verify;

pub use check::{SizeData, check_size, verify_against};
pub use inputs::{fresh_seed, random_inputs, size_seed};
pub use poison::{POISON_BITS, is_poison, poisoned_output};
pub use reference::{Coord, coord_of, reference_output};
pub use verify::{MAX_LISTED_MISMATCHES, Mismatch, SizeVerification, verify_output};

/// The 2D lesson's stencil, for the unit tests of this module.
#[cfg(test)]
pub(crate) const FIVE_POINT: crate::lesson::Stencil = crate::lesson::Stencil {
    dims: 2,
    centre: 0.5,
    neighbour: 0.125,
};
