//! The one backend policy (src/backend_policy.rs): the same choice gives the same backend, the same
//! fallback and the same notice in the library, the CLI and (tests/gui.rs) the app, on any
//! machine: `GpuProbe::Hidden` and `HALOSCOPE_NO_GPU` stand for a machine without a GPU.

mod common;

use haloscope::backend::{BackendChoice, BackendKind, CancelFlag};
use haloscope::backend_policy::{Backends, GpuProbe};
use haloscope::pipeline::RunRequest;
use haloscope::report::{RunReport, Verdict};

fn starter() -> std::path::PathBuf {
    common::root().join("kernels/stencil-1d/starter.cu")
}

fn run_in_library(choice: BackendChoice, trace: bool) -> (RunReport, usize) {
    let lesson = common::lesson("stencil-1d");
    let request = RunRequest::from_file(&starter(), Some(5), None).unwrap();
    let mut backends = Backends::new(GpuProbe::Hidden);
    let out = backends.run(&lesson, &request, choice, trace, &mut |_| {}, &CancelFlag::default());
    (out.report, out.trace.accesses.len())
}

#[test]
fn each_choice_without_a_gpu() {
    let (emu, _) = run_in_library(BackendChoice::Emu, false);
    assert_eq!(emu.verdict, Verdict::GateFail);
    assert_eq!(emu.backend.as_ref().unwrap().kind, BackendKind::Emulator);
    assert_eq!(emu.notice, None, "the emulator by name needs no notice");

    let (auto, _) = run_in_library(BackendChoice::Auto, false);
    assert_eq!(auto.verdict, Verdict::GateFail);
    assert_eq!(auto.backend.as_ref().unwrap().kind, BackendKind::Emulator);
    assert_eq!(auto.notice.as_deref(), Some("no GPU found; ran on the emulator"));
    assert!(
        auto.headline
            .starts_with("no GPU found; ran on the emulator. all sizes correct"),
        "{}",
        auto.headline
    );

    let (gpu, _) = run_in_library(BackendChoice::Gpu, false);
    assert_eq!(gpu.verdict, Verdict::InfraError);
    assert_eq!(gpu.exit_code, 20);
    assert!(gpu.backend.is_none());
    assert!(gpu.headline.contains("HALOSCOPE_NO_GPU is set"), "{}", gpu.headline);
    // The kernel was still compiled and its contract checked.
    assert!(gpu.compile.is_some());
}

#[test]
fn the_trace_comes_from_the_same_run() {
    let (report, accesses) = run_in_library(BackendChoice::Emu, true);
    assert_eq!(report.verdict, Verdict::GateFail);
    assert!(accesses > 0, "an emulator run traces the watched block");
    let (_, none) = run_in_library(BackendChoice::Emu, false);
    assert_eq!(none, 0, "no trace unless asked for");
}

#[test]
fn the_cli_follows_the_same_policy() {
    for (flag, choice) in [
        ("emu", BackendChoice::Emu),
        ("auto", BackendChoice::Auto),
        ("gpu", BackendChoice::Gpu),
    ] {
        let (code, cli) = common::run_1d_starter_without_gpu(flag);
        let (library, _) = run_in_library(choice, false);
        assert_eq!(code, library.exit_code, "{flag}: exit code");
        assert_eq!(cli.verdict, library.verdict, "{flag}: verdict");
        assert_eq!(cli.notice, library.notice, "{flag}: notice");
        assert_eq!(cli.headline, library.headline, "{flag}: headline");
        assert_eq!(
            cli.backend.map(|b| b.kind),
            library.backend.map(|b| b.kind),
            "{flag}: backend"
        );
    }
}
