//! GPU backend tests. Skipped, with a visible message, where there is no GPU; they run on
//! the lent H200 through scripts/gpu-check.sh.

mod common;

use haloscope::backend::{Backend, CancelFlag};
use haloscope::gpu::{GpuBackend, gpu_present};
use haloscope::pipeline::{RunRequest, run_with_backend};
use haloscope::report::Verdict;

fn gpu() -> Option<GpuBackend> {
    if !gpu_present() {
        eprintln!("SKIPPED: no GPU on this machine (GPU tests run in scripts/gpu-check.sh)");
        return None;
    }
    // The worker is this test's haloscope binary.
    if std::env::var_os("HALOSCOPE_WORKER_EXE").is_none() {
        // SAFETY: set before any thread reads the environment.
        unsafe { std::env::set_var("HALOSCOPE_WORKER_EXE", common::binary()) };
    }
    Some(GpuBackend::open().expect("GPU backend"))
}

fn run(backend: &mut dyn Backend, kernel: &str) -> haloscope::report::RunReport {
    let lesson = common::lesson("stencil-2d");
    let path = common::root().join(kernel);
    let request = RunRequest::from_file(&path, Some(11), None).unwrap();
    run_with_backend(&lesson, &request, backend, &mut |_| {}, &CancelFlag::default())
}

#[test]
fn the_worker_survives_a_crash_and_a_hang() {
    let Some(mut gpu) = gpu() else { return };
    // SAFETY: set before the worker that reads it is spawned.
    unsafe { std::env::set_var("HALOSCOPE_GPU_TIMEOUT_S", "5") };
    let oob = run(&mut gpu, "tests/fixtures/kernels/oob_write.cu");
    assert_eq!(oob.verdict, Verdict::KernelFault, "{}", oob.headline);
    eprintln!("out of bounds: {}", oob.headline);
    let hang = run(&mut gpu, "tests/fixtures/kernels/infinite_loop.cu");
    assert_eq!(hang.verdict, Verdict::KernelFault, "{}", hang.headline);
    assert!(hang.headline.contains("did not finish"), "{}", hang.headline);
    eprintln!("hang: {}", hang.headline);
    let starter = run(&mut gpu, "kernels/stencil-2d/starter.cu");
    assert_eq!(starter.verdict, Verdict::GateFail, "{}", starter.headline);
    assert_eq!(starter.profile.as_ref().unwrap().sectors, 1_362_688_000);
}
