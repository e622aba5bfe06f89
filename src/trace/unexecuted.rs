//! What the source does that the optimised build never executed. NVRTC may move a load
//! below a border test's `return` or drop it, so an out-of-bounds read the source performs
//! never runs, and neither the GPU nor compute-sanitizer has anything to report. The source
//! is still wrong (undefined behaviour that another compiler version or a `-G` build
//! executes), so beside every run the kernel's unoptimised build runs on the emulator at the small sizes
//! `check` uses (the pipeline, with the compiler view's trace of the same build). An out-of-bounds or
//! misaligned access there is reported beside the verdict, never in it: the hardware ran the
//! optimised code, and its verdict stands.

use crate::backend::emu::{EmulatorBackend, EmulatorOptions};
use crate::backend::{Backend, CancelFlag, KernelFault};
use crate::compile::CompiledKernel;
use crate::harness::size_seed;
use crate::lesson::Lesson;
use crate::report::UnexecutedAccess;

/// The first out-of-bounds or misaligned access `unoptimised` (the kernel's `-G` build,
/// `compile::compile_unoptimised`) makes, at the smallest of the lesson's small sizes where it
/// makes one; none when it makes none or cannot be run (that is the compiler view's business,
/// not the learner's). Runs on an emulator of its own, on one host thread, beside the run.
pub fn find(
    lesson: &Lesson,
    unoptimised: &CompiledKernel,
    run_seed: u64,
    cancel: &CancelFlag,
) -> Vec<UnexecutedAccess> {
    let mut emulator = EmulatorBackend::new(EmulatorOptions {
        threads: 1,
        ..EmulatorOptions::default()
    });
    for n in lesson.small_sizes() {
        if cancel.is_cancelled() {
            break;
        }
        let seed = size_seed(run_seed, n);
        let fault = match emulator.verify_size(lesson, unoptimised, n, seed, &mut |_| {}, cancel) {
            Err(fault @ (KernelFault::OutOfBounds { .. } | KernelFault::Misaligned { .. })) => fault,
            _ => continue,
        };
        let (KernelFault::OutOfBounds { at, .. } | KernelFault::Misaligned { at, .. }) = &fault else {
            unreachable!("matched above")
        };
        return vec![UnexecutedAccess {
            at: at.clone(),
            n,
            message: format!(
                "at n = {n}, the source makes an {}; the optimised build never made it (the compiler removed or \
                 moved it), so the GPU did not fault this time. Fix it anyway: another compiler version, or a \
                 -G build, executes it",
                fault.message()
            ),
        }];
    }
    Vec::new()
}
