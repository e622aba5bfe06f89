//! The one backend policy, used by the CLI and the app alike: which backend a choice gets,
//! when `auto` falls back to the emulator, and the notice that says so in the report's
//! headline. `Backends` owns the backends between runs (the GPU worker stays warm), and a run
//! through it also gives the diagram its trace of the watched block, from the same run.

use crate::backend::emu::{EmulatorBackend, EmulatorOptions};
use crate::backend::gpu::GpuBackend;
use crate::backend::{Backend, BackendChoice, CancelFlag, KernelFault};
use crate::lesson::Lesson;
use crate::pipeline::{EarlyCompile, Progress, RunRequest, Stages, run_stages, run_without_backend_after};
use crate::report::RunReport;
use crate::trace::reads::watched_block;

/// Why the backend that ran is not the one the choice names first, in words; the report's
/// headline starts with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice(pub String);

pub use crate::backend::Trace;

/// What one run produced: the report, and the diagram's trace when one was asked for.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub report: RunReport,
    pub trace: Trace,
}

/// Set (to anything but `0`) to make haloscope behave as on a machine without a GPU: a
/// classroom grading run or a test that must give the same answers everywhere.
pub const NO_GPU_ENV: &str = "HALOSCOPE_NO_GPU";

/// Whether a usable GPU may be here: the CUDA driver finds a device and `HALOSCOPE_NO_GPU`
/// is not set. The app's backend menu, `haloscope doctor` and the policy ask this question.
pub fn gpu_present() -> bool {
    !gpu_hidden() && crate::backend::gpu::gpu_present()
}

fn gpu_hidden() -> bool {
    std::env::var_os(NO_GPU_ENV).is_some_and(|v| v != "0" && !v.is_empty())
}

/// Whether a GPU may be tried at all: `Driver` asks `gpu_present` (the program); `Hidden`
/// behaves as `HALOSCOPE_NO_GPU` does, as a machine without a GPU (tests of the policy, the
/// same on any machine).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuProbe {
    Driver,
    Hidden,
}

/// What `Backends::acquire` lends a run: the backend, the one that counts sectors when it
/// may not, and why the backend is not the one asked for.
pub type Acquired<'a> = (&'a mut dyn Backend, Option<&'a mut dyn Backend>, Option<Notice>);

pub struct Backends {
    emulator: EmulatorBackend,
    gpu: Option<GpuBackend>,
    probe: GpuProbe,
}

impl Default for Backends {
    fn default() -> Backends {
        Backends::new(GpuProbe::Driver)
    }
}

impl Backends {
    pub fn new(probe: GpuProbe) -> Backends {
        Backends {
            emulator: EmulatorBackend::new(EmulatorOptions::default()),
            gpu: None,
            probe,
        }
    }

    fn gpu_present(&self) -> bool {
        self.probe == GpuProbe::Driver && gpu_present()
    }

    fn open_gpu(&mut self) -> Result<&mut GpuBackend, KernelFault> {
        if self.gpu.is_none() {
            // The worker initialises the driver and counts the devices itself (its Hello),
            // so this process does not: cuInit here would add its time to every GPU run.
            let hidden = self.probe == GpuProbe::Hidden || gpu_hidden();
            if hidden || !crate::backend::gpu::driver_library_present() {
                let why = if hidden {
                    format!("{NO_GPU_ENV} is set, so haloscope behaves as on a machine without a GPU")
                } else {
                    "no NVIDIA GPU found (no driver, or no device)".to_string()
                };
                return Err(KernelFault::Infrastructure {
                    message: format!("{why}: choose the emulator backend, or `auto`, which falls back to it"),
                });
            }
            self.gpu = Some(GpuBackend::open()?);
        }
        Ok(self.gpu.as_mut().expect("opened above"))
    }

    /// The backend `choice` gets: `emu` the emulator; `gpu` the GPU or the reason it is not
    /// available; `auto` the GPU when one is usable, else the emulator with a notice. With
    /// it, the backend that counts sectors when the chosen one may not: the emulator beside
    /// a GPU (whose counters a user without profiling rights cannot read).
    ///
    /// A lesson that launches thread-block clusters (`needs_clusters`) needs a GPU of compute
    /// capability 9.0 or later; on an older one `auto` runs it on the emulator and says why.
    pub fn acquire(&mut self, choice: BackendChoice, needs_clusters: bool) -> Result<Acquired<'_>, KernelFault> {
        let gpu_opened = match choice {
            BackendChoice::Emu => Err(None),
            BackendChoice::Gpu | BackendChoice::Auto => self
                .open_gpu()
                .and_then(|gpu| clusters_fit(needs_clusters, gpu.device.compute_capability))
                .map_err(Some),
        };
        match (gpu_opened, choice) {
            (Ok(()), _) => Ok((self.gpu.as_mut().expect("opened"), Some(&mut self.emulator), None)),
            (Err(Some(fault)), BackendChoice::Gpu) => Err(fault),
            (Err(Some(fault)), _) => {
                let notice = if needs_clusters && self.gpu.is_some() {
                    format!(
                        "{}; ran on the emulator",
                        fault.message().trim_end_matches(": the emulator runs it")
                    )
                } else if self.gpu_present() {
                    format!(
                        "a GPU was found but is not usable ({}); ran on the emulator",
                        fault.message()
                    )
                } else {
                    "no GPU found; ran on the emulator".to_string()
                };
                Ok((&mut self.emulator, None, Some(Notice(notice))))
            }
            (Err(None), _) => Ok((&mut self.emulator, None, None)),
        }
    }

    /// One run of `request` on the backend `choice` gets. With `trace`, the watched block's
    /// accesses come back too: from the run itself on the emulator, from one emulated launch
    /// of the same compiled kernel after a GPU run.
    pub fn run(
        &mut self,
        lesson: &Lesson,
        request: &RunRequest,
        choice: BackendChoice,
        trace: bool,
        progress: &mut dyn FnMut(Progress),
        cancel: &CancelFlag,
    ) -> RunOutput {
        let watch = trace.then(|| watched_block(lesson));
        self.emulator.set_watch(watch);
        let attempt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.run_unguarded(lesson, request, choice, watch, progress, cancel)
        }));
        attempt.unwrap_or_else(|payload| RunOutput {
            // A panic anywhere in a run is haloscope's bug: the learner gets a report that
            // says so (the app would otherwise wait for a run that never ends).
            report: crate::pipeline::report_for_internal_error(
                lesson,
                request,
                &crate::panic_message(payload.as_ref()),
            ),
            trace: Trace::default(),
        })
    }

    fn run_unguarded(
        &mut self,
        lesson: &Lesson,
        request: &RunRequest,
        choice: BackendChoice,
        watch: Option<[u32; 3]>,
        progress: &mut dyn FnMut(Progress),
        cancel: &CancelFlag,
    ) -> RunOutput {
        let (stages, notice, on_emulator) = std::thread::scope(|scope| {
            // The kernel compiles while a GPU worker starts (its Hello takes a few hundred
            // milliseconds); on a warm worker or the emulator this costs nothing.
            let early = EarlyCompile::start(scope, lesson, request);
            match self.acquire(choice, lesson.cluster.is_some()) {
                Ok((backend, counter, notice)) => {
                    let on_emulator = backend.info().kind == crate::backend::BackendKind::Emulator;
                    let stages = run_stages(lesson, request, backend, counter, early, progress, cancel);
                    (stages, notice, on_emulator)
                }
                Err(fault) => (
                    Stages {
                        report: run_without_backend_after(lesson, request, fault, early, progress),
                        kernel: None,
                        trace: None,
                    },
                    None,
                    false,
                ),
            }
        });
        let Stages {
            mut report,
            kernel,
            trace,
        } = stages;
        if let Some(Notice(notice)) = &notice {
            report.headline = format!("{notice}. {}", report.headline);
            report.notice = Some(notice.clone());
        }
        // The emulator traced the watched block in its last launch; after a GPU run the
        // emulator runs the kernel once more for it.
        // The GPU's figure leaves out what bulk copies moved; the report must still say how
        // much that was (never a total that silently drops traffic).
        if !on_emulator
            && let (Some(kernel), Some(profile)) = (&kernel, report.profile.as_mut())
            && profile.bulk_copies.is_none()
        {
            let seed = crate::harness::size_seed(report.seed, lesson.profile_size);
            profile.bulk_copies = self.emulator.bulk_copies_for_gpu_run(lesson, kernel, seed, cancel);
        }
        let trace = match (watch, trace, kernel) {
            (None, _, _) => Trace::default(),
            (Some(_), Some(trace), _) => trace,
            (Some(_), None, Some(kernel)) if !on_emulator => self.emulated_trace(lesson, &kernel, cancel),
            (Some(_), None, _) => Trace::default(),
        };
        RunOutput { report, trace }
    }

    /// One emulated launch of an already compiled kernel at the middle verification size: the
    /// PTX the GPU backend compiled for its card (sm_90 on the H200, the emulator's own
    /// target); a kernel the emulator cannot run leaves the diagram without a trace.
    fn emulated_trace(
        &mut self,
        lesson: &Lesson,
        kernel: &crate::compile::CompiledKernel,
        cancel: &CancelFlag,
    ) -> Trace {
        let n = lesson
            .verify_sizes
            .get(1)
            .or(lesson.verify_sizes.first())
            .copied()
            .unwrap_or(lesson.profile_size);
        self.emulator
            .verify_size(lesson, kernel, n, 1, &mut |_| {}, cancel)
            .ok()
            .and_then(|run| run.trace)
            .unwrap_or_default()
    }
}

/// Whether a GPU of compute capability `cc` can run a lesson (`needs_clusters`: one that
/// launches thread-block clusters, sm_90 and later); the fault says why not, and that the
/// emulator runs it.
pub fn clusters_fit(needs_clusters: bool, cc: (i32, i32)) -> Result<(), KernelFault> {
    let (major, minor) = cc;
    if needs_clusters && major < 9 {
        return Err(KernelFault::Infrastructure {
            message: format!(
                "this lesson launches thread-block clusters, which need a GPU of compute capability 9.0 (Hopper) \
                 or later, and this one is {major}.{minor}: the emulator runs it"
            ),
        });
    }
    Ok(())
}

/// One run with backends of its own (the CLI's `run`, tests): the same policy as the app's.
pub fn run_lesson(
    lesson: &Lesson,
    request: &RunRequest,
    choice: BackendChoice,
    progress: &mut dyn FnMut(Progress),
    cancel: &CancelFlag,
) -> RunReport {
    Backends::default()
        .run(lesson, request, choice, false, progress, cancel)
        .report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_lesson_needs_sm_90_and_says_the_emulator_runs_it() {
        assert!(clusters_fit(true, (9, 0)).is_ok());
        assert!(clusters_fit(true, (10, 0)).is_ok());
        assert!(clusters_fit(false, (8, 6)).is_ok());
        let why = clusters_fit(true, (8, 6)).unwrap_err().message();
        assert!(why.contains("compute capability 9.0") && why.contains("8.6"), "{why}");
        // `auto`'s notice: the reason, then where the run went.
        let notice = format!(
            "{}; ran on the emulator",
            why.trim_end_matches(": the emulator runs it")
        );
        assert!(notice.ends_with("this one is 8.6; ran on the emulator"), "{notice}");
    }
}
