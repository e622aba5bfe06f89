//! The Compare tab: two attempts (or an attempt and the starter, the solution or the
//! editor's text) side by side, each line with the sectors it issued in its own emulator
//! run, the difference per line, and both totals and verdicts. The runs happen on a thread
//! of their own and are kept by source, so flipping between pairs is immediate.

use super::jobs::{Job, JobContext, Jobs};
use super::theme::palette;
use super::view::{View, ViewContext};
use crate::backend::BackendChoice;
use crate::backend_policy::{Backends, GpuProbe};
use crate::lesson::Lesson;
use crate::pipeline::RunRequest;
use crate::report::{RunReport, thousands};
use crate::trace::side_by_side::{align, sectors_per_line};
use egui::{RichText, Ui};
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Starter,
    Solution,
    Editor,
    /// Attempt `i` of the lesson's history (0 = the first).
    Attempt(usize),
}

pub struct CompareState {
    pub left: Side,
    pub right: Side,
    /// Reports by source text.
    reports: HashMap<String, RunReport>,
    /// The lesson's starter and solution texts, read once (the view draws every frame).
    files: HashMap<std::path::PathBuf, Option<String>>,
    job: Option<Job<Vec<(String, RunReport)>>>,
    /// The learner cancelled the runs: none starts again until they ask.
    cancelled: bool,
}

impl Default for CompareState {
    fn default() -> CompareState {
        CompareState {
            left: Side::Starter,
            right: Side::Editor,
            reports: HashMap::new(),
            files: HashMap::new(),
            job: None,
            cancelled: false,
        }
    }
}

impl View for CompareState {
    fn show(&mut self, cx: &ViewContext, ui: &mut Ui) {
        show(self, cx, ui);
    }

    fn lesson_changed(&mut self, _lesson: &Arc<Lesson>) {
        *self = CompareState::default();
    }

    /// Takes finished runs off their thread.
    fn poll(&mut self) {
        let Some(job) = &self.job else { return };
        if let Some(done) = job.poll() {
            // Cancelled (here or by "Stop all"): nothing starts again until asked.
            self.cancelled |= job.is_cancelled();
            // A run cut short by Cancel says nothing about its source: not kept.
            let finished = done
                .into_iter()
                .filter(|(_, r)| !matches!(r.fault, Some(crate::backend::KernelFault::Cancelled)));
            self.reports.extend(finished);
            self.job = None;
        }
    }

    fn busy(&self) -> bool {
        self.job.is_some()
    }
}

impl CompareState {
    fn start(&mut self, jobs: &Jobs, lesson: Arc<Lesson>, sources: Vec<(String, String)>) {
        // A job started before is dropped here, which cancels it.
        let work = move |cx: &JobContext<()>| {
            let cancel = &cx.cancel;
            let mut backends = Backends::new(GpuProbe::Hidden);
            sources
                .into_iter()
                .take_while(|_| !cancel.is_cancelled())
                .map(|(source, name)| {
                    let request = RunRequest {
                        source: source.clone(),
                        source_name: name,
                        kernel_file: "<compare>".into(),
                        seed: Some(1),
                        nvrtc_path: None,
                    };
                    let report = backends
                        .run(&lesson, &request, BackendChoice::Emu, false, &mut |_| {}, cancel)
                        .report;
                    (source, report)
                })
                .collect()
        };
        self.job = Some(jobs.start("compare", work));
    }
}

/// The text of one side, and the file name it compiles under.
fn source_of(
    cx: &ViewContext,
    files: &mut HashMap<std::path::PathBuf, Option<String>>,
    side: Side,
) -> Option<(String, String)> {
    let (starter, solution) = cx.kernels.as_ref()?;
    let mut file = |path: &std::path::Path| {
        let name = path.file_name()?.to_string_lossy().into_owned();
        let text = files
            .entry(path.to_path_buf())
            .or_insert_with(|| std::fs::read_to_string(path).ok())
            .clone()?;
        Some((text, name))
    };
    match side {
        Side::Starter => file(starter),
        Side::Solution => file(solution),
        Side::Editor => Some((cx.editor.text.to_string(), cx.editor.file_name.clone())),
        Side::Attempt(i) => cx
            .lesson_progress()
            .and_then(|p| p.attempts.get(i))
            .map(|a| (a.source.clone(), cx.editor.file_name.clone())),
    }
}

fn side_name(cx: &ViewContext, side: Side) -> String {
    match side {
        Side::Starter => "starter".into(),
        Side::Solution => "solution".into(),
        Side::Editor => "editor (now)".into(),
        Side::Attempt(i) => {
            let attempt = cx.lesson_progress().and_then(|p| p.attempts.get(i));
            match attempt {
                Some(a) => format!(
                    "attempt {} ({}, {})",
                    i + 1,
                    a.verdict.label(),
                    a.sectors.map_or("no sectors".into(), crate::report::compact)
                ),
                None => format!("attempt {}", i + 1),
            }
        }
    }
}

fn picker(cx: &ViewContext, ui: &mut Ui, label: &str, side: &mut Side) {
    let attempts = cx.lesson_progress().map_or(0, |p| p.attempts.len());
    let text = ui.label(label);
    egui::ComboBox::from_id_salt(format!("compare {label}"))
        .selected_text(side_name(cx, *side))
        .width(220.0)
        .show_ui(ui, |ui| {
            for choice in [Side::Starter, Side::Solution, Side::Editor] {
                ui.selectable_value(side, choice, side_name(cx, choice));
            }
            for i in (0..attempts).rev() {
                ui.selectable_value(side, Side::Attempt(i), side_name(cx, Side::Attempt(i)));
            }
        })
        .response
        .labelled_by(text.id);
}

fn show(state: &mut CompareState, cx: &ViewContext, ui: &mut Ui) {
    let Some(lesson) = cx.lesson else { return };
    let pal = palette(cx.prefs.theme);
    ui.horizontal_wrapped(|ui| {
        picker(cx, ui, "left", &mut state.left);
        picker(cx, ui, "right", &mut state.right);
    });
    let sides = [
        source_of(cx, &mut state.files, state.left),
        source_of(cx, &mut state.files, state.right),
    ];
    let [Some(l), Some(r)] = sides else {
        ui.label("One of the two sources cannot be read.");
        return;
    };
    let missing: Vec<(String, String)> = [&l, &r]
        .into_iter()
        .filter(|(source, _)| !state.reports.contains_key(source))
        .cloned()
        .collect();
    // A cancelled comparison stays cancelled until the learner asks again.
    let cancelled = state.job.as_ref().is_some_and(|j| j.is_cancelled()) || state.cancelled;
    if !missing.is_empty() && state.job.is_none() && !cancelled {
        let mut unique = missing;
        unique.dedup_by(|a, b| a.0 == b.0);
        state.start(cx.jobs, lesson.clone(), unique);
    }
    let (Some(lr), Some(rr)) = (state.reports.get(&l.0), state.reports.get(&r.0)) else {
        ui.horizontal(|ui| {
            if cancelled {
                ui.label("cancelled");
                if ui.button("Run both").clicked() {
                    state.cancelled = false;
                }
            } else {
                ui.spinner();
                ui.label("running both on the emulator…");
                if ui.button("Cancel comparison").clicked()
                    && let Some(job) = &state.job
                {
                    // `poll` keeps it cancelled once the job hands back what it has.
                    job.cancel();
                }
            }
        });
        return;
    };
    let total = |r: &RunReport| r.profile.as_ref().map_or(0, |p| p.sectors);
    let verdict = |r: &RunReport| {
        let colour = if r.verdict == crate::report::Verdict::Pass {
            pal.pass
        } else {
            pal.fail
        };
        RichText::new(r.verdict.label()).color(colour).strong()
    };
    egui::Grid::new("compare totals").num_columns(3).show(ui, |ui| {
        ui.label("");
        ui.label(RichText::new("left").strong());
        ui.label(RichText::new("right").strong());
        ui.end_row();
        ui.label("verdict");
        ui.label(verdict(lr));
        ui.label(verdict(rr));
        ui.end_row();
        ui.label("sectors");
        ui.label(thousands(total(lr)));
        ui.label(thousands(total(rr)));
        ui.end_row();
    });
    let delta = total(rr) as i128 - total(lr) as i128;
    ui.label(format!("right minus left: {} sectors", signed(delta)));
    ui.separator();
    let rows = align(&l.0, &sectors_per_line(lr), &r.0, &sectors_per_line(rr));
    unified(ui, &rows, &pal);
}

/// The aligned lines as a unified diff (one text column, so it fits a narrow panel and a
/// projector): left and right line numbers and sectors, the difference, then the line;
/// lines only on the left are marked `-`, only on the right `+`.
fn unified(ui: &mut Ui, rows: &[crate::trace::side_by_side::Row], pal: &super::theme::Palette) {
    let cell = |ui: &mut Ui, text: RichText| {
        ui.add(egui::Label::new(text).wrap_mode(egui::TextWrapMode::Extend));
    };
    let mono = |t: &str| RichText::new(t).monospace().size(11.0);
    let figure = |side: &Option<(u32, String, u64)>| match side {
        Some((_, _, s)) if *s > 0 => crate::report::compact(*s),
        _ => String::new(),
    };
    let number = |side: &Option<(u32, String, u64)>| side.as_ref().map_or(String::new(), |s| s.0.to_string());
    egui::ScrollArea::horizontal().id_salt("compare rows").show(ui, |ui| {
        egui::Grid::new("compare lines")
            .num_columns(6)
            .spacing([8.0, 1.0])
            .striped(true)
            .show(ui, |ui| {
                for h in ["left #", "sectors", "right #", "sectors", "difference", "line"] {
                    cell(ui, RichText::new(h).small().strong());
                }
                ui.end_row();
                for row in rows {
                    cell(ui, mono(&number(&row.left)).weak());
                    cell(ui, mono(&figure(&row.left)));
                    cell(ui, mono(&number(&row.right)).weak());
                    cell(ui, mono(&figure(&row.right)));
                    let d = row.delta();
                    let colour = if d > 0 { pal.fail } else { pal.pass };
                    cell(
                        ui,
                        if d == 0 {
                            mono("")
                        } else {
                            mono(&signed(d)).color(colour)
                        },
                    );
                    let text = match (&row.left, &row.right) {
                        (Some(_), Some(r)) => mono(&format!("  {}", r.1)),
                        (Some(l), None) => mono(&format!("- {}", l.1)).color(pal.fail),
                        (None, Some(r)) => mono(&format!("+ {}", r.1)).color(pal.pass),
                        (None, None) => mono(""),
                    };
                    cell(ui, text);
                    ui.end_row();
                }
            });
    });
}

fn signed(v: i128) -> String {
    let magnitude = thousands(v.unsigned_abs() as u64);
    match v {
        0 => "0".into(),
        v if v > 0 => format!("+{magnitude}"),
        _ => format!("-{magnitude}"),
    }
}
