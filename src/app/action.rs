//! What the user asked for in a frame, carried out once at the end of it (the command-queue
//! style of rerun's viewer and egui's demo app): panels draw from the app's state and push
//! `Action`s; `App::apply_actions` is the one place that starts runs, switches lessons,
//! saves preferences and moves the cursor. Pushing takes `&self`, so a panel can ask for a
//! jump while it still borrows the report it is drawing.

use super::App;
use super::state::{LessonTab, Prefs, Theme};
use crate::backend::BackendChoice;
use crate::lesson::Language;
use std::cell::RefCell;

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Compile, verify and profile the editor's text (Run, Ctrl+Enter).
    Run,
    CancelRun,
    /// Put an earlier attempt's source in the editor (the chart's Restore).
    RestoreAttempt(String),
    /// Say something in the status bar.
    Status(String),
    /// Stop every background job (a run, the heat map's count, a comparison, a listing).
    CancelAllJobs,
    OpenLesson(String),
    SetLanguage(Language),
    /// Change one preference (and write them all).
    SetPref(PrefChange),
    /// Put the cursor on a source line (diagnostics, findings, marks, reads).
    GoTo {
        line: u32,
        column: Option<u32>,
        status: Option<String>,
    },
    OpenFileDialog,
    /// Save to the opened file, or ask where (`as_new`: always ask).
    SaveFile {
        as_new: bool,
    },
    ExportReportDialog,
    /// Open a grading table (grades.json) to walk through a class's answers.
    OpenGradesDialog,
    CloseGradingTable,
    ResetToStarter,
    /// Replace the editor's text with the solution (the editor asked first).
    ShowSolution,
    RestoreBeforeReplace,
    /// Open the editor's find bar and focus it (Ctrl+F).
    OpenFind,
    /// Presenter mode on or off: the results full-window, larger, for a projector.
    TogglePresenter,
}

impl Action {
    /// A jump to `line` (line 0, compiler-made code, moves nothing).
    pub fn go_to(line: u32) -> Action {
        Action::GoTo {
            line,
            column: None,
            status: None,
        }
    }
}

/// One preference the learner changed.
#[derive(Debug, Clone, PartialEq)]
pub enum PrefChange {
    Theme(Theme),
    /// The learner's zoom (A+ / A-), before presenter mode's.
    Zoom(f32),
    Backend(BackendChoice),
    LessonTab(LessonTab),
    /// A results tab's id (`tabs::TABS`).
    ResultTab(&'static str),
    WrapCode(bool),
    LiveFigures(bool),
    /// How many of a lesson's hints are revealed.
    HintsShown {
        lesson: String,
        count: usize,
    },
}

impl PrefChange {
    fn apply(self, prefs: &mut Prefs) {
        match self {
            PrefChange::Theme(theme) => prefs.theme = theme,
            PrefChange::Zoom(zoom) => prefs.zoom = zoom.clamp(0.5, 3.0),
            PrefChange::Backend(backend) => prefs.backend = backend,
            PrefChange::LessonTab(tab) => prefs.lesson_tab = tab,
            PrefChange::ResultTab(tab) => prefs.result_tab = tab.to_string(),
            PrefChange::WrapCode(wrap) => prefs.wrap_code = wrap,
            PrefChange::LiveFigures(live) => prefs.live_figures = live,
            PrefChange::HintsShown { lesson, count } => {
                prefs.hints_shown.insert(lesson, count);
            }
        }
    }
}

/// The frame's actions, in the order they were asked for.
#[derive(Default)]
pub struct Actions(RefCell<Vec<Action>>);

impl Actions {
    pub fn push(&self, action: Action) {
        self.0.borrow_mut().push(action);
    }

    fn take(&self) -> Vec<Action> {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

impl App {
    /// Carries out this frame's actions; called once per frame, after the panels.
    pub fn apply_actions(&mut self) {
        for action in self.actions.take() {
            self.apply(action);
        }
    }

    fn apply(&mut self, action: Action) {
        match action {
            Action::Run => self.start_run(),
            Action::RestoreAttempt(source) => self.editor.replace_text(source),
            Action::Status(text) => self.status = text,
            Action::CancelAllJobs => {
                self.jobs.cancel_all();
                self.status = "cancelling…".into();
            }
            Action::CancelRun => self.cancel_run(),
            Action::OpenLesson(id) => self.open_lesson(&id),
            Action::SetLanguage(language) => self.set_language(language),
            Action::SetPref(change) => {
                change.apply(&mut self.saved.prefs);
                self.save_prefs();
            }
            Action::GoTo { line, column, status } => {
                if line > 0 {
                    self.editor.go_to(line, column);
                }
                if let Some(status) = status {
                    self.status = status;
                }
            }
            Action::OpenFileDialog => self.open_dialog(),
            Action::SaveFile { as_new } => {
                if as_new {
                    self.editor.path = None;
                }
                self.save_to_file();
            }
            Action::ExportReportDialog => self.export_report_dialog(),
            Action::OpenGradesDialog => self.grades_dialog(),
            Action::CloseGradingTable => self.grading = None,
            Action::ResetToStarter => self.replace_with_lesson_file(false),
            Action::ShowSolution => self.replace_with_lesson_file(true),
            Action::RestoreBeforeReplace => {
                if let Some(previous) = self.editor.before_replace.clone() {
                    self.editor.replace_text(previous);
                }
            }
            Action::TogglePresenter => self.presenting = !self.presenting,
            Action::OpenFind => self.editor.open_find(),
        }
    }

    /// The editor's text becomes the lesson's starter or solution in the current language;
    /// the text before is kept for "Restore my code".
    fn replace_with_lesson_file(&mut self, solution: bool) {
        let Some(lesson) = self.lesson().cloned() else { return };
        let (starter, solution_file) = self.kernels(&lesson);
        let (path, what) = if solution {
            (solution_file, "solution")
        } else {
            (starter, "starter")
        };
        let name = path
            .file_name()
            .map_or_else(|| what.to_string(), |n| n.to_string_lossy().into_owned());
        match std::fs::read_to_string(&path) {
            Ok(text) => self.editor.put_lesson_file(name, text),
            Err(e) => self.status = format!("cannot read the {what}: {e}"),
        }
    }
}
