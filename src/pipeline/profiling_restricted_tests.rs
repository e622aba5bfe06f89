//! Issue 29 item 1 where there is no GPU (CI): a run whose profile is refused by CUPTI for
//! want of privileges still verifies, and the emulator counts the sectors, labelled as such in
//! the report and its JSON. The refusal is the fault the real CUPTI call-site check
//! (`gpu::cupti_call_site_fault`) makes of CUPTI's real status; only the GPU's launches are
//! the emulator's here. The same path on a real GPU, with HALOSCOPE_INJECT_CUPTI_STATUS, is
//! the device check scripts/device/checks/non-root-profiling.sh.

use super::{RunRequest, run_stages};
use crate::backend::emu::{EmulatorBackend, EmulatorOptions};
use crate::backend::{Backend, CancelFlag, KernelFault, SizeRun};
use crate::compile::{CompiledKernel, Target};
use crate::lesson::{Contract, Lesson};
use crate::report::{BackendInfo, SectorProfile, Verdict};

const REFUSAL: &str = "cuptiProfilerInitialize=CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";

/// A GPU whose counters this user may not read: it launches (here on the emulator) and its
/// profile gets the CUPTI call site's fault.
struct GpuWithoutCounters(EmulatorBackend);

impl Backend for GpuWithoutCounters {
    fn info(&self) -> BackendInfo {
        self.0.info()
    }
    fn target(&self) -> Target {
        self.0.target()
    }
    fn verify_size(
        &mut self,
        lesson: &Contract,
        kernel: &CompiledKernel,
        n: u32,
        seed: u64,
        progress: &mut dyn FnMut(super::Progress),
        cancel: &CancelFlag,
    ) -> Result<SizeRun, KernelFault> {
        self.0.verify_size(lesson, kernel, n, seed, progress, cancel)
    }
    fn profile(
        &mut self,
        _: &Contract,
        _: &CompiledKernel,
        _: Option<&crate::compile::MachineCode>,
        _: u64,
        _: &CancelFlag,
    ) -> Result<SectorProfile, KernelFault> {
        crate::backend::gpu::cupti_call_site_fault("cuptiProfilerInitialize", REFUSAL)?;
        panic!("the injected refusal must fail the profile");
    }
}

fn lesson(id: &str) -> Lesson {
    crate::lesson::load_lesson(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("lessons")
            .join(id),
    )
    .expect("lesson loads")
}

#[test]
fn the_call_site_makes_a_privilege_refusal_its_own_fault() {
    let fault = crate::backend::gpu::cupti_call_site_fault("cuptiProfilerInitialize", REFUSAL).unwrap_err();
    let KernelFault::ProfilingRestricted { message } = &fault else {
        panic!("expected profiling-restricted, got {fault:?}");
    };
    assert!(message.contains("cuptiProfilerInitialize"), "{message}");
    assert!(message.contains("administrators only"), "{message}");
    // Another call, or another status, is not a refusal.
    assert!(crate::backend::gpu::cupti_call_site_fault("cuptiSassMetricsEnable", REFUSAL).is_ok());
    let other = crate::backend::gpu::cupti_call_site_fault("cuptiSassMetricsEnable", "*=CUPTI_ERROR_NOT_SUPPORTED");
    assert!(matches!(other, Err(KernelFault::Infrastructure { .. })), "{other:?}");
}

#[test]
fn a_refused_profile_is_counted_by_the_emulator_and_labelled() {
    let lesson = lesson("stencil-1d");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let request = RunRequest::from_file(&root.join("kernels/stencil-1d/solution.cu"), Some(11), None).unwrap();
    let mut gpu = GpuWithoutCounters(EmulatorBackend::new(EmulatorOptions::default()));
    let mut counter = EmulatorBackend::new(EmulatorOptions::default());
    let cancel = CancelFlag::default();
    let report = run_stages(
        &lesson,
        &request,
        &mut gpu,
        Some(&mut counter),
        None,
        &mut |_| {},
        &cancel,
    )
    .report;
    assert_eq!(report.verdict, Verdict::Pass, "{}", report.headline);
    assert!(report.fault.is_none(), "{:?}", report.fault);
    let profile = report.profile.as_ref().expect("sectors counted elsewhere");
    let why = profile.counted_by_emulator_because.as_deref().expect("labelled");
    assert!(why.contains("may not read the GPU's performance counters"), "{why}");
    assert!(profile.source.starts_with("the emulator"), "{}", profile.source);
    assert!(report.headline.contains("emulator"), "{}", report.headline);

    // The same figures as the emulator's own run of the kernel.
    let mut alone = EmulatorBackend::new(EmulatorOptions::default());
    let plain = run_stages(&lesson, &request, &mut alone, None, None, &mut |_| {}, &cancel).report;
    assert_eq!(profile.sectors, plain.profile.as_ref().unwrap().sectors);

    // And in --json, under the key the CLI and grading read.
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["profile"]["counted_by_emulator_because"], why);

    // Without a counter beside it (nothing to count with), the refusal is the run's fault.
    let mut gpu = GpuWithoutCounters(EmulatorBackend::new(EmulatorOptions::default()));
    let report = run_stages(&lesson, &request, &mut gpu, None, None, &mut |_| {}, &cancel).report;
    assert!(
        matches!(report.fault, Some(KernelFault::ProfilingRestricted { .. })),
        "{:?}",
        report.fault
    );
}
