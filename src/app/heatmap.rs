//! The fetch heat map view: how many times each input element was fetched from global
//! memory in one whole launch of the editor's kernel, at a size the learner picks, drawn
//! over the grid with the block boundaries. Layers: lane loads per element, or sector
//! fetches (warp requests whose sectors held the element). Hover names the element, its
//! counts and the lines that fetched it; 3D shows one z slice, picked with a slider.
//!
//! The counts come from one emulated launch (`crate::trace::fetches`) on a thread of its own.

pub use super::heatmap_paint::Layer;
use super::heatmap_paint::{block_lines, colour, legend};
use super::jobs::{Job, JobContext, Jobs};
use super::theme::{Palette, palette};
use super::view::{View, ViewContext};
use crate::backend::emu::fetch_map::FetchMap;
use crate::lesson::Lesson;
use crate::pipeline::RunRequest;
use crate::report::thousands;
use crate::trace::fetches::{fetch_map, offered_sizes, summary, window_for};
use egui::{Color32, ColorImage, Pos2, Rect, RichText, Sense, TextureHandle, TextureOptions, Ui, Vec2};
use std::sync::Arc;

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
    job: Option<(Key, Job<Result<FetchMap, String>>)>,
    done: Option<(Key, Result<FetchMap, String>)>,
    texture: Option<(TextureKey, TextureHandle)>,
}

/// What the texture shows of the current counts (a new count drops the texture: `poll`).
#[derive(Debug, Clone, PartialEq)]
struct TextureKey {
    layer: Layer,
    z: u32,
    dark: bool,
}

impl HeatMapState {
    /// The finished counts, if any.
    pub fn map(&self) -> Option<&FetchMap> {
        self.done.as_ref().and_then(|(_, r)| r.as_ref().ok())
    }

    fn start(&mut self, jobs: &Jobs, key: Key, lesson: Arc<Lesson>, file_name: String) {
        let request = RunRequest {
            source: key.source.clone(),
            source_name: file_name,
            kernel_file: "<editor>".into(),
            seed: Some(1),
            nvrtc_path: None,
        };
        let window = window_for(&lesson, key.n, key.origin);
        // A job started before is dropped here, which cancels it.
        let job = jobs.start("heat map", move |cx: &JobContext<()>| {
            fetch_map(&lesson, &request, window, &cx.cancel)
        });
        self.job = Some((key, job));
    }
}

/// The sizes offered: the lesson's small verification sizes, then a window of the profile size.
fn sizes(lesson: &Lesson) -> Vec<u32> {
    let mut sizes = offered_sizes(lesson);
    sizes.push(lesson.profile_size);
    sizes
}

impl View for HeatMapState {
    fn show(&mut self, cx: &ViewContext, ui: &mut Ui) {
        show(self, cx, ui);
    }

    fn lesson_changed(&mut self, _lesson: &Arc<Lesson>) {
        *self = HeatMapState::default();
    }

    /// Takes a finished count off its thread.
    fn poll(&mut self) {
        let Some((_, job)) = &self.job else { return };
        if let Some(result) = job.poll() {
            let (key, _) = self.job.take().expect("a job");
            self.done = Some((key, result));
            self.texture = None;
        }
    }

    fn busy(&self) -> bool {
        self.job.is_some()
    }
}

fn show(state: &mut HeatMapState, cx: &ViewContext, ui: &mut Ui) {
    let Some(lesson) = cx.lesson.cloned() else { return };
    let pal = palette(cx.prefs.theme);
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
        source: cx.editor.text.to_string(),
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
            state.start(cx.jobs, key.clone(), lesson.clone(), cx.editor.file_name.clone());
        }
        if counting {
            ui.spinner();
            ui.label("counting…");
            if ui.button("Cancel count").clicked()
                && let Some((_, job)) = &state.job
            {
                job.cancel();
            }
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
            if let Some(line) = draw(ui, &lesson, state, layer, &pal, cx.dark()) {
                cx.actions.push(super::action::Action::go_to(line));
            }
        }
    }
}

/// The window's first element, for a window of the profile size.
fn window_origin(ui: &mut Ui, lesson: &Lesson, state: &mut HeatMapState) {
    let n = lesson.profile_size;
    let side = crate::trace::fetches::window_side(lesson.stencil.dims);
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
    legend(ui, layer, max, pal, lesson);

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
