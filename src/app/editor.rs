//! The kernel editor: highlighted CUDA C++, a gutter with line numbers, diagnostic markers and
//! sectors per line, find, open/save, reset and show-solution, and the diagnostics list.

use super::App;
use super::highlight::Highlighter;
use crate::compile::{CompileFailure, Diagnostic, Severity};
use crate::lesson::Lesson;
use crate::report::RunReport;
use crate::report::thousands;
use egui::text::{CCursor, CCursorRange};
use egui::{Color32, FontId, Id, Pos2, Rect, RichText, Stroke, Ui, Vec2};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, channel};

pub const EDITOR_ID: &str = "kernel_editor";
const GUTTER_WIDTH: f32 = 124.0;

/// Something shown on an editor line: a compile diagnostic, a fault or a finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    pub line: u32,
    pub column: Option<u32>,
    pub error: bool,
    pub message: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LineFigures {
    pub sectors: u64,
    pub ideal: u64,
    pub lanes: f64,
}

#[derive(Default)]
pub struct FindState {
    pub open: bool,
    pub focus: bool,
    pub query: String,
    pub message: String,
}

pub enum FileAction {
    Open(PathBuf),
    Save(PathBuf),
    ExportReport(PathBuf),
    Cancelled,
}

pub struct EditorState {
    pub text: String,
    pub lesson_id: Option<String>,
    /// Where the draft of this lesson and language is autosaved.
    pub draft_key: Option<String>,
    /// What is on disk as the draft, to write only on change.
    pub saved_text: Option<String>,
    /// The file the learner opened or saved to, if any.
    pub path: Option<PathBuf>,
    /// The lesson's starter file name: what NVRTC and the diagnostics call the source.
    pub source_name: String,
    pub highlighter: Highlighter,
    pub markers: Vec<Marker>,
    pub line_figures: BTreeMap<u32, LineFigures>,
    pub find: FindState,
    /// The text before "reset" or "show solution", to restore it.
    pub before_replace: Option<String>,
    /// 1-based line of the cursor, for the status line and tests.
    pub cursor_line: usize,
    pending_cursor: Option<(usize, usize)>,
}

impl EditorState {
    pub fn new(dark: bool) -> EditorState {
        EditorState {
            text: String::new(),
            lesson_id: None,
            draft_key: None,
            saved_text: None,
            path: None,
            source_name: "kernel.cu".into(),
            highlighter: Highlighter::new(dark),
            markers: Vec::new(),
            line_figures: BTreeMap::new(),
            find: FindState::default(),
            before_replace: None,
            cursor_line: 1,
            pending_cursor: None,
        }
    }

    pub fn set_dark(&mut self, dark: bool) {
        self.highlighter.set_dark(dark);
    }

    /// Shows a lesson's kernel: `starter` names the file (and so the language), `draft_key`
    /// is where edits are autosaved.
    pub fn load(&mut self, lesson: &Lesson, starter: &std::path::Path, draft_key: String, text: String) {
        self.lesson_id = Some(lesson.id.clone());
        self.draft_key = Some(draft_key);
        self.source_name = starter
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "kernel.cu".into());
        self.highlighter.set_rust(self.source_name.ends_with(".rs"));
        self.saved_text = Some(text.clone());
        self.text = text;
        self.path = None;
        self.markers.clear();
        self.line_figures.clear();
        self.before_replace = None;
    }

    pub fn file_name(&self) -> String {
        self.path
            .as_ref()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.source_name.clone())
    }

    /// Replaces the whole text (reset, show solution, open); the old text can be restored.
    pub fn replace_text(&mut self, text: String) {
        if text != self.text {
            self.before_replace = Some(std::mem::replace(&mut self.text, text));
        }
        self.markers.clear();
        self.line_figures.clear();
    }

    /// Puts the cursor at a 1-based line and column on the next frame.
    pub fn go_to(&mut self, line: u32, column: Option<u32>) {
        self.pending_cursor = Some((line.max(1) as usize, column.unwrap_or(1).max(1) as usize));
    }

    /// Markers and per-line sectors from a finished run.
    pub fn set_report(&mut self, report: &RunReport) {
        self.markers.clear();
        let mut push = |d: &Diagnostic| {
            if d.file == self.source_name || d.file.ends_with(&format!("/{}", self.source_name)) {
                self.markers.push(Marker {
                    line: d.line,
                    column: d.column,
                    error: d.severity == Severity::Error,
                    message: format!("{:?}: {}", d.severity, d.message).to_lowercase(),
                });
            }
        };
        if let Some(CompileFailure::Errors { diagnostics, .. }) = &report.compile_failure {
            diagnostics.iter().for_each(&mut push);
        }
        if let Some(compile) = &report.compile {
            compile.warnings.iter().for_each(&mut push);
        }
        for f in &report.findings {
            if let Some(line) = f.at.line {
                self.markers.push(Marker {
                    line,
                    column: None,
                    error: true,
                    message: f.message.clone(),
                });
            }
        }
        if let Some(fault) = &report.fault
            && let Some(line) = fault.line()
        {
            self.markers.push(Marker {
                line,
                column: None,
                error: true,
                message: fault.message(),
            });
        }
        // Lines where ptxas changed the global memory instructions: the GPU's count differs
        // from what the PTX asks for (a note, not an error).
        for (code, line) in report
            .profile
            .iter()
            .filter_map(|p| p.machine_code.as_ref())
            .flat_map(|c| c.lines.iter().map(move |l| (c, l)))
            .filter(|(_, l)| l.line > 0)
        {
            self.markers.push(Marker {
                line: line.line,
                column: None,
                error: false,
                message: format!(
                    "machine code ({}): {}. {}",
                    code.architecture,
                    line.summary(),
                    line.meaning()
                ),
            });
        }
        self.line_figures = report
            .profile
            .iter()
            .flat_map(|p| p.per_line.iter())
            .filter(|l| l.sectors > 0)
            .map(|l| {
                (
                    l.line,
                    LineFigures {
                        sectors: l.sectors,
                        ideal: l.ideal_sectors,
                        lanes: l.average_active_lanes(),
                    },
                )
            })
            .collect();
    }
}

pub fn open_dialog() -> Receiver<FileAction> {
    dialog(|| {
        rfd::FileDialog::new()
            .add_filter("kernels", &["cu", "cuh", "rs"])
            .pick_file()
            .map(FileAction::Open)
    })
}

pub fn save_dialog(name: String) -> Receiver<FileAction> {
    dialog(move || {
        rfd::FileDialog::new()
            .add_filter("kernels", &["cu", "rs"])
            .set_file_name(name)
            .save_file()
            .map(FileAction::Save)
    })
}

pub fn export_dialog() -> Receiver<FileAction> {
    dialog(|| {
        rfd::FileDialog::new()
            .add_filter("JSON", &["json"])
            .set_file_name("report.json")
            .save_file()
            .map(FileAction::ExportReport)
    })
}

/// File dialogs block, so they run on their own thread and answer through a channel.
fn dialog(f: impl FnOnce() -> Option<FileAction> + Send + 'static) -> Receiver<FileAction> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let _ = tx.send(f().unwrap_or(FileAction::Cancelled));
    });
    rx
}

pub fn show(app: &mut App, ui: &mut Ui) {
    toolbar(app, ui);
    if app.editor.find.open {
        find_bar(app, ui);
    }
    egui::Panel::bottom("diagnostics")
        .resizable(true)
        .default_size(120.0)
        .show(ui, |ui| diagnostics_list(app, ui));
    code_area(app, ui);
}

fn toolbar(app: &mut App, ui: &mut Ui) {
    ui.horizontal_wrapped(|ui| {
        let running = app.is_running();
        if ui
            .add_enabled(!running, egui::Button::new(RichText::new("Run (Ctrl+Enter)").strong()))
            .on_hover_text("Compile, verify every size and profile (Ctrl+Enter)")
            .clicked()
        {
            let ctx = ui.ctx().clone();
            app.start_run(&ctx);
        }
        if ui.add_enabled(running, egui::Button::new("Cancel")).clicked() {
            app.cancel_run();
        }
        ui.separator();
        if ui.button("Open…").clicked() {
            app.open_dialog();
        }
        if ui
            .button("Save")
            .on_hover_text("Save to the opened file, or choose one (Ctrl+S); drafts are autosaved anyway")
            .clicked()
        {
            app.save_to_file();
        }
        if ui.button("Save as…").clicked() {
            app.editor.path = None;
            app.save_to_file();
        }
        ui.separator();
        if ui.button("Reset to starter").clicked()
            && let Some(lesson) = app.lesson().cloned()
        {
            match std::fs::read_to_string(app.kernels(&lesson).0) {
                Ok(text) => app.editor.replace_text(text),
                Err(e) => app.status = format!("cannot read the starter: {e}"),
            }
        }
        if ui.button("Show solution…").clicked() {
            app.confirm_solution = true;
        }
        if let Some(previous) = app.editor.before_replace.clone()
            && ui
                .button("Restore my code")
                .on_hover_text("Bring back the text from before the last reset / solution / open")
                .clicked()
        {
            app.editor.replace_text(previous);
        }
        if ui.button("Find").on_hover_text("Ctrl+F").clicked() {
            app.editor.find.open = !app.editor.find.open;
            app.editor.find.focus = app.editor.find.open;
        }
        ui.separator();
        ui.label(format!("{} · line {}", app.editor.file_name(), app.editor.cursor_line));
    });
}

fn find_bar(app: &mut App, ui: &mut Ui) {
    ui.horizontal(|ui| {
        let label = ui.label("Find:");
        let response = ui
            .add(egui::TextEdit::singleline(&mut app.editor.find.query).desired_width(220.0))
            .labelled_by(label.id);
        if app.editor.find.focus {
            response.request_focus();
            app.editor.find.focus = false;
        }
        let enter = response.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if ui.button("Next").clicked() || enter {
            find_next(app);
            if enter {
                response.request_focus();
            }
        }
        if ui.button("Close").clicked() {
            app.editor.find.open = false;
        }
        ui.label(&app.editor.find.message);
    });
}

/// Selects the next occurrence of the query after the cursor, wrapping around.
fn find_next(app: &mut App) {
    let query = app.editor.find.query.clone();
    if query.is_empty() {
        return;
    }
    let text = &app.editor.text;
    let start_line = app.editor.cursor_line;
    let start_byte: usize = text.split_inclusive('\n').take(start_line).map(str::len).sum();
    let found = text[start_byte.min(text.len())..]
        .find(&query)
        .map(|i| i + start_byte)
        .or_else(|| text.find(&query));
    match found {
        Some(byte) => {
            let line = text[..byte].matches('\n').count() + 1;
            let column = byte - text[..byte].rfind('\n').map_or(0, |p| p + 1) + 1;
            app.editor.go_to(line as u32, Some(column as u32));
            app.editor.find.message = format!("line {line}");
        }
        None => app.editor.find.message = "not found".into(),
    }
}

fn diagnostics_list(app: &mut App, ui: &mut Ui) {
    let markers = app.editor.markers.clone();
    ui.horizontal(|ui| {
        ui.label(RichText::new("Diagnostics").strong());
        if markers.is_empty() {
            ui.label("none");
        }
    });
    egui::ScrollArea::vertical()
        .id_salt("diagnostics_scroll")
        .show(ui, |ui| {
            for m in &markers {
                let colour = if m.error {
                    Color32::from_rgb(0xE0, 0x40, 0x40)
                } else {
                    Color32::from_rgb(0xD0, 0xA0, 0x20)
                };
                let text = RichText::new(format!("line {}: {}", m.line, m.message)).color(colour);
                if ui
                    .add(egui::Button::new(text).frame(false))
                    .on_hover_text("Go to this line")
                    .clicked()
                {
                    app.editor.go_to(m.line, m.column);
                    app.status = format!("line {}: {}", m.line, m.message);
                }
            }
        });
}

fn char_index_of(text: &str, line: usize, column: usize) -> usize {
    let mut chars = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return chars + (column - 1).min(l.trim_end_matches('\n').chars().count());
        }
        chars += l.chars().count();
    }
    chars
}

fn code_area(app: &mut App, ui: &mut Ui) {
    let id = Id::unique(EDITOR_ID);
    let font = FontId::monospace(13.0);
    let row_height = ui.fonts_mut(|f| f.row_height(&font));
    let editor = &mut app.editor;
    let mut scroll_to: Option<f32> = None;
    if let Some((line, column)) = editor.pending_cursor.take() {
        let index = char_index_of(&editor.text, line, column);
        let mut state = egui::TextEdit::load_state(ui.ctx(), id).unwrap_or_default();
        state
            .cursor
            .set_char_range(Some(CCursorRange::one(CCursor::new(index))));
        state.store(ui.ctx(), id);
        ui.ctx().memory_mut(|m| m.request_focus(id));
        editor.cursor_line = line;
        scroll_to = Some((line as f32 - 1.0) * row_height);
    }
    let EditorState {
        text,
        highlighter,
        markers,
        line_figures,
        cursor_line,
        ..
    } = editor;
    let mut layouter = |ui: &Ui, text: &dyn egui::TextBuffer, wrap_width: f32| {
        let mut job = highlighter.layout(text.as_str(), font.clone());
        // Code does not wrap: long lines scroll sideways.
        let _ = wrap_width;
        job.wrap.max_width = f32::INFINITY;
        ui.ctx().fonts_mut(|f| f.layout_job(job))
    };
    let area = egui::ScrollArea::both()
        .id_salt("editor_scroll")
        .auto_shrink([false, false]);
    let area = match scroll_to {
        Some(y) => area.vertical_scroll_offset((y - 120.0).max(0.0)),
        None => area,
    };
    area.show(ui, |ui| {
        let label = ui.label(RichText::new("Kernel source").small().weak());
        let output = egui::TextEdit::multiline(text)
            .id(id)
            .code_editor()
            .desired_width(f32::INFINITY)
            .desired_rows(30)
            .margin(egui::Margin {
                left: GUTTER_WIDTH as i8,
                right: 4,
                top: 4,
                bottom: 4,
            })
            .layouter(&mut layouter)
            .show(ui);
        let response = output.response.response.clone().labelled_by(label.id);
        if let Some(range) = output.cursor_range {
            let index: usize = range.primary.index.into();
            *cursor_line = text.chars().take(index).filter(|&c| c == '\n').count() + 1;
        }
        paint_gutter(
            ui,
            markers,
            line_figures,
            &output.galley,
            output.galley_pos,
            response.rect,
        );
    });
}

/// Line numbers, markers and sectors per line, painted in the editor's left margin.
fn paint_gutter(
    ui: &Ui,
    markers: &[Marker],
    line_figures: &BTreeMap<u32, LineFigures>,
    galley: &egui::Galley,
    origin: Pos2,
    rect: Rect,
) {
    let painter = ui.painter();
    let visuals = ui.visuals();
    let gutter = Rect::from_min_max(rect.min, Pos2::new(rect.min.x + GUTTER_WIDTH - 6.0, rect.max.y));
    painter.rect_filled(gutter, 0.0, visuals.faint_bg_color);
    let max_sectors = line_figures.values().map(|f| f.sectors).max().unwrap_or(0).max(1);
    let font = FontId::monospace(11.0);
    let mut line = 1u32;
    let mut first_row_of_line = true;
    let pointer = ui.input(|i| i.pointer.hover_pos());
    for row in &galley.rows {
        if first_row_of_line {
            let y = origin.y + row.pos.y;
            let h = row.rect().height();
            let row_rect = Rect::from_min_size(Pos2::new(rect.min.x, y), Vec2::new(rect.width(), h));
            if let Some(figures) = line_figures.get(&line) {
                let bar = 40.0 * figures.sectors as f32 / max_sectors as f32;
                let bar_rect =
                    Rect::from_min_size(Pos2::new(gutter.min.x + 2.0, y + 2.0), Vec2::new(bar.max(1.0), h - 4.0));
                painter.rect_filled(bar_rect, 1.0, Color32::from_rgba_unmultiplied(0xFF, 0x80, 0x30, 110));
                painter.text(
                    Pos2::new(gutter.min.x + 44.0, y + h / 2.0),
                    egui::Align2::RIGHT_CENTER,
                    compact(figures.sectors),
                    font.clone(),
                    visuals.text_color(),
                );
            }
            painter.text(
                Pos2::new(gutter.max.x - 18.0, y + h / 2.0),
                egui::Align2::RIGHT_CENTER,
                line.to_string(),
                font.clone(),
                visuals.weak_text_color(),
            );
            let on_line: Vec<&Marker> = markers.iter().filter(|m| m.line == line).collect();
            if !on_line.is_empty() {
                let error = on_line.iter().any(|m| m.error);
                let colour = if error {
                    Color32::from_rgb(0xE0, 0x40, 0x40)
                } else {
                    Color32::from_rgb(0xD0, 0xA0, 0x20)
                };
                painter.rect_filled(row_rect, 0.0, colour.gamma_multiply(0.12));
                let dot = Pos2::new(gutter.max.x - 8.0, y + h / 2.0);
                painter.circle(dot, 4.0, colour, Stroke::NONE);
                let marker_rect = Rect::from_center_size(dot, Vec2::splat(12.0));
                if pointer.is_some_and(|p| marker_rect.contains(p) || (row_rect.contains(p) && p.x < gutter.max.x)) {
                    let text = on_line
                        .iter()
                        .map(|m| m.message.as_str())
                        .collect::<Vec<_>>()
                        .join("\n");
                    egui::Tooltip::always_open(
                        ui.ctx().clone(),
                        ui.layer_id(),
                        Id::unique("marker_tip"),
                        egui::PopupAnchor::Pointer,
                    )
                    .show(|ui| {
                        ui.label(text);
                    });
                }
            }
            if let Some(figures) = line_figures.get(&line) {
                let in_gutter = pointer.is_some_and(|p| row_rect.contains(p) && p.x < gutter.min.x + 48.0);
                if in_gutter {
                    egui::Tooltip::always_open(
                        ui.ctx().clone(),
                        ui.layer_id(),
                        Id::unique("sector_tip"),
                        egui::PopupAnchor::Pointer,
                    )
                    .show(|ui| {
                        ui.label(format!(
                            "line {line}: {} sectors (ideal {}, {:.2}x), {:.1} active lanes per warp instruction",
                            thousands(figures.sectors),
                            thousands(figures.ideal),
                            if figures.ideal > 0 {
                                figures.sectors as f64 / figures.ideal as f64
                            } else {
                                0.0
                            },
                            figures.lanes
                        ));
                    });
                }
            }
        }
        first_row_of_line = row.ends_with_newline;
        if row.ends_with_newline {
            line += 1;
        }
    }
}

/// `1362688000` -> `1.36G`.
pub fn compact(value: u64) -> String {
    let v = value as f64;
    if v >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.0}k", v / 1e3)
    } else {
        value.to_string()
    }
}
