//! The window's parts: each owns its state behind `View`, draws from a read-only
//! `ViewContext`, asks the app for anything else through `Action`s, and starts background
//! work through the one job service (`jobs.rs`). The frame's panels (top bar, lesson panel,
//! editor, results panel, status bar, grading window) and the results panel's views
//! (diagram, replay, heat map, compare, PTX & SASS, chart; `views.rs`) are all `View`s.
//! `App` builds the context from everything that is not a view (`view_context!`), so a view
//! can be borrowed mutably beside it.

use super::action::Actions;
use super::jobs::Jobs;
use super::runner::RunOutcome;
use super::state::{LessonProgress, Prefs};
use crate::lesson::{Course, Lesson};
use crate::pipeline::Progress;
use egui::Ui;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The editor as the other views may see it.
pub struct EditorView<'a> {
    pub text: &'a str,
    pub file_name: String,
    /// The line the cursor is on (1-based).
    pub cursor_line: u32,
}

impl EditorView<'_> {
    /// What the editor's own context holds in its place.
    const NONE: EditorView<'static> = EditorView {
        text: "",
        file_name: String::new(),
        cursor_line: 0,
    };
}

/// What a view may read while it draws.
pub struct ViewContext<'a> {
    pub course: &'a Course,
    /// The open lesson (none when the course has no lesson that loads).
    pub lesson: Option<&'a Arc<Lesson>>,
    pub prefs: &'a Prefs,
    /// Every lesson's attempts (the course list's marks, the chart, compare's picker).
    pub progress: &'a BTreeMap<String, LessonProgress>,
    /// Starter and solution of the open lesson in the current language.
    pub kernels: Option<(PathBuf, PathBuf)>,
    /// The editor's text and cursor; empty (no text, line 0) only in the context the
    /// editor itself draws with (it has its own state at hand).
    pub editor: EditorView<'a>,
    /// The open lesson's latest finished run.
    pub outcome: Option<&'a RunOutcome>,
    /// Where the run in flight is (none when no run is).
    pub run_progress: Option<Progress>,
    pub gpu_available: bool,
    pub presenting: bool,
    /// The status bar's line.
    pub status: &'a str,
    pub actions: &'a Actions,
    pub jobs: &'a Jobs,
    /// Where exports (a saved chart) go.
    pub exports_dir: PathBuf,
}

/// The app's parts a context is made of: everything but the views.
pub struct ContextParts<'a> {
    pub course: &'a Course,
    pub saved: &'a super::Saved,
    pub storage: &'a super::storage::Storage,
    pub runs: &'a super::Runs,
    pub gpu_available: bool,
    pub presenting: bool,
    pub status: &'a str,
    pub actions: &'a Actions,
    pub jobs: &'a Jobs,
}

impl<'a> ViewContext<'a> {
    /// The context of the open lesson; `editor`: the editor's text and cursor, or none for
    /// the editor's own context.
    pub fn new(parts: ContextParts<'a>, editor: Option<EditorView<'a>>) -> ViewContext<'a> {
        let saved = parts.saved;
        let lesson = saved.open_lesson(parts.course);
        let kernels = lesson.map(|lesson| lesson.kernels_or_cuda(saved.prefs.language));
        ViewContext {
            course: parts.course,
            lesson,
            prefs: &saved.prefs,
            progress: &saved.progress,
            kernels,
            editor: editor.unwrap_or(EditorView::NONE),
            outcome: parts.runs.latest(saved.prefs.lesson.as_deref()),
            run_progress: parts.runs.progress(),
            gpu_available: parts.gpu_available,
            presenting: parts.presenting,
            status: parts.status,
            actions: parts.actions,
            jobs: parts.jobs,
            exports_dir: parts.storage.exports_dir(),
        }
    }

    pub fn dark(&self) -> bool {
        super::theme::is_dark(self.prefs.theme)
    }

    /// Whether a run is in flight.
    pub fn running(&self) -> bool {
        self.run_progress.is_some()
    }

    /// The open lesson's attempts.
    pub fn lesson_progress(&self) -> Option<&'a LessonProgress> {
        self.lesson.and_then(|l| self.progress.get(&l.id))
    }
}

/// A part of the window with its own state.
pub trait View {
    /// Draws the view into `ui`.
    fn show(&mut self, cx: &ViewContext, ui: &mut Ui);
    /// The learner opened another lesson: drop what belonged to the old one (dropping a job
    /// cancels it).
    fn lesson_changed(&mut self, _lesson: &Arc<Lesson>) {}
    /// Takes finished background work off its job; called every frame, drawn or not.
    fn poll(&mut self) {}
    /// Background work in flight (a screenshot waits for it).
    fn busy(&self) -> bool {
        false
    }
}
