//! The results panel's head: the backend picker, Run / Cancel with the run's live progress,
//! and the row of tabs (`tabs::TABS`).

use super::action::{Action, PrefChange};
use super::tabs::{TABS, TabSpec, find_tab};
use super::view::ViewContext;
use crate::backend::BackendChoice;
use egui::Ui;

/// The results panel's head: backend picker, Run / Cancel, the run's progress and the tabs.
/// Returns the tab to show.
pub(super) fn head(cx: &ViewContext, ui: &mut Ui) -> &'static TabSpec {
    ui.horizontal(|ui| {
        let backend_label = ui.label("Backend");
        let mut choice = cx.prefs.backend;
        let gpu_label = if cx.gpu_available {
            "GPU".to_string()
        } else {
            "GPU (none found)".to_string()
        };
        egui::ComboBox::from_id_salt("backend")
            .selected_text(backend_name(choice, cx.gpu_available))
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut choice, BackendChoice::Auto, "Auto (GPU if present)");
                ui.selectable_value(&mut choice, BackendChoice::Emu, "Emulator");
                ui.add_enabled_ui(cx.gpu_available, |ui| {
                    ui.selectable_value(&mut choice, BackendChoice::Gpu, gpu_label);
                });
            })
            .response
            .labelled_by(backend_label.id);
        if choice != cx.prefs.backend {
            cx.actions.push(Action::SetPref(PrefChange::Backend(choice)));
        }
        let running = cx.running();
        if ui.add_enabled(!running, egui::Button::new("Run")).clicked() {
            cx.actions.push(Action::Run);
        }
        if ui.add_enabled(running, egui::Button::new("Cancel")).clicked() {
            cx.actions.push(Action::CancelRun);
        }
    });
    if let Some(p) = &cx.run_progress {
        ui.add(egui::ProgressBar::new(p.fraction()).text(p.describe()).animate(true));
    }
    ui.separator();
    let shown = find_tab(&cx.prefs.result_tab).unwrap_or(&TABS[0]);
    let mut picked = shown;
    ui.horizontal(|ui| {
        for tab in TABS {
            let label = ui.selectable_label(std::ptr::eq(tab, picked), tab.title);
            let label = match tab.hover {
                Some(hover) => label.on_hover_text(hover),
                None => label,
            };
            if label.clicked() {
                picked = tab;
            }
        }
    });
    // A click on the tab shown also saves its id (the preference may be empty: the first).
    if picked.id != cx.prefs.result_tab {
        cx.actions.push(Action::SetPref(PrefChange::ResultTab(picked.id)));
    }
    picked
}

fn backend_name(choice: BackendChoice, gpu: bool) -> &'static str {
    match (choice, gpu) {
        (BackendChoice::Auto, true) => "Auto (GPU)",
        (BackendChoice::Auto, false) => "Auto (emulator)",
        (BackendChoice::Emu, _) => "Emulator",
        (BackendChoice::Gpu, _) => "GPU",
    }
}
