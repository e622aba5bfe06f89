//! The results panel's Result tab (verdict, verification per size, findings linked to editor lines, printed
//! lines, sectors, gate, timing). The other tabs are the views in views.rs.

use super::action::Action;
use super::theme::palette;
use super::view::{View, ViewContext};
use crate::report::Verdict;
use crate::report::thousands;
use egui::{RichText, Ui};

/// The Result tab: the latest run's verdict, sizes, findings, printed lines, sectors, gate,
/// time and compiler.
#[derive(Default)]
pub struct ResultView;

impl View for ResultView {
    fn show(&mut self, cx: &ViewContext, ui: &mut Ui) {
        result(cx, ui);
    }
}

/// Lines where ptxas changed the global memory instructions: both counts, what it means,
/// a link to the line.
fn machine_code(cx: &ViewContext, ui: &mut Ui, p: &crate::report::SectorProfile) {
    let Some(code) = p.machine_code.as_ref().filter(|c| !c.lines.is_empty()) else {
        return;
    };
    ui.add_space(4.0);
    ui.label(RichText::new(format!("Machine code ({}) differs from the PTX", code.architecture)).strong());
    let mut jump = None;
    for line in &code.lines {
        ui.horizontal_wrapped(|ui| {
            if ui.link(format!("line {}", line.line)).clicked() {
                jump = Some(line.line);
            }
            let mut text = line.summary();
            if line.sectors_not_issued > 0 {
                text.push_str(&format!(", {} sectors left out", thousands(line.sectors_not_issued)));
            }
            ui.label(text);
        });
        ui.label(RichText::new(line.meaning()).small());
    }
    if let Some(line) = jump {
        cx.actions.push(Action::go_to(line));
    }
}

fn result(cx: &ViewContext, ui: &mut Ui) {
    let pal = palette(cx.prefs.theme);
    let Some(outcome) = cx.outcome else {
        ui.label("Press Run (Ctrl+Enter) to compile, verify every size and count the sectors.");
        return;
    };
    let report = &outcome.report;
    let colour = if report.verdict == Verdict::Pass {
        pal.pass
    } else {
        pal.fail
    };
    ui.label(RichText::new(report.verdict.label()).heading().strong().color(colour));
    ui.label(&report.headline);
    if let Some(b) = &report.backend {
        ui.label(RichText::new(format!("{:?}: {} · seed {}", b.kind, b.device, report.seed)).small());
        if b.display_watchdog {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                RichText::new(crate::report::WATCHDOG_NOTE).small(),
            );
        }
    }
    ui.add_space(6.0);

    if !report.sizes.is_empty() {
        ui.label(RichText::new("Verification").strong());
        egui::Grid::new("sizes_grid")
            .striped(true)
            .num_columns(5)
            .show(ui, |ui| {
                for h in ["n", "grid", "wrong", "unwritten", ""] {
                    ui.label(RichText::new(h).small());
                }
                ui.end_row();
                for s in &report.sizes {
                    ui.label(s.n.to_string());
                    ui.label(format!("{}x{}x{}", s.grid[0], s.grid[1], s.grid[2]));
                    ui.label(s.wrong.to_string());
                    ui.label(s.unwritten.to_string());
                    if s.passed() {
                        ui.colored_label(pal.pass, "ok");
                    } else {
                        ui.colored_label(pal.fail, "FAIL");
                    }
                    ui.end_row();
                }
            });
        for s in report.sizes.iter().filter(|s| !s.passed()) {
            for m in &s.first_mismatches {
                ui.label(RichText::new(format!("n={}: {m}", s.n)).small().monospace());
            }
        }
        ui.add_space(6.0);
    }

    if !report.findings.is_empty() || report.fault.is_some() {
        ui.label(RichText::new("Findings").strong());
        for f in &report.findings {
            ui.horizontal_wrapped(|ui| {
                if let Some(line) = f.at.line
                    && ui.link(format!("line {line}")).clicked()
                {
                    cx.actions.push(Action::go_to(line));
                }
                ui.label(format!("{} (seen {}x)", f.message, f.count));
            });
        }
        if let Some(fault) = &report.fault {
            ui.horizontal_wrapped(|ui| {
                if let Some(line) = fault.line()
                    && ui.link(format!("line {line}")).clicked()
                {
                    cx.actions.push(Action::go_to(line));
                }
                ui.colored_label(pal.fail, fault.message());
            });
        }
        ui.add_space(6.0);
    }

    if !report.unexecuted.is_empty() {
        // Beside the verdict, not in it: the GPU runs the optimised build.
        ui.label(RichText::new("In your source, though the optimised build never ran it").strong());
        for u in &report.unexecuted {
            ui.horizontal_wrapped(|ui| {
                if let Some(line) = u.at.line
                    && ui.link(format!("line {line}")).clicked()
                {
                    cx.actions.push(Action::go_to(line));
                }
                ui.colored_label(ui.visuals().warn_fg_color, &u.message);
            });
        }
        ui.add_space(6.0);
    }

    if !report.output.is_empty() {
        ui.label(RichText::new("Printed by the kernel").strong());
        // The first launch that printed starts open: that is what a learner who added a
        // printf is looking for; the others are one click away.
        for (index, o) in report.output.iter().enumerate() {
            let lines = o.total_lines();
            let plural = if lines == 1 { "" } else { "s" };
            egui::CollapsingHeader::new(format!("{} ({lines} line{plural})", o.launch))
                .id_salt(("printed", &o.launch))
                .default_open(index == 0)
                .show(ui, |ui| {
                    egui::ScrollArea::vertical()
                        .id_salt(("printed-scroll", &o.launch))
                        .max_height(160.0)
                        .show(ui, |ui| {
                            for line in &o.lines {
                                ui.label(RichText::new(line).small().monospace());
                            }
                        });
                    for note in [o.cut_note(), o.gate_note()].into_iter().flatten() {
                        ui.label(RichText::new(note).small().italics());
                    }
                });
        }
        ui.add_space(6.0);
    }

    if let Some(p) = &report.profile {
        ui.label(RichText::new("Global-memory sectors").strong());
        ui.label(
            RichText::new(format!("sectors: {}", thousands(p.sectors)))
                .size(18.0)
                .strong(),
        );
        ui.label(format!(
            "loads {} · stores {} · ideal {}",
            thousands(p.load_sectors),
            thousands(p.store_sectors),
            thousands(p.ideal_sectors)
        ));
        ui.label(format!(
            "{} launches at n={} · {:.1} active lanes per warp instruction",
            p.launches, p.n, p.average_active_lanes
        ));
        ui.label(RichText::new(&p.source).small());
        if let Some(bulk) = &p.bulk_copies {
            ui.colored_label(ui.visuals().warn_fg_color, bulk.note());
        }
        if let Some(why) = &p.counted_by_emulator_because {
            // The GPU checked and timed the kernel; only its counters were out of reach.
            ui.colored_label(
                ui.visuals().warn_fg_color,
                format!("Sectors counted by the emulator, not the GPU: {why}."),
            );
            ui.label(RichText::new(crate::backend::gpu::permission::HOW_TO_ALLOW).small());
        }
        if p.shared.requests > 0 {
            ui.label(format!(
                "shared memory: {} requests, {} bank-conflict wavefronts",
                thousands(p.shared.requests),
                thousands(p.shared.bank_conflicts)
            ));
        }
        machine_code(cx, ui, p);
    }
    if let Some(g) = &report.gate {
        ui.colored_label(if g.passed { pal.pass } else { pal.fail }, g.sentence());
    }
    if let Some(t) = &report.timing {
        ui.add_space(6.0);
        ui.label(RichText::new("Time (separate from the metric)").strong());
        ui.label(format!(
            "median {:.1} us per launch (min {:.1}, max {:.1}) over {} launches",
            t.median_us, t.min_us, t.max_us, t.launches
        ));
        let copy = t.copy_gbps.map(|c| format!(" of {c:.0} GB/s copy")).unwrap_or_default();
        ui.label(format!("effective bandwidth {:.0} GB/s{copy}", t.effective_gbps));
    }
    if let Some(c) = &report.compile {
        let stages: Vec<String> = report
            .stages
            .iter()
            .map(|s| format!("{} {:.0} ms", s.stage, s.millis))
            .collect();
        ui.label(RichText::new(format!("{} {} · {}", c.compiler, c.compiler_version, c.target)).small())
            .on_hover_text(stages.join("\n"));
    }
    ui.add_space(8.0);
    if ui.button("Export report (JSON)…").clicked() {
        cx.actions.push(Action::ExportReportDialog);
    }
}
