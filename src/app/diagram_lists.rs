//! Beside the diagram: the list of the picked output's reads (each with where it was served
//! from and a link to its line) and the sector view of one warp; the colours, letters and
//! words for read sources that the diagram uses too.

use super::action::Action;
use super::theme::Palette;
use super::view::ViewContext;
use crate::trace::reads::{OutputReads, ReadSource};
use egui::{Align2, Color32, FontId, Pos2, Rect, RichText, Sense, Ui, Vec2};

pub(super) fn read_list(ui: &mut Ui, cx: &ViewContext, t: [u32; 3], reads: Option<&OutputReads>, pal: &Palette) {
    let Some(lesson) = cx.lesson else { return };
    let Some(reads) = reads else {
        let hint = if cx.outcome.is_some() {
            "No interior output of this thread was traced (did the kernel store it?)."
        } else {
            "Run the kernel to see where each read of this output is served from."
        };
        ui.label(format!("Picked thread ({}, {}, {}). {hint}", t[0], t[1], t[2]));
        return;
    };
    let o = reads.output;
    let at = match lesson.stencil.dims {
        1 => format!("({})", o[0]),
        2 => format!("({}, {})", o[0], o[1]),
        _ => format!("({}, {}, {})", o[0], o[1], o[2]),
    };
    ui.label(
        RichText::new(format!(
            "Output {at}, thread ({}, {}, {}): its {} reads",
            t[0],
            t[1],
            t[2],
            reads.reads.len()
        ))
        .strong(),
    );
    let mut jump = None;
    for read in &reads.reads {
        ui.horizontal(|ui| {
            ui.colored_label(
                source_colour(pal, read.source),
                format!("{:<7} from {}", read.neighbour.name(), describe(read.source)),
            );
            if read.line > 0 && ui.link(format!("line {}", read.line)).clicked() {
                jump = Some(read.line);
            }
        });
    }
    if let Some(line) = jump {
        cx.actions.push(Action::go_to(line));
    }
    if !reads.staged.is_empty() {
        ui.label(
            RichText::new(format!(
                "This thread also staged {} cell(s) for its block in the same step.",
                reads.staged.len()
            ))
            .small(),
        );
    }
    let global = reads.reads.iter().filter(|r| r.source == ReadSource::Global).count();
    ui.label(RichText::new(format!("{global} of {} reads go to global memory.", reads.reads.len())).small());
}

/// One warp's sectors: an owned row, a halo row, and a side column's lone lanes.
pub(super) fn sector_view(ui: &mut Ui, pal: &Palette, cx: &ViewContext) {
    ui.label(RichText::new("Sectors of one warp (32 floats = 4 sectors of 32 bytes)").strong());
    // 48 floats = 6 sectors; the block's row starts on a sector boundary (buffers are
    // 256-byte aligned and the block is 32 floats wide).
    let width = ui.available_width().max(200.0);
    let float_w = ((width - 100.0) / 48.0).clamp(3.0, 12.0);
    let rows: [(&str, std::ops::Range<usize>, &str); 4] = [
        ("owned row", 8..40, "a warp's 32 floats: 4 sectors, all 128 bytes used"),
        ("halo row", 8..40, "the row above or below: 4 sectors, like any row"),
        ("side column", 7..8, "one lane, one float: a whole sector for 4 bytes"),
        (
            "in[i - 1]",
            7..39,
            "the starter's left neighbours: 32 floats over 5 sectors",
        ),
    ];
    for (name, used, note) in rows {
        let (rect, _) = ui.allocate_exact_size(Vec2::new(float_w * 48.0 + 96.0, float_w * 1.5), Sense::hover());
        let painter = ui.painter_at(rect);
        painter.text(
            rect.left_center(),
            Align2::LEFT_CENTER,
            name,
            FontId::proportional(12.0),
            pal.text,
        );
        let x0 = rect.min.x + 92.0;
        let mut mesh = egui::Mesh::default();
        for i in 0..48usize {
            let r = Rect::from_min_size(
                Pos2::new(x0 + i as f32 * float_w, rect.min.y + 1.0),
                Vec2::new(float_w, float_w * 1.3),
            );
            let sector_touched = used.clone().any(|j| j / 8 == i / 8);
            let fill = if used.contains(&i) {
                pal.owned
            } else if sector_touched {
                pal.global.gamma_multiply(0.45)
            } else {
                pal.outside
            };
            mesh.add_colored_rect(r.shrink(0.4), fill);
            if i % 8 == 0 {
                mesh.add_colored_rect(
                    Rect::from_min_size(r.left_top(), Vec2::new(1.5 * pal.stroke, r.height())),
                    pal.text,
                );
            }
        }
        painter.add(egui::Shape::mesh(mesh));
        ui.label(RichText::new(format!("    {note}")).small());
    }
    ui.label(
        RichText::new(
            "Red-tinted floats are fetched but unused: a side column's lane pulls a whole sector for one float.",
        )
        .small(),
    );
    if let Some(p) = cx.outcome.and_then(|o| o.report.profile.clone()) {
        let lone: Vec<String> = p
            .per_line
            .iter()
            .filter(|l| l.global_instructions > 0 && l.average_active_lanes() <= 1.5)
            .map(|l| {
                format!(
                    "line {}: {} sectors at {:.1} lanes",
                    l.line,
                    crate::report::thousands(l.sectors),
                    l.average_active_lanes()
                )
            })
            .collect();
        if !lone.is_empty() {
            ui.label(RichText::new(format!("In your run, lone-lane lines: {}", lone.join("; "))).small());
        }
    }
}

pub(super) fn source_colour(pal: &Palette, source: ReadSource) -> Color32 {
    match source {
        ReadSource::Tile { .. } | ReadSource::Shared { .. } => pal.shared,
        ReadSource::Neighbour { .. } => pal.neighbour,
        ReadSource::Global => pal.global,
        ReadSource::Register => pal.register,
    }
}

pub(super) fn source_letter(source: ReadSource) -> &'static str {
    match source {
        ReadSource::Tile { .. } | ReadSource::Shared { .. } => "S",
        ReadSource::Neighbour { .. } => "N",
        ReadSource::Global => "G",
        ReadSource::Register => "R",
    }
}

pub(super) fn describe(source: ReadSource) -> String {
    match source {
        ReadSource::Tile { row, col } => format!("shared tile [{row}][{col}]"),
        ReadSource::Shared { offset } => format!("shared memory (byte {offset})"),
        ReadSource::Neighbour {
            block: [bx, by, bz],
            row,
            col,
            copied: false,
        } => format!("the tile of neighbour block ({bx},{by},{bz}) in the cluster, cell [{row}][{col}]"),
        ReadSource::Neighbour {
            block: [bx, by, bz],
            row,
            col,
            copied: true,
        } => format!("shared tile [{row}][{col}], copied from neighbour block ({bx},{by},{bz})'s tile"),
        ReadSource::Global => "global memory".into(),
        ReadSource::Register => "a register (no load this step)".into(),
    }
}
