//! The desktop app (eframe/egui): lesson panel on the left, the kernel editor in the middle,
//! run results, the read-source diagram and the attempts chart on the right. All work runs on
//! background threads; every edit is autosaved.

pub mod action;
mod chart;
pub mod compare_view;
pub mod diagram;
mod diagram_lists;
pub mod editor;
mod editor_bar;
mod files;
pub mod grading;
mod gutter;
pub mod heatmap;
mod heatmap_paint;
pub mod highlight;
mod instrument;
pub mod jobs;
mod lesson_panel;
pub mod live;
mod machine_code_view;
pub mod replay_view;
mod results;
mod results_head;
pub mod runner;
mod runs;
pub mod state;
pub mod storage;
pub mod tabs;
mod theme;
mod top_bar;
pub mod view;
pub mod views;
mod window;

pub use instrument::save_png;
pub use runs::Runs;
pub use window::run_gui;

use crate::backend_policy::gpu_present;
use crate::lesson::{Course, Lesson};
use runner::{RunOutcome, SharedBackends};
use state::{LessonProgress, Prefs};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc::Receiver;
use std::time::Instant;
use storage::Storage;
use view::View;

/// How the app was started.
#[derive(Debug, Clone, Default)]
pub struct GuiOptions {
    pub course_dir: PathBuf,
    pub data_dir: PathBuf,
    pub lesson: Option<String>,
    /// Press Run once the window is up.
    pub run_at_start: bool,
    /// After the first run finishes, save a screenshot here and quit.
    pub screenshot: Option<PathBuf>,
    /// Repaint continuously for this many frames, print frame times, quit.
    pub frame_bench: Option<usize>,
    /// Put this file in the editor at start (the frame benchmark's 500-line kernel).
    pub load_file: Option<PathBuf>,
    /// Start on this results tab (an id in `tabs::TABS`).
    pub result_tab: Option<&'static str>,
    /// Start in presenter mode.
    pub presenting: bool,
    /// Play the block replay at its fastest once there is one.
    pub play_replay: bool,
    /// Open each new replay at this step.
    pub replay_step: Option<usize>,
    /// Put the editor's cursor on this line at start (screenshots of the Code tab).
    pub start_line: Option<u32>,
    /// Open this grading table (grades.json) at start.
    pub grades: Option<PathBuf>,
    /// Seed for every run's inputs (default: a fresh one per run).
    pub seed: Option<u64>,
}

/// How much larger presenter mode draws than the learner's zoom.
pub const PRESENTER_ZOOM: f32 = 1.5;

/// What is saved between sessions: preferences and each lesson's attempts.
pub struct Saved {
    pub prefs: Prefs,
    pub progress: BTreeMap<String, LessonProgress>,
}

impl Saved {
    /// The lesson the preferences say is open, in `course`.
    pub fn open_lesson<'a>(&self, course: &'a Course) -> Option<&'a std::sync::Arc<Lesson>> {
        self.prefs.lesson.as_deref().and_then(|id| course.get(id))
    }
}

/// The context views draw with, made of the app's parts that are not views: a macro, not a
/// method, because a method would borrow all of the app, and the view being drawn is part of
/// it. `$editor`: `Some(app.editor.as_view())`, or `None` for the editor's own context.
macro_rules! view_context {
    ($app:expr, $editor:expr) => {
        view::ViewContext::new(
            view::ContextParts {
                course: &$app.course,
                saved: &$app.saved,
                storage: &$app.storage,
                runs: &$app.runs,
                gpu_available: $app.gpu_available,
                presenting: $app.presenting,
                status: &$app.status,
                actions: &$app.actions,
                jobs: &$app.jobs,
            },
            $editor,
        )
    };
}

/// The app: what views read (course, saved state, runs, jobs, status), and the views.
pub struct App {
    pub course: Course,
    pub storage: Storage,
    pub saved: Saved,
    pub runs: Runs,
    /// The theme and zoom last given to egui.
    applied_theme: Option<(state::Theme, f32)>,
    pub top_bar: top_bar::TopBar,
    pub status_bar: top_bar::StatusBar,
    pub lesson_panel: lesson_panel::LessonPanel,
    pub editor: editor::EditorState,
    /// The results panel with its views (result, diagram, replay, heat map, compare, PTX &
    /// SASS, chart).
    /// The figures while the learner types (live.rs).
    pub live: live::LiveCount,
    pub views: views::Views,
    /// Every piece of background work: runs and the views' jobs.
    pub jobs: jobs::Jobs,
    /// A grading table being walked through (`--grades`, "Open grading table…").
    pub grading: Option<grading::GradingView>,
    pub backends: SharedBackends,
    pub gpu_available: bool,
    pub status: String,
    /// Presenter mode (F5): results full-window and larger; not saved.
    pub presenting: bool,
    /// This frame's requests from the panels, applied once at its end.
    pub actions: action::Actions,
    file_dialog: Option<Receiver<files::FileAction>>,
    options: GuiOptions,
    instrument: instrument::Instrument,
}

impl App {
    pub fn new(options: GuiOptions) -> App {
        let course = Course::load(&options.course_dir).unwrap_or_else(|_| Course {
            dir: options.course_dir.clone(),
            ..Course::default()
        });
        let storage = Storage::new(options.data_dir.clone());
        let mut prefs = storage.load_prefs();
        if prefs.zoom <= 0.0 {
            prefs.zoom = 1.0;
        }
        if let Some(tab) = options.result_tab {
            prefs.result_tab = tab.to_string();
        }
        let progress = course
            .lessons
            .iter()
            .map(|l| (l.id.clone(), storage.load_progress(&l.id)))
            .collect();
        let lesson_id = options
            .lesson
            .clone()
            .or(prefs.lesson.clone())
            .filter(|id| course.get(id).is_some())
            .or_else(|| {
                course
                    .lessons
                    .iter()
                    .find(|l| l.id == "stencil-2d")
                    .or(course.lessons.first())
                    .map(|l| l.id.clone())
            });
        prefs.lesson = lesson_id.clone();
        let dark = theme::is_dark(prefs.theme);
        let mut app = App {
            course,
            storage,
            saved: Saved { prefs, progress },
            runs: Runs::default(),
            applied_theme: None,
            top_bar: Default::default(),
            status_bar: Default::default(),
            lesson_panel: lesson_panel::LessonPanel::new(dark),
            editor: editor::EditorState::new(dark),
            views: views::Views::default(),
            live: Default::default(),
            jobs: Default::default(),
            grading: None,
            backends: SharedBackends::default(),
            gpu_available: gpu_present(),
            status: String::new(),
            presenting: options.presenting,
            actions: Default::default(),
            file_dialog: None,
            instrument: instrument::Instrument::new(&options),
            options,
        };
        *app.views.get_mut::<replay_view::ReplayState>() =
            replay_view::ReplayState::starting(app.options.play_replay, app.options.replay_step);
        if let Some(id) = lesson_id {
            app.open_lesson(&id);
        }
        if let Some(path) = app.options.grades.clone() {
            app.open_grading_table(&path);
        }
        if let Some(path) = app.options.load_file.clone() {
            app.open_kernel_file(&path);
        }
        app
    }

    /// The open lesson, shared (a clone is a reference count, not a copy of its text).
    pub fn lesson(&self) -> Option<&std::sync::Arc<Lesson>> {
        self.saved.open_lesson(&self.course)
    }

    /// The draft key of a lesson in the current language: `id` for CUDA, `id.rs` for Rust.
    fn draft_key(&self, id: &str) -> String {
        match self.saved.prefs.language {
            crate::lesson::Language::Cuda => id.to_string(),
            crate::lesson::Language::Rust => format!("{id}.rs"),
        }
    }

    /// Starter and solution in the current language.
    pub fn kernels(&self, lesson: &Lesson) -> (PathBuf, PathBuf) {
        lesson.kernels_or_cuda(self.saved.prefs.language)
    }

    /// Switches the kernel language; the draft of each language is kept.
    pub fn set_language(&mut self, language: crate::lesson::Language) {
        if language == self.saved.prefs.language {
            return;
        }
        self.autosave();
        self.saved.prefs.language = language;
        if let Some(id) = self.saved.prefs.lesson.clone() {
            self.open_lesson(&id);
        }
        self.save_prefs();
    }

    /// Switches to a lesson, with the learner's draft if there is one.
    pub fn open_lesson(&mut self, id: &str) {
        let Some(lesson) = self.course.get(id).cloned() else {
            return;
        };
        self.autosave();
        if lesson.kernels_for(self.saved.prefs.language).is_none() {
            self.status = format!("{} has no Rust kernels yet; showing CUDA C++", lesson.title);
            self.saved.prefs.language = crate::lesson::Language::Cuda;
        }
        let (starter, _) = self.kernels(&lesson);
        let key = self.draft_key(id);
        let text = self
            .storage
            .load_draft(&key)
            .or_else(|| std::fs::read_to_string(&starter).ok())
            .unwrap_or_default();
        self.editor.load(&lesson, &starter, key, text);
        self.saved.prefs.lesson = Some(id.to_string());
        self.views.lesson_changed(&lesson);
        self.save_prefs();
    }

    /// Opens a grading table in its window; the status line says why when it cannot.
    pub fn open_grading_table(&mut self, path: &std::path::Path) {
        match grading::GradingView::open(path) {
            Ok(view) => {
                self.status = format!(
                    "grading table {}: {} submissions",
                    path.display(),
                    view.table.rows.len()
                );
                self.grading = Some(view);
            }
            Err(e) => self.status = e,
        }
    }

    pub fn save_prefs(&mut self) {
        if let Err(e) = self.storage.save_prefs(&self.saved.prefs) {
            self.status = format!("cannot save preferences: {e}");
        }
    }

    /// Writes the draft whenever the text changed since the last write.
    pub fn autosave(&mut self) {
        let Some(id) = self.editor.draft_key.clone() else {
            return;
        };
        if self.editor.saved_text.as_deref() == Some(self.editor.text.as_str()) {
            return;
        }
        match self.storage.save_draft(&id, &self.editor.text) {
            Ok(()) => self.editor.saved_text = Some(self.editor.text.clone()),
            Err(e) => self.status = format!("autosave failed: {e}"),
        }
    }

    fn apply_theme(&mut self, ctx: &egui::Context) {
        // Presenter mode enlarges everything on top of the learner's own A+/A- zoom.
        let zoom = self.saved.prefs.zoom * if self.presenting { PRESENTER_ZOOM } else { 1.0 };
        let wanted = (self.saved.prefs.theme, zoom);
        // (The editor and the lesson text follow the theme themselves, from the context.)
        if self.applied_theme != Some(wanted) {
            ctx.set_visuals(theme::visuals(self.saved.prefs.theme));
            ctx.set_zoom_factor(zoom);
            self.applied_theme = Some(wanted);
        }
    }

    fn shortcuts(&mut self, ui: &mut egui::Ui) {
        use egui::{Key, KeyboardShortcut, Modifiers};
        let run = KeyboardShortcut::new(Modifiers::COMMAND, Key::Enter);
        let save = KeyboardShortcut::new(Modifiers::COMMAND, Key::S);
        let find = KeyboardShortcut::new(Modifiers::COMMAND, Key::F);
        if ui.input_mut(|i| i.consume_shortcut(&run)) {
            self.actions.push(action::Action::Run);
        }
        if ui.input_mut(|i| i.consume_shortcut(&save)) {
            self.actions.push(action::Action::SaveFile { as_new: false });
        }
        if ui.input_mut(|i| i.consume_shortcut(&find)) {
            self.actions.push(action::Action::OpenFind);
        }
        let leave = self.presenting && ui.input(|i| i.key_pressed(Key::Escape));
        if ui.input_mut(|i| i.consume_key(Modifiers::NONE, Key::F5)) || leave {
            self.actions.push(action::Action::TogglePresenter);
        }
    }

    pub fn current_outcome(&self) -> Option<&RunOutcome> {
        self.runs.latest(self.saved.prefs.lesson.as_deref())
    }

    /// Work that is not drawing, once per frame and also while the window is hidden (eframe
    /// calls `logic` then): a run that finishes while minimised is recorded at once.
    pub fn logic(&mut self, ctx: &egui::Context) {
        // A heat map being counted or a comparison being run is work in flight too: a
        // screenshot waits for it.
        self.jobs.repaint_with(ctx);
        let busy = self.jobs.busy()
            || self.views.busy()
            || self.grading.as_ref().is_some_and(|g| g.busy())
            || crate::cuda_setup::background::is_running();
        self.instrument.frame(ctx, busy, self.current_outcome().is_some());
        if self.instrument.frames() == 1 {
            // An installed haloscope on a machine without NVRTC fetches it now, while the
            // learner reads; a Run waits for it (src/app/runner.rs).
            let repaint = ctx.clone();
            crate::cuda_setup::background::start_if_needed(move || repaint.request_repaint());
        }
        if self.instrument.frames() == 1 && self.options.run_at_start {
            self.actions.push(action::Action::Run);
        }
        if self.instrument.frames() == 1
            && let Some(line) = self.options.start_line
        {
            self.actions.push(action::Action::go_to(line));
        }
        self.poll_run();
        let lesson = self.saved.open_lesson(&self.course).cloned();
        let live = self.saved.prefs.live_figures && !self.is_running();
        self.live.tick(&mut self.editor, lesson.as_ref(), &self.jobs, live, ctx);
        self.views.poll();
        if let Some(grading) = &mut self.grading {
            grading.poll();
        }
        self.poll_file_dialog();
        self.apply_actions();
        self.autosave();
        if self.is_running() {
            ctx.request_repaint_after(std::time::Duration::from_millis(100));
        }
    }

    /// The whole window, one frame: the panels push actions, applied at the end.
    pub fn show(&mut self, ui: &mut egui::Ui) {
        let built = Instant::now();
        let ctx = ui.ctx().clone();
        self.apply_theme(&ctx);
        self.shortcuts(ui);

        // Every part draws from one read-only context and asks for changes through actions,
        // applied below; the editor, which the others read, draws last with its own context.
        let cx = view_context!(self, Some(self.editor.as_view()));
        egui::Panel::top("top_bar").show(ui, |ui| self.top_bar.show(&cx, ui));
        egui::Panel::bottom("status_bar").show(ui, |ui| self.status_bar.show(&cx, ui));
        // A window floats above the panels, so it can be drawn before them.
        if let Some(grading) = &mut self.grading {
            grading.show(&cx, ui);
        }
        if self.presenting {
            // Presenter mode: the results (diagram, heat map, chart) take the whole window;
            // the panels keep their sizes for when it ends.
            egui::CentralPanel::default().show(ui, |ui| self.views.show(&cx, ui));
        } else {
            // Limits keep each column usable at 1280 x 720; egui remembers the widths.
            egui::Panel::left("lesson_panel")
                .resizable(true)
                .default_size(330.0)
                .size_range(220.0..=640.0)
                .show(ui, |ui| self.lesson_panel.show(&cx, ui));
            egui::Panel::right("results_panel")
                .resizable(true)
                .default_size(480.0)
                .size_range(360.0..=960.0)
                .show(ui, |ui| self.views.show(&cx, ui));
            egui::CentralPanel::default().show(ui, |ui| self.editor.show(&view_context!(self, None), ui));
        }
        self.apply_actions();
        self.autosave();
        self.instrument.record_ui(built);
    }
}

impl eframe::App for App {
    fn logic(&mut self, ctx: &egui::Context, frame: &mut eframe::Frame) {
        self.instrument.record_cpu(frame.info().cpu_usage);
        App::logic(self, ctx);
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.show(ui);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        self.autosave();
        self.save_prefs();
    }
}
