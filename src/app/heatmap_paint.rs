//! Painting the heat map's pieces: the colour of a count, the legend, and the block
//! boundaries over the grid.

use super::theme::Palette;
use crate::lesson::Lesson;
use egui::{Color32, Pos2, Rect, RichText, Sense, Stroke, Ui, Vec2};

/// What the heat map counts: lanes loading an element, or warp requests fetching its sector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    Loads,
    Sectors,
}

/// Discrete colours for element loads (0 to 5 or more), a ramp for sector fetches.
pub(super) fn colour(count: u32, layer: Layer, max: u32, dark: bool) -> Color32 {
    let none = if dark {
        Color32::from_gray(30)
    } else {
        Color32::from_gray(235)
    };
    if count == 0 {
        return none;
    }
    let ramp = [
        Color32::from_rgb(0x2F, 0x9E, 0x5A),
        Color32::from_rgb(0xD9, 0xC8, 0x2B),
        Color32::from_rgb(0xF0, 0x8A, 0x24),
        Color32::from_rgb(0xE0, 0x3C, 0x31),
        Color32::from_rgb(0xB0, 0x2C, 0xC8),
    ];
    match layer {
        Layer::Loads => ramp[(count as usize - 1).min(ramp.len() - 1)],
        Layer::Sectors => {
            let t = (count as f32 - 1.0) / (max as f32 - 1.0).max(1.0);
            let i = ((t * (ramp.len() - 1) as f32).round() as usize).min(ramp.len() - 1);
            ramp[i]
        }
    }
}

pub(super) fn legend(ui: &mut Ui, layer: Layer, max: u32, pal: &Palette, lesson: &Lesson) {
    ui.horizontal_wrapped(|ui| {
        let entries: Vec<(u32, String)> = match layer {
            Layer::Loads => (1..=5)
                .map(|c| (c, if c == 5 { "5+".to_string() } else { c.to_string() }))
                .collect(),
            Layer::Sectors => {
                let steps = 5u32.min(max);
                (0..steps)
                    .map(|i| {
                        let c = 1 + (max - 1) * i / (steps - 1).max(1);
                        (c, c.to_string())
                    })
                    .collect()
            }
        };
        ui.label(match layer {
            Layer::Loads => "fetches per element:",
            Layer::Sectors => "sector fetches:",
        });
        for (count, text) in entries {
            let (rect, _) = ui.allocate_exact_size(Vec2::splat(12.0), Sense::hover());
            ui.painter().rect_filled(rect, 2.0, colour(count, layer, max, true));
            ui.label(text);
        }
        ui.label(RichText::new(boundaries_legend(lesson)).color(pal.text).small());
    });
}

/// What the heat map's lines are, in the legend.
fn boundaries_legend(lesson: &Lesson) -> String {
    match lesson.cluster {
        Some([cx, cy, _]) => format!("lines: block boundaries, thick: {cx} x {cy} cluster boundaries"),
        None => "lines: block boundaries".into(),
    }
}

/// Thin lines on the block boundaries inside the window.
pub(super) fn block_lines(
    painter: &egui::Painter,
    rect: Rect,
    lesson: &Lesson,
    origin: [u32; 3],
    extent: [u32; 2],
    pal: &Palette,
) {
    let stroke = Stroke::new(1.0 * pal.stroke, pal.text.gamma_multiply(0.6));
    // A cluster's edge (where its blocks' halo still comes from global memory) is drawn
    // thicker than a block's edge inside it.
    let cluster_stroke = Stroke::new(3.0 * pal.stroke, pal.text.gamma_multiply(0.9));
    let [ex, ey] = extent;
    let (bx, by) = (lesson.block[0], lesson.block[1]);
    let [cx, cy, _] = lesson.cluster.unwrap_or([1, 1, 1]);
    let clustered = lesson.cluster.is_some();
    let cell_w = rect.width() / ex as f32;
    let cell_h = rect.height() / ey as f32;
    for x in 1..ex {
        if (origin[0] + x).is_multiple_of(bx) {
            let px = rect.min.x + x as f32 * cell_w;
            let edge = clustered && (origin[0] + x).is_multiple_of(bx * cx);
            let s = if edge { cluster_stroke } else { stroke };
            painter.line_segment([Pos2::new(px, rect.min.y), Pos2::new(px, rect.max.y)], s);
        }
    }
    if ey > 1 {
        for y in 1..ey {
            if (origin[1] + y).is_multiple_of(by) {
                let py = rect.min.y + y as f32 * cell_h;
                let edge = clustered && (origin[1] + y).is_multiple_of(by * cy);
                let s = if edge { cluster_stroke } else { stroke };
                painter.line_segment([Pos2::new(rect.min.x, py), Pos2::new(rect.max.x, py)], s);
            }
        }
    }
}
