//! Runs happen on a background thread; the UI polls a channel and repaints on every message,
//! so it stays interactive while the emulator works.

use crate::backend::{Backend, BackendChoice, CancelFlag};
use crate::compile::{Target, compile_kernel};
use crate::emu::{EmulatorBackend, EmulatorOptions, TracedAccess};
use crate::gpu::{GpuBackend, gpu_present};
use crate::lesson::Lesson;
use crate::pipeline::{Progress, RunRequest, run_with_backend};
use crate::reads::watched_block;
use crate::report::RunReport;
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};

/// The GPU backend is kept between runs: its worker process and context stay warm.
pub type SharedGpu = Arc<Mutex<Option<GpuBackend>>>;

pub struct RunOutcome {
    /// Distinguishes runs, so views can cache what they derive from one.
    pub id: u64,
    pub report: RunReport,
    /// The emulator's trace of the watched block, for the diagram, and the size it ran at.
    pub trace: Vec<TracedAccess>,
    pub trace_n: u32,
    pub source: String,
}

pub enum RunMessage {
    Progress(Progress),
    Done(Box<RunOutcome>),
}

pub struct RunJob {
    pub messages: Receiver<RunMessage>,
    pub cancel: CancelFlag,
    pub lesson: String,
}

/// Starts a run of `source` against `lesson`; `repaint` is called after every message.
pub fn start_run(
    lesson: Lesson,
    source: String,
    source_name: String,
    choice: BackendChoice,
    seed: Option<u64>,
    gpu: SharedGpu,
    repaint: impl Fn() + Send + 'static,
) -> RunJob {
    let (tx, messages) = channel();
    let cancel = CancelFlag::default();
    let job = RunJob {
        messages,
        cancel: cancel.clone(),
        lesson: lesson.id.clone(),
    };
    std::thread::Builder::new()
        .name("haloscope-run".into())
        .spawn(move || {
            let request = RunRequest {
                source: source.clone(),
                source_name,
                kernel_file: "<editor>".into(),
                seed,
                nvrtc_path: None,
            };
            let mut progress = |p: Progress| {
                let _ = tx.send(RunMessage::Progress(p));
                repaint();
            };
            let use_gpu = match choice {
                BackendChoice::Emu => false,
                BackendChoice::Gpu => true,
                BackendChoice::Auto => gpu_present(),
            };
            let (report, trace, trace_n) = if use_gpu {
                let mut slot = gpu.lock().unwrap_or_else(|e| e.into_inner());
                let open_failure = if slot.is_none() {
                    GpuBackend::open().map(|g| *slot = Some(g)).err()
                } else {
                    None
                };
                match slot.as_mut() {
                    Some(g) => {
                        let report = run_with_backend(&lesson, &request, g, &mut progress, &cancel);
                        let (trace, n) = emulator_trace(&lesson, &request, &cancel);
                        (report, trace, n)
                    }
                    None => {
                        // No usable GPU: the emulator runs instead, and says so when the GPU
                        // was asked for by name.
                        let (mut report, trace, n) = run_emulated(&lesson, &request, &mut progress, &cancel);
                        if let (BackendChoice::Gpu, Some(fault)) = (choice, open_failure) {
                            report.headline = format!(
                                "GPU not available ({}); ran on the emulator instead. {}",
                                fault.message(),
                                report.headline
                            );
                        }
                        (report, trace, n)
                    }
                }
            } else {
                run_emulated(&lesson, &request, &mut progress, &cancel)
            };
            send_done(&tx, report, trace, trace_n, source, &repaint);
        })
        .expect("spawn the run thread");
    job
}

fn send_done(
    tx: &std::sync::mpsc::Sender<RunMessage>,
    report: RunReport,
    trace: Vec<TracedAccess>,
    trace_n: u32,
    source: String,
    repaint: &impl Fn(),
) {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let _ = tx.send(RunMessage::Done(Box::new(RunOutcome {
        id,
        report,
        trace,
        trace_n,
        source,
    })));
    repaint();
}

/// A whole run on the emulator, tracing the diagram's block.
fn run_emulated(
    lesson: &Lesson,
    request: &RunRequest,
    progress: &mut dyn FnMut(Progress),
    cancel: &CancelFlag,
) -> (RunReport, Vec<TracedAccess>, u32) {
    let mut emu = EmulatorBackend::new(EmulatorOptions {
        threads: 0,
        watch: Some(watched_block(lesson)),
    });
    let report = run_with_backend(lesson, request, &mut emu, progress, cancel);
    (report, emu.last_trace, emu.last_trace_n)
}

/// After a GPU run, one emulated launch at a middle size gives the diagram its trace.
fn emulator_trace(lesson: &Lesson, request: &RunRequest, cancel: &CancelFlag) -> (Vec<TracedAccess>, u32) {
    let Ok(kernel) = compile_kernel(&request.source, &request.source_name, lesson, Target::EMULATOR, None) else {
        return (Vec::new(), 0);
    };
    let n = lesson
        .verify_sizes
        .get(1)
        .or(lesson.verify_sizes.first())
        .copied()
        .unwrap_or(lesson.profile_size);
    let mut emu = EmulatorBackend::new(EmulatorOptions {
        threads: 0,
        watch: Some(watched_block(lesson)),
    });
    match emu.verify_size(lesson, &kernel, n, 1, cancel) {
        Ok(_) => (emu.last_trace, n),
        Err(_) => (Vec::new(), 0),
    }
}
