//! The read-source diagram, painted with egui: the block's patch of the grid (34 x 10 for 2D,
//! the 18 x 34 plane plus the planes behind and ahead for 3D, the 258-cell row for 1D) with
//! owned cells, the halo ring and the never-read corners. Click an output cell: its reads are
//! drawn from where the learner's kernel actually served them (shared tile, global memory or
//! a register), as recorded by the emulator. Below, the sector view of one warp.

use super::diagram_lists::{source_colour, source_letter};
use super::theme::{Palette, palette};
use super::view::{View, ViewContext};
use crate::lesson::Lesson;
use crate::trace::reads::{Neighbour, OutputReads, reads_of};
use egui::{Align2, Color32, FontId, Pos2, Rect, RichText, Sense, Stroke, Ui, Vec2};

#[derive(Debug, Clone, PartialEq)]
pub struct DiagramState {
    /// Thread index within the block of the picked output.
    pub picked: [u32; 3],
    /// The reads of the picked output, worked out once per (run, picked thread).
    cache: Option<(u64, [u32; 3], Option<OutputReads>)>,
}

impl Default for DiagramState {
    fn default() -> DiagramState {
        DiagramState {
            picked: [5, 3, 0],
            cache: None,
        }
    }
}

impl DiagramState {
    pub fn for_lesson(lesson: &Lesson) -> DiagramState {
        let picked = match lesson.stencil.dims {
            1 => [5, 0, 0],
            // In a cluster, the block's corner thread: its left and upper reads cross into
            // the neighbours' tiles.
            2 if lesson.cluster.is_some() => [0, 0, 0],
            2 => [5, 3, 0],
            _ => [5, 5, 0],
        };
        DiagramState { picked, cache: None }
    }

    fn reads(&mut self, lesson: &Lesson, outcome: Option<&super::runner::RunOutcome>) -> Option<OutputReads> {
        let outcome = outcome?;
        match &self.cache {
            Some((id, picked, reads)) if *id == outcome.id && *picked == self.picked => reads.clone(),
            _ => {
                let reads = reads_of(lesson, outcome.trace.n, &outcome.trace.accesses, self.picked);
                self.cache = Some((outcome.id, self.picked, reads.clone()));
                reads
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CellClass {
    Owned,
    Halo,
    Corner,
}

fn class_of(row: i64, col: i64, rows: i64, cols: i64) -> CellClass {
    let edge_row = row == 0 || row == rows - 1;
    let edge_col = col == 0 || col == cols - 1;
    match (edge_row && rows > 1, edge_col) {
        (true, true) => CellClass::Corner,
        (true, false) | (false, true) => CellClass::Halo,
        _ => CellClass::Owned,
    }
}

fn explain(class: CellClass, dims: u32) -> &'static str {
    match (class, dims) {
        (CellClass::Owned, _) => "Owned: one output of this block, computed by one thread.",
        (CellClass::Halo, 1) => {
            "Halo: the cell just outside the block. Its output belongs to the next block, but this block reads it."
        }
        (CellClass::Halo, _) => {
            "Halo ring: read by this block's edge threads, owned by a neighbouring block. A tile stages it once."
        }
        (CellClass::Corner, _) => {
            "Corner: a star stencil never reads the diagonal corners; a careful tile still writes a constant here."
        }
    }
}

/// Patch geometry: rows x cols of cells, the thread's own cell at (ty + 1, tx + 1).
fn patch(lesson: &Lesson) -> (i64, i64) {
    match lesson.stencil.dims {
        1 => (1, lesson.block[0] as i64 + 2),
        _ => (lesson.block[1] as i64 + 2, lesson.block[0] as i64 + 2),
    }
}

fn own_cell(lesson: &Lesson, t: [u32; 3]) -> (i64, i64) {
    if lesson.stencil.dims == 1 {
        (0, t[0] as i64 + 1)
    } else {
        (t[1] as i64 + 1, t[0] as i64 + 1)
    }
}

impl View for DiagramState {
    fn show(&mut self, cx: &ViewContext, ui: &mut Ui) {
        show(self, cx, ui);
    }

    fn lesson_changed(&mut self, lesson: &std::sync::Arc<Lesson>) {
        *self = DiagramState::for_lesson(lesson);
    }
}

fn show(state: &mut DiagramState, cx: &ViewContext, ui: &mut Ui) {
    let Some(lesson) = cx.lesson else { return };
    let pal = palette(cx.prefs.theme);
    let reads = state.reads(lesson, cx.outcome);
    ui.label(RichText::new(block_title(lesson)).strong());
    legend(ui, &pal, lesson.cluster.is_some());
    let picked = draw_patch(ui, lesson, &pal, state.picked, reads.as_ref());
    if let Some(thread) = picked {
        state.picked = thread;
    }
    ui.add_space(4.0);
    super::diagram_lists::read_list(ui, cx, state.picked, reads.as_ref(), &pal);
    ui.separator();
    super::diagram_lists::sector_view(ui, &pal, cx);
}

fn legend(ui: &mut Ui, pal: &Palette, clustered: bool) {
    ui.horizontal_wrapped(|ui| {
        for (colour, text) in [
            (pal.owned, "owned"),
            (pal.halo, "halo ring"),
            (pal.corner, "corner (never read)"),
        ] {
            let (rect, _) = ui.allocate_exact_size(Vec2::splat(12.0), Sense::hover());
            ui.painter().rect_filled(rect, 2.0, colour);
            ui.label(text);
        }
        ui.separator();
        for (colour, text) in [
            (pal.shared, "S shared"),
            (pal.global, "G global"),
            (pal.register, "R register"),
        ] {
            ui.colored_label(colour, text);
        }
        if clustered {
            ui.colored_label(pal.neighbour, "N a neighbour's tile");
        }
    });
}

/// Paints the patch (and, for 3D, the planes behind and ahead); returns a newly picked thread.
fn draw_patch(
    ui: &mut Ui,
    lesson: &Lesson,
    pal: &Palette,
    picked: [u32; 3],
    reads: Option<&OutputReads>,
) -> Option<[u32; 3]> {
    let (rows, cols) = patch(lesson);
    let dims = lesson.stencil.dims;
    // 1D rows are long: show the block's two ends, where the halo is.
    let shown_cols: Vec<i64> = if cols > 40 {
        (0..18).chain(cols - 18..cols).collect()
    } else {
        (0..cols).collect()
    };
    let width = ui.available_width().max(200.0);
    let cell = (width / shown_cols.len() as f32).clamp(6.0, 30.0);
    let depth_rows = if dims == 3 { 2.0 } else { 0.0 };
    let height = cell * rows as f32 + depth_rows * (cell * 1.6);
    let (rect, response) = ui.allocate_exact_size(
        Vec2::new(cell * shown_cols.len() as f32, height.max(cell)),
        Sense::click(),
    );
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Canvas, true, "Read-source diagram"));
    let response = response.on_hover_text("Read-source diagram: click an owned cell to see where its reads come from");
    let painter = ui.painter_at(rect);
    let plane_top = rect.min.y + if dims == 3 { cell * 1.6 } else { 0.0 };
    let col_x = |c: i64| {
        shown_cols
            .iter()
            .position(|&x| x == c)
            .map(|i| rect.min.x + i as f32 * cell)
    };
    let cell_rect = |r: i64, c: i64| {
        col_x(c).map(|x| Rect::from_min_size(Pos2::new(x, plane_top + r as f32 * cell), Vec2::splat(cell)))
    };
    let (own_r, own_c) = own_cell(lesson, picked);
    let mut hovered_class = None;
    let pointer = response.hover_pos();
    // All cells in one mesh of plain quads: one shape instead of hundreds of feathered,
    // rounded rectangles, which matters when a projector laptop renders in software.
    let mut mesh = egui::Mesh::default();
    for r in 0..rows {
        for &c in &shown_cols {
            let Some(cr) = cell_rect(r, c) else { continue };
            let class = class_of(r, c, rows, cols);
            let fill = match class {
                CellClass::Owned => pal.owned,
                CellClass::Halo => pal.halo,
                CellClass::Corner => pal.corner,
            };
            mesh.add_colored_rect(cr.shrink(0.5), fill);
            if pointer.is_some_and(|p| cr.contains(p)) {
                hovered_class = Some(class);
            }
        }
    }
    painter.add(egui::Shape::mesh(mesh));
    if cols > 40 {
        let gap = col_x(cols - 18).unwrap_or(rect.min.x) - 1.0;
        painter.line_segment(
            [
                Pos2::new(gap, plane_top),
                Pos2::new(gap, plane_top + cell * rows as f32),
            ],
            Stroke::new(2.0 * pal.stroke, pal.text),
        );
    }
    // The picked output.
    if let Some(cr) = cell_rect(own_r, own_c) {
        painter.rect_stroke(
            cr.shrink(1.0),
            2.0,
            Stroke::new(2.0 * pal.stroke, pal.text),
            egui::StrokeKind::Inside,
        );
    }
    // Planes behind and ahead: the picked column's cell in each.
    let depth_cell = |dz: i64| -> Option<Rect> {
        let x = col_x(own_c)?;
        let y = if dz < 0 {
            rect.min.y
        } else {
            plane_top + rows as f32 * cell + cell * 0.6
        };
        Some(Rect::from_min_size(Pos2::new(x, y), Vec2::splat(cell)))
    };
    if dims == 3 {
        let font = FontId::proportional((cell * 0.55).max(9.0));
        painter.text(
            Pos2::new(rect.min.x, rect.min.y + cell / 2.0),
            Align2::LEFT_CENTER,
            "plane z-1",
            font.clone(),
            pal.text,
        );
        painter.text(
            Pos2::new(rect.min.x, plane_top + rows as f32 * cell + cell * 1.1),
            Align2::LEFT_CENTER,
            "plane z+1",
            font,
            pal.text,
        );
        for dz in [-1, 1] {
            if let Some(cr) = depth_cell(dz) {
                painter.rect_filled(cr.shrink(0.5), 1.0, pal.owned.gamma_multiply(0.6));
            }
        }
    }
    if let Some(reads) = reads {
        let target = cell_rect(own_r, own_c).map(|r| r.center());
        for read in &reads.reads {
            let d = read.neighbour.offset();
            let source_rect = if d[2] != 0 {
                depth_cell(d[2])
            } else {
                cell_rect(own_r + d[1], own_c + d[0])
            };
            let Some(sr) = source_rect else { continue };
            let colour = source_colour(pal, read.source);
            if let (Some(t), true) = (target, read.neighbour != Neighbour::Centre) {
                painter.arrow(
                    sr.center(),
                    (t - sr.center()) * 0.8,
                    Stroke::new(1.5 * pal.stroke, colour),
                );
            }
            painter.circle_filled(sr.center(), cell * 0.32, colour);
            painter.text(
                sr.center(),
                Align2::CENTER_CENTER,
                source_letter(read.source),
                FontId::monospace((cell * 0.45).max(8.0)),
                Color32::WHITE,
            );
        }
    }
    if let Some(class) = hovered_class {
        response.clone().on_hover_text(explain(class, dims));
    }
    if response.clicked()
        && let Some(p) = response.interact_pointer_pos()
    {
        let c = shown_cols.get(((p.x - rect.min.x) / cell) as usize).copied()?;
        let r = ((p.y - plane_top) / cell).floor() as i64;
        if r >= 0 && r < rows && class_of(r, c, rows, cols) == CellClass::Owned {
            return Some(if dims == 1 {
                [(c - 1) as u32, 0, 0]
            } else {
                [(c - 1) as u32, (r - 1) as u32, 0]
            });
        }
    }
    None
}

/// The patch's heading: the block, and in a cluster lesson which block of its cluster it is.
fn block_title(lesson: &Lesson) -> String {
    let [bx, by, _] = lesson.block;
    match lesson.cluster {
        Some([cx, cy, _]) => {
            let w = crate::trace::reads::watched_block(lesson);
            format!(
                "Block {bx}x{by} and its halo: block ({},{}), column {} and row {} of its {cx} x {cy} cluster",
                w[0],
                w[1],
                w[0] % cx,
                w[1] % cy
            )
        }
        None => format!("Block {bx}x{by} and its halo"),
    }
}
