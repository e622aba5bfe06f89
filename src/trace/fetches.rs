//! The fetch heat map: compile a kernel for the emulator and run it once at a size the
//! learner picks, counting how often each input element (or window of them) was fetched
//! from global memory. The app's Heat map view and `haloscope heatmap` both come here.

use crate::backend::CancelFlag;
use crate::backend::emu::fetch_map::{FetchMap, FetchWindow};
use crate::backend::emu::{RunOptions, load_program, run_lesson_kernel};
use crate::compile::RunRequest;
use crate::compile::{Target, compile_kernel};
use crate::harness::{poisoned_output, random_inputs};
use crate::lesson::Lesson;

/// Sizes the view offers besides the profile size's window: the lesson's small verification
/// sizes.
pub fn offered_sizes(lesson: &Lesson) -> Vec<u32> {
    lesson
        .verify_sizes
        .iter()
        .copied()
        .filter(|&n| n < lesson.profile_size)
        .collect()
}

/// Elements per axis of the window counted of a large launch: 4,096 in 1D (n=1000 whole), a
/// 2D window of 512 x 512 (n=257 whole), a 3D one of 64^3 (n=33 whole; about a quarter
/// million cells, 4 MB of counts).
pub fn window_side(dims: u32) -> u32 {
    match dims {
        1 => 1 << 12,
        2 => 512,
        _ => 64,
    }
}

/// What to count: the whole grid of a small size, or a window of a large one.
pub fn window_for(lesson: &Lesson, n: u32, origin: [u32; 3]) -> FetchWindow {
    let dims = lesson.stencil.dims;
    if n <= window_side(dims) {
        FetchWindow::whole(n, dims)
    } else {
        FetchWindow::window(n, dims, origin, window_side(dims))
    }
}

/// Compiles `request` and counts the fetches of one launch in `window`.
pub fn fetch_map(
    lesson: &Lesson,
    request: &RunRequest,
    window: FetchWindow,
    cancel: &CancelFlag,
) -> Result<FetchMap, String> {
    let compiled = compile_kernel(
        &request.source,
        &request.source_name,
        lesson,
        Target::EMULATOR,
        request.nvrtc_path.as_deref(),
    )
    .map_err(|e| e.headline())?;
    let prog = load_program(&compiled.ptx, &compiled.entry)
        .map_err(|e| format!("the emulator cannot run this kernel: {e}"))?;
    let n = window.n;
    let count = lesson.stencil.elements(n);
    let input = random_inputs(count, request.seed.unwrap_or(1));
    let mut output = poisoned_output(count);
    let options = RunOptions {
        fetch_window: Some(window),
        ..RunOptions::default()
    };
    let (_, observed) = run_lesson_kernel(&prog, lesson, n, &input, &mut output, &options, cancel)
        .map_err(|f| crate::backend::emu::kernel_fault(&prog, f).message())?;
    observed
        .fetch_map
        .ok_or_else(|| "the launch ran no block, so nothing was fetched".to_string())
}

/// Figures of a map for a headline: total lane loads, distinct elements fetched, the most
/// fetches of one element, the mean over the elements fetched at least once, and the input
/// sectors.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct FetchSummary {
    pub loads: u64,
    pub elements_fetched: u64,
    pub max_loads: u32,
    pub mean_loads: f64,
    /// Input sectors the whole launch's loads fetched (window or not).
    pub input_sectors: u64,
}

pub fn summary(map: &FetchMap) -> FetchSummary {
    let loads: u64 = map.loads.iter().map(|&c| c as u64).sum();
    let elements_fetched = map.loads.iter().filter(|&&c| c > 0).count() as u64;
    FetchSummary {
        loads,
        elements_fetched,
        max_loads: map.loads.iter().copied().max().unwrap_or(0),
        mean_loads: if elements_fetched == 0 {
            0.0
        } else {
            loads as f64 / elements_fetched as f64
        },
        input_sectors: map.input_sectors,
    }
}
