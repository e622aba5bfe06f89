//! The emulator backend: a CPU executor of the PTX that NVRTC emits, with warps of 32 lanes
//! in lockstep, exact global-memory sector counts (as `smsp__sass_sectors_mem_global`
//! counts them) and the learner-facing checks (out-of-bounds, uninitialised shared reads,
//! shared-memory races, divergent barriers, runaway loops).
//!
//! The interpreter itself is the `ptx-emu` crate (crates/ptx-emu); this module is its
//! haloscope side: launching a lesson's kernel on the lesson's buffers, and the `Backend`.

mod ahead;
mod backend;

pub use crate::harness::parallel::host_threads;
pub use backend::{EmulatorBackend, EmulatorOptions, kernel_fault, kernel_output, sector_profile};
pub use ptx_emu::BufferId;
pub use ptx_emu::{
    Collect, EmuFault, EmuFaultKind, GlobalMemory, LaunchConfig, LaunchStats, Observer, PcStats, Program, TraceSpace,
    TracedAccess, coverage, fetch_map, launch,
};

/// The lesson's input array: `launch_lesson_kernel` allocates it first.
pub const INPUT: BufferId = BufferId(0);
/// The lesson's output array, allocated second.
pub const OUTPUT: BufferId = BufferId(1);

/// How a buffer is called in messages: the kernel's parameter names, or the `__device__`
/// variable's own name.
pub fn buffer_name(prog: &Program, buffer: BufferId) -> &str {
    match buffer {
        INPUT => "in",
        OUTPUT => "out",
        BufferId(k) => prog.global_name(k as usize - 2).unwrap_or("?"),
    }
}

use crate::backend::CancelFlag;
use crate::harness;
use crate::lesson::{Contract, ParamKind};
use crate::ptx::PtxError;

/// Parses and decodes the lesson's entry from PTX text.
pub fn load_program(ptx: &str, entry: &str) -> Result<Program, PtxError> {
    Program::from_ptx(ptx, entry)
}

/// Knobs of one emulated launch.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub check_hazards: bool,
    pub watch: Option<[u32; 3]>,
    pub step_budget: u64,
    pub lanes_per_warp: u32,
    pub host_threads: usize,
    /// Count the input's fetches in this window (the heat map).
    pub fetch_window: Option<fetch_map::FetchWindow>,
    /// Blocks finished so far, counted up as the launch goes (for a progress bar).
    pub blocks_done: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// Count blocks that provably count alike once per class (ptx_emu's block_classes): for
    /// launches that only count (checks off).
    pub count_by_class: bool,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            check_hazards: true,
            watch: None,
            step_budget: 1 << 25,
            lanes_per_warp: 32,
            host_threads: host_threads(),
            fetch_window: None,
            blocks_done: None,
            count_by_class: false,
        }
    }
}

/// Launches the lesson's kernel once at size `n`: `input` is copied to a device buffer,
/// `output` is the (poisoned) output buffer and receives what the kernel wrote.
pub fn run_lesson_kernel(
    prog: &Program,
    lesson: &Contract,
    n: u32,
    input: &[f32],
    output: &mut [f32],
    options: &RunOptions,
    cancel: &CancelFlag,
) -> Result<(LaunchStats, Collect), EmuFault> {
    let words = output.iter().map(|v| v.to_bits()).collect();
    let launched = launch_lesson_kernel(prog, lesson, n, input.to_vec(), words, options, cancel)?;
    output.copy_from_slice(&launched.output);
    Ok((launched.stats, launched.observed))
}

/// What one launch leaves behind.
pub struct Launched {
    pub stats: LaunchStats,
    /// The launch's events: the watched block's trace, findings, printf text, fetch map.
    pub observed: Collect,
    /// The output buffer's contents after the launch.
    pub output: Vec<f32>,
    /// The input array, lent to the launch as its input buffer, handed back.
    pub input: Vec<f32>,
    /// Whether the kernel stored into its input buffer (through a cast: the parameter is
    /// `const`), so that `input` is no longer what was drawn.
    pub input_changed: bool,
}

/// Launches the lesson's kernel once at size `n` on a freshly poisoned output buffer, with
/// `input` lent as the input buffer (no copy: at the profile sizes it is 64 MiB or more).
/// The verification path.
pub fn launch_on_poisoned_output(
    prog: &Program,
    lesson: &Contract,
    n: u32,
    input: Vec<f32>,
    options: &RunOptions,
    cancel: &CancelFlag,
) -> Result<Launched, EmuFault> {
    let mut words = harness::buffers::zeroed_u32(input.len());
    harness::parallel::fill_in_chunks(&mut words, |_, part| part.fill(harness::POISON_BITS));
    crate::timeline("output poisoned");
    launch_lesson_kernel(prog, lesson, n, input, words, options, cancel)
}

/// One launch with `input` and `output` (its words) as the buffers, both taken over without
/// a copy and handed back in the result.
pub fn launch_lesson_kernel(
    prog: &Program,
    lesson: &Contract,
    n: u32,
    input: Vec<f32>,
    output: Vec<u32>,
    options: &RunOptions,
    cancel: &CancelFlag,
) -> Result<Launched, EmuFault> {
    let input_floats = input.len() as u64;
    let mut mem = GlobalMemory::default();
    mem.track_races = options.check_hazards;
    // Allocated first and second: the buffers `INPUT` and `OUTPUT` name.
    let in_address = mem.alloc_input("in", input);
    let out_address = mem.alloc_words("out", output);
    prog.place_globals(&mut mem);
    let values: Vec<u64> = lesson
        .params
        .iter()
        .map(|param| match param.kind {
            ParamKind::ConstFloatPtr => in_address,
            ParamKind::FloatPtr => out_address,
            ParamKind::Int => n as u64,
        })
        .collect();
    let params = prog.parameter_buffer(&values);
    let cfg = LaunchConfig {
        grid: lesson.grid_for(n),
        block: lesson.block,
        params,
        dynamic_shared: lesson.dynamic_shared_bytes,
        check_hazards: options.check_hazards,
        watch: options.watch,
        step_budget: options.step_budget,
        lanes_per_warp: options.lanes_per_warp,
        fetch_map: options
            .fetch_window
            .map(|w| (w, in_address, in_address + 4 * input_floats)),
        cluster: lesson.cluster,
        count_by_class: options.count_by_class,
    };
    crate::timeline("emulator memory ready");
    let mut observer = Collect {
        blocks_done: options.blocks_done.clone(),
        ..Collect::default()
    };
    let stats = launch(prog, &cfg, &mem, &mut observer, cancel, options.host_threads)?;
    crate::timeline("emulator launch done");
    Ok(Launched {
        stats,
        observed: observer,
        output: mem.take_f32(OUTPUT),
        input_changed: mem.stored_into(INPUT),
        input: mem.take_f32(INPUT),
    })
}
