//! `cargo bench --bench emulator`: for every lesson kernel, the wall time of a full Run as the
//! app does it (compile, every size verified, the watched block traced, profile), the
//! profile-size launch alone with the checks on and off (warp-instructions per second), and
//! the speed-up over a naive baseline that runs one thread at a time on one core (same
//! decoded program, same checks). `HALOSCOPE_BENCH_QUICK=1` times each once.
//!
//! The live count (issue 44) launches the kernel cut to what its sectors depend on
//! (`Program::count_slice`): "launch, cut" times that against "launch, checks off" (the whole
//! kernel) in the same run; "cut, by class" is the launch the live count makes: the cut kernel
//! with blocks that provably count alike counted once per class (ptx_emu's block_classes).
//! "by class / off" is the live count's launch against the whole kernel's, same run. The
//! reference table sets the 2D and 3D solutions against a plain Rust loop that enumerates
//! their accesses by hand (reference/addresses.rs).

#[path = "reference/addresses.rs"]
mod addresses;

use haloscope::backend::emu::{Program, RunOptions, host_threads, launch_lesson_kernel, load_program};
use haloscope::backend::{BackendChoice, CancelFlag};
use haloscope::backend_policy::{Backends, GpuProbe};
use haloscope::compile::{Target, compile_kernel};
use haloscope::harness::buffers::fresh_launch_buffers;
use haloscope::harness::random_inputs;
use haloscope::lesson::{Course, Lesson};
use haloscope::pipeline::RunRequest;
use std::time::Instant;

fn program(lesson: &Lesson, kernel: &str) -> Program {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(kernel);
    let source = std::fs::read_to_string(&path).unwrap();
    let compiled = compile_kernel(&source, "kernel.cu", lesson, Target::EMULATOR, None)
        .unwrap_or_else(|e| panic!("{}", e.headline()));
    load_program(&compiled.ptx, &lesson.entry).unwrap()
}

/// What one launch computed and counted.
struct Launch {
    /// Best wall time of the repeats, seconds.
    secs: f64,
    warp_insts: u64,
    /// Thread-level figures: the same however threads are grouped into warps.
    lane_insts: u64,
    global_lanes: u64,
    sectors: u64,
    output: Vec<u32>,
}

/// Best of `repeats` launches. The buffers are made before the clock starts and lent to the
/// launch as the app lends them (no copy in or out), so that the time is the interpreter's.
fn time_launch(prog: &Program, lesson: &Lesson, n: u32, options: &RunOptions, repeats: usize) -> Launch {
    let count = lesson.stencil.elements(n);
    let inputs = random_inputs(count, 5);
    let mut best = f64::MAX;
    let mut last = None;
    for _ in 0..repeats {
        let (input, words) = fresh_launch_buffers(&inputs);
        let started = Instant::now();
        let launched =
            launch_lesson_kernel(prog, lesson, n, input, words, options, &CancelFlag::default()).expect("launch");
        best = best.min(started.elapsed().as_secs_f64());
        last = Some((launched.stats, launched.output));
    }
    let (stats, output) = last.expect("at least one launch");
    Launch {
        secs: best,
        warp_insts: stats.warp_insts(),
        lane_insts: stats.lane_insts(),
        global_lanes: stats.per_pc.iter().map(|p| p.global_lanes).sum(),
        sectors: stats.sectors(),
        output: output.iter().map(|v| v.to_bits()).collect(),
    }
}

/// The naive baseline is a fair comparison only if it does the same work: the same outputs,
/// bit for bit, and the same instructions and global accesses per thread. (Its sectors are
/// more: with one lane per warp every access is a request of its own.)
fn assert_same_work(kernel: &str, naive: &Launch, simt: &Launch) {
    assert!(
        naive.output == simt.output,
        "{kernel}: the naive baseline computed other outputs"
    );
    assert_eq!(naive.lane_insts, simt.lane_insts, "{kernel}: thread instructions");
    assert_eq!(
        naive.global_lanes, simt.global_lanes,
        "{kernel}: thread global accesses"
    );
    assert!(naive.sectors >= simt.sectors, "{kernel}: sectors");
}

/// A full Run as the app makes it on the emulator (trace of the watched block on), best of
/// `repeats`: wall seconds, and the big verification stage's share.
fn time_full_run(lesson: &Lesson, kernel: &str, repeats: usize) -> (f64, f64) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(kernel);
    let request = RunRequest::from_file(&path, Some(7), None).unwrap();
    let mut backends = Backends::new(GpuProbe::Hidden);
    let mut best = (f64::MAX, 0.0);
    for _ in 0..repeats {
        let started = Instant::now();
        let output = backends.run(
            lesson,
            &request,
            BackendChoice::Emu,
            true,
            &mut |_| {},
            &CancelFlag::default(),
        );
        let wall = started.elapsed().as_secs_f64();
        let report = output.report;
        assert!(report.profile.is_some(), "{kernel}: {}", report.headline);
        let big = format!("verify n={}", lesson.profile_size);
        let big = report
            .stages
            .iter()
            .find(|s| s.stage == big)
            .map_or(0.0, |s| s.millis / 1e3);
        if wall < best.0 {
            best = (wall, big);
        }
    }
    best
}

/// The live count of issue 44 (`pipeline::live_count`) after an edit: compile, machine-code
/// check (nvdisasm, run alongside the launch), one unchecked launch of the cut kernel at the
/// profile size, counted. Each count is of a new text (an unused `__device__` variable with a
/// new name appended), so its PTX and cubin are new and nothing is answered from a cache, as
/// after a learner's keystroke. The best of `repeats`, after one warm-up (the app's first count
/// also loads NVRTC; a learner's next keystroke does not).
fn time_live_count(lesson: &Lesson, kernel: &str, repeats: usize) -> f64 {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(kernel);
    let mut request = RunRequest::from_file(&path, Some(7), None).unwrap();
    let text = request.source.clone();
    let mut count = |edit: usize| {
        request.source = format!("{text}\n__device__ int bench_edit_{edit};\n");
        let started = Instant::now();
        let live = haloscope::pipeline::live_count::live_count(lesson, &request, &CancelFlag::default());
        assert!(live.is_ok(), "{kernel}: {live:?}");
        started.elapsed().as_secs_f64()
    };
    count(0);
    (1..=repeats).map(&mut count).fold(f64::MAX, f64::min)
}

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let course = Course::load(&root.join("lessons")).unwrap();
    let quick = std::env::var_os("HALOSCOPE_BENCH_QUICK").is_some();
    let repeats = if quick { 1 } else { 3 };
    let threads = host_threads();
    let simt = RunOptions::default();
    let unchecked = RunOptions {
        check_hazards: false,
        ..RunOptions::default()
    };
    let by_class = RunOptions {
        check_hazards: false,
        count_by_class: true,
        ..RunOptions::default()
    };
    let naive = RunOptions {
        lanes_per_warp: 1,
        host_threads: 1,
        ..RunOptions::default()
    };
    let simt_one_core = RunOptions {
        host_threads: 1,
        ..RunOptions::default()
    };
    // Every lesson's starter and solution: what a learner runs.
    let mut cases = Vec::new();
    for lesson in &course.lessons {
        for which in ["starter", "solution"] {
            let kernel = format!("kernels/{}/{which}.cu", lesson.id);
            if root.join(&kernel).exists() {
                cases.push((lesson.id.clone(), kernel));
            }
        }
    }
    println!("emulator benchmark, {threads} host thread(s), best of {repeats}\n");
    println!(
        "| kernel | full run (app) | of which verify n=profile | live count after an edit | n | warp instr | launch, checks on | Mwarp-instr/s on | launch, checks off | Mwarp-instr/s off | launch, cut | cut / off | cut, by class | by class / off | sectors |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut measured = std::collections::BTreeMap::new();
    for (id, kernel) in &cases {
        let lesson = course.get(id).unwrap();
        let prog = program(lesson, kernel);
        let n = lesson.profile_size;
        let (wall, big) = time_full_run(lesson, kernel, repeats);
        let live = time_live_count(lesson, kernel, repeats);
        let on = time_launch(&prog, lesson, n, &simt, repeats);
        let off = time_launch(&prog, lesson, n, &unchecked, repeats);
        assert_eq!(
            (on.sectors, on.warp_insts, &on.output),
            (off.sectors, off.warp_insts, &off.output),
            "{kernel}: the checks must not change what is counted"
        );
        // The kernel cut to its sectors' slice, as the live count launches it: the same
        // sectors, fewer instructions (when it can be cut at all).
        let cut = prog
            .count_slice()
            .map(|cut| time_launch(&cut, lesson, n, &unchecked, repeats));
        if let Some(cut) = &cut {
            assert_eq!(cut.sectors, off.sectors, "{kernel}: the cut kernel's sectors");
        }
        // What the live count launches: the cut kernel (or the whole one) counted by class.
        let classed = match prog.count_slice() {
            Some(cut) => time_launch(&cut, lesson, n, &by_class, repeats),
            None => time_launch(&prog, lesson, n, &by_class, repeats),
        };
        assert_eq!(
            (classed.sectors, classed.global_lanes),
            (off.sectors, off.global_lanes),
            "{kernel}: counting by class must count what every block counts"
        );
        measured.insert(
            kernel.clone(),
            Measured {
                cut: cut.as_ref().map(|c| c.secs),
                by_class: classed.secs,
                off: off.secs,
                sectors: off.sectors,
            },
        );
        let (cut_secs, cut_ratio) = match &cut {
            Some(c) => (format!("{:.3} s", c.secs), format!("{:.2}x", off.secs / c.secs)),
            None => ("not cut".to_string(), "-".to_string()),
        };
        println!(
            "| {kernel} | {wall:.3} s | {big:.3} s | {live:.3} s | {n} | {} | {:.3} s | {:.1} | {:.3} s | {:.1} | {cut_secs} | {cut_ratio} | {:.4} s | {:.1}x | {} |",
            on.warp_insts,
            on.secs,
            on.warp_insts as f64 / on.secs / 1e6,
            off.secs,
            off.warp_insts as f64 / off.secs / 1e6,
            classed.secs,
            off.secs / classed.secs,
            on.sectors
        );
    }
    reference_table(&course, &measured, repeats);
    println!("\nnaive baseline (one thread at a time, one core) vs SIMT warps, at a smaller size\n");
    println!("| kernel | n | naive | SIMT, 1 core | SIMT, {threads} cores | speed-up (1 core) | speed-up (all) |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (id, kernel) in &cases {
        let lesson = course.get(id).unwrap();
        let prog = program(lesson, kernel);
        // About a million threads: big enough to time, small enough for the naive baseline.
        let n = naive_size(lesson);
        let naive = time_launch(&prog, lesson, n, &naive, 1);
        let one = time_launch(&prog, lesson, n, &simt_one_core, repeats);
        let all = time_launch(&prog, lesson, n, &simt, repeats);
        assert_same_work(kernel, &naive, &one);
        assert_same_work(kernel, &naive, &all);
        // Host threads split the grid; they must not change what is counted.
        assert_eq!(
            (one.sectors, one.warp_insts, &one.output),
            (all.sectors, all.warp_insts, &all.output),
            "{kernel}: one core against all"
        );
        println!(
            "| {kernel} | {n} | {:.3} s | {:.3} s | {:.3} s | {:.1}x | {:.1}x |",
            naive.secs,
            one.secs,
            all.secs,
            naive.secs / one.secs,
            naive.secs / all.secs
        );
    }
}

/// The size with about a million elements in the lesson's dimensions (1024 in 2D, 64 in 3D,
/// as the earlier table had).
fn naive_size(lesson: &Lesson) -> u32 {
    let mut n = 1u32;
    while lesson.stencil.elements(n * 2) <= 1 << 20 {
        n *= 2;
    }
    n
}

/// A kernel's launches at the profile size in the first table: the cut kernel's and the whole
/// kernel's (checks off) times, and the sectors they counted.
struct Measured {
    cut: Option<f64>,
    /// The live count's launch: cut where it can be, counted by class.
    by_class: f64,
    off: f64,
    sectors: u64,
}

/// A kernel's sectors at size n, enumerated by hand (reference/addresses.rs).
type ByHand = fn(i64) -> u64;

/// The 2D and 3D solutions' sectors enumerated by a plain Rust loop (reference/addresses.rs),
/// timed beside the emulator's launches of the same run: how far the interpreter is from a
/// count with no interpreter, as a ratio.
fn reference_table(course: &Course, measured: &std::collections::BTreeMap<String, Measured>, repeats: usize) {
    println!("\nsame-run reference: the accesses enumerated by hand in Rust, at the profile size\n");
    println!(
        "| kernel | n | sectors | Rust loop | cut, by class | by class / Rust | launch, cut | cut / Rust | launch, checks off | off / Rust |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let cases: [(&str, &str, ByHand); 2] = [
        ("stencil-2d", "kernels/stencil-2d/solution.cu", addresses::solution_2d),
        ("stencil-3d", "kernels/stencil-3d/solution.cu", addresses::solution_3d),
    ];
    for (id, kernel, by_hand) in cases {
        let lesson = course.get(id).unwrap();
        let n = lesson.profile_size;
        let mut best = f64::MAX;
        let mut sectors = 0;
        for _ in 0..repeats.max(3) {
            let started = Instant::now();
            sectors = std::hint::black_box(by_hand(std::hint::black_box(n as i64)));
            best = best.min(started.elapsed().as_secs_f64());
        }
        let emulated = &measured[kernel];
        assert_eq!(
            sectors, emulated.sectors,
            "{kernel}: the hand enumeration must count the emulator's sectors"
        );
        let (cut, off, classed) = (emulated.cut.unwrap_or(f64::NAN), emulated.off, emulated.by_class);
        println!(
            "| {kernel} | {n} | {sectors} | {:.4} s | {classed:.4} s | {:.1}x | {cut:.3} s | {:.0}x | {off:.3} s | {:.0}x |",
            best,
            classed / best,
            cut / best,
            off / best
        );
    }
}
