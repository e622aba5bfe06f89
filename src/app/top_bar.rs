//! The window's top bar (lesson title, theme, A+/A-, presenter mode) and the status bar at
//! the bottom (NVRTC being set up, work in flight with "Stop all", the status line). Both
//! only draw from the context and push `Action`s; neither has state of its own.

use super::action::{Action, PrefChange};
use super::state::Theme;
use super::view::{View, ViewContext};
use egui::{RichText, Ui};

/// How much A+ and A- change the zoom.
const ZOOM_STEP: f32 = 0.25;

#[derive(Default)]
pub struct TopBar;

impl View for TopBar {
    fn show(&mut self, cx: &ViewContext, ui: &mut Ui) {
        ui.horizontal(|ui| {
            ui.heading("haloscope");
            ui.separator();
            let label = cx.lesson.map_or("no lesson", |l| l.title.as_str());
            ui.label(RichText::new(label).strong());
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                let mut theme = cx.prefs.theme;
                let theme_label = ui.label("Theme");
                egui::ComboBox::from_id_salt("theme")
                    .selected_text(format!("{theme:?}"))
                    .show_ui(ui, |ui| {
                        ui.selectable_value(&mut theme, Theme::Dark, "Dark");
                        ui.selectable_value(&mut theme, Theme::Light, "Light");
                        ui.selectable_value(&mut theme, Theme::Projector, "Projector (high contrast)");
                    })
                    .response
                    .labelled_by(theme_label.id);
                if theme != cx.prefs.theme {
                    cx.actions.push(Action::SetPref(PrefChange::Theme(theme)));
                }
                let zoom = cx.prefs.zoom;
                if ui.button("A+").on_hover_text("Larger (projector)").clicked() {
                    cx.actions.push(Action::SetPref(PrefChange::Zoom(zoom + ZOOM_STEP)));
                }
                if ui.button("A-").on_hover_text("Smaller").clicked() {
                    cx.actions.push(Action::SetPref(PrefChange::Zoom(zoom - ZOOM_STEP)));
                }
                ui.label(format!("{:.0}%", zoom * 100.0));
                let present = if cx.presenting { "Leave presenter (F5)" } else { "Present (F5)" };
                if ui
                    .selectable_label(cx.presenting, present)
                    .on_hover_text("The results, diagram and heat map full-window and larger, for a projector (F5 or Esc to leave)")
                    .clicked()
                {
                    cx.actions.push(Action::TogglePresenter);
                }
            });
        });
    }
}

#[derive(Default)]
pub struct StatusBar;

impl View for StatusBar {
    fn show(&mut self, cx: &ViewContext, ui: &mut Ui) {
        ui.horizontal(|ui| {
            // NVRTC being set up on first use (or why it could not be) stays in view.
            if let Some((line, fraction)) = crate::cuda_setup::background::status_line() {
                if let Some(f) = fraction {
                    ui.add(egui::ProgressBar::new(f).desired_width(160.0).show_percentage());
                }
                ui.label(RichText::new(line).small()).on_hover_text(
                    "haloscope fetches NVRTC (the CUDA compiler) from PyPI the first time it \
                     starts on a machine without one, into its data folder",
                );
                ui.separator();
            }
            // Work in flight, with one button that stops all of it.
            let running = cx.jobs.running();
            if !running.is_empty() {
                ui.spinner();
                ui.label(RichText::new(format!("working: {}", running.join(", "))).small());
                if ui
                    .small_button("Stop all")
                    .on_hover_text("Cancel every background job (runs, heat map, comparison)")
                    .clicked()
                {
                    cx.actions.push(Action::CancelAllJobs);
                }
                ui.separator();
            }
            ui.label(RichText::new(cx.status).small());
        });
    }
}
