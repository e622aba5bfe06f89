//! Device `printf` on the GPU backend: the worker captures what kernels print (fd 1) apart
//! from its replies, per launch. The kernel tests need an NVIDIA GPU: run them with
//! `cargo test --release --test gpu_output -- --ignored` on the GPU machine.

mod common;

use haloscope::backend::gpu::GpuBackend;
use haloscope::backend::output::MAX_LINES;
use haloscope::backend::{CancelFlag, KernelFault, KernelOutput};
use haloscope::pipeline::{RunRequest, run_with_backend};
use haloscope::report::{RunReport, Verdict};

fn use_this_binary_as_worker() {
    if std::env::var_os("HALOSCOPE_WORKER_EXE").is_none() {
        // SAFETY: set before any worker is spawned; the tests only read it.
        unsafe { std::env::set_var("HALOSCOPE_WORKER_EXE", common::binary()) };
    }
}

/// The stencil-2d starter with `statement` inserted after the index computation.
fn run_starter_with(statement: &str) -> RunReport {
    use_this_binary_as_worker();
    let mut gpu = GpuBackend::open().expect("GPU backend");
    let lesson = common::lesson("stencil-2d");
    let starter = std::fs::read_to_string(common::root().join("kernels/stencil-2d/starter.cu")).unwrap();
    let anchor = "int i = y * n + x;";
    assert!(starter.contains(anchor), "the starter changed: no `{anchor}`");
    let source = starter.replacen(anchor, &format!("{anchor}\n    {statement}"), 1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("printf.cu");
    std::fs::write(&path, source).unwrap();
    let request = RunRequest::from_file(&path, Some(11), None).unwrap();
    run_with_backend(&lesson, &request, &mut gpu, &mut |_| {}, &CancelFlag::default())
}

fn output<'a>(report: &'a RunReport, launch: &str) -> &'a KernelOutput {
    report.output.iter().find(|o| o.launch == launch).unwrap_or_else(|| {
        let launches: Vec<&str> = report.output.iter().map(|o| o.launch.as_str()).collect();
        panic!("no output for `{launch}`; launches with output: {launches:?}")
    })
}

fn assert_correct(report: &RunReport) {
    assert!(
        matches!(report.verdict, Verdict::Pass | Verdict::GateFail),
        "{:?}: {}",
        report.verdict,
        report.headline
    );
}

#[test]
fn the_worker_protocol_works_with_stdout_redirected() {
    // Runs everywhere: without a GPU the worker still answers Hello through its reply fd.
    use_this_binary_as_worker();
    match GpuBackend::open() {
        Ok(gpu) => eprintln!("GPU: {}", gpu.device.name),
        Err(KernelFault::Infrastructure { message }) => {
            assert!(message.contains("no usable GPU"), "{message}");
        }
        Err(other) => panic!("{other:?}"),
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn printf_output_is_attributed_to_each_launch() {
    let report = run_starter_with(r#"if (x == 0 && y == 0) printf("hello %d\n", 42);"#);
    assert_correct(&report);
    let lesson = common::lesson("stencil-2d");
    for n in &lesson.verify_sizes {
        let out = output(&report, &format!("verify n={n}"));
        assert_eq!(out.lines, ["hello 42"], "verify n={n}");
        assert_eq!(out.lines_not_shown, 0);
    }
    // Measured launches never print on the GPU (src/backend/gpu/printf_gate.rs: the gate is shut so
    // that it adds no sectors); the timing launches' text is discarded too.
    assert_eq!(report.output.len(), lesson.verify_sizes.len());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn printf_in_every_thread_is_capped_and_the_run_finishes() {
    let report = run_starter_with(r#"printf("thread %d %d\n", x, y);"#);
    assert_correct(&report);
    let lesson = common::lesson("stencil-2d");
    // 33 x 33 threads print: all of it fits the FIFO and the caps.
    let small = output(&report, "verify n=33");
    assert_eq!(small.total_lines(), 33 * 33);
    assert!(small.lines.iter().any(|l| l == "thread 0 0"), "{:?}", &small.lines[..5]);
    // Larger launches: the first MAX_LINES printf calls print, the rest are counted.
    for n in [257u64, lesson.profile_size as u64] {
        let launch = format!("verify n={n}");
        let out = output(&report, &launch);
        assert_eq!(out.lines.len(), MAX_LINES, "{launch}");
        assert_eq!(out.calls_not_printed, n * n - MAX_LINES as u64, "{launch}");
        assert!(out.gate_note().is_some());
        assert!(out.lines.iter().all(|l| l.starts_with("thread ")), "{launch}");
    }
    assert!(
        report.output.iter().all(|o| !o.launch.starts_with("profile")),
        "measured launches do not print"
    );
    assert!(report.profile.is_some());
}
