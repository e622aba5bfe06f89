//! The desktop app (eframe/egui): lesson panel on the left, the kernel editor in the middle,
//! run results, the read-source diagram and the attempts chart on the right. All work runs on
//! background threads; every edit is autosaved.

mod chart;
mod diagram;
mod editor;
pub mod highlight;
mod lesson_panel;
mod results;
pub mod runner;
pub mod state;
pub mod storage;
mod theme;

use crate::backends::gpu_present;
use crate::lesson::{Course, Lesson};
use crate::pipeline::Progress;
use runner::{RunJob, RunMessage, RunOutcome, SharedBackends, start_run};
use state::{Attempt, LessonProgress, Prefs, ResultTab, now_seconds};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc::Receiver;
use std::time::Instant;
use storage::Storage;

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
    pub result_tab: Option<ResultTab>,
    /// Seed for every run's inputs (default: a fresh one per run).
    pub seed: Option<u64>,
}

/// A line to jump to in the editor, with the reason shown in the status line.
pub struct Jump {
    pub line: u32,
    pub column: Option<u32>,
}

pub struct App {
    pub course: Course,
    pub storage: Storage,
    pub prefs: Prefs,
    pub progress: BTreeMap<String, LessonProgress>,
    pub editor: editor::EditorState,
    pub run: Option<RunJob>,
    pub run_progress: Option<Progress>,
    /// The latest finished run, per lesson.
    pub outcomes: BTreeMap<String, RunOutcome>,
    pub diagram: diagram::DiagramState,
    pub backends: SharedBackends,
    pub gpu_available: bool,
    pub status: String,
    pub confirm_solution: bool,
    pub jump: Option<Jump>,
    pub chart_rect: Option<egui::Rect>,
    file_dialog: Option<Receiver<editor::FileAction>>,
    md_cache: egui_commonmark::CommonMarkCache,
    lesson_highlighter: highlight::Highlighter,
    /// Highlighted code blocks of lesson texts, by their text (cleared with the theme).
    lesson_code_jobs: std::collections::HashMap<String, egui::text::LayoutJob>,
    options: GuiOptions,
    bench: Option<FrameBench>,
    started: Instant,
    frames: u64,
    screenshot_requested: bool,
    screenshot_saved: std::sync::Arc<std::sync::atomic::AtomicBool>,
    applied_theme: Option<(state::Theme, f32)>,
}

struct FrameBench {
    target: usize,
    last: Option<Instant>,
    times_ms: Vec<f64>,
    /// Time spent building the UI (our code plus egui's layout), per frame.
    ui_ms: Vec<f64>,
    /// eframe's CPU time of the previous frame: UI, tessellation and rendering, no vsync wait.
    cpu_ms: Vec<f64>,
    done: bool,
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
            prefs.result_tab = tab;
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
            prefs,
            progress,
            editor: editor::EditorState::new(dark),
            run: None,
            run_progress: None,
            outcomes: BTreeMap::new(),
            diagram: diagram::DiagramState::default(),
            backends: SharedBackends::default(),
            gpu_available: gpu_present(),
            status: String::new(),
            confirm_solution: false,
            jump: None,
            chart_rect: None,
            file_dialog: None,
            md_cache: Default::default(),
            lesson_highlighter: highlight::Highlighter::new(dark),
            lesson_code_jobs: Default::default(),
            bench: options.frame_bench.map(|target| FrameBench {
                target,
                last: None,
                times_ms: Vec::new(),
                ui_ms: Vec::new(),
                cpu_ms: Vec::new(),
                done: false,
            }),
            options,
            started: Instant::now(),
            frames: 0,
            screenshot_requested: false,
            screenshot_saved: Default::default(),
            applied_theme: None,
        };
        if let Some(id) = lesson_id {
            app.open_lesson(&id);
        }
        if let Some(path) = app.options.load_file.clone() {
            match std::fs::read_to_string(&path) {
                Ok(text) => app.editor.replace_text(text),
                Err(e) => app.status = format!("cannot read {}: {e}", path.display()),
            }
        }
        app
    }

    pub fn lesson(&self) -> Option<&Lesson> {
        self.prefs.lesson.as_deref().and_then(|id| self.course.get(id))
    }

    /// The draft key of a lesson in the current language: `id` for CUDA, `id.rs` for Rust.
    fn draft_key(&self, id: &str) -> String {
        match self.prefs.language {
            crate::lesson::Language::Cuda => id.to_string(),
            crate::lesson::Language::Rust => format!("{id}.rs"),
        }
    }

    /// Starter and solution in the current language.
    pub fn kernels(&self, lesson: &Lesson) -> (PathBuf, PathBuf) {
        match lesson.kernels_for(self.prefs.language) {
            Some((s, v)) => (s.clone(), v.clone()),
            None => (lesson.starter.clone(), lesson.solution.clone()),
        }
    }

    /// Switches the kernel language; the draft of each language is kept.
    pub fn set_language(&mut self, language: crate::lesson::Language) {
        if language == self.prefs.language {
            return;
        }
        self.autosave();
        self.prefs.language = language;
        if let Some(id) = self.prefs.lesson.clone() {
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
        if lesson.kernels_for(self.prefs.language).is_none() {
            self.status = format!("{} has no Rust kernels yet; showing CUDA C++", lesson.title);
            self.prefs.language = crate::lesson::Language::Cuda;
        }
        let (starter, _) = self.kernels(&lesson);
        let key = self.draft_key(id);
        let text = self
            .storage
            .load_draft(&key)
            .or_else(|| std::fs::read_to_string(&starter).ok())
            .unwrap_or_default();
        self.editor.load(&lesson, &starter, key, text);
        self.prefs.lesson = Some(id.to_string());
        self.diagram = diagram::DiagramState::for_lesson(&lesson);
        self.save_prefs();
    }

    pub fn save_prefs(&mut self) {
        if let Err(e) = self.storage.save_prefs(&self.prefs) {
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

    pub fn is_running(&self) -> bool {
        self.run.is_some()
    }

    pub fn start_run(&mut self, ctx: &egui::Context) {
        if self.run.is_some() {
            return;
        }
        let Some(lesson) = self.lesson().cloned() else { return };
        self.autosave();
        let repaint_ctx = ctx.clone();
        let name = self.editor.file_name();
        self.run = Some(start_run(
            lesson,
            self.editor.text.clone(),
            name,
            self.prefs.backend,
            self.options.seed,
            self.backends.clone(),
            move || repaint_ctx.request_repaint(),
        ));
        self.run_progress = Some(Progress::Compiling {
            compiler: crate::lesson::Language::of(&self.editor.file_name()).compiler(),
        });
        self.status = "running…".into();
    }

    pub fn cancel_run(&mut self) {
        if let Some(job) = &self.run {
            job.cancel.cancel();
            self.status = "cancelling…".into();
        }
    }

    fn poll_run(&mut self) {
        let Some(job) = &self.run else { return };
        let mut finished = None;
        while let Ok(message) = job.messages.try_recv() {
            match message {
                RunMessage::Progress(p) => self.run_progress = Some(p),
                RunMessage::Done(outcome) => finished = Some((job.lesson.clone(), outcome)),
            }
        }
        if let Some((lesson_id, outcome)) = finished {
            self.run = None;
            self.run_progress = None;
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
            let progress = self.progress.entry(lesson_id.clone()).or_default();
            progress.record(attempt);
            if let Err(e) = self.storage.save_progress(&lesson_id, progress) {
                self.status = format!("cannot save the attempt history: {e}");
            }
            self.editor.set_report(report);
            self.outcomes.insert(lesson_id, *outcome);
        }
    }

    fn apply_theme(&mut self, ctx: &egui::Context) {
        let wanted = (self.prefs.theme, self.prefs.zoom);
        if self.applied_theme != Some(wanted) {
            ctx.set_visuals(theme::visuals(self.prefs.theme));
            ctx.set_zoom_factor(self.prefs.zoom);
            self.editor.set_dark(theme::is_dark(self.prefs.theme));
            self.lesson_highlighter.set_dark(theme::is_dark(self.prefs.theme));
            self.lesson_code_jobs.clear();
            self.applied_theme = Some(wanted);
        }
    }

    fn shortcuts(&mut self, ui: &mut egui::Ui) {
        use egui::{Key, KeyboardShortcut, Modifiers};
        let run = KeyboardShortcut::new(Modifiers::COMMAND, Key::Enter);
        let save = KeyboardShortcut::new(Modifiers::COMMAND, Key::S);
        let find = KeyboardShortcut::new(Modifiers::COMMAND, Key::F);
        if ui.input_mut(|i| i.consume_shortcut(&run)) {
            self.start_run(ui.ctx());
        }
        if ui.input_mut(|i| i.consume_shortcut(&save)) {
            self.save_to_file();
        }
        if ui.input_mut(|i| i.consume_shortcut(&find)) {
            self.editor.find.open = true;
            self.editor.find.focus = true;
        }
    }

    /// Ctrl+S: the file the learner opened or saved to, else a Save As dialog. The draft is
    /// autosaved either way.
    pub fn save_to_file(&mut self) {
        self.autosave();
        match self.editor.path.clone() {
            Some(path) => match Storage::write_file(&path, self.editor.text.as_bytes()) {
                Ok(()) => self.status = format!("saved {}", path.display()),
                Err(e) => self.status = format!("cannot save {}: {e}", path.display()),
            },
            None => self.file_dialog = Some(editor::save_dialog(self.editor.file_name())),
        }
    }

    fn poll_file_dialog(&mut self) {
        let Some(rx) = &self.file_dialog else { return };
        let Ok(action) = rx.try_recv() else { return };
        self.file_dialog = None;
        match action {
            editor::FileAction::Open(path) => match std::fs::read_to_string(&path) {
                Ok(text) => {
                    self.editor.replace_text(text);
                    self.editor.path = Some(path.clone());
                    self.status = format!("opened {}", path.display());
                }
                Err(e) => self.status = format!("cannot open {}: {e}", path.display()),
            },
            editor::FileAction::Save(path) => {
                self.editor.path = Some(path);
                self.save_to_file();
            }
            editor::FileAction::ExportReport(path) => {
                let text = self
                    .current_outcome()
                    .map(|o| serde_json::to_string_pretty(&o.report).unwrap_or_default());
                match text.map(|t| Storage::write_file(&path, t.as_bytes())) {
                    Some(Ok(())) => self.status = format!("report saved to {}", path.display()),
                    Some(Err(e)) => self.status = format!("cannot write {}: {e}", path.display()),
                    None => self.status = "no report to export yet".into(),
                }
            }
            editor::FileAction::Cancelled => {}
        }
    }

    pub fn current_outcome(&self) -> Option<&RunOutcome> {
        self.prefs.lesson.as_deref().and_then(|id| self.outcomes.get(id))
    }

    pub fn open_dialog(&mut self) {
        self.file_dialog = Some(editor::open_dialog());
    }

    pub fn export_report_dialog(&mut self) {
        self.file_dialog = Some(editor::export_dialog());
    }

    fn frame_bookkeeping(&mut self, ctx: &egui::Context) {
        self.frames += 1;
        if self.frames == 1 && self.options.run_at_start {
            self.start_run(ctx);
        }
        if self.frames == 2 {
            // The first frame has been presented when the second one starts.
            let since = crate::PROCESS_START.get().copied().unwrap_or(self.started);
            eprintln!(
                "haloscope: first frame shown {:.0} ms after the process started",
                since.elapsed().as_secs_f64() * 1e3
            );
        }
        // Frames are counted once a run asked for at start has finished, so the emulator does
        // not compete with the renderer for the cores.
        let settled = !self.options.run_at_start || (self.run.is_none() && self.frames > 2);
        if let Some(bench) = self.bench.as_mut().filter(|b| !b.done && settled) {
            let now = Instant::now();
            if let Some(last) = bench.last {
                bench.times_ms.push((now - last).as_secs_f64() * 1e3);
            }
            bench.last = Some(now);
            ctx.request_repaint();
            if bench.times_ms.len() >= bench.target {
                bench.done = true;
                let stats = |v: &[f64]| {
                    let mut t = v[10.min(v.len() - 1)..].to_vec();
                    t.sort_by(f64::total_cmp);
                    (
                        t.iter().sum::<f64>() / t.len() as f64,
                        t[t.len() / 2],
                        t[t.len() * 95 / 100],
                    )
                };
                let (mean, median, p95) = stats(&bench.times_ms);
                let (ui_mean, ui_median, _) = stats(&bench.ui_ms);
                let (cpu_mean, cpu_median, cpu_p95) = if bench.cpu_ms.len() > 11 {
                    stats(&bench.cpu_ms)
                } else {
                    (0.0, 0.0, 0.0)
                };
                println!(
                    "{{\"frames\": {}, \"frame_mean_ms\": {mean:.2}, \"frame_median_ms\": {median:.2}, \"frame_p95_ms\": {p95:.2}, \"cpu_mean_ms\": {cpu_mean:.2}, \"cpu_median_ms\": {cpu_median:.2}, \"cpu_p95_ms\": {cpu_p95:.2}, \"ui_mean_ms\": {ui_mean:.2}, \"ui_median_ms\": {ui_median:.2}}}",
                    bench.times_ms.len()
                );
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
        }
        if let Some(path) = self.options.screenshot.clone() {
            let run_done = !self.options.run_at_start || (self.run.is_none() && self.current_outcome().is_some());
            if self.screenshot_saved.load(std::sync::atomic::Ordering::Relaxed) {
                // Closed from here, not from the callback: a command sent while the
                // integration reads the pixels can be lost.
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            } else if run_done && !self.screenshot_requested && self.frames > 3 {
                self.screenshot_requested = true;
                let saved = self.screenshot_saved.clone();
                let repaint = ctx.clone();
                ctx.request_screenshot(move |image| {
                    match save_png(&image, &path, None) {
                        Ok(()) => eprintln!("haloscope: screenshot saved to {}", path.display()),
                        Err(e) => eprintln!("haloscope: screenshot failed: {e}"),
                    }
                    saved.store(true, std::sync::atomic::Ordering::Relaxed);
                    repaint.request_repaint();
                });
            }
            // The screenshot is taken at the end of a later frame: keep frames coming.
            ctx.request_repaint();
        }
    }

    /// The whole window, one frame.
    pub fn show(&mut self, ui: &mut egui::Ui) {
        let built = Instant::now();
        self.show_frame(ui);
        if let Some(bench) = self.bench.as_mut().filter(|b| b.last.is_some() && !b.done) {
            bench.ui_ms.push(built.elapsed().as_secs_f64() * 1e3);
        }
    }

    fn show_frame(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        self.apply_theme(&ctx);
        self.poll_run();
        self.poll_file_dialog();
        self.shortcuts(ui);
        self.frame_bookkeeping(&ctx);

        egui::Panel::top("top_bar").show(ui, |ui| self.top_bar(ui));
        egui::Panel::bottom("status_bar").show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.label(egui::RichText::new(&self.status).small());
            });
        });
        egui::Panel::left("lesson_panel")
            .resizable(true)
            .default_size(360.0)
            .show(ui, |ui| lesson_panel::show(self, ui));
        egui::Panel::right("results_panel")
            .resizable(true)
            .default_size(520.0)
            .show(ui, |ui| results::show(self, ui));
        egui::CentralPanel::default().show(ui, |ui| editor::show(self, ui));

        if self.confirm_solution {
            self.solution_dialog(&ctx);
        }
        self.autosave();
        if self.is_running() {
            ctx.request_repaint_after(std::time::Duration::from_millis(100));
        }
    }

    fn top_bar(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            ui.heading("haloscope");
            ui.separator();
            let label = self
                .lesson()
                .map(|l| l.title.clone())
                .unwrap_or_else(|| "no lesson".into());
            ui.label(egui::RichText::new(label).strong());
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                let mut theme = self.prefs.theme;
                let theme_label = ui.label("Theme");
                egui::ComboBox::from_id_salt("theme")
                    .selected_text(format!("{theme:?}"))
                    .show_ui(ui, |ui| {
                        ui.selectable_value(&mut theme, state::Theme::Dark, "Dark");
                        ui.selectable_value(&mut theme, state::Theme::Light, "Light");
                        ui.selectable_value(&mut theme, state::Theme::Projector, "Projector (high contrast)");
                    })
                    .response
                    .labelled_by(theme_label.id);
                if theme != self.prefs.theme {
                    self.prefs.theme = theme;
                    self.save_prefs();
                }
                if ui.button("A+").on_hover_text("Larger (projector)").clicked() {
                    self.prefs.zoom = (self.prefs.zoom + 0.25).min(3.0);
                    self.save_prefs();
                }
                if ui.button("A-").on_hover_text("Smaller").clicked() {
                    self.prefs.zoom = (self.prefs.zoom - 0.25).max(0.5);
                    self.save_prefs();
                }
                ui.label(format!("{:.0}%", self.prefs.zoom * 100.0));
            });
        });
    }

    fn solution_dialog(&mut self, ctx: &egui::Context) {
        let mut open = true;
        egui::Window::new("Show the solution?")
            .collapsible(false)
            .resizable(false)
            .open(&mut open)
            .show(ctx, |ui| {
                ui.label("This replaces the editor's text with the lesson's solution.");
                ui.label("Your current text stays in the attempts history if you ran it, and Undo brings it back.");
                ui.horizontal(|ui| {
                    if ui.button("Show solution").clicked() {
                        if let Some(lesson) = self.lesson().cloned() {
                            match std::fs::read_to_string(self.kernels(&lesson).1) {
                                Ok(text) => self.editor.replace_text(text),
                                Err(e) => self.status = format!("cannot read the solution: {e}"),
                            }
                        }
                        self.confirm_solution = false;
                    }
                    if ui.button("Keep my code").clicked() {
                        self.confirm_solution = false;
                    }
                });
            });
        if !open {
            self.confirm_solution = false;
        }
    }
}

impl eframe::App for App {
    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        if let (Some(bench), Some(cpu)) = (self.bench.as_mut(), frame.info().cpu_usage)
            && bench.last.is_some()
            && !bench.done
        {
            bench.cpu_ms.push(cpu as f64 * 1e3);
        }
        self.show(ui);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        self.autosave();
        self.save_prefs();
    }
}

/// Saves `image` (or the `crop` rectangle of it, in points at `pixels_per_point`) as PNG.
pub fn save_png(
    image: &egui::ColorImage,
    path: &std::path::Path,
    crop: Option<(egui::Rect, f32)>,
) -> Result<(), String> {
    let [w, h] = image.size;
    let (x0, y0, x1, y1) = match crop {
        Some((rect, ppp)) => {
            let clamp = |v: f32, max: usize| (v * ppp).round().clamp(0.0, max as f32) as usize;
            (
                clamp(rect.min.x, w),
                clamp(rect.min.y, h),
                clamp(rect.max.x, w),
                clamp(rect.max.y, h),
            )
        }
        None => (0, 0, w, h),
    };
    let mut out = image::RgbaImage::new((x1 - x0).max(1) as u32, (y1 - y0).max(1) as u32);
    for y in y0..y1 {
        for x in x0..x1 {
            let c = image.pixels[y * w + x];
            out.put_pixel(
                (x - x0) as u32,
                (y - y0) as u32,
                image::Rgba([c.r(), c.g(), c.b(), c.a()]),
            );
        }
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    out.save(path).map_err(|e| e.to_string())
}

/// Opens the window. Returns the process exit code.
pub fn run_gui(options: GuiOptions) -> i32 {
    // `HALOSCOPE_WINDOW=1280x800` sets the first window size (benchmarks, screenshots).
    let size = std::env::var("HALOSCOPE_WINDOW")
        .ok()
        .and_then(|v| {
            v.split_once('x')
                .and_then(|(w, h)| Some([w.parse::<f32>().ok()?, h.parse::<f32>().ok()?]))
        })
        .unwrap_or([1500.0, 920.0]);
    let mut native = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("haloscope")
            .with_inner_size(size)
            .with_app_id("haloscope"),
        persist_window: std::env::var_os("HALOSCOPE_WINDOW").is_none(),
        multisampling: 0,
        ..Default::default()
    };
    // The frame benchmark measures how long a frame takes, not the display's refresh.
    native.glow_options.vsync = options.frame_bench.is_none();
    let result = eframe::run_native(
        "haloscope",
        native,
        Box::new(move |cc| {
            // Anti-aliasing feathering doubles the triangles; on a software rasterizer (a
            // laptop without GPU drivers, Xvfb) that is most of the frame. Set it either way,
            // since eframe persists egui's options between runs.
            let renderer = cc.gl.as_ref().map(|gl| {
                use eframe::glow::HasContext;
                // SAFETY: a plain string query on the context eframe just created.
                unsafe { gl.get_parameter_string(eframe::glow::RENDERER) }
            });
            let software = renderer
                .as_deref()
                .is_some_and(|r| r.contains("llvmpipe") || r.contains("softpipe") || r.contains("Software"));
            cc.egui_ctx.tessellation_options_mut(|t| t.feathering = !software);
            if options.frame_bench.is_some() {
                eprintln!(
                    "haloscope: renderer {:?}, feathering {}",
                    renderer.unwrap_or_default(),
                    !software
                );
            }
            Ok(Box::new(App::new(options)))
        }),
    );
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!(
                "haloscope: cannot open the window ({e}).\nWith no display, use the command line: `haloscope run --lesson stencil-2d` (see `haloscope --help`)."
            );
            20
        }
    }
}
