//! One verified launch at one size, the same for every backend: fresh inputs, a poisoned
//! output, the backend's launch with the CPU reference computed beside it, then the
//! verifier.

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
    // The reference needs only the input: it runs on a thread of its own during the launch
    // (a GPU launch leaves the CPU idle; the emulator's threads leave it a share) instead of
    // after it (about 0.1 s at the profile sizes).
    let (launched, expected) = std::thread::scope(|scope| {
        let reference = scope.spawn(|| reference_output(&lesson.stencil, n, &input));
        let launched = launch(&input, &mut output);
        (launched, reference.join().expect("the reference thread panicked"))
    });
    launched?;
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
