//! The lesson panel: the course with the learner's progress, then the lesson's text, its
//! contract at a glance, step-by-step hints and what it teaches.

use super::action::{Action, PrefChange};
use super::highlight::Highlighter;
use super::state::LessonTab;
use super::view::{View, ViewContext};
use crate::lesson::Lesson;
use crate::report::thousands;
use egui::{RichText, Ui};
use std::collections::HashMap;

/// The lesson panel and what it keeps to draw the lesson text quickly.
pub struct LessonPanel {
    markdown: egui_commonmark::CommonMarkCache,
    highlighter: Highlighter,
    /// Highlighted code blocks of lesson texts, by their text (cleared with the theme).
    code_jobs: HashMap<String, egui::text::LayoutJob>,
    /// The theme the code blocks were highlighted for.
    dark: bool,
}

impl LessonPanel {
    pub fn new(dark: bool) -> LessonPanel {
        LessonPanel {
            markdown: Default::default(),
            highlighter: Highlighter::new(dark),
            code_jobs: HashMap::new(),
            dark,
        }
    }
}

impl View for LessonPanel {
    fn show(&mut self, cx: &ViewContext, ui: &mut Ui) {
        if cx.dark() != self.dark {
            self.dark = cx.dark();
            self.highlighter.set_dark(self.dark);
            self.code_jobs.clear();
        }
        show(self, cx, ui);
    }
}

fn show(panel: &mut LessonPanel, cx: &ViewContext, ui: &mut Ui) {
    ui.heading("Lessons");
    for lesson in &cx.course.lessons {
        let progress = cx.progress.get(&lesson.id);
        let mark = if progress.is_some_and(|p| p.passed) {
            "[passed] "
        } else {
            ""
        };
        let best = progress
            .and_then(|p| p.best_sectors)
            .map(|s| format!("  (best {})", crate::report::compact(s)))
            .unwrap_or_default();
        let selected = cx.lesson.is_some_and(|open| open.id == lesson.id);
        if ui
            .selectable_label(selected, format!("{mark}{}{best}", lesson.title))
            .clicked()
            && !selected
        {
            cx.actions.push(Action::OpenLesson(lesson.id.clone()));
        }
    }
    for broken in &cx.course.broken {
        ui.colored_label(
            egui::Color32::from_rgb(0xE0, 0x40, 0x40),
            format!("broken lesson: {broken}"),
        );
    }
    ui.separator();
    language_switch(cx, ui);
    let mut tab = cx.prefs.lesson_tab;
    ui.horizontal(|ui| {
        ui.selectable_value(&mut tab, LessonTab::Text, "Lesson");
        ui.selectable_value(&mut tab, LessonTab::Contract, "Contract");
        ui.selectable_value(&mut tab, LessonTab::Hints, "Hints");
        ui.selectable_value(&mut tab, LessonTab::Learn, "You will learn");
    });
    if tab != cx.prefs.lesson_tab {
        cx.actions.push(Action::SetPref(PrefChange::LessonTab(tab)));
    }
    let Some(lesson) = cx.lesson else {
        ui.label("No lesson found: start haloscope from its checkout, or pass --lessons DIR.");
        return;
    };
    egui::ScrollArea::vertical()
        .id_salt("lesson_scroll")
        .auto_shrink([false, false])
        .show(ui, |ui| match tab {
            LessonTab::Text => lesson_text(panel, ui, &lesson.text),
            LessonTab::Contract => contract(ui, lesson),
            LessonTab::Hints => hints(cx, ui, lesson),
            LessonTab::Learn => {
                for item in &lesson.learn {
                    ui.label(format!("• {item}"));
                }
            }
        });
}

fn contract(ui: &mut Ui, lesson: &Lesson) {
    egui::Grid::new("contract_grid")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            let mut row = |k: &str, v: String| {
                ui.label(RichText::new(k).strong());
                ui.label(v);
                ui.end_row();
            };
            row("kernel", format!("extern \"C\" __global__ void {}", lesson.signature()));
            row(
                "block",
                format!(
                    "{} x {} x {} (pinned)",
                    lesson.block[0], lesson.block[1], lesson.block[2]
                ),
            );
            row("grid", lesson.grid.to_string());
            row("dynamic shared", format!("{} bytes", lesson.dynamic_shared_bytes));
            let sizes: Vec<String> = lesson.verify_sizes.iter().map(|n| n.to_string()).collect();
            row("verified at n =", sizes.join(", "));
            row(
                "profile",
                format!("n = {}, {} launches", lesson.profile_size, lesson.profile_launches),
            );
            row(
                "gate",
                format!("{} < {}", lesson.gate.metric, thousands(lesson.gate.below)),
            );
        });
    ui.add_space(8.0);
    ui.label(
        "The metric counts the 32-byte sectors that global loads and stores request, summed over every launch. \
         It is blind to caches: not DRAM bytes, and not time.",
    );
}

fn hints(cx: &ViewContext, ui: &mut Ui, lesson: &Lesson) {
    let shown = cx
        .prefs
        .hints_shown
        .get(&lesson.id)
        .copied()
        .unwrap_or(0)
        .min(lesson.hints.len());
    for (i, hint) in lesson.hints.iter().take(shown).enumerate() {
        ui.label(format!("{}. {hint}", i + 1));
        ui.add_space(4.0);
    }
    if shown < lesson.hints.len() {
        if ui
            .button(format!("Show hint {} of {}", shown + 1, lesson.hints.len()))
            .clicked()
        {
            cx.actions.push(Action::SetPref(PrefChange::HintsShown {
                lesson: lesson.id.clone(),
                count: shown + 1,
            }));
        }
    } else if lesson.hints.is_empty() {
        ui.label("This lesson has no hints.");
    } else {
        ui.label("That was the last hint.");
    }
}

/// Markdown through egui_commonmark, except fenced code blocks, which are shown with the
/// editor's CUDA highlighting (and without a copy button whose icon egui's fonts lack).
fn lesson_text(panel: &mut LessonPanel, ui: &mut Ui, text: &str) {
    for (is_code, part) in split_fences(text) {
        if is_code {
            let font = egui::FontId::monospace(12.5);
            let job = match panel.code_jobs.get(&part) {
                Some(job) => job.clone(),
                None => {
                    let job = panel.highlighter.layout(&part, font);
                    panel.code_jobs.insert(part.clone(), job.clone());
                    job
                }
            };
            egui::Frame::group(ui.style()).show(ui, |ui| {
                ui.set_width(ui.available_width());
                ui.label(job);
            });
        } else if !part.trim().is_empty() {
            egui_commonmark::CommonMarkViewer::new().show(ui, &mut panel.markdown, &part);
        }
    }
}

/// Splits Markdown into (is_code, text) runs at ``` fences.
pub fn split_fences(text: &str) -> Vec<(bool, String)> {
    let mut parts = vec![(false, String::new())];
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            let in_code = parts.last().is_some_and(|p| p.0);
            parts.push((!in_code, String::new()));
            continue;
        }
        parts.last_mut().expect("one part").1.push_str(line);
    }
    parts.retain(|p| !p.1.is_empty());
    parts
}

/// CUDA C++ or Rust; Rust is offered when the lesson has Rust kernels and rustc can build them.
fn language_switch(cx: &ViewContext, ui: &mut Ui) {
    use crate::lesson::Language;
    let has_rust = cx.lesson.is_some_and(|l| l.kernels_for(Language::Rust).is_some());
    let toolchain = crate::compile::rust_toolchain();
    ui.horizontal(|ui| {
        ui.label("Kernel language");
        let mut language = cx.prefs.language;
        ui.selectable_value(&mut language, Language::Cuda, "CUDA C++");
        let why = match (&toolchain, has_rust) {
            (_, false) => Some("This lesson has no Rust kernels.".to_string()),
            (Err(e), _) => Some(e.clone()),
            (Ok(_), true) => None,
        };
        let rust = ui.add_enabled(
            why.is_none(),
            egui::Button::selectable(language == Language::Rust, "Rust"),
        );
        let rust = match &why {
            Some(reason) => rust.on_disabled_hover_text(reason),
            None => rust.on_hover_text(
                "Rust compiled to PTX by your rustc (nvptx64-nvidia-cuda), with haloscope's kernel prelude",
            ),
        };
        if rust.clicked() {
            language = Language::Rust;
        }
        if language != cx.prefs.language {
            cx.actions.push(Action::SetLanguage(language));
        }
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn fences_split_code_from_prose() {
        let parts = super::split_fences("a\n```cuda\nx = 1;\n```\nb\n");
        assert_eq!(
            parts,
            vec![(false, "a\n".into()), (true, "x = 1;\n".into()), (false, "b\n".into())]
        );
    }
}
