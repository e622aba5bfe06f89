//! The GPU backend: real launches through cudarc in a worker subprocess, sectors from CUPTI's
//! SASS metrics in a one-shot profiler child, CUDA-event timing.

mod capture;
mod cupti;
mod device;
mod jit;
pub mod permission;
mod printf_gate;
mod process;
mod profiler;
pub mod protocol;
pub use printf_gate::gate_printf;
mod worker;

pub use worker::worker_main;

use crate::backend::{Backend, BackendInfo, BackendKind, CancelFlag, KernelFault, ProfileStart, SizeRun};
use crate::compile::{CompiledKernel, Target};
use crate::cudalibs::{CudaLib, check_fits_gpu, ensure_loaded};
use crate::lesson::Contract;
use crate::progress::Progress;
use crate::report::{GlobalAccess, ProfileBuilder, SectorProfile, StageTime, Timing};
use process::{Worker, WorkerError};
use protocol::{DeviceInfo, GpuProfile, KernelImage, Request, Response};
use std::time::Duration;

/// How long one verification launch (with its copies) may take before the worker is killed;
/// `$HALOSCOPE_GPU_TIMEOUT_S` overrides it.
pub fn verify_timeout() -> Duration {
    let seconds = std::env::var("HALOSCOPE_GPU_TIMEOUT_S")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    Duration::from_secs(seconds)
}
/// The profiler child: CUPTI's patched launches run tens of times slower.
pub const PROFILE_TIMEOUT: Duration = Duration::from_secs(120);
pub const TIME_TIMEOUT: Duration = Duration::from_secs(30);
const HELLO_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether the CUDA driver library can be loaded (no driver call made).
pub fn driver_library_present() -> bool {
    // SAFETY: only probes for the library.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// Whether this machine has an NVIDIA driver and at least one GPU (checked in-process,
/// without creating a context).
pub fn gpu_present() -> bool {
    // SAFETY: only probes for the library and calls cuInit / cuDeviceGetCount.
    let driver = unsafe { cudarc::driver::sys::is_culib_present() };
    driver && cudarc::driver::CudaContext::device_count().is_ok_and(|n| n > 0)
}

pub struct GpuBackend {
    worker: Option<Worker>,
    pub device: DeviceInfo,
    /// The next profiler child, started ahead of its request (profiler.rs).
    spare_profiler: Option<Worker>,
    /// The profile being measured alongside the verification.
    pending_profile: Option<profiler::PendingProfile>,
}

impl GpuBackend {
    /// Starts the worker and asks it for the device.
    pub fn open() -> Result<GpuBackend, KernelFault> {
        // The NVRTC found must make code this GPU and driver load (NVRTC 12 for a CUDA 12
        // driver or a card older than Turing); otherwise one sentence says what to install.
        let nvrtc = ensure_loaded(CudaLib::Nvrtc, None).map_err(|message| KernelFault::Infrastructure { message })?;
        check_fits_gpu(CudaLib::Nvrtc, &nvrtc).map_err(|message| KernelFault::Infrastructure { message })?;
        crate::timeline("GPU backend: starting the worker and the profiler child");
        let mut worker = Worker::spawn(false).map_err(|e| infrastructure(&e))?;
        // Its context is made while the worker makes its own and the kernel compiles.
        let mut spare_profiler = None;
        profiler::ensure_spare(&mut spare_profiler);
        let hello = worker
            .request(&Request::Hello, HELLO_TIMEOUT, None)
            .map_err(|e| infrastructure(&e))?;
        crate::timeline("GPU backend: the worker's Hello came back");
        match hello {
            Response::Hello {
                device: Some(device), ..
            } => Ok(GpuBackend {
                worker: Some(worker),
                device,
                spare_profiler,
                pending_profile: None,
            }),
            Response::Hello { problem, .. } => Err(KernelFault::Infrastructure {
                message: format!("no usable GPU: {}", problem.unwrap_or_default()),
            }),
            other => Err(unexpected(&other)),
        }
    }

    fn call(&mut self, request: &Request, timeout: Duration, cancel: &CancelFlag) -> Result<Response, KernelFault> {
        if self.worker.is_none() {
            self.worker = Some(Worker::spawn(false).map_err(|e| infrastructure(&e))?);
        }
        let result = self
            .worker
            .as_mut()
            .expect("worker")
            .request(request, timeout, Some(cancel));
        match result {
            Ok(Response::Fault { fault }) => {
                if matches!(fault, KernelFault::Crashed { .. }) {
                    self.worker = None; // it exits after a crash; the next run starts a new one
                }
                Err(fault)
            }
            Ok(response) => Ok(response),
            Err(error) => {
                self.worker = None;
                Err(worker_fault(&error))
            }
        }
    }

    fn image(kernel: &CompiledKernel) -> KernelImage {
        KernelImage::for_gpu(&kernel.entry, kernel.cubin.as_deref(), &kernel.ptx)
    }

    fn profile_request(lesson: &Contract, kernel: &CompiledKernel, seed: u64) -> Request {
        Request::Profile {
            contract: Box::new(lesson.clone()),
            kernel: Self::image(kernel),
            n: lesson.profile_size,
            launches: lesson.profile_launches,
            seed,
        }
    }
}

fn unexpected(reply: &Response) -> KernelFault {
    KernelFault::Infrastructure {
        message: format!("unexpected reply from the GPU worker: {reply:?}"),
    }
}

fn infrastructure(error: &WorkerError) -> KernelFault {
    KernelFault::Infrastructure {
        message: format!("GPU worker: {error:?}"),
    }
}

fn worker_fault(error: &WorkerError) -> KernelFault {
    match error {
        WorkerError::Timeout(limit) => KernelFault::Timeout {
            message: format!(
                "the kernel did not finish within {} s (an endless loop?); the GPU worker was stopped and a new one starts with the next run",
                limit.as_secs()
            ),
            line: None,
        },
        WorkerError::Died(why) => KernelFault::Crashed {
            message: format!("the GPU worker process died ({why}); a new one starts with the next run"),
        },
        WorkerError::Spawn(why) => KernelFault::Infrastructure { message: why.clone() },
        WorkerError::Cancelled => KernelFault::Cancelled,
    }
}

impl Backend for GpuBackend {
    fn info(&self) -> BackendInfo {
        let (major, minor) = self.device.compute_capability;
        BackendInfo {
            kind: BackendKind::Gpu,
            device: format!(
                "GPU {}: {} (sm_{major}{minor}), driver {}",
                self.device.index, self.device.name, self.device.driver_version
            ),
            display_watchdog: self.device.watchdog,
        }
    }

    fn target(&self) -> Target {
        let (major, minor) = self.device.compute_capability;
        Target::Cubin {
            sm: (major * 10 + minor) as u32,
        }
    }

    fn prepare(&mut self, _lesson: &Contract, _run_seed: u64) {
        profiler::ensure_spare(&mut self.spare_profiler);
    }

    fn start_profile(&mut self, lesson: &Contract, kernel: &CompiledKernel, seed: u64) -> ProfileStart {
        self.discard_profile();
        let request = Self::profile_request(lesson, kernel, seed);
        match profiler::start(&mut self.spare_profiler, request, PROFILE_TIMEOUT) {
            Ok(pending) => {
                self.pending_profile = Some(pending);
                ProfileStart::Measuring
            }
            Err(_) => ProfileStart::Nothing, // `profile` tries again, and reports why it cannot
        }
    }

    fn discard_profile(&mut self) {
        if let Some(pending) = self.pending_profile.take() {
            pending.discard();
        }
    }

    fn verify_size(
        &mut self,
        lesson: &Contract,
        kernel: &CompiledKernel,
        n: u32,
        seed: u64,
        _progress: &mut dyn FnMut(Progress),
        cancel: &CancelFlag,
    ) -> Result<SizeRun, KernelFault> {
        let request = Request::Verify {
            contract: Box::new(lesson.clone()),
            kernel: Self::image(kernel),
            n,
            seed,
        };
        match self.call(&request, verify_timeout(), cancel)? {
            Response::Verified { run, .. } => Ok(run),
            other => Err(unexpected(&other)),
        }
    }

    fn profile(
        &mut self,
        lesson: &Contract,
        kernel: &CompiledKernel,
        machine_code: Option<&crate::compile::MachineCode>,
        seed: u64,
        cancel: &CancelFlag,
    ) -> Result<SectorProfile, KernelFault> {
        // A fresh child per measurement: CUPTI collects SASS metrics once per process.
        let pending = match self.pending_profile.take() {
            Some(pending) => pending,
            None => profiler::start(
                &mut self.spare_profiler,
                Self::profile_request(lesson, kernel, seed),
                PROFILE_TIMEOUT,
            )
            .map_err(|e| infrastructure(&e))?,
        };
        let (result, took) = pending.collect(cancel);
        let mut measured = result?;
        // CUPTI files the instructions of code inlined from a header under the header's line;
        // the machine-code check knows the learner's line for those that touch global memory
        // (its offsets are the NVRTC cubin's: not the printf-gated code's).
        if let Some(code) = machine_code.filter(|_| !Self::image(kernel).printf_gated) {
            refile_inlined(&mut measured, code);
        }
        let mut profile = sector_profile(&measured, lesson.profile_size);
        if Self::image(kernel).printf_gated {
            // The GPU ran the printf-gated PTX, JIT-compiled by the driver: the SASS offsets
            // are that code's, so the listing must be of it (kept with the profile); without
            // it (the driver's link failed) they fit no listing.
            match measured.jit_cubin() {
                Some(cubin) => profile.executed_cubin = Some(std::sync::Arc::new(cubin)),
                None => profile.per_instruction.clear(),
            }
        }
        profile.stages.push(StageTime {
            stage: "profiler child, request to reply".into(),
            millis: took.as_secs_f64() * 1e3,
        });
        profile
            .stages
            .extend(measured.phases.iter().map(|(step, millis)| StageTime {
                stage: format!("profiler child: {step}"),
                millis: *millis,
            }));
        Ok(profile)
    }

    fn time(
        &mut self,
        lesson: &Contract,
        kernel: &CompiledKernel,
        cancel: &CancelFlag,
    ) -> Result<Option<Timing>, KernelFault> {
        let request = Request::Time {
            contract: Box::new(lesson.clone()),
            kernel: Self::image(kernel),
            launches: lesson.profile_launches,
        };
        match self.call(&request, TIME_TIMEOUT, cancel)? {
            Response::Timed { mut timing } => {
                timing.copy_gbps = Some(self.device.copy_gbps);
                Ok(Some(timing))
            }
            other => Err(unexpected(&other)),
        }
    }
}

/// Puts each record of a global memory instruction inlined from a header on the kernel's line
/// that called it (`MachineCode::inlined_global_lines`).
fn refile_inlined(profile: &mut GpuProfile, code: &crate::compile::MachineCode) {
    for r in &mut profile.records {
        if let Some(&line) = code.inlined_global_lines.get(&r.pc_offset) {
            r.line = line;
        }
    }
}

/// CUPTI's per-instruction records summed into the report's shape.
pub fn sector_profile(p: &GpuProfile, n: u32) -> SectorProfile {
    let measured = p.measured_launches.max(1);
    // The records are sums over the measured launches; the profile run is a whole multiple.
    let k = (p.launches / measured) as u64;
    let mut builder = ProfileBuilder::new(n, p.launches, measured);
    for r in p
        .records
        .iter()
        .filter(|r| r.sectors > 0 || r.global_loads > 0 || r.global_stores > 0)
    {
        let instructions = (r.global_loads + r.global_stores) * k;
        builder.add_global(GlobalAccess {
            line: r.line,
            store: r.global_stores > 0,
            sectors: r.sectors * k,
            ideal_sectors: r.ideal_sectors * k,
            instructions,
            at: Some(crate::report::InstructionAt::SassOffset(r.pc_offset)),
        });
        // Only global memory instructions are counted on the GPU, so the line's lanes are theirs.
        builder.add_instructions(r.line, instructions, r.active_lanes * k);
    }
    let mut profile = builder.finish(None, |_| true);
    profile.source = p.source.clone();
    profile.output = p.output.clone();
    profile
}

/// Plain launches in this process, no profiler and no verification: what `ncu` measures in
/// `scripts/device/checks/kernel-figures.sh` and the corpus as the ground truth for our CUPTI and emulator
/// figures, on the input `seed` gives (the backends profile on `harness::size_seed(run seed,
/// n)`). One context and one pair of buffers for all `kernels`, each launched `launches`
/// times and synchronised before `report` hears of it; stops at the first fault (the context
/// is lost then) and returns whether one happened.
pub fn launch_each(
    lesson: &Contract,
    kernels: &[(String, CompiledKernel)],
    n: u32,
    launches: u32,
    seed: u64,
    report: impl FnMut(&str, Result<(), KernelFault>),
) -> bool {
    let images: Vec<_> = kernels
        .iter()
        .map(|(l, k)| (l.as_str(), GpuBackend::image(k)))
        .collect();
    worker::launch_each(lesson, &images, n, launches, seed, report)
}

/// What the CUPTI call site makes of call `call` when `injection` (as
/// `HALOSCOPE_INJECT_CUPTI_STATUS` would say it) replaces its status: the fault a profile gets.
/// For tests of the run without counters on machines with no GPU (CI); on a GPU the same
/// check runs inside the profiler with the environment variable.
pub fn cupti_call_site_fault(call: &str, injection: &str) -> Result<(), KernelFault> {
    let status = permission::parse_injection(injection, call).unwrap_or(cudarc::cupti::sys::CUptiResult::CUPTI_SUCCESS);
    cupti::status_fault(call, status)
}

/// Whether this process may read the chosen GPU's counters: the profiler's own set-up
/// (`cupti::get_ready`: load CUPTI, initialise its profiler, check the device) run in this
/// process, for `haloscope doctor`. `Err` is the fault a profile would get.
pub fn profiling_check() -> Result<(), KernelFault> {
    let d = device::Device::open().map_err(|message| KernelFault::Infrastructure { message })?;
    cupti::get_ready(&d).map(|_| ())
}

/// The compute capability of the chosen GPU (`crate::machine`), asked in this process.
pub fn compute_capability() -> Result<(i32, i32), String> {
    let d = device::Device::open()?;
    d.ctx.compute_capability().map_err(|e| format!("{e:?}"))
}
