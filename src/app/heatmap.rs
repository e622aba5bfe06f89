//! The fetch heat map view: how many times each input element was fetched from global
//! memory in one whole launch of the editor's kernel, at a size the learner picks, drawn
//! over the grid with the block boundaries. Layers: lane loads per element, or sector
//! fetches (warp requests whose sectors held the element). Hover names the element, its
//! counts and the lines that fetched it; 3D shows one z slice, picked with a slider.
//!
//! The counts come from one emulated launch (`crate::fetches`) on a thread of its own.

use super::App;
use super::theme::{Palette, palette};
use crate::backend::CancelFlag;
use crate::emu::fetch_map::FetchMap;
use crate::fetches::{fetch_map, offered_sizes, summary, window_for};
use crate::lesson::Lesson;
use crate::pipeline::RunRequest;
use crate::report::thousands;
use egui::{Color32, ColorImage, Pos2, Rect, RichText, Sense, Stroke, TextureHandle, TextureOptions, Ui, Vec2};
use std::sync::mpsc::{Receiver, channel};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    Loads,
    Sectors,
}

/// What is being counted: a lesson's kernel source at size `n`, window from `origin`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    lesson: String,
    source: String,
    n: u32,
    origin: [u32; 3],
}

#[derive(Default)]
pub struct HeatMapState {
    /// The size picked (0: not picked yet, the lesson's middle size).
    pub n: u32,
    pub layer: Option<Layer>,
    /// The z slice shown (3D), in window coordinates.
    pub z: u32,
    /// First element of the window, for sizes larger than the window.
    pub origin: [u32; 3],
    job: Option<(Key, Receiver<Result<FetchMap, String>>)>,
    done: Option<(Key, Result<FetchMap, String>)>,
    texture: Option<(TextureKey, TextureHandle)>,
}

#[derive(Debug, Clone, PartialEq)]
struct TextureKey {
    layer: Layer,
    z: u32,
    dark: bool,
    map: *const FetchMap,
}

impl HeatMapState {
    pub fn is_counting(&self) -> bool {
        self.job.is_some()
    }

    /// The finished counts, if any.
    pub fn map(&self) -> Option<&FetchMap> {
        self.done.as_ref().and_then(|(_, r)| r.as_ref().ok())
    }

    /// Takes a finished count off its thread; called every frame from `App::logic`.
    pub fn poll(&mut self) {
        let Some((_, rx)) = &self.job else { return };
        if let Ok(result) = rx.try_recv() {
            let (key, _) = self.job.take().expect("a job");
            self.done = Some((key, result));
            self.texture = None;
        }
    }

    fn start(&mut self, key: Key, lesson: Lesson, file_name: String, repaint: impl Fn() + Send + 'static) {
        let (tx, rx) = channel();
        let request = RunRequest {
            source: key.source.clone(),
            source_name: file_name,
            kernel_file: "<editor>".into(),
            seed: Some(1),
            nvrtc_path: None,
        };
        let window = window_for(&lesson, key.n, key.origin);
        std::thread::Builder::new()
            .name("heat map".into())
            .spawn(move || {
                let _ = tx.send(fetch_map(&lesson, &request, window, &CancelFlag::default()));
                repaint();
            })
            .expect("spawn the heat map thread");
        self.job = Some((key, rx));
    }
}

/// The sizes offered: the lesson's small verification sizes, then a window of the profile size.
fn sizes(lesson: &Lesson) -> Vec<u32> {
    let mut sizes = offered_sizes(lesson);
    sizes.push(lesson.profile_size);
    sizes
}

pub fn show(app: &mut App, ui: &mut Ui) {
    let Some(lesson) = app.lesson().cloned() else { return };
    let pal = palette(app.saved.prefs.theme);
    let state = &mut app.heatmap;
    let sizes = sizes(&lesson);
    if !sizes.contains(&state.n) {
        state.n = sizes[sizes.len().saturating_sub(2)];
    }
    let layer = state.layer.get_or_insert(Layer::Loads);
    ui.label(RichText::new("Fetch heat map: global loads of each input element, whole launch").strong());
    ui.horizontal_wrapped(|ui| {
        ui.label("size");
        for &n in &sizes {
            let text = if n == lesson.profile_size {
                format!("{n} (window)")
            } else {
                n.to_string()
            };
            ui.selectable_value(&mut state.n, n, text);
        }
        ui.separator();
        ui.selectable_value(layer, Layer::Loads, "element loads");
        ui.selectable_value(layer, Layer::Sectors, "sector fetches");
    });
    let layer = *layer;
    if state.n == lesson.profile_size {
        window_origin(ui, &lesson, state);
    }
    let key = Key {
        lesson: lesson.id.clone(),
        source: app.editor.text.clone(),
        n: state.n,
        origin: if state.n == lesson.profile_size {
            // 1D windows start on a block, so each drawn row is one block.
            let mut origin = state.origin;
            if lesson.stencil.dims == 1 {
                origin[0] -= origin[0] % lesson.block[0];
            }
            origin
        } else {
            [0; 3]
        },
    };
    let current = state.done.as_ref().is_some_and(|(k, _)| *k == key);
    let counting = state.job.as_ref().is_some_and(|(k, _)| *k == key);
    ui.horizontal(|ui| {
        let label = if state.done.is_some() {
            "Recount"
        } else {
            "Count fetches"
        };
        // A new size or window counts at once; an edited source waits for Recount (the
        // editor changes with every key).
        let same_source = state.done.as_ref().is_none_or(|(k, _)| k.source == key.source);
        let automatic = !current && state.job.is_none() && same_source;
        if ui.add_enabled(!counting, egui::Button::new(label)).clicked() || automatic {
            let ctx = ui.ctx().clone();
            state.start(key.clone(), lesson.clone(), app.editor.file_name(), move || {
                ctx.request_repaint()
            });
        }
        if counting {
            ui.spinner();
            ui.label("counting…");
        } else if state.done.is_some() && !current {
            ui.label(RichText::new("the source or size changed since this count").small());
        }
    });
    match state.done.as_ref().map(|(_, r)| r) {
        None => {
            ui.label("Counts every global load of one launch on the emulator.");
        }
        Some(Err(message)) => {
            ui.colored_label(pal.fail, message);
        }
        Some(Ok(_)) => {
            let dark = super::theme::is_dark(app.saved.prefs.theme);
            if let Some(line) = draw(ui, &lesson, state, layer, &pal, dark) {
                app.actions.push(super::action::Action::go_to(line));
            }
        }
    }
}

/// The window's first element, for a window of the profile size.
fn window_origin(ui: &mut Ui, lesson: &Lesson, state: &mut HeatMapState) {
    let n = lesson.profile_size;
    let side = crate::fetches::window_side(lesson.stencil.dims);
    ui.horizontal(|ui| {
        ui.label(format!("window of {side} from"));
        for (d, axis) in ["x", "y", "z"].iter().enumerate().take(lesson.stencil.dims as usize) {
            let label = ui.label(*axis);
            ui.add(
                egui::DragValue::new(&mut state.origin[d])
                    .range(0..=n - side.min(n))
                    .speed(8.0),
            )
            .labelled_by(label.id);
        }
    });
}

/// How window cells are laid out as an image: 2D and 3D slices as they are, 1D wrapped into
/// one row per block (a block's halo then sits at both ends of its row).
struct Layout {
    width: usize,
    height: usize,
    /// Window cell of image pixel (0, 0).
    first: usize,
    /// Window cells in the slice or row band.
    cells: usize,
}

impl Layout {
    fn cell(&self, x: usize, y: usize) -> Option<usize> {
        let i = y * self.width + x;
        (i < self.cells).then_some(self.first + i)
    }
}

/// Draws the counts; returns the line a click asked for.
fn draw(
    ui: &mut Ui,
    lesson: &Lesson,
    state: &mut HeatMapState,
    layer: Layer,
    pal: &Palette,
    dark: bool,
) -> Option<u32> {
    let Some((_, Ok(map))) = &state.done else { return None };
    let window = map.window;
    let s = summary(map);
    ui.label(format!(
        "n={}: {} loads of {} elements, {:.2} per element fetched (most: {}); {} input sectors",
        window.n,
        thousands(s.loads),
        thousands(s.elements_fetched),
        s.mean_loads,
        s.max_loads,
        thousands(s.input_sectors)
    ));
    let [ex, ey, ez] = window.extent.map(|e| e as usize);
    if lesson.stencil.dims == 3 {
        state.z = state.z.min(ez as u32 - 1);
        ui.horizontal(|ui| {
            let label = ui.label("z slice");
            ui.add(
                egui::Slider::new(&mut state.z, 0..=ez as u32 - 1)
                    .custom_formatter(|v, _| format!("{}", window.origin[2] + v as u32)),
            )
            .labelled_by(label.id);
        });
    }
    let layout = if lesson.stencil.dims == 1 {
        let width = (lesson.block[0] as usize).min(ex);
        Layout {
            width,
            height: ex.div_ceil(width),
            first: 0,
            cells: ex,
        }
    } else {
        Layout {
            width: ex,
            height: ey,
            first: state.z as usize * ex * ey,
            cells: ex * ey,
        }
    };
    let values: &[u32] = match layer {
        Layer::Loads => &map.loads,
        Layer::Sectors => &map.sector_fetches,
    };
    let plane = &values[layout.first..layout.first + layout.cells];
    let max = plane.iter().copied().max().unwrap_or(0).max(1);
    legend(ui, layer, max, pal);

    let width = ui.available_width().max(100.0);
    let cell_w = width / layout.width as f32;
    // Square cells in 2D and 3D; 1D rows get a readable height.
    let cell_h = if lesson.stencil.dims == 1 { 14.0 } else { cell_w };
    let (rect, response) = ui.allocate_exact_size(Vec2::new(width, cell_h * layout.height as f32), Sense::click());
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Canvas, true, "Fetch heat map"));
    let texture_key = TextureKey {
        layer,
        z: state.z,
        dark,
        map: map as *const FetchMap,
    };
    if state.texture.as_ref().map(|(k, _)| k) != Some(&texture_key) {
        let none = colour(0, layer, max, dark);
        let pixels = (0..layout.height)
            .flat_map(|y| (0..layout.width).map(move |x| (x, y)))
            .map(|(x, y)| layout.cell(x, y).map_or(none, |c| colour(values[c], layer, max, dark)))
            .collect();
        let image = ColorImage::new([layout.width, layout.height], pixels);
        let handle = ui.ctx().load_texture("fetch heat map", image, TextureOptions::NEAREST);
        state.texture = Some((texture_key, handle));
    }
    let (_, texture) = state.texture.as_ref()?;
    let painter = ui.painter_at(rect);
    painter.image(
        texture.id(),
        rect,
        Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0)),
        Color32::WHITE,
    );
    if lesson.stencil.dims > 1 {
        block_lines(&painter, rect, lesson, window.origin, [ex as u32, ey as u32], pal);
    }

    let p = response.hover_pos()?;
    let x = ((p.x - rect.min.x) / cell_w)
        .floor()
        .clamp(0.0, layout.width as f32 - 1.0) as usize;
    let y = ((p.y - rect.min.y) / cell_h)
        .floor()
        .clamp(0.0, layout.height as f32 - 1.0) as usize;
    let cell = layout.cell(x, y)?;
    let [gx, gy, gz] = window.coord_of(cell);
    let place = match lesson.stencil.dims {
        1 => format!("element {gx}"),
        2 => format!("element ({gx}, {gy})"),
        _ => format!("element ({gx}, {gy}, {gz})"),
    };
    let lines = map.lines_of(cell);
    let line_names: Vec<String> = lines
        .iter()
        .map(|&l| {
            if l == 0 {
                "code with no source line".into()
            } else {
                format!("line {l}")
            }
        })
        .collect();
    let text = format!(
        "{place}: fetched {} times, its sector {} times{}",
        map.loads[cell],
        map.sector_fetches[cell],
        if line_names.is_empty() {
            String::new()
        } else {
            format!("; by {}", line_names.join(", "))
        }
    );
    let clicked = response.clicked();
    response.on_hover_ui(|ui| {
        ui.label(text);
    });
    // A click selects the first source line that fetched the element.
    clicked.then(|| lines.iter().copied().find(|&l| l > 0)).flatten()
}

/// Discrete colours for element loads (0 to 5 or more), a ramp for sector fetches.
fn colour(count: u32, layer: Layer, max: u32, dark: bool) -> Color32 {
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

fn legend(ui: &mut Ui, layer: Layer, max: u32, pal: &Palette) {
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
        ui.label(RichText::new("lines: block boundaries").color(pal.text).small());
    });
}

/// Thin lines on the block boundaries inside the window.
fn block_lines(
    painter: &egui::Painter,
    rect: Rect,
    lesson: &Lesson,
    origin: [u32; 3],
    extent: [u32; 2],
    pal: &Palette,
) {
    let stroke = Stroke::new(1.0 * pal.stroke, pal.text.gamma_multiply(0.6));
    let [ex, ey] = extent;
    let (bx, by) = (lesson.block[0], lesson.block[1]);
    let cell_w = rect.width() / ex as f32;
    let cell_h = rect.height() / ey as f32;
    for x in 1..ex {
        if (origin[0] + x).is_multiple_of(bx) {
            let px = rect.min.x + x as f32 * cell_w;
            painter.line_segment([Pos2::new(px, rect.min.y), Pos2::new(px, rect.max.y)], stroke);
        }
    }
    if ey > 1 {
        for y in 1..ey {
            if (origin[1] + y).is_multiple_of(by) {
                let py = rect.min.y + y as f32 * cell_h;
                painter.line_segment([Pos2::new(rect.min.x, py), Pos2::new(rect.max.x, py)], stroke);
            }
        }
    }
}
