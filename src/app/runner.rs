//! Runs happen on a background thread; the UI polls a channel and repaints on every message,
//! so it stays interactive while the emulator works. Which backend runs is the backend
//! policy's (`crate::backends`), the same as the CLI's; this file only moves work to a thread.

use crate::backend::{BackendChoice, CancelFlag};
use crate::backends::{Backends, RunOutput, Trace};
use crate::lesson::Lesson;
use crate::pipeline::{Progress, RunRequest};
use crate::report::RunReport;
use std::sync::mpsc::{Receiver, channel};
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
    lesson: Arc<Lesson>,
    source: String,
    source_name: String,
    choice: BackendChoice,
    seed: Option<u64>,
    backends: SharedBackends,
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
            // A first-use set-up of NVRTC still downloading: the run waits for it, showing
            // where it is, instead of failing to find a compiler.
            crate::cuda_setup::background::wait(
                &mut |p| progress(Progress::SettingUp { text: p.to_string() }),
                &cancel,
            );
            let RunOutput { report, trace } = backends.lock().unwrap_or_else(|e| e.into_inner()).run(
                &lesson,
                &request,
                choice,
                true,
                &mut progress,
                &cancel,
            );
            static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
            let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let _ = tx.send(RunMessage::Done(Box::new(RunOutcome {
                id,
                report,
                trace,
                source,
            })));
            repaint();
        })
        .expect("spawn the run thread");
    job
}
