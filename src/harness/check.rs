//! One verified launch at one size, the same for every backend: fresh inputs, a poisoned
//! output, the backend's launch with the CPU reference computed beside it, then the
//! verifier. A backend that can draw the data ahead of the launch (the emulator, while the
//! kernel compiles) uses [`SizeData`] and [`verify_against`] instead of [`check_size`].

use super::verify::verify_computing_reference;
use super::{SizeVerification, poisoned_output, random_inputs, reference_output, verify_output};
use crate::lesson::Contract;

/// Runs `launch(input, output)` on fresh data for size `n` and verifies every element.
pub fn check_size<E>(
    lesson: &Contract,
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
    let data = SizeData {
        n,
        seed,
        input,
        expected: Some(expected),
    };
    Ok(verify_against(lesson, &data, &output))
}

/// One size's inputs and the CPU reference's output for them.
pub struct SizeData {
    pub n: u32,
    pub seed: u64,
    pub input: Vec<f32>,
    /// None: the verifier computes the reference row by row as it checks (the emulator's
    /// sizes, drawn ahead while the kernel compiles).
    pub expected: Option<Vec<f32>>,
}

impl SizeData {
    /// The inputs of `seed` at size `n`, without the reference: the verifier computes it
    /// as it checks, on every core, so the launch need not wait for it.
    pub fn draw(lesson: &Contract, n: u32, seed: u64) -> SizeData {
        let input = random_inputs(lesson.stencil.elements(n), seed);
        crate::timeline(&format!("n={n}: input drawn"));
        SizeData {
            n,
            seed,
            input,
            expected: None,
        }
    }
}

/// Verifies every element of `output`, a launch's result on `data.input`.
pub fn verify_against(lesson: &Contract, data: &SizeData, output: &[f32]) -> SizeVerification {
    let (wrong, unwritten, first_mismatches) = match &data.expected {
        Some(expected) => verify_output(&lesson.stencil, data.n, &data.input, expected, output),
        None => verify_computing_reference(&lesson.stencil, data.n, &data.input, output),
    };
    crate::timeline("verified");
    SizeVerification {
        n: data.n,
        grid: lesson.grid_for(data.n),
        block: lesson.block,
        elements: output.len(),
        wrong,
        unwritten,
        first_mismatches,
        seed: data.seed,
    }
}
