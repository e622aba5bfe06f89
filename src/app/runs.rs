//! Runs in the app: what they produce (the one in flight, the latest per lesson) and the
//! app's side of starting, cancelling and recording them. The work itself is runner.rs's
//! thread; `App::logic` polls it every frame, so a run that ends while the window is hidden
//! is recorded at once.

use super::App;
use super::runner::{RunJob, RunOutcome, start_run};
use super::state::{Attempt, now_seconds};
use crate::pipeline::Progress;
use std::collections::BTreeMap;

/// What runs produce: the one in flight and the latest finished one per lesson.
#[derive(Default)]
pub struct Runs {
    pub job: Option<RunJob>,
    pub outcomes: BTreeMap<String, RunOutcome>,
}

impl Runs {
    /// The latest finished run of `lesson`.
    pub fn latest(&self, lesson: Option<&str>) -> Option<&RunOutcome> {
        lesson.and_then(|id| self.outcomes.get(id))
    }

    /// Where the run in flight is: the latest its job published, or compiling until then.
    pub fn progress(&self) -> Option<Progress> {
        let run = self.job.as_ref()?;
        Some(run.job.progress().unwrap_or_else(|| run.starting.clone()))
    }
}

impl App {
    pub fn is_running(&self) -> bool {
        self.runs.job.is_some()
    }

    pub fn start_run(&mut self) {
        if self.runs.job.is_some() {
            return;
        }
        let Some(lesson) = self.lesson().cloned() else { return };
        self.autosave();
        self.live.run_started(&lesson.id, &self.editor.text);
        let name = self.editor.file_name();
        self.runs.job = Some(start_run(
            &self.jobs,
            lesson,
            self.editor.text.clone(),
            name,
            self.saved.prefs.backend,
            self.options.seed,
            self.backends.clone(),
        ));
        self.status = "running…".into();
    }

    pub fn cancel_run(&mut self) {
        if let Some(run) = &self.runs.job {
            run.job.cancel();
            self.status = "cancelling…".into();
        }
    }

    pub(super) fn poll_run(&mut self) {
        let Some(run) = &self.runs.job else { return };
        if let Some(outcome) = run.job.poll() {
            let lesson_id = run.lesson.clone();
            self.runs.job = None;
            let report = &outcome.report;
            self.status = format!("{}: {}", report.verdict.label(), report.headline);
            let attempt = Attempt {
                at: now_seconds(),
                verdict: report.verdict,
                sectors: report.profile.as_ref().map(|p| p.sectors),
                median_us: report.timing.as_ref().map(|t| t.median_us),
                backend: report.backend.as_ref().map(|b| b.device.clone()).unwrap_or_default(),
                source: outcome.source.clone(),
            };
            let progress = self.saved.progress.entry(lesson_id.clone()).or_default();
            progress.record(attempt);
            if let Err(e) = self.storage.save_progress(&lesson_id, progress) {
                self.status = format!("cannot save the attempt history: {e}");
            }
            self.editor.set_report(report);
            self.runs.outcomes.insert(lesson_id, *outcome);
        }
    }
}
