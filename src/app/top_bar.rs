//! The window's top bar (lesson title, theme, A+/A-) and the "show the solution?" dialog.
//! Both only return what the user asked for (`Action`s); `App::apply_actions` carries it out.

use super::action::Action;
use super::{App, state};

impl App {
    pub(super) fn top_bar(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            ui.heading("haloscope");
            ui.separator();
            let label = self
                .lesson()
                .map(|l| l.title.clone())
                .unwrap_or_else(|| "no lesson".into());
            ui.label(egui::RichText::new(label).strong());
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                let mut theme = self.saved.prefs.theme;
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
                if theme != self.saved.prefs.theme {
                    self.saved.prefs.theme = theme;
                    self.actions.push(Action::SavePrefs);
                }
                if ui.button("A+").on_hover_text("Larger (projector)").clicked() {
                    self.saved.prefs.zoom = (self.saved.prefs.zoom + 0.25).min(3.0);
                    self.actions.push(Action::SavePrefs);
                }
                if ui.button("A-").on_hover_text("Smaller").clicked() {
                    self.saved.prefs.zoom = (self.saved.prefs.zoom - 0.25).max(0.5);
                    self.actions.push(Action::SavePrefs);
                }
                ui.label(format!("{:.0}%", self.saved.prefs.zoom * 100.0));
                let present = if self.presenting { "Leave presenter (F5)" } else { "Present (F5)" };
                if ui
                    .selectable_label(self.presenting, present)
                    .on_hover_text("The results, diagram and heat map full-window and larger, for a projector (F5 or Esc to leave)")
                    .clicked()
                {
                    self.actions.push(Action::TogglePresenter);
                }
            });
        });
    }

    pub(super) fn solution_dialog(&mut self, ctx: &egui::Context) {
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
                        self.actions.push(Action::ShowSolution);
                    }
                    if ui.button("Keep my code").clicked() {
                        self.actions.push(Action::CloseSolutionDialog);
                    }
                });
            });
        if !open {
            self.actions.push(Action::CloseSolutionDialog);
        }
    }
}
