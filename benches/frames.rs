//! `cargo bench --bench frames`: does typing stay smooth while a live count runs (issue 44)?
//! The app under egui_kittest (its UI code, no GPU painting), stepped frame by frame: the
//! wall time of each frame while nothing runs in the background, and while the live count of
//! the text just typed runs on the emulator's worker threads (on a 2-core machine they share
//! the cores with the UI thread). Each "keystroke" appends a comment to the editor's text, as
//! an edit does, so every count is a fresh one (compile, cut, launch at the profile size).

#[path = "../tests/common/app.rs"]
#[allow(dead_code)]
mod app;

use egui_kittest::Harness;
use haloscope::app::App;
use std::time::{Duration, Instant};

/// Where `app.rs` finds the course.
fn root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Frame times of `frames` frames, one edit before the first (and none after).
fn frames_after_an_edit(h: &mut Harness<'static, App>, frames: usize, edit: usize) -> (Vec<Duration>, usize) {
    h.state_mut().editor.text.push_str(&format!("\n// edit {edit}"));
    let mut times = Vec::with_capacity(frames);
    let mut busy = 0;
    for _ in 0..frames {
        let started = Instant::now();
        h.step();
        times.push(started.elapsed());
        busy += h.state().live.busy() as usize;
        // About 60 frames a second, as a display would ask for them.
        std::thread::sleep(Duration::from_millis(16).saturating_sub(started.elapsed()));
    }
    (times, busy)
}

fn summary(times: &mut [Duration]) -> (f64, f64, f64) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let at = |q: f64| ms(times[((times.len() - 1) as f64 * q) as usize]);
    (at(0.5), at(0.95), ms(*times.last().unwrap()))
}

fn main() {
    let data = tempfile::tempdir().unwrap();
    println!("frame times of the app (egui_kittest, UI code only), 60 frames after each of 5 edits\n");
    println!(
        "| lesson text | live figures | frames with a count in flight | median | 95th percentile | longest | last count's latency |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");
    for kernel in ["kernels/stencil-2d/solution.cu", "kernels/stencil-3d/solution.cu"] {
        let lesson = kernel.split('/').nth(1).unwrap();
        for live in [false, true] {
            let mut h = app::harness(data.path(), lesson);
            h.state_mut().saved.prefs.live_figures = live;
            h.state_mut().editor.text = std::fs::read_to_string(root().join(kernel)).unwrap();
            // Let the first count (NVRTC's first load) finish before measuring.
            for _ in 0..200 {
                h.step();
                std::thread::sleep(Duration::from_millis(16));
            }
            let mut all = Vec::new();
            let mut in_flight = 0;
            for edit in 0..5 {
                let (mut times, busy) = frames_after_an_edit(&mut h, 60, edit);
                all.append(&mut times);
                in_flight += busy;
            }
            let (median, p95, longest) = summary(&mut all);
            let latency = h
                .state()
                .live
                .last_latency
                .map_or("-".to_string(), |l| format!("{} ms", l.as_millis()));
            println!(
                "| {kernel} | {} | {in_flight} of {} | {median:.2} ms | {p95:.2} ms | {longest:.2} ms | {latency} |",
                if live { "on" } else { "off" },
                all.len()
            );
        }
    }
}
