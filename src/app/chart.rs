//! The attempts chart (egui_plot): sectors of the starter, the solution and each attempt as
//! bars, the gate as a dashed line; time per launch beside it for GPU runs. Any attempt can be
//! restored into the editor; the chart can be saved as PNG.

use super::action::Action;
use super::theme::palette;
use super::view::{View, ViewContext};
use crate::report::Verdict;
use crate::report::thousands;
use egui::{RichText, Ui};
use egui_plot::{Bar, BarChart, HLine, Legend, LineStyle, Plot};

/// The chart's state: where it was drawn last (for "Save chart as PNG").
#[derive(Default)]
pub struct ChartView {
    rect: Option<egui::Rect>,
}

impl View for ChartView {
    fn show(&mut self, cx: &ViewContext, ui: &mut Ui) {
        show(self, cx, ui);
    }
}

fn show(view: &mut ChartView, cx: &ViewContext, ui: &mut Ui) {
    let Some(lesson) = cx.lesson else { return };
    let pal = palette(cx.prefs.theme);
    let progress = cx.lesson_progress().cloned().unwrap_or_default();
    let mut bars = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    for (name, value) in [
        ("starter", lesson.figures.starter_sectors),
        ("solution", lesson.figures.solution_sectors),
    ] {
        if let Some(v) = value {
            bars.push(Bar::new(labels.len() as f64, v as f64).name(name).fill(pal.corner));
            labels.push(name.to_string());
        }
    }
    let first_attempt = labels.len();
    let attempts: Vec<_> = progress
        .attempts
        .iter()
        .enumerate()
        .filter_map(|(i, a)| a.sectors.map(|s| (i, a, s)))
        .rev()
        .take(12)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    for (i, a, s) in &attempts {
        let colour = if a.verdict == Verdict::Pass { pal.pass } else { pal.fail };
        bars.push(
            Bar::new(labels.len() as f64, *s as f64)
                .name(format!("attempt {}", i + 1))
                .fill(colour),
        );
        labels.push(format!("#{}", i + 1));
    }
    ui.label(RichText::new("Sectors per attempt (100 launches)").strong());
    if bars.is_empty() {
        ui.label("No attempts yet: press Run.");
    }
    let gate = lesson.gate.below as f64;
    let axis_labels = labels.clone();
    let response = Plot::new("attempts_chart")
        .height(220.0)
        .legend(Legend::default())
        .allow_zoom(false)
        .allow_drag(false)
        .allow_scroll(false)
        .x_axis_formatter(move |mark, _| {
            axis_labels
                .get(mark.value.round() as usize)
                .filter(|_| (mark.value - mark.value.round()).abs() < 1e-6)
                .cloned()
                .unwrap_or_default()
        })
        .y_axis_label("sectors")
        .y_axis_formatter(|mark, _| crate::report::compact(mark.value.max(0.0) as u64))
        .show(ui, |plot| {
            plot.bar_chart(BarChart::new("sectors", bars).width(0.6));
            plot.hline(
                HLine::new(format!("gate {}", thousands(lesson.gate.below)), gate)
                    .style(LineStyle::dashed_loose())
                    .color(pal.text),
            );
        });
    view.rect = Some(response.response.rect);

    let timed: Vec<_> = attempts
        .iter()
        .filter_map(|(i, a, _)| a.median_us.map(|t| (*i, t)))
        .collect();
    if !timed.is_empty() {
        ui.label(RichText::new("Time per launch on the GPU (median, us)").strong());
        let bars: Vec<Bar> = timed
            .iter()
            .enumerate()
            .map(|(k, (i, t))| {
                Bar::new(k as f64, *t)
                    .name(format!("attempt {}", i + 1))
                    .fill(pal.owned)
            })
            .collect();
        Plot::new("time_chart")
            .height(140.0)
            .allow_zoom(false)
            .allow_drag(false)
            .allow_scroll(false)
            .show(ui, |plot| {
                plot.bar_chart(BarChart::new("time", bars).width(0.6));
            });
    }
    ui.horizontal(|ui| {
        if ui.button("Save chart as PNG").clicked() {
            export_png(view, cx, ui.ctx());
        }
    });
    ui.separator();
    ui.label(RichText::new("Attempts").strong());
    let mut restore = None;
    for (i, a) in progress.attempts.iter().enumerate().rev().take(20) {
        ui.horizontal(|ui| {
            let sectors = a.sectors.map(thousands).unwrap_or_else(|| "-".into());
            ui.label(format!("#{} {} · {sectors} sectors", i + 1, a.verdict.label()));
            if ui
                .small_button("Restore")
                .on_hover_text("Put this attempt's source in the editor")
                .clicked()
            {
                restore = Some(a.source.clone());
            }
        });
    }
    if let Some(source) = restore {
        cx.actions.push(Action::RestoreAttempt(source));
    }
    let _ = first_attempt;
}

/// Takes a screenshot and keeps the chart's rectangle, saved in the data directory's exports.
fn export_png(view: &ChartView, cx: &ViewContext, ctx: &egui::Context) {
    let (Some(rect), Some(lesson_id)) = (view.rect, cx.lesson.map(|l| &l.id)) else {
        return;
    };
    let path = cx
        .exports_dir
        .join(format!("{}-chart-{}.png", lesson_id, super::state::now_seconds()));
    let ppp = ctx.pixels_per_point();
    cx.actions
        .push(Action::Status(format!("saving the chart to {}", path.display())));
    ctx.request_screenshot(move |image| match super::save_png(&image, &path, Some((rect, ppp))) {
        Ok(()) => eprintln!("haloscope: chart saved to {}", path.display()),
        Err(e) => eprintln!("haloscope: cannot save the chart: {e}"),
    });
}
