//! One verified launch at one size, the same for every backend: fresh inputs, a poisoned
//! output, the backend's launch, then the reference and the verifier.

use super::{SizeVerification, poisoned_output, random_inputs, reference_output, verify_output};
use crate::lesson::Lesson;

/// Runs `launch(input, output)` on fresh data for size `n` and verifies every element.
pub fn check_size<E>(
    lesson: &Lesson,
    n: u32,
    seed: u64,
    launch: impl FnOnce(&[f32], &mut [f32]) -> Result<(), E>,
) -> Result<SizeVerification, E> {
    let count = lesson.stencil.elements(n);
    let input = random_inputs(count, seed);
    let mut output = poisoned_output(count);
    launch(&input, &mut output)?;
    let expected = reference_output(&lesson.stencil, n, &input);
    let (wrong, unwritten, first_mismatches) = verify_output(&lesson.stencil, n, &input, &expected, &output);
    Ok(SizeVerification {
        n,
        grid: lesson.grid_for(n),
        block: lesson.block,
        elements: count,
        wrong,
        unwritten,
        first_mismatches,
        seed,
    })
}
