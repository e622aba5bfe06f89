//! Runs happen on a background job (the app's job service, jobs.rs); the UI polls it and
//! repaints on every progress step, so it stays interactive while the emulator works. Which
//! backend runs is the backend policy's (`crate::backend_policy`), the same as the CLI's; this file
//! only moves the work to a job.

use super::jobs::{Job, JobContext, Jobs};
use crate::backend::BackendChoice;
use crate::backend_policy::{Backends, RunOutput, Trace};
use crate::lesson::Lesson;
use crate::pipeline::{Progress, RunRequest};
use crate::report::RunReport;
use std::sync::{Arc, Mutex};

/// The backends are kept between runs: the GPU worker process and its context stay warm.
pub type SharedBackends = Arc<Mutex<Backends>>;

pub struct RunOutcome {
    /// Distinguishes runs, so views can cache what they derive from one.
    pub id: u64,
    pub report: RunReport,
    /// The emulator's trace of the watched block, for the diagram, and the size it ran at.
    pub trace: Trace,
    pub source: String,
}

/// A run in flight: its lesson, and the job (progress: the pipeline's stages).
pub struct RunJob {
    pub lesson: String,
    pub job: Job<Box<RunOutcome>, Progress>,
    /// What the progress bar shows before the job says anything: compiling.
    pub starting: Progress,
}

/// Starts a run of `source` against `lesson` as a job of `jobs`.
pub fn start_run(
    jobs: &Jobs,
    lesson: Arc<Lesson>,
    source: String,
    source_name: String,
    choice: BackendChoice,
    seed: Option<u64>,
    backends: SharedBackends,
) -> RunJob {
    let id = lesson.id.clone();
    let starting = Progress::Compiling {
        compiler: crate::lesson::Language::of(&source_name).compiler(),
    };
    let job = jobs.start("run", move |cx: &JobContext<Progress>| {
        let cancel = &cx.cancel;
        let request = RunRequest {
            source: source.clone(),
            source_name,
            kernel_file: "<editor>".into(),
            seed,
            nvrtc_path: None,
        };
        let mut progress = |p: Progress| cx.progress(p);
        // A first-use set-up of NVRTC still downloading: the run waits for it, showing
        // where it is, instead of failing to find a compiler.
        crate::cuda_setup::background::wait(&mut |p| progress(Progress::SettingUp { text: p.to_string() }), cancel);
        let RunOutput { report, trace } = backends.lock().unwrap_or_else(|e| e.into_inner()).run(
            &lesson,
            &request,
            choice,
            true,
            &mut progress,
            cancel,
        );
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Box::new(RunOutcome {
            id,
            report,
            trace,
            source,
        })
    });
    RunJob {
        lesson: id,
        job,
        starting,
    }
}
