//! Figures while the learner types (issue 44): once the text has rested for `REST`, the kernel
//! is counted in the background (`pipeline::live_count`: one unchecked emulator launch at the
//! profile size, counted as a Run counts it) and the gutter's per-line sectors, the total and
//! the gate line update by themselves, marked live until a Run verifies every size. A new
//! keystroke drops the count in flight (dropping its job cancels it); a compile error keeps
//! the last figures, greyed, with the error on its line.

use super::editor::EditorState;
use super::gutter::FiguresState;
use super::jobs::{Job, Jobs};
use crate::lesson::Lesson;
use crate::pipeline::RunRequest;
use crate::pipeline::live_count::{LiveFailure, LiveFigures, live_count};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the text must rest before a count starts. It is part of the wait the learner
/// sees (the figures are due 250 ms after the last keystroke), so it is short: a count
/// started between two keystrokes is dropped by the second, which costs only a little CPU.
pub const REST: Duration = Duration::from_millis(60);

type Outcome = Result<LiveFigures, LiveFailure>;

/// The live count's state: which text the figures are for, and the count in flight.
#[derive(Default)]
pub struct LiveCount {
    /// The text last seen, and when it last changed.
    seen: Option<(u64, Instant)>,
    /// The text the editor's figures are for (a Run's or a live count's), or being counted.
    settled: Option<u64>,
    job: Option<(u64, Job<Outcome, ()>)>,
    /// How long the last count took, from the text's last change (the status line shows it).
    pub last_latency: Option<Duration>,
}

fn text_key(lesson: &str, text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    lesson.hash(&mut h);
    text.hash(&mut h);
    h.finish()
}

impl LiveCount {
    /// A Run of this text has started: its figures will be the verified ones, so no live
    /// count of it is needed and the one in flight is dropped.
    pub fn run_started(&mut self, lesson: &str, text: &str) {
        self.job = None;
        self.settled = Some(text_key(lesson, text));
    }

    /// Whether a count is in flight or the text is waiting out its rest.
    pub fn busy(&self) -> bool {
        self.job.is_some()
    }

    /// Once per frame: notices edits, starts a count when the text has rested, and puts a
    /// finished count's figures in the editor. `enabled`: the preference and no Run in flight.
    pub fn tick(
        &mut self,
        editor: &mut EditorState,
        lesson: Option<&Arc<Lesson>>,
        jobs: &Jobs,
        enabled: bool,
        ctx: &egui::Context,
    ) {
        let Some(lesson) = lesson else { return };
        let key = text_key(&lesson.id, &editor.text);
        let now = Instant::now();
        match self.seen {
            Some((seen, _)) if seen == key => {}
            _ => {
                // An edit (or another lesson): the count in flight is for old text.
                self.seen = Some((key, now));
                if self.job.as_ref().is_some_and(|(k, _)| *k != key) {
                    self.job = None;
                }
                if self.settled.is_some_and(|s| s != key) && !editor.line_figures.is_empty() {
                    editor.figures = FiguresState::Outdated;
                }
            }
        }
        if let Some((counted, job)) = &self.job
            && let Some(outcome) = job.poll()
        {
            let counted = *counted;
            self.job = None;
            if counted == key {
                self.last_latency = self.seen.map(|(_, changed)| now.duration_since(changed));
                editor.set_live(outcome);
            }
        }
        if !enabled || self.settled == Some(key) || self.job.is_some() {
            return;
        }
        let rested = self
            .seen
            .map_or(Duration::ZERO, |(_, changed)| now.duration_since(changed));
        if rested < REST {
            ctx.request_repaint_after(REST - rested);
            return;
        }
        self.settled = Some(key);
        let request = RunRequest {
            source: editor.text.clone(),
            source_name: editor.source_name.clone(),
            kernel_file: "<editor>".into(),
            seed: Some(1),
            nvrtc_path: None,
        };
        let lesson = lesson.clone();
        let job = jobs.start("live figures", move |cx| live_count(&lesson, &request, &cx.cancel));
        self.job = Some((key, job));
    }
}
