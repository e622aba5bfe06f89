//! `cargo bench --bench emulator`: wall time of one emulated profile-size launch of the lesson
//! kernels, warp-instructions per second, and the speed-up over a naive baseline that runs
//! one thread at a time on one core (same decoded program, same checks).

use haloscope::backend::CancelFlag;
use haloscope::compile::{Target, compile_kernel};
use haloscope::emu::{Program, RunOptions, host_threads, load_program, run_lesson_kernel};
use haloscope::harness::{poisoned_output, random_inputs};
use haloscope::lesson::{Course, Lesson};
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

/// Best of `repeats` launches.
fn time_launch(prog: &Program, lesson: &Lesson, n: u32, options: &RunOptions, repeats: usize) -> Launch {
    let count = lesson.stencil.elements(n);
    let input = random_inputs(count, 5);
    let mut best = f64::MAX;
    let mut last = None;
    for _ in 0..repeats {
        let mut output = poisoned_output(count);
        let started = Instant::now();
        let stats =
            run_lesson_kernel(prog, lesson, n, &input, &mut output, options, &CancelFlag::default()).expect("launch");
        best = best.min(started.elapsed().as_secs_f64());
        last = Some((stats, output));
    }
    let (stats, output) = last.expect("at least one launch");
    Launch {
        secs: best,
        warp_insts: stats.warp_insts,
        lane_insts: stats.lane_insts,
        global_lanes: stats.per_pc.iter().map(|p| p.global_lanes).sum(),
        sectors: stats.per_pc.iter().map(|p| p.sectors).sum(),
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

fn main() {
    let course = Course::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("lessons")).unwrap();
    let threads = host_threads();
    let simt = RunOptions::default();
    let naive = RunOptions {
        lanes_per_warp: 1,
        host_threads: 1,
        ..RunOptions::default()
    };
    let simt_one_core = RunOptions {
        host_threads: 1,
        ..RunOptions::default()
    };
    let cases = [
        ("stencil-2d", "kernels/stencil-2d/starter.cu", 1024),
        ("stencil-2d", "kernels/stencil-2d/solution.cu", 1024),
        ("stencil-3d", "kernels/stencil-3d/starter.cu", 64),
        ("stencil-3d", "kernels/stencil-3d/solution.cu", 64),
    ];
    println!("emulator benchmark, {threads} host thread(s)\n");
    println!("| kernel | n | wall per launch | warp instr | Mwarp-instr/s | sectors |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (id, kernel, _) in cases {
        let lesson = course.get(id).unwrap();
        let prog = program(lesson, kernel);
        let n = lesson.profile_size;
        let l = time_launch(&prog, lesson, n, &simt, 3);
        println!(
            "| {kernel} | {n} | {:.3} s | {} | {:.1} | {} |",
            l.secs,
            l.warp_insts,
            l.warp_insts as f64 / l.secs / 1e6,
            l.sectors
        );
    }
    println!("\nnaive baseline (one thread at a time, one core) vs SIMT warps, at a smaller size\n");
    println!("| kernel | n | naive | SIMT, 1 core | SIMT, {threads} cores | speed-up (1 core) | speed-up (all) |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (id, kernel, n) in cases {
        let lesson = course.get(id).unwrap();
        let prog = program(lesson, kernel);
        let naive = time_launch(&prog, lesson, n, &naive, 1);
        let one = time_launch(&prog, lesson, n, &simt_one_core, 3);
        let all = time_launch(&prog, lesson, n, &simt, 3);
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
