//! What the source does that the optimised build never executed. NVRTC may move a load
//! below a border test's `return` or drop it, so an out-of-bounds read the source performs
//! never runs, and neither the GPU nor compute-sanitizer has anything to report. The source
//! is still wrong (undefined behaviour that another compiler version or a `-G` build
//! executes), so after a run that ended without a fault the kernel is compiled without
//! optimisation and run on the emulator at the small sizes `check` uses. An out-of-bounds or
//! misaligned access there is reported beside the verdict, never in it: the hardware ran the
//! optimised code, and its verdict stands.

use crate::backend::{Backend, CancelFlag, KernelFault};
use crate::compile::{Target, compile_kernel};
use crate::emu::EmulatorBackend;
use crate::harness::size_seed;
use crate::lesson::{Language, Lesson};
use crate::pipeline::RunRequest;
use crate::report::UnexecutedAccess;

/// The first out-of-bounds or misaligned access the unoptimised build makes, at the
/// smallest size where it makes one; none when it makes none, or cannot be built or run
/// (that is the compiler view's business, not the learner's).
pub fn find(
    emulator: &mut EmulatorBackend,
    lesson: &Lesson,
    request: &RunRequest,
    run_seed: u64,
    cancel: &CancelFlag,
) -> Vec<UnexecutedAccess> {
    // rustc has no `-G`: its unoptimised build is another program, not the same one with
    // every access kept.
    if Language::of(&request.source_name) != Language::Cuda {
        return Vec::new();
    }
    let target = Target::Unoptimised { compute: 90 };
    let Ok(kernel) = compile_kernel(
        &request.source,
        &request.source_name,
        lesson,
        target,
        request.nvrtc_path.as_deref(),
    ) else {
        return Vec::new();
    };
    emulator.set_watch(None);
    for n in lesson.small_sizes() {
        if cancel.is_cancelled() {
            break;
        }
        let fault = match emulator.verify_size(lesson, &kernel, n, size_seed(run_seed, n), &mut |_| {}, cancel) {
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
