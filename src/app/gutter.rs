//! The editor's left margin: line numbers, diagnostic and machine-code markers, and the
//! sectors each line issued in the last run.

use crate::report::GateResult;
use crate::report::compact;
use crate::report::thousands;
use egui::{Color32, FontId, Id, Pos2, Rect, Stroke, Ui, Vec2};
use std::collections::BTreeMap;

/// Width of the margin, in points: line number, marker, sectors.
pub(super) const GUTTER_WIDTH: f32 = 124.0;

/// Something shown on an editor line: a compile diagnostic, a fault or a finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    pub line: u32,
    pub column: Option<u32>,
    pub error: bool,
    pub message: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LineFigures {
    pub sectors: u64,
    pub ideal: u64,
    pub lanes: f64,
}

/// Where the gutter's per-line sectors came from.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum FiguresState {
    /// The last Run's (every size verified).
    #[default]
    Run,
    /// A live count of the text as it is: the gate it gives, not yet verified by a Run.
    Live(GateResult),
    /// The text changed since; a live count is on its way (or off).
    Outdated,
    /// The text as it is does not compile or launch (why): the figures are the last good
    /// text's, greyed.
    Broken(String),
}

/// The bars of a live count's figures (not yet verified by a Run).
pub(super) const LIVE_COLOUR: Color32 = Color32::from_rgb(0x50, 0xA0, 0xE0);

/// Line numbers, markers and sectors per line, painted in the editor's left margin: a Run's
/// figures in orange, a live count's in blue, figures of older text greyed.
pub(super) fn paint_gutter(
    ui: &Ui,
    markers: &[Marker],
    line_figures: &BTreeMap<u32, LineFigures>,
    state: &FiguresState,
    galley: &egui::Galley,
    origin: Pos2,
    rect: Rect,
) {
    let painter = ui.painter();
    let visuals = ui.visuals();
    let gutter = Rect::from_min_max(rect.min, Pos2::new(rect.min.x + GUTTER_WIDTH - 6.0, rect.max.y));
    painter.rect_filled(gutter, 0.0, visuals.faint_bg_color);
    let max_sectors = line_figures.values().map(|f| f.sectors).max().unwrap_or(0).max(1);
    let font = FontId::monospace(11.0);
    let mut line = 1u32;
    let mut first_row_of_line = true;
    let pointer = ui.input(|i| i.pointer.hover_pos());
    for row in &galley.rows {
        if first_row_of_line {
            let y = origin.y + row.pos.y;
            let h = row.rect().height();
            let row_rect = Rect::from_min_size(Pos2::new(rect.min.x, y), Vec2::new(rect.width(), h));
            if let Some(figures) = line_figures.get(&line) {
                let bar = 40.0 * figures.sectors as f32 / max_sectors as f32;
                let bar_rect =
                    Rect::from_min_size(Pos2::new(gutter.min.x + 2.0, y + 2.0), Vec2::new(bar.max(1.0), h - 4.0));
                let bar_colour = match state {
                    FiguresState::Run => Color32::from_rgba_unmultiplied(0xFF, 0x80, 0x30, 110),
                    FiguresState::Live(_) => LIVE_COLOUR.gamma_multiply(0.45),
                    _ => Color32::from_rgba_unmultiplied(0x90, 0x90, 0x90, 60),
                };
                painter.rect_filled(bar_rect, 1.0, bar_colour);
                painter.text(
                    Pos2::new(gutter.min.x + 44.0, y + h / 2.0),
                    egui::Align2::RIGHT_CENTER,
                    compact(figures.sectors),
                    font.clone(),
                    match state {
                        FiguresState::Outdated | FiguresState::Broken(_) => visuals.weak_text_color(),
                        _ => visuals.text_color(),
                    },
                );
            }
            painter.text(
                Pos2::new(gutter.max.x - 18.0, y + h / 2.0),
                egui::Align2::RIGHT_CENTER,
                line.to_string(),
                font.clone(),
                visuals.weak_text_color(),
            );
            let on_line: Vec<&Marker> = markers.iter().filter(|m| m.line == line).collect();
            if !on_line.is_empty() {
                let error = on_line.iter().any(|m| m.error);
                let colour = if error {
                    Color32::from_rgb(0xE0, 0x40, 0x40)
                } else {
                    Color32::from_rgb(0xD0, 0xA0, 0x20)
                };
                painter.rect_filled(row_rect, 0.0, colour.gamma_multiply(0.12));
                let dot = Pos2::new(gutter.max.x - 8.0, y + h / 2.0);
                painter.circle(dot, 4.0, colour, Stroke::NONE);
                let marker_rect = Rect::from_center_size(dot, Vec2::splat(12.0));
                if pointer.is_some_and(|p| marker_rect.contains(p) || (row_rect.contains(p) && p.x < gutter.max.x)) {
                    let text = on_line
                        .iter()
                        .map(|m| m.message.as_str())
                        .collect::<Vec<_>>()
                        .join("\n");
                    egui::Tooltip::always_open(
                        ui.ctx().clone(),
                        ui.layer_id(),
                        Id::unique("marker_tip"),
                        egui::PopupAnchor::Pointer,
                    )
                    .show(|ui| {
                        ui.label(text);
                    });
                }
            }
            if let Some(figures) = line_figures.get(&line) {
                let in_gutter = pointer.is_some_and(|p| row_rect.contains(p) && p.x < gutter.min.x + 48.0);
                if in_gutter {
                    egui::Tooltip::always_open(
                        ui.ctx().clone(),
                        ui.layer_id(),
                        Id::unique("sector_tip"),
                        egui::PopupAnchor::Pointer,
                    )
                    .show(|ui| {
                        ui.label(format!(
                            "line {line}: {} sectors (ideal {}, {:.2}x), {:.1} active lanes per warp instruction",
                            thousands(figures.sectors),
                            thousands(figures.ideal),
                            if figures.ideal > 0 {
                                figures.sectors as f64 / figures.ideal as f64
                            } else {
                                0.0
                            },
                            figures.lanes
                        ));
                    });
                }
            }
        }
        first_row_of_line = row.ends_with_newline;
        if row.ends_with_newline {
            line += 1;
        }
    }
}
