//! The editor's toolbar (Run, Cancel, Open, Save, Reset, Solution, Find), its find bar and
//! the "show the solution?" dialog. Buttons push `Action`s; the find bar and the dialog are
//! the editor's own state, changed in place.

use super::action::{Action, PrefChange};
use super::view::ViewContext;
use egui::{RichText, Ui};

#[derive(Default)]
pub struct FindState {
    pub open: bool,
    pub focus: bool,
    pub query: String,
    pub message: String,
}

/// The bar's own state: the find bar and whether "show the solution?" is being asked.
#[derive(Default)]
pub struct EditorBar {
    pub find: FindState,
    pub confirm_solution: bool,
}

impl EditorBar {
    /// The toolbar; `place`: the file's name, the cursor's line, and whether there is text
    /// from before a reset / solution / open to restore.
    pub(super) fn toolbar(&mut self, cx: &ViewContext, ui: &mut Ui, place: (String, usize, bool)) {
        toolbar(self, cx, ui, place);
    }

    /// The find bar; returns where to put the cursor (line, column) when Next found the query.
    pub(super) fn find_bar(&mut self, text: &str, cursor_line: usize, ui: &mut Ui) -> Option<(u32, u32)> {
        find_bar(&mut self.find, text, cursor_line, ui)
    }

    pub(super) fn solution_dialog(&mut self, cx: &ViewContext, ctx: &egui::Context) {
        solution_dialog(&mut self.confirm_solution, cx, ctx);
    }
}

fn toolbar(
    bar: &mut EditorBar,
    cx: &ViewContext,
    ui: &mut Ui,
    (file_name, cursor_line, can_restore): (String, usize, bool),
) {
    ui.horizontal_wrapped(|ui| {
        let running = cx.running();
        if ui
            .add_enabled(!running, egui::Button::new(RichText::new("Run (Ctrl+Enter)").strong()))
            .on_hover_text("Compile, verify every size and profile (Ctrl+Enter)")
            .clicked()
        {
            cx.actions.push(Action::Run);
        }
        if ui.add_enabled(running, egui::Button::new("Cancel")).clicked() {
            cx.actions.push(Action::CancelRun);
        }
        ui.separator();
        if ui.button("Open…").clicked() {
            cx.actions.push(Action::OpenFileDialog);
        }
        if ui
            .button("Save")
            .on_hover_text("Save to the opened file, or choose one (Ctrl+S); drafts are autosaved anyway")
            .clicked()
        {
            cx.actions.push(Action::SaveFile { as_new: false });
        }
        if ui.button("Save as…").clicked() {
            cx.actions.push(Action::SaveFile { as_new: true });
        }
        if ui
            .button("Open grading table…")
            .on_hover_text("A class's grades.json from `haloscope grade`: walk through the answers")
            .clicked()
        {
            cx.actions.push(Action::OpenGradesDialog);
        }
        ui.separator();
        if ui.button("Reset to starter").clicked() {
            cx.actions.push(Action::ResetToStarter);
        }
        if ui.button("Show solution…").clicked() {
            bar.confirm_solution = true;
        }
        if can_restore
            && ui
                .button("Restore my code")
                .on_hover_text("Bring back the text from before the last reset / solution / open")
                .clicked()
        {
            cx.actions.push(Action::RestoreBeforeReplace);
        }
        if ui.button("Find").on_hover_text("Ctrl+F").clicked() {
            bar.find.open = !bar.find.open;
            bar.find.focus = bar.find.open;
        }
        let mut wrap = cx.prefs.wrap_code;
        if ui
            .checkbox(&mut wrap, "Wrap lines")
            .on_hover_text("Soft-wrap long lines; off: they scroll sideways")
            .changed()
        {
            cx.actions.push(Action::SetPref(PrefChange::WrapCode(wrap)));
        }
        let mut live = cx.prefs.live_figures;
        if ui
            .checkbox(&mut live, "Live figures")
            .on_hover_text("Count the sectors per line while you type (a Run still verifies every size)")
            .changed()
        {
            cx.actions.push(Action::SetPref(PrefChange::LiveFigures(live)));
        }
        ui.separator();
        ui.label(format!("{file_name} · line {cursor_line}"));
    });
}

fn find_bar(find: &mut FindState, text: &str, cursor_line: usize, ui: &mut Ui) -> Option<(u32, u32)> {
    let mut found = None;
    ui.horizontal(|ui| {
        let label = ui.label("Find:");
        let response = ui
            .add(egui::TextEdit::singleline(&mut find.query).desired_width(220.0))
            .labelled_by(label.id);
        if find.focus {
            response.request_focus();
            find.focus = false;
        }
        let enter = response.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if ui.button("Next").clicked() || enter {
            found = find_next(find, text, cursor_line);
            if enter {
                response.request_focus();
            }
        }
        if ui.button("Close").clicked() {
            find.open = false;
        }
        ui.label(&find.message);
    });
    found
}

/// The next occurrence of the query after the cursor's line, wrapping around: its line and
/// column (the find bar's message says which line, or that there is none).
fn find_next(find: &mut FindState, text: &str, cursor_line: usize) -> Option<(u32, u32)> {
    let query = find.query.clone();
    if query.is_empty() {
        return None;
    }
    let start_byte: usize = text.split_inclusive('\n').take(cursor_line).map(str::len).sum();
    let found = text[start_byte.min(text.len())..]
        .find(&query)
        .map(|i| i + start_byte)
        .or_else(|| text.find(&query));
    match found {
        Some(byte) => {
            let line = text[..byte].matches('\n').count() + 1;
            let column = byte - text[..byte].rfind('\n').map_or(0, |p| p + 1) + 1;
            find.message = format!("line {line}");
            Some((line as u32, column as u32))
        }
        None => {
            find.message = "not found".into();
            None
        }
    }
}

/// Asks before the solution replaces the learner's text.
fn solution_dialog(asking: &mut bool, cx: &ViewContext, ctx: &egui::Context) {
    let mut open = true;
    egui::Window::new("Show the solution?")
        .collapsible(false)
        .resizable(false)
        .open(&mut open)
        .show(ctx, |ui| {
            ui.label("This replaces the editor's text with the lesson's solution.");
            ui.label(
                "Your current text stays in the attempts history if you ran it, and Restore my code brings it back.",
            );
            ui.horizontal(|ui| {
                if ui.button("Show solution").clicked() {
                    cx.actions.push(Action::ShowSolution);
                    *asking = false;
                }
                if ui.button("Keep my code").clicked() {
                    *asking = false;
                }
            });
        });
    if !open {
        *asking = false;
    }
}
