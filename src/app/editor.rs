//! The kernel editor: highlighted CUDA C++, a gutter with line numbers, diagnostic markers and
//! sectors per line, find, open/save, reset and show-solution, and the diagnostics list.

use super::action::Action;
use super::editor_bar::EditorBar;
pub use super::gutter::FiguresState;
use super::gutter::{GUTTER_WIDTH, LineFigures, Marker};
use super::highlight::Highlighter;
use super::view::{EditorView, View, ViewContext};
use crate::compile::{CompileFailure, Diagnostic, Severity};
use crate::lesson::Lesson;
use crate::pipeline::live_count::{LiveFailure, LiveFigures};
use crate::report::{LineSectors, RunReport};
use egui::text::{CCursor, CCursorRange};
use egui::{Color32, FontId, Id, RichText, Ui};
use std::collections::BTreeMap;
use std::path::PathBuf;

pub const EDITOR_ID: &str = "kernel_editor";

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
    /// The lesson file (name, text) last put in the editor whole: the starter when the lesson
    /// opens, the starter or solution on reset and "show solution". While the text is that
    /// file's, the bar calls it by its name.
    lesson_file: Option<(String, String)>,
    pub highlighter: Highlighter,
    pub markers: Vec<Marker>,
    pub line_figures: BTreeMap<u32, LineFigures>,
    /// Where `line_figures` came from: a Run, a live count, or older text.
    pub figures: FiguresState,
    /// The find bar and the "show the solution?" question.
    pub bar: EditorBar,
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
            lesson_file: None,
            highlighter: Highlighter::new(dark),
            markers: Vec::new(),
            line_figures: BTreeMap::new(),
            figures: FiguresState::Run,
            bar: EditorBar::default(),
            before_replace: None,
            cursor_line: 1,
            pending_cursor: None,
        }
    }

    /// The text and cursor as the other views see them.
    pub fn as_view(&self) -> EditorView<'_> {
        EditorView {
            text: &self.text,
            file_name: self.file_name(),
            cursor_line: self.cursor_line as u32,
        }
    }

    /// Opens the find bar with the keyboard's focus in it (Ctrl+F).
    pub fn open_find(&mut self) {
        self.bar.find.open = true;
        self.bar.find.focus = true;
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
        self.lesson_file = std::fs::read_to_string(starter)
            .ok()
            .map(|starter_text| (self.source_name.clone(), starter_text));
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

    /// What the bar above the code calls the text: the file it was opened from or saved to,
    /// the lesson file it still equals (`starter.cu`, `solution.cu`), or "draft": an edit
    /// that lives only in the autosave.
    pub fn label(&self) -> String {
        if let Some(name) = self.path.as_ref().and_then(|p| p.file_name()) {
            return name.to_string_lossy().into_owned();
        }
        match &self.lesson_file {
            Some((name, text)) if *text == self.text => name.clone(),
            _ => "draft".into(),
        }
    }

    /// Puts a lesson file (starter or solution) in the editor: no file of the learner's is
    /// open any more, so Ctrl+S asks where to save rather than overwriting one with it.
    pub fn put_lesson_file(&mut self, name: String, text: String) {
        self.replace_text(text.clone());
        self.path = None;
        self.lesson_file = Some((name, text));
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

    /// A compiler diagnostic of the learner's file as a marker on its line.
    fn push_diagnostic(&mut self, d: &Diagnostic) {
        if d.file == self.source_name || d.file.ends_with(&format!("/{}", self.source_name)) {
            self.markers.push(Marker {
                line: d.line,
                column: d.column,
                error: d.severity == Severity::Error,
                message: format!("{:?}: {}", d.severity, d.message).to_lowercase(),
            });
        }
    }

    /// A live count's outcome (app/live.rs): its per-line sectors, marked live; or, when the
    /// text does not compile or launch, the last figures kept and greyed, the error on its line.
    pub fn set_live(&mut self, outcome: Result<LiveFigures, LiveFailure>) {
        match outcome {
            Ok(live) => {
                // Markers a failed live count left are for text that is gone.
                if matches!(self.figures, FiguresState::Broken(_)) {
                    self.markers.clear();
                }
                self.line_figures = figures_of(&live.profile.per_line);
                self.figures = FiguresState::Live(live.gate);
            }
            Err(LiveFailure::Compile(failure)) => {
                self.markers.clear();
                if let CompileFailure::Errors { diagnostics, .. } | CompileFailure::Contract { diagnostics, .. } =
                    &failure
                {
                    diagnostics.iter().for_each(|d| self.push_diagnostic(d));
                }
                let why = match &failure {
                    CompileFailure::Errors { .. } => "the text does not compile (Diagnostics below)".to_string(),
                    other => other.headline().lines().next().unwrap_or_default().to_string(),
                };
                self.figures = FiguresState::Broken(why);
            }
            Err(LiveFailure::Launch(why)) => self.figures = FiguresState::Broken(why),
            Err(LiveFailure::Cancelled) => {}
        }
    }

    /// Markers and per-line sectors from a finished run.
    pub fn set_report(&mut self, report: &RunReport) {
        self.markers.clear();
        self.figures = FiguresState::Run;
        if let Some(CompileFailure::Errors { diagnostics, .. }) = &report.compile_failure {
            diagnostics.iter().for_each(|d| self.push_diagnostic(d));
        }
        if let Some(compile) = &report.compile {
            compile.warnings.iter().for_each(|d| self.push_diagnostic(d));
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
        for u in &report.unexecuted {
            if let Some(line) = u.at.line {
                self.markers.push(Marker {
                    line,
                    column: None,
                    error: false,
                    message: u.message.clone(),
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
        // Where the compiler merged or moved an access: said on every line involved.
        for (m, line) in report
            .profile
            .iter()
            .filter_map(|p| p.moves.as_ref())
            .flat_map(|moves| moves.moves.iter())
            .flat_map(|m| {
                m.lines()
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .map(move |l| (m, l))
            })
        {
            self.markers.push(Marker {
                line,
                column: None,
                error: false,
                message: format!("compiler: {}", m.text),
            });
        }
        self.line_figures = report
            .profile
            .as_ref()
            .map(|p| figures_of(&p.per_line))
            .unwrap_or_default();
    }
}

/// The gutter's figures of a profile's lines that issued sectors.
fn figures_of(per_line: &[LineSectors]) -> BTreeMap<u32, LineFigures> {
    per_line
        .iter()
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
        .collect()
}

impl View for EditorState {
    /// The toolbar, the find bar, the code with its gutter, the diagnostics list, and the
    /// "show the solution?" dialog. The editor's context has no `editor` (this is it).
    fn show(&mut self, cx: &ViewContext, ui: &mut Ui) {
        self.set_dark(cx.dark());
        let place = (self.label(), self.cursor_line, self.before_replace.is_some());
        self.bar.toolbar(cx, ui, place);
        if self.bar.find.open
            && let Some((line, column)) = self.bar.find_bar(&self.text, self.cursor_line, ui)
        {
            self.go_to(line, Some(column));
        }
        egui::Panel::bottom("diagnostics")
            .resizable(true)
            .default_size(120.0)
            .show(ui, |ui| diagnostics_list(self, cx, ui));
        code_area(self, cx, ui);
        if self.bar.confirm_solution {
            self.bar.solution_dialog(cx, ui.ctx());
        }
    }
}

fn diagnostics_list(editor: &EditorState, cx: &ViewContext, ui: &mut Ui) {
    let markers = &editor.markers;
    ui.horizontal(|ui| {
        ui.label(RichText::new("Diagnostics").strong());
        if markers.is_empty() {
            ui.label("none");
        }
    });
    // A note on several lines (a compiler move names every line it involves) is listed once,
    // with all its lines; the margin marks each of them.
    let mut listed: Vec<(&Marker, Vec<u32>)> = Vec::new();
    for m in markers {
        match listed
            .iter_mut()
            .find(|(first, _)| !m.error && !first.error && first.message == m.message)
        {
            Some((_, lines)) => lines.push(m.line),
            None => listed.push((m, vec![m.line])),
        }
    }
    egui::ScrollArea::vertical()
        .id_salt("diagnostics_scroll")
        .show(ui, |ui| {
            for (m, lines) in &listed {
                let colour = if m.error {
                    Color32::from_rgb(0xE0, 0x40, 0x40)
                } else {
                    Color32::from_rgb(0xD0, 0xA0, 0x20)
                };
                let text =
                    RichText::new(format!("{}: {}", crate::report::moves::lines_name(lines), m.message)).color(colour);
                if ui
                    .add(egui::Button::new(text).frame(false))
                    .on_hover_text("Go to this line")
                    .clicked()
                {
                    cx.actions.push(Action::GoTo {
                        line: m.line,
                        column: m.column,
                        status: Some(format!("line {}: {}", m.line, m.message)),
                    });
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

fn code_area(editor: &mut EditorState, cx: &ViewContext, ui: &mut Ui) {
    let id = Id::unique(EDITOR_ID);
    let font = FontId::monospace(13.0);
    let row_height = ui.fonts_mut(|f| f.row_height(&font));
    let wrap = cx.prefs.wrap_code;
    // The text box fills the column's height (the code area below the last line is the
    // editor's too, not an empty panel).
    let rows = ((ui.available_height() - 24.0) / row_height).floor().max(8.0) as usize;
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
        figures,
        cursor_line,
        ..
    } = editor;
    let mut layouter = |ui: &Ui, text: &dyn egui::TextBuffer, wrap_width: f32| {
        let mut job = highlighter.layout(text.as_str(), font.clone());
        // Wrapped, long lines continue on the next rows (the gutter numbers only the first);
        // unwrapped, they scroll sideways.
        job.wrap.max_width = if wrap { wrap_width } else { f32::INFINITY };
        ui.ctx().fonts_mut(|f| f.layout_job(job))
    };
    let area = if wrap {
        egui::ScrollArea::vertical()
    } else {
        egui::ScrollArea::both()
    }
    .id_salt("editor_scroll")
    .auto_shrink([false, false]);
    let area = match scroll_to {
        Some(y) => area.vertical_scroll_offset((y - 120.0).max(0.0)),
        None => area,
    };
    area.show(ui, |ui| {
        let label = ui
            .horizontal_wrapped(|ui| {
                let label = ui.label(RichText::new("Kernel source").small().weak());
                figures_note(ui, figures, line_figures.is_empty());
                label
            })
            .inner;
        let output = egui::TextEdit::multiline(text)
            .id(id)
            .code_editor()
            .desired_width(f32::INFINITY)
            .desired_rows(rows)
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
        super::gutter::paint_gutter(
            ui,
            markers,
            line_figures,
            figures,
            &output.galley,
            output.galley_pos,
            response.rect,
        );
    });
}

/// Beside "Kernel source": what the gutter's figures are, when they are not a Run's.
fn figures_note(ui: &mut Ui, figures: &FiguresState, none: bool) {
    let text = match figures {
        FiguresState::Run => return,
        FiguresState::Live(gate) => format!("live: {} (Run verifies every size)", gate.sentence()),
        FiguresState::Outdated if none => return,
        FiguresState::Outdated => "figures of the text before your edit: counting…".to_string(),
        FiguresState::Broken(why) => format!("figures of the last text that compiled (greyed): {why}"),
    };
    let colour = match figures {
        FiguresState::Live(_) => super::gutter::LIVE_COLOUR,
        _ => ui.visuals().weak_text_color(),
    };
    ui.label(RichText::new(text).small().color(colour));
}
