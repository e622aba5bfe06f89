//! Block replay, at the top of the Diagram tab: the watched block's memory instructions one
//! warp instruction at a time, from the emulator's trace of the learner's own kernel. A
//! timeline (barriers marked) with play/pause, step, speed and a scrubber; the patch shows
//! which tile cells have been written and by which warp, the step's cells outlined; below,
//! the step's global sectors (lone-lane sectors in their own colour) and the total so far.
//! Keys: space plays or pauses, left/right step. Clicking the timeline selects the step's
//! line in the editor; moving the editor's cursor to a line jumps to its next step.

use super::action::Action;
use super::theme::{Palette, palette};
use super::view::{View, ViewContext};
use crate::lesson::Lesson;
use crate::report::thousands;
use crate::trace::block_replay::{Replay, StepKind};
use egui::{Align2, Color32, FontId, Pos2, Rect, RichText, Sense, Stroke, Ui, Vec2};

pub struct ReplayState {
    pub step: usize,
    pub playing: bool,
    /// Steps per second while playing.
    pub speed: f32,
    /// Fractional steps carried between frames.
    carry: f64,
    last_time: Option<f64>,
    /// The editor line last seen, to follow the cursor.
    last_cursor_line: u32,
    /// The replay of run `id`.
    model: Option<(u64, Replay)>,
    /// Start playing each new replay (`--play`), from this step.
    autoplay: bool,
    first_step: usize,
}

impl Default for ReplayState {
    fn default() -> ReplayState {
        ReplayState {
            step: 0,
            playing: false,
            speed: 8.0,
            carry: 0.0,
            last_time: None,
            last_cursor_line: 0,
            model: None,
            autoplay: false,
            first_step: 0,
        }
    }
}

impl ReplayState {
    /// A state that opens each new replay at `step` (`--replay-step`) and plays it at 60
    /// steps/s when `play` (`--play`).
    pub fn starting(play: bool, step: Option<usize>) -> ReplayState {
        ReplayState {
            autoplay: play,
            first_step: step.unwrap_or(0),
            speed: if play { 60.0 } else { 8.0 },
            ..ReplayState::default()
        }
    }

    /// The replay of the current run, built once per run.
    pub fn model(&self) -> Option<&Replay> {
        self.model.as_ref().map(|(_, r)| r)
    }

    fn sync(&mut self, lesson: &Lesson, outcome: Option<&super::runner::RunOutcome>) {
        let Some(outcome) = outcome else {
            self.model = None;
            return;
        };
        if self.model.as_ref().is_some_and(|(id, _)| *id == outcome.id) {
            return;
        }
        self.model = Some((outcome.id, Replay::new(lesson, &outcome.trace)));
        self.step = self.first_step;
        self.playing = self.autoplay;
    }

    /// Advances while playing, by wall time; wraps to the start at the end.
    fn tick(&mut self, now: f64) {
        let len = self.model().map_or(0, |m| m.len());
        if !self.playing || len == 0 {
            self.last_time = None;
            return;
        }
        let dt = self.last_time.map_or(0.0, |t| now - t);
        self.last_time = Some(now);
        self.carry += dt * self.speed as f64;
        while self.carry >= 1.0 {
            self.carry -= 1.0;
            self.step = (self.step + 1) % len;
        }
    }

    fn step_by(&mut self, delta: i64) {
        let len = self.model().map_or(0, |m| m.len()) as i64;
        if len > 0 {
            self.step = (self.step as i64 + delta).rem_euclid(len) as usize;
        }
    }
}

/// Colour of warp `w` in the tile (eight hues, repeating).
fn warp_colour(w: u32) -> Color32 {
    const HUES: [Color32; 8] = [
        Color32::from_rgb(0x4E, 0x9A, 0xF0),
        Color32::from_rgb(0x5C, 0xC8, 0x6E),
        Color32::from_rgb(0xF2, 0xB1, 0x3A),
        Color32::from_rgb(0xD9, 0x5C, 0xC4),
        Color32::from_rgb(0x3C, 0xC9, 0xC4),
        Color32::from_rgb(0xEE, 0x6A, 0x4C),
        Color32::from_rgb(0x9C, 0x8C, 0xF5),
        Color32::from_rgb(0xB7, 0xD1, 0x4A),
    ];
    HUES[w as usize % HUES.len()]
}

fn kind_colour(kind: StepKind, pal: &Palette) -> Color32 {
    match kind {
        StepKind::GlobalLoad => pal.global,
        StepKind::GlobalStore => pal.global.gamma_multiply(0.55),
        StepKind::SharedStore => pal.shared,
        StepKind::SharedLoad => pal.shared.gamma_multiply(0.55),
        StepKind::NeighbourLoad => pal.neighbour,
        StepKind::NeighbourStore => pal.neighbour.gamma_multiply(0.55),
        StepKind::Barrier | StepKind::ClusterBarrier => pal.text,
    }
}

impl View for ReplayState {
    fn show(&mut self, cx: &ViewContext, ui: &mut Ui) {
        show(self, cx, ui);
    }

    /// A new lesson starts a new replay, as the command line asked for the first.
    fn lesson_changed(&mut self, _lesson: &std::sync::Arc<Lesson>) {
        *self = ReplayState::starting(self.autoplay, Some(self.first_step));
    }
}

fn show(state: &mut ReplayState, cx: &ViewContext, ui: &mut Ui) {
    let Some(lesson) = cx.lesson else { return };
    let pal = palette(cx.prefs.theme);
    let outcome = cx.outcome;
    let moves = outcome
        .and_then(|o| o.report.profile.as_ref())
        .and_then(|p| p.moves.clone())
        .unwrap_or_default();
    state.sync(lesson, outcome);
    let Some(len) = state.model().map(|m| m.len()).filter(|&l| l > 0) else {
        ui.label("Block replay: press Run; the replay follows the watched block's memory instructions.");
        return;
    };
    // The editor's cursor moved to another line: go to that line's next step.
    let cursor = cx.editor.cursor_line;
    if cursor != state.last_cursor_line {
        state.last_cursor_line = cursor;
        if let Some(k) = state.model().and_then(|m| m.step_on_line(cursor, state.step)) {
            state.step = k;
        }
    }
    keys(ui, state);
    state.tick(ui.input(|i| i.time));
    if state.playing {
        ui.ctx().request_repaint();
    }
    state.step = state.step.min(len - 1);

    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new("Block replay").strong())
            .on_hover_text("The watched block's loads and stores, as the emulator ran them; the trace keeps each thread's first 128 memory accesses");
        if ui.button("Back").on_hover_text("Step back (left arrow)").clicked() {
            state.step_by(-1);
        }
        let play = if state.playing { "Pause" } else { "Play" };
        if ui.button(play).on_hover_text("Space").clicked() {
            state.playing = !state.playing;
        }
        if ui.button("Next").on_hover_text("Step forward (right arrow)").clicked() {
            state.step_by(1);
        }
        let speed = ui.label("speed");
        ui.add(
            egui::Slider::new(&mut state.speed, 1.0..=60.0)
                .suffix(" steps/s")
                .logarithmic(true),
        )
        .labelled_by(speed.id);
    });
    ui.horizontal(|ui| {
        let scrub = ui.label("step");
        // The scrubber spans the panel, like a video's.
        ui.spacing_mut().slider_width = (ui.available_width() - 70.0).max(120.0);
        ui.add(egui::Slider::new(&mut state.step, 0..=len - 1).show_value(true))
            .labelled_by(scrub.id);
    });
    let Some(model) = state.model() else { return };
    let k = state.step;
    let step = &model.steps[k];
    let clicked = timeline(ui, model, k, &pal);
    // 3D: which plane is being computed, and whether this step reaches behind or ahead.
    let depth = match (model.plane_z(k), model.z_range(k)) {
        (Some(plane), Some((lo, hi))) => {
            let place = |z: i64| match z - plane {
                -1 => "behind".to_string(),
                0 => "the plane".to_string(),
                1 => "ahead".to_string(),
                d => format!("{d:+} planes"),
            };
            let span = if lo == hi {
                format!("z = {lo} ({})", place(lo))
            } else {
                format!("z = {lo}..{hi} ({} to {})", place(lo), place(hi))
            };
            format!("; computing plane z = {plane}, this step reads {span}")
        }
        (Some(plane), None) => format!("; computing plane z = {plane}"),
        _ => String::new(),
    };
    ui.label(format!(
        "step {} of {len}: {}{}, {}{depth}",
        k + 1,
        if step.kind.is_barrier() {
            String::new()
        } else {
            format!("warp {}, ", step.warp)
        },
        match step.peer {
            Some([bx, by, bz]) => format!("{} of block ({bx},{by},{bz})", step.kind.describe()),
            None => step.kind.describe().to_string(),
        },
        moves.step_line(step.line, step.ptx_line)
    ));
    if let Some(m) = moves.of_instruction(step.ptx_line) {
        ui.label(RichText::new(&m.text).small());
    }
    tile(ui, lesson, model, k, &pal);
    sectors(ui, model, k, &pal);
    if let Some((step, line)) = clicked {
        state.step = step;
        state.playing = false;
        // The cursor follows without jumping the replay back (see the cursor check above).
        state.last_cursor_line = line;
        cx.actions.push(Action::go_to(line));
    }
}

fn keys(ui: &mut Ui, state: &mut ReplayState) {
    if ui.ctx().egui_wants_keyboard_input() {
        return; // typing in the editor or a field
    }
    ui.input_mut(|i| {
        if i.consume_key(egui::Modifiers::NONE, egui::Key::Space) {
            state.playing = !state.playing;
        }
        if i.consume_key(egui::Modifiers::NONE, egui::Key::ArrowRight) {
            state.playing = false;
            state.step_by(1);
        }
        if i.consume_key(egui::Modifiers::NONE, egui::Key::ArrowLeft) {
            state.playing = false;
            state.step_by(-1);
        }
    });
}

/// One tick per step coloured by kind, barriers as tall marks, the current step highlighted.
/// A click returns the step and its line.
fn timeline(ui: &mut Ui, model: &Replay, k: usize, pal: &Palette) -> Option<(usize, u32)> {
    let width = ui.available_width().max(100.0);
    let (rect, response) = ui.allocate_exact_size(Vec2::new(width, 26.0), Sense::click());
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Canvas, true, "Replay timeline"));
    let painter = ui.painter_at(rect);
    let len = model.len();
    let w = rect.width() / len as f32;
    let mut mesh = egui::Mesh::default();
    for (i, s) in model.steps.iter().enumerate() {
        let x = rect.min.x + i as f32 * w;
        let r = Rect::from_min_max(
            Pos2::new(x, rect.min.y + 6.0),
            Pos2::new(x + w.max(1.0), rect.max.y - 6.0),
        );
        mesh.add_colored_rect(r, kind_colour(s.kind, pal));
    }
    painter.add(egui::Shape::mesh(mesh));
    for b in model.barriers() {
        let x = rect.min.x + (b as f32 + 0.5) * w;
        painter.line_segment(
            [Pos2::new(x, rect.min.y), Pos2::new(x, rect.max.y)],
            Stroke::new(2.0 * pal.stroke, pal.text),
        );
    }
    let x = rect.min.x + (k as f32 + 0.5) * w;
    painter.circle_stroke(
        Pos2::new(x, rect.center().y),
        6.0,
        Stroke::new(2.0 * pal.stroke, pal.text),
    );
    if response.clicked()
        && let Some(p) = response.interact_pointer_pos()
    {
        let i = (((p.x - rect.min.x) / w) as usize).min(len - 1);
        return Some((i, model.steps[i].line));
    }
    None
}

/// The block's patch: tile cells coloured by the warp that last wrote them, the step's
/// cells outlined in the step's colour.
fn tile(ui: &mut Ui, lesson: &Lesson, model: &Replay, k: usize, pal: &Palette) {
    let tile_shape = crate::trace::reads::TileShape::for_lesson(lesson);
    let (rows, cols) = (tile_shape.rows as i64, tile_shape.width as i64);
    // 1D rows are long: the block's two ends, where the halo is.
    let shown: Vec<i64> = if cols > 40 {
        (0..18).chain(cols - 18..cols).collect()
    } else {
        (0..cols).collect()
    };
    let cell = (ui.available_width().max(200.0) / shown.len() as f32).clamp(6.0, 30.0);
    let (rect, response) =
        ui.allocate_exact_size(Vec2::new(cell * shown.len() as f32, cell * rows as f32), Sense::hover());
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Canvas, true, "Replay tile"));
    let painter = ui.painter_at(rect);
    let cell_rect = |r: i64, c: i64| {
        shown.iter().position(|&x| x == c).map(|i| {
            Rect::from_min_size(
                Pos2::new(rect.min.x + i as f32 * cell, rect.min.y + r as f32 * cell),
                Vec2::splat(cell),
            )
        })
    };
    let writers = model.tile_writers(k);
    let mut mesh = egui::Mesh::default();
    for r in 0..rows {
        for &c in &shown {
            let Some(cr) = cell_rect(r, c) else { continue };
            let edge = r == 0 || r == rows - 1 || c == 0 || c == cols - 1;
            let fill = match writers.get(&(r, c)) {
                Some(&w) => warp_colour(w),
                None if edge && rows > 1 => pal.halo.gamma_multiply(0.25),
                None => pal.owned.gamma_multiply(0.25),
            };
            mesh.add_colored_rect(cr.shrink(0.5), fill);
        }
    }
    painter.add(egui::Shape::mesh(mesh));
    let step = &model.steps[k];
    let outline = Stroke::new(2.0 * pal.stroke, kind_colour(step.kind, pal));
    for (r, c) in model.cells_of_step(k) {
        if let Some(cr) = cell_rect(r, c) {
            painter.rect_stroke(cr.shrink(1.0), 1.0, outline, egui::StrokeKind::Inside);
        }
    }
    if let Some(p) = response.hover_pos() {
        let c = shown.get(((p.x - rect.min.x) / cell) as usize).copied();
        let r = ((p.y - rect.min.y) / cell) as i64;
        if let Some(c) = c {
            let text = match writers.get(&(r, c)) {
                Some(w) => format!("tile row {r}, column {c}: written by warp {w}"),
                None => format!("tile row {r}, column {c}: not written yet"),
            };
            response.on_hover_text(text);
        }
    }
    // Warp colours, so a teacher can say "warp 3 fills this row".
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new("writer:").small());
        for w in 0..model.warps().min(16) {
            ui.label(RichText::new(format!("warp {w}")).small().color(warp_colour(w)));
        }
    });
}

/// The step's global sectors, one box each with its lane count; lone-lane sectors stand out.
fn sectors(ui: &mut Ui, model: &Replay, k: usize, pal: &Palette) {
    let step = &model.steps[k];
    let so_far = model.sectors_so_far(k);
    if step.sectors.is_empty() {
        ui.label(format!("global sectors so far: {}", thousands(so_far)));
        return;
    }
    let lanes = step.accesses.len();
    let lone = step.lone_lane_sectors();
    ui.label(format!(
        "this instruction: {} sectors for {lanes} lanes{}; global sectors so far: {}",
        step.sectors.len(),
        if lone > 0 {
            format!(" ({lone} serve a single lane: 32 bytes for 4)")
        } else {
            String::new()
        },
        thousands(so_far)
    ));
    let size = 22.0;
    let width = (ui.available_width() / size).floor().max(1.0) as usize;
    let count = step.sectors.len();
    let rows = count.div_ceil(width);
    let (rect, _) = ui.allocate_exact_size(Vec2::new(ui.available_width(), rows as f32 * size), Sense::hover());
    let painter = ui.painter_at(rect);
    for (i, s) in step.sectors.iter().enumerate() {
        let (r, c) = (i / width, i % width);
        let b = Rect::from_min_size(
            Pos2::new(rect.min.x + c as f32 * size, rect.min.y + r as f32 * size),
            Vec2::splat(size - 2.0),
        );
        let fill = if s.lanes == 1 { pal.fail } else { pal.owned };
        painter.rect_filled(b, 2.0, fill);
        painter.text(
            b.center(),
            Align2::CENTER_CENTER,
            s.lanes.to_string(),
            FontId::monospace(10.0),
            Color32::WHITE,
        );
    }
}
