// Dev helper for profiling: one emulated launch of a lesson kernel on one host thread, at
// the profile size or at $N (`N=512 valgrind --tool=callgrind target/release/examples/emu_one
// stencil-2d kernels/stencil-2d/solution.cu` counts instructions, repeatably). A third
// argument prints the warp instructions per opcode.
use haloscope::backend::CancelFlag;
use haloscope::compile::{Target, compile_kernel};
use haloscope::emu::{RunOptions, load_program, run_lesson_kernel};
use haloscope::harness::{poisoned_output, random_inputs};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let course = haloscope::lesson::Course::load(std::path::Path::new("lessons")).unwrap();
    let lesson = course.get(&args[1]).unwrap();
    let src = std::fs::read_to_string(&args[2]).unwrap();
    let k = compile_kernel(&src, "k.cu", lesson, Target::EMULATOR, None).unwrap();
    let prog = load_program(&k.ptx, &lesson.entry).unwrap();
    let n = std::env::var("N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(lesson.profile_size);
    let input = random_inputs(lesson.stencil.elements(n), 1);
    let mut out = poisoned_output(input.len());
    let t = std::time::Instant::now();
    let stats = run_lesson_kernel(
        &prog,
        lesson,
        n,
        &input,
        &mut out,
        &RunOptions {
            host_threads: 1,
            ..RunOptions::default()
        },
        &CancelFlag::default(),
    )
    .unwrap();
    eprintln!(
        "{:.3} s, {} warp instructions, {:.1} M/s",
        t.elapsed().as_secs_f64(),
        stats.warp_insts,
        stats.warp_insts as f64 / t.elapsed().as_secs_f64() / 1e6
    );
    if args.len() > 3 {
        let mut by_op: std::collections::BTreeMap<String, u64> = Default::default();
        for (inst, s) in prog.insts.iter().zip(&stats.per_pc) {
            *by_op.entry(inst.opcode.clone()).or_default() += s.warp_insts;
        }
        let mut v: Vec<_> = by_op.into_iter().collect();
        v.sort_by_key(|(_, c)| std::cmp::Reverse(*c));
        for (op, c) in v.iter().take(20) {
            eprintln!("{c:>10} {op}");
        }
    }
}
