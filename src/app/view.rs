//! The views of the results panel as parts: each owns its state behind `View`, draws from a
//! read-only `ViewContext`, asks the app for anything else through `Action`s, and starts its
//! background work through the one job service (`jobs.rs`). `App` keeps them in `Views` and
//! tells them when the lesson changes; `busy` and `poll` are asked of all of them at once.

use super::action::Actions;
use super::jobs::Jobs;
use super::runner::RunOutcome;
use super::state::{LessonProgress, Prefs};
use crate::lesson::Lesson;
use egui::Ui;
use std::path::PathBuf;
use std::sync::Arc;

/// The editor as a view may see it.
pub struct EditorView<'a> {
    pub text: &'a str,
    pub file_name: String,
    /// The line the cursor is on (1-based).
    pub cursor_line: u32,
}

/// What a view may read while it draws.
pub struct ViewContext<'a> {
    pub lesson: &'a Arc<Lesson>,
    pub prefs: &'a Prefs,
    /// The lesson's attempts (the chart, compare's picker).
    pub progress: Option<&'a LessonProgress>,
    /// Starter and solution in the current language.
    pub kernels: (PathBuf, PathBuf),
    pub editor: EditorView<'a>,
    /// The lesson's latest finished run.
    pub outcome: Option<&'a RunOutcome>,
    pub actions: &'a Actions,
    pub jobs: &'a Jobs,
    /// Where exports (a saved chart) go.
    pub exports_dir: PathBuf,
}

impl<'a> ViewContext<'a> {
    /// The context of `lesson` from the app's parts other than its views (so that a view
    /// can be borrowed mutably beside it).
    pub fn new(
        lesson: &'a Arc<Lesson>,
        saved: &'a super::Saved,
        storage: &'a super::storage::Storage,
        editor: &'a super::editor::EditorState,
        runs: &'a super::Runs,
        actions: &'a Actions,
        jobs: &'a Jobs,
    ) -> ViewContext<'a> {
        let kernels = match lesson.kernels_for(saved.prefs.language) {
            Some((starter, solution)) => (starter.clone(), solution.clone()),
            None => (lesson.starter.clone(), lesson.solution.clone()),
        };
        ViewContext {
            lesson,
            prefs: &saved.prefs,
            progress: saved.progress.get(&lesson.id),
            kernels,
            editor: EditorView {
                text: &editor.text,
                file_name: editor.file_name(),
                cursor_line: editor.cursor_line as u32,
            },
            outcome: runs.latest(Some(&lesson.id)),
            actions,
            jobs,
            exports_dir: storage.exports_dir(),
        }
    }

    pub fn dark(&self) -> bool {
        super::theme::is_dark(self.prefs.theme)
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
