//! The "PTX & SASS" tab: the PTX and SASS the compiler made of the editor's current line, each
//! memory instruction with its sectors from the last run, and the compiler's moves said on
//! the line (issue 32). Clicking an instruction filed under another line goes to that line;
//! moving the cursor to a line shows its instructions.

use super::action::Action;
use super::jobs::{Job, JobContext, Jobs};
use super::view::{View, ViewContext};
use crate::compile::listing::{Listed, Listing};
use crate::compile::{REFERENCE_SM, Target, compile_kernel};
use crate::report::{InstructionAt, InstructionSectors, SectorProfile, thousands};
use egui::{RichText, Ui};
use std::sync::Arc;

/// The listing of the last run's source, made in a thread of its own (NVRTC and nvdisasm).
#[derive(Default)]
pub struct MachineCodeView {
    run: Option<u64>,
    listing: Option<Result<Arc<Listing>, String>>,
    pending: Option<Job<Result<Listing, String>>>,
    /// List every line's instructions, not only the cursor's.
    pub all_lines: bool,
}

impl View for MachineCodeView {
    fn show(&mut self, cx: &ViewContext, ui: &mut Ui) {
        show(self, cx, ui);
    }

    fn lesson_changed(&mut self, _lesson: &Arc<crate::lesson::Lesson>) {
        let all_lines = self.all_lines;
        *self = MachineCodeView {
            all_lines,
            ..MachineCodeView::default()
        };
    }

    fn poll(&mut self) {
        if let Some(listing) = self.pending.as_ref().and_then(Job::poll) {
            self.listing = Some(listing.map(Arc::new));
            self.pending = None;
        }
    }

    fn busy(&self) -> bool {
        self.pending.is_some()
    }
}

impl MachineCodeView {
    /// Starts the listing of run `run`'s source, unless it is the one shown or being made.
    /// `executed`: the machine code the GPU ran, when it is not NVRTC's cubin (a printf
    /// kernel, compiled by the driver): the SASS listed is then that code.
    fn sync(
        &mut self,
        jobs: &Jobs,
        lesson: &Arc<crate::lesson::Lesson>,
        run: u64,
        source: &str,
        executed: Option<Arc<Vec<u8>>>,
        figures: Vec<InstructionSectors>,
    ) {
        if self.run == Some(run) {
            return;
        }
        self.run = Some(run);
        self.listing = None;
        let (lesson, source) = (lesson.clone(), source.to_string());
        // The same compile as the run's (sm_90 cubin): the same SASS offsets as CUPTI's.
        self.pending = Some(jobs.start("machine-code view", move |_: &JobContext<()>| {
            let target = Target::Cubin { sm: REFERENCE_SM };
            compile_kernel(&source, "kernel.cu", &lesson, target, None)
                .map(|k| {
                    Listing::new(&k.ptx, executed.as_deref().map(Vec::as_slice).or(k.cubin.as_deref()))
                        .place_unfiled(&figures)
                })
                .map_err(|f| f.headline())
        }));
    }
}

fn show(view: &mut MachineCodeView, cx: &ViewContext, ui: &mut Ui) {
    let Some(lesson) = cx.lesson else { return };
    let Some(outcome) = cx.outcome else {
        ui.label("Press Run: this tab then shows the PTX and SASS of the line the cursor is on, with each memory instruction's sectors.");
        return;
    };
    let (run, source) = (outcome.id, outcome.source.as_str());
    let no_profile = SectorProfile::default();
    let profile = outcome.report.profile.as_ref().unwrap_or(&no_profile);
    let figures = profile.per_instruction.clone();
    view.sync(cx.jobs, lesson, run, source, profile.executed_cubin.clone(), figures);
    let listing = match &view.listing {
        Some(Ok(listing)) => listing.clone(),
        Some(Err(why)) => {
            ui.label(format!("No listing: {why}"));
            return;
        }
        None => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("compiling and disassembling ...");
            });
            return;
        }
    };
    let moves = profile.moves.clone().unwrap_or_default();
    let cursor = cx.editor.cursor_line;
    let lines: Vec<&str> = source.lines().collect();
    ui.horizontal(|ui| {
        ui.label(RichText::new("PTX and SASS per source line").strong());
        ui.checkbox(&mut view.all_lines, "All lines");
    });
    if let Some(why) = &listing.sass_unavailable {
        ui.label(RichText::new(format!("No SASS: {why}")).weak());
    }
    if outcome.report.profile.is_some() && profile.per_instruction.is_empty() {
        ui.label(
            RichText::new(
                "This run has no sectors per instruction: a kernel that calls printf runs on the GPU as PTX the \
                 driver compiles, and the driver did not hand back that code. The editor's margin has its sectors per line.",
            )
            .weak(),
        );
    }
    if profile.executed_cubin.is_some() {
        ui.label(
            RichText::new(
                "The SASS below is what the GPU ran: the kernel calls printf, so it ran as PTX with each printf \
                 behind a per-block gate, compiled by the driver (the gate's own loads and branches are in it).",
            )
            .weak(),
        );
    }
    ui.label(
        RichText::new("* a global memory instruction, with its sectors from the last run. Click an instruction to go to its line.")
            .small()
            .weak(),
    );
    let mut go_to = None;
    egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
        let shown: Vec<u32> = if view.all_lines {
            (0..=lines.len() as u32)
                .filter(|&l| {
                    let (p, s) = listing.of_lines(l..=l);
                    !p.is_empty() || !s.is_empty()
                })
                .collect()
        } else {
            vec![cursor]
        };
        for line in shown {
            let text = lines.get((line as usize).wrapping_sub(1)).copied().unwrap_or("");
            let title = if line == 0 {
                "No source line: code the compiler made".to_string()
            } else {
                format!("Line {line}: {}", text.trim())
            };
            ui.label(RichText::new(title).monospace().strong());
            for m in moves.on_line(line) {
                ui.label(RichText::new(format!("compiler: {}", m.text)).color(ui.visuals().warn_fg_color));
                // The instructions that make this line's access elsewhere, to jump to.
                for item in listing.ptx.iter().chain(&listing.sass) {
                    if m.ptx_lines.contains(&item.ptx_line) && item.global && item.line != line {
                        go_to = go_to.or(instruction_row(ui, item, &listing, &profile.per_instruction));
                    }
                }
            }
            let (ptx, sass) = listing.of_lines(line..=line);
            if ptx.is_empty() && sass.is_empty() {
                ui.label("No instruction is filed under this line.");
            }
            for (kind, items) in [("PTX", ptx), ("SASS", sass)] {
                if items.is_empty() {
                    continue;
                }
                ui.label(RichText::new(kind).small().strong());
                for item in items {
                    go_to = go_to.or(instruction_row(ui, item, &listing, &profile.per_instruction));
                }
            }
            ui.separator();
        }
    });
    if let Some(line) = go_to.filter(|&l| l > 0) {
        cx.actions.push(Action::go_to(line));
    }
}

/// One instruction; returns its line when clicked.
fn instruction_row(ui: &mut Ui, item: &Listed, listing: &Listing, figures: &[InstructionSectors]) -> Option<u32> {
    let place = match item.at {
        InstructionAt::PtxLine(p) => format!("PTX {p:>4}"),
        InstructionAt::SassOffset(o) => format!("{o:#06x}"),
    };
    let sectors = listing
        .sectors(item, figures)
        .map(|s| format!("   {} sectors", thousands(s)))
        .unwrap_or_default();
    let mark = if item.global { "*" } else { " " };
    let line = if item.line == 0 {
        "no line".to_string()
    } else {
        format!("line {}", item.line)
    };
    let text = format!("{place} {mark} {}{sectors}  ({line})", item.text.replace('\t', " "));
    let label = RichText::new(text).monospace();
    let label = if item.global { label.strong() } else { label };
    ui.add(egui::Label::new(label).sense(egui::Sense::click()))
        .on_hover_text(format!("filed under {line}; click to go there"))
        .clicked()
        .then_some(item.line)
}
