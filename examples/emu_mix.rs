//! `cargo run --release --example emu_mix -- LESSON KERNEL.cu [n]`: one emulated launch of a
//! kernel at the lesson's profile size (or `n`), then its wall time and the warp-instructions
//! executed per opcode, most first: what to make fast in the interpreter. `EMU_MIX_REPEATS=k`
//! launches k times and reports the fastest (the buffers are made before each clock starts
//! and lent to the launch without a copy, as the app's verification does).

use haloscope::backend::CancelFlag;
use haloscope::backend::emu::{LaunchStats, RunOptions, launch_lesson_kernel, load_program};
use haloscope::compile::{Target, compile_kernel};
use haloscope::harness::buffers::fresh_launch_buffers;
use haloscope::harness::random_inputs;
use haloscope::lesson::Course;
use std::collections::BTreeMap;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [lesson_id, kernel, rest @ ..] = args.as_slice() else {
        panic!("usage: emu_mix LESSON KERNEL.cu [n]");
    };
    let course = Course::load(std::path::Path::new("lessons")).expect("lessons");
    let lesson = course.get(lesson_id).expect("lesson");
    let source = std::fs::read_to_string(kernel).expect("kernel");
    let compiled = compile_kernel(&source, "kernel.cu", lesson, Target::EMULATOR, None)
        .unwrap_or_else(|e| panic!("{}", e.headline()));
    let prog = load_program(&compiled.ptx, &lesson.entry).expect("decode");
    let n = rest.first().map_or(lesson.profile_size, |s| s.parse().expect("n"));
    let count = lesson.stencil.elements(n);
    let inputs = random_inputs(count, 1);
    let options = RunOptions {
        // EMU_MIX_NO_CHECKS=1: what the shared-memory race and uninitialised-read
        // checks cost, by difference.
        check_hazards: std::env::var_os("EMU_MIX_NO_CHECKS").is_none(),
        ..RunOptions::default()
    };
    let repeats: usize = std::env::var("EMU_MIX_REPEATS").map_or(1, |s| s.parse().expect("EMU_MIX_REPEATS"));
    let mut best: Option<(f64, LaunchStats)> = None;
    for _ in 0..repeats.max(1) {
        let (input, words) = fresh_launch_buffers(&inputs);
        let started = Instant::now();
        let launched =
            launch_lesson_kernel(&prog, lesson, n, input, words, &options, &CancelFlag::default()).expect("launch");
        let secs = started.elapsed().as_secs_f64();
        if best.as_ref().is_none_or(|(b, _)| secs < *b) {
            best = Some((secs, launched.stats));
        }
    }
    let (secs, stats) = best.expect("one launch");
    println!(
        "n={n}: {:.3} s, {} warp-instructions, {:.1} M/s, {:.1} lanes each",
        secs,
        stats.warp_insts(),
        stats.warp_insts() as f64 / secs / 1e6,
        stats.lane_insts() as f64 / stats.warp_insts() as f64
    );
    let mut by_opcode: BTreeMap<&str, u64> = BTreeMap::new();
    for (inst, s) in prog.instructions().zip(&stats.per_pc) {
        *by_opcode.entry(inst.opcode).or_default() += s.warp_insts;
    }
    let mut rows: Vec<_> = by_opcode.into_iter().filter(|(_, c)| *c > 0).collect();
    rows.sort_by_key(|(_, c)| std::cmp::Reverse(*c));
    for (opcode, c) in rows {
        println!(
            "{:>6.2}%  {c:>12}  {opcode}",
            100.0 * c as f64 / stats.warp_insts() as f64
        );
    }
}
