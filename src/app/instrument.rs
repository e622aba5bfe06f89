//! Measuring and picturing the app itself, apart from its state: the frame benchmark
//! (`--frame-bench N`: frame times as JSON, then quit) and the screenshot after the first run
//! (`--screenshot PNG`), plus the "first frame shown" line. `App::logic` calls `frame` once
//! per frame; nothing here changes what the app shows.

use super::GuiOptions;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

struct FrameBench {
    target: usize,
    last: Option<Instant>,
    times_ms: Vec<f64>,
    /// Time spent building the UI (our code plus egui's layout), per frame.
    ui_ms: Vec<f64>,
    /// eframe's CPU time of the previous frame: UI, tessellation and rendering, no vsync wait.
    cpu_ms: Vec<f64>,
    done: bool,
}

pub struct Instrument {
    bench: Option<FrameBench>,
    screenshot: Option<PathBuf>,
    run_at_start: bool,
    started: Instant,
    frames: u64,
    screenshot_requested: bool,
    screenshot_saved: Arc<AtomicBool>,
}

impl Instrument {
    pub fn new(options: &GuiOptions) -> Instrument {
        Instrument {
            bench: options.frame_bench.map(|target| FrameBench {
                target,
                last: None,
                times_ms: Vec::new(),
                ui_ms: Vec::new(),
                cpu_ms: Vec::new(),
                done: false,
            }),
            screenshot: options.screenshot.clone(),
            run_at_start: options.run_at_start,
            started: Instant::now(),
            frames: 0,
            screenshot_requested: false,
            screenshot_saved: Default::default(),
        }
    }

    /// Frames started so far (1 during the first).
    pub fn frames(&self) -> u64 {
        self.frames
    }

    fn measuring(&self) -> bool {
        self.bench.as_ref().is_some_and(|b| b.last.is_some() && !b.done)
    }

    /// eframe's CPU time of the previous frame.
    pub fn record_cpu(&mut self, seconds: Option<f32>) {
        if let (true, Some(cpu)) = (self.measuring(), seconds) {
            self.bench.as_mut().expect("measuring").cpu_ms.push(cpu as f64 * 1e3);
        }
    }

    /// Time this frame's UI took to build.
    pub fn record_ui(&mut self, built: Instant) {
        if self.measuring() {
            self.bench
                .as_mut()
                .expect("measuring")
                .ui_ms
                .push(built.elapsed().as_secs_f64() * 1e3);
        }
    }

    /// Once per frame: `running` while a run is going, `has_report` once one has finished.
    pub fn frame(&mut self, ctx: &egui::Context, running: bool, has_report: bool) {
        self.frames += 1;
        if self.frames == 2 {
            // The first frame has been presented when the second one starts.
            let since = crate::PROCESS_START.get().copied().unwrap_or(self.started);
            eprintln!(
                "haloscope: first frame shown {:.0} ms after the process started",
                since.elapsed().as_secs_f64() * 1e3
            );
        }
        // Frames are counted once a run asked for at start has finished, so the emulator does
        // not compete with the renderer for the cores.
        let settled = !self.run_at_start || (!running && self.frames > 2);
        if let Some(bench) = self.bench.as_mut().filter(|b| !b.done && settled) {
            bench.tick(ctx);
        }
        if let Some(path) = self.screenshot.clone() {
            let run_done = !self.run_at_start || (!running && has_report);
            if self.screenshot_saved.load(Ordering::Relaxed) {
                // Closed from here, not from the callback: a command sent while the
                // integration reads the pixels can be lost.
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            } else if run_done && !self.screenshot_requested && self.frames > 3 {
                self.screenshot_requested = true;
                let saved = self.screenshot_saved.clone();
                let repaint = ctx.clone();
                ctx.request_screenshot(move |image| {
                    match save_png(&image, &path, None) {
                        Ok(()) => eprintln!("haloscope: screenshot saved to {}", path.display()),
                        Err(e) => eprintln!("haloscope: screenshot failed: {e}"),
                    }
                    saved.store(true, Ordering::Relaxed);
                    repaint.request_repaint();
                });
            }
            // The screenshot is taken at the end of a later frame: keep frames coming.
            ctx.request_repaint();
        }
    }
}

impl FrameBench {
    fn tick(&mut self, ctx: &egui::Context) {
        let now = Instant::now();
        if let Some(last) = self.last {
            self.times_ms.push((now - last).as_secs_f64() * 1e3);
        }
        self.last = Some(now);
        ctx.request_repaint();
        if self.times_ms.len() < self.target {
            return;
        }
        self.done = true;
        let stats = |v: &[f64]| {
            let mut t = v[10.min(v.len() - 1)..].to_vec();
            t.sort_by(f64::total_cmp);
            (
                t.iter().sum::<f64>() / t.len() as f64,
                t[t.len() / 2],
                t[t.len() * 95 / 100],
            )
        };
        let (mean, median, p95) = stats(&self.times_ms);
        let (ui_mean, ui_median, _) = stats(&self.ui_ms);
        let (cpu_mean, cpu_median, cpu_p95) = if self.cpu_ms.len() > 11 {
            stats(&self.cpu_ms)
        } else {
            (0.0, 0.0, 0.0)
        };
        println!(
            "{{\"frames\": {}, \"frame_mean_ms\": {mean:.2}, \"frame_median_ms\": {median:.2}, \"frame_p95_ms\": {p95:.2}, \"cpu_mean_ms\": {cpu_mean:.2}, \"cpu_median_ms\": {cpu_median:.2}, \"cpu_p95_ms\": {cpu_p95:.2}, \"ui_mean_ms\": {ui_mean:.2}, \"ui_median_ms\": {ui_median:.2}}}",
            self.times_ms.len()
        );
        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
    }
}

/// Saves `image` (or the `crop` rectangle of it, in points at `pixels_per_point`) as PNG.
pub fn save_png(
    image: &egui::ColorImage,
    path: &std::path::Path,
    crop: Option<(egui::Rect, f32)>,
) -> Result<(), String> {
    let [w, h] = image.size;
    let (x0, y0, x1, y1) = match crop {
        Some((rect, ppp)) => {
            let clamp = |v: f32, max: usize| (v * ppp).round().clamp(0.0, max as f32) as usize;
            (
                clamp(rect.min.x, w),
                clamp(rect.min.y, h),
                clamp(rect.max.x, w),
                clamp(rect.max.y, h),
            )
        }
        None => (0, 0, w, h),
    };
    let mut out = image::RgbaImage::new((x1 - x0).max(1) as u32, (y1 - y0).max(1) as u32);
    for y in y0..y1 {
        for x in x0..x1 {
            let c = image.pixels[y * w + x];
            out.put_pixel(
                (x - x0) as u32,
                (y - y0) as u32,
                image::Rgba([c.r(), c.g(), c.b(), c.a()]),
            );
        }
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    out.save(path).map_err(|e| e.to_string())
}
