//! The emulator's quick forms (crates/ptx-emu/src/quick.rs: common ALU instructions decoded once and
//! run in `run_warp` without `execute`) must compute what the general path computes: every
//! NVRTC fixture, the recorded corpus PTX and an edge-value kernel run both ways give the
//! same output bits, the same per-instruction counts and sectors, and the same fault.

mod common;

use haloscope::backend::CancelFlag;
use haloscope::backend::emu::{Program, RunOptions, load_program, run_lesson_kernel};
use haloscope::compile::{Target, compile_kernel};
use haloscope::harness::random_inputs;
use haloscope::lesson::Lesson;

/// What one run gave: output bits and (warp instructions, lanes, sectors) per instruction,
/// or the fault.
type Outcome = Result<(Vec<u32>, Vec<(u64, u64, u64)>), String>;

fn run(p: &Program, lesson: &Lesson, n: u32, seed: u64) -> Outcome {
    let count = lesson.stencil.elements(n);
    let input = random_inputs(count, seed);
    let mut output = vec![f32::NAN; count];
    let options = RunOptions {
        step_budget: 1 << 20,
        host_threads: 1,
        ..RunOptions::default()
    };
    run_lesson_kernel(p, lesson, n, &input, &mut output, &options, &CancelFlag::default())
        .map(|(stats, _)| {
            let per_pc = stats
                .per_pc
                .iter()
                .map(|s| (s.warp_insts, s.active_lanes, s.sectors))
                .collect();
            (output.iter().map(|v| v.to_bits()).collect(), per_pc)
        })
        .map_err(|f| format!("{:?}", f.kind))
}

/// Runs `ptx` with and without quick forms at the lesson's smallest two sizes.
fn same_both_ways(name: &str, ptx: &str, lesson: &Lesson) {
    let quick = load_program(ptx, &lesson.entry).unwrap_or_else(|e| panic!("{name}: {e}"));
    let general = quick.without_quick_forms();
    let mut sizes = lesson.verify_sizes.clone();
    sizes.sort();
    for (k, &n) in sizes.iter().take(2).enumerate() {
        let seed = 11 + k as u64;
        let (a, b) = (run(&quick, lesson, n, seed), run(&general, lesson, n, seed));
        match (&a, &b) {
            (Ok((out_a, pc_a)), Ok((out_b, pc_b))) => {
                if let Some(at) = out_a.iter().zip(out_b).position(|(x, y)| x != y) {
                    panic!(
                        "{name} n={n}: output {at} is {:#x} quick, {:#x} general",
                        out_a[at], out_b[at]
                    );
                }
                assert_eq!(pc_a, pc_b, "{name} n={n}: per-instruction counts");
            }
            _ => assert_eq!(a.err(), b.err(), "{name} n={n}: fault"),
        }
    }
}

/// (lesson id, file) pairs of a directory of `<lesson>_<rest>.ptx` files.
fn ptx_files(dir: &str, prefix: &str) -> Vec<(String, std::path::PathBuf)> {
    let mut files: Vec<_> = std::fs::read_dir(common::root().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let stem = path.file_name().unwrap().to_string_lossy().into_owned();
            let rest = stem.strip_prefix(prefix).unwrap_or(&stem);
            let lesson = rest.split('_').next().unwrap().to_string();
            (lesson, path)
        })
        .collect()
}

#[test]
fn every_fixture_runs_the_same_with_and_without_quick_forms() {
    let course = common::course();
    let mut files = ptx_files("tests/fixtures/ptx", "ptx_");
    files.extend(ptx_files("tests/corpus/ptx-nvrtc-13.0", ""));
    assert!(files.len() >= 30, "fixtures found: {}", files.len());
    for (lesson, path) in files {
        let lesson = course
            .get(&lesson)
            .unwrap_or_else(|| panic!("{}: lesson {lesson}", path.display()));
        let ptx = std::fs::read_to_string(&path).unwrap();
        same_both_ways(&path.display().to_string(), &ptx, lesson);
    }
}

#[test]
fn edge_values_compute_the_same_with_and_without_quick_forms() {
    let lesson = common::lesson("stencil-1d");
    let path = common::root().join("tests/fixtures/kernels/alu_edges.cu");
    let source = std::fs::read_to_string(&path).unwrap();
    let compiled = compile_kernel(&source, "alu_edges.cu", &lesson, Target::EMULATOR, None)
        .unwrap_or_else(|e| panic!("{}", e.headline()));
    // The kernel must exercise the quick forms it is here for.
    for op in [
        "shl.b32",
        "shr.u32",
        "shr.s32",
        "mul.wide.s32",
        "mul.lo.s64",
        "min.s32",
        "max.s32",
        "setp.lt.u32",
        "fma.rn.f32",
    ] {
        assert!(
            compiled.ptx.contains(op),
            "alu_edges.cu no longer compiles to {op}:\n{}",
            compiled.ptx
        );
    }
    same_both_ways("alu_edges.cu", &compiled.ptx, &lesson);
}
