//! The editor's toolbar (Run, Cancel, Open, Save, Reset, Solution, Find) and its find bar.
//! Buttons push `Action`s; the find bar moves the cursor itself (it is the editor's own state).

use super::App;
use super::action::Action;
use egui::{RichText, Ui};

pub(super) fn toolbar(app: &mut App, ui: &mut Ui) {
    ui.horizontal_wrapped(|ui| {
        let running = app.is_running();
        if ui
            .add_enabled(!running, egui::Button::new(RichText::new("Run (Ctrl+Enter)").strong()))
            .on_hover_text("Compile, verify every size and profile (Ctrl+Enter)")
            .clicked()
        {
            app.actions.push(Action::Run);
        }
        if ui.add_enabled(running, egui::Button::new("Cancel")).clicked() {
            app.actions.push(Action::CancelRun);
        }
        ui.separator();
        if ui.button("Open…").clicked() {
            app.actions.push(Action::OpenFileDialog);
        }
        if ui
            .button("Save")
            .on_hover_text("Save to the opened file, or choose one (Ctrl+S); drafts are autosaved anyway")
            .clicked()
        {
            app.actions.push(Action::SaveFile { as_new: false });
        }
        if ui.button("Save as…").clicked() {
            app.actions.push(Action::SaveFile { as_new: true });
        }
        if ui
            .button("Open grading table…")
            .on_hover_text("A class's grades.json from `haloscope grade`: walk through the answers")
            .clicked()
        {
            app.actions.push(Action::OpenGradesDialog);
        }
        ui.separator();
        if ui.button("Reset to starter").clicked() {
            app.actions.push(Action::ResetToStarter);
        }
        if ui.button("Show solution…").clicked() {
            app.actions.push(Action::AskForSolution);
        }
        if app.editor.before_replace.is_some()
            && ui
                .button("Restore my code")
                .on_hover_text("Bring back the text from before the last reset / solution / open")
                .clicked()
        {
            app.actions.push(Action::RestoreBeforeReplace);
        }
        if ui.button("Find").on_hover_text("Ctrl+F").clicked() {
            app.actions.push(Action::ToggleFind);
        }
        if ui
            .checkbox(&mut app.saved.prefs.wrap_code, "Wrap lines")
            .on_hover_text("Soft-wrap long lines; off: they scroll sideways")
            .changed()
        {
            app.actions.push(Action::SavePrefs);
        }
        ui.separator();
        ui.label(format!("{} · line {}", app.editor.file_name(), app.editor.cursor_line));
    });
}

pub(super) fn find_bar(app: &mut App, ui: &mut Ui) {
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
