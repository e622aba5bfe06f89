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

/// Best of `repeats` launches: (seconds, warp instructions, sectors).
fn time_launch(prog: &Program, lesson: &Lesson, n: u32, options: &RunOptions, repeats: usize) -> (f64, u64, u64) {
    let count = lesson.stencil.elements(n);
    let input = random_inputs(count, 5);
    let mut best = f64::MAX;
    let mut counts = (0, 0);
    for _ in 0..repeats {
        let mut output = poisoned_output(count);
        let started = Instant::now();
        let stats =
            run_lesson_kernel(prog, lesson, n, &input, &mut output, options, &CancelFlag::default()).expect("launch");
        best = best.min(started.elapsed().as_secs_f64());
        counts = (stats.warp_insts, stats.per_pc.iter().map(|p| p.sectors).sum());
    }
    (best, counts.0, counts.1)
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
        let (secs, insts, sectors) = time_launch(&prog, lesson, n, &simt, 3);
        println!(
            "| {kernel} | {n} | {secs:.3} s | {insts} | {:.1} | {sectors} |",
            insts as f64 / secs / 1e6
        );
    }
    println!("\nnaive baseline (one thread at a time, one core) vs SIMT warps, at a smaller size\n");
    println!("| kernel | n | naive | SIMT, 1 core | SIMT, {threads} cores | speed-up (1 core) | speed-up (all) |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (id, kernel, n) in cases {
        let lesson = course.get(id).unwrap();
        let prog = program(lesson, kernel);
        let (t_naive, _, _) = time_launch(&prog, lesson, n, &naive, 1);
        let (t_one, _, _) = time_launch(&prog, lesson, n, &simt_one_core, 3);
        let (t_all, _, _) = time_launch(&prog, lesson, n, &simt, 3);
        println!(
            "| {kernel} | {n} | {t_naive:.3} s | {t_one:.3} s | {t_all:.3} s | {:.1}x | {:.1}x |",
            t_naive / t_one,
            t_naive / t_all
        );
    }
}
