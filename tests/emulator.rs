//! The emulator: hand-counted sectors on a corpus of small kernels, the lesson kernels
//! against the CPU reference, and the learner-facing checks.

mod common;

use haloscope::backend::emu::{RunOptions, load_program, run_lesson_kernel};
use haloscope::backend::{BackendChoice, CancelFlag, FindingKind, KernelFault};
use haloscope::backend_policy::run_lesson;
use haloscope::compile::{Target, compile_kernel};
use haloscope::lesson::{GridDim, GridRule, Lesson};
use haloscope::pipeline::RunRequest;
use haloscope::report::Verdict;

/// A one-warp launch contract: entry `k(const float*, float*, int)`, block 32, grid 1.
fn one_warp_lesson() -> Lesson {
    let mut lesson = common::lesson("stencil-1d");
    lesson.entry = "k".into();
    lesson.block = [32, 1, 1];
    lesson.grid = GridRule([GridDim::Fixed { count: 1 }; 3]);
    lesson
}

struct Counted {
    sectors: u64,
    loads: u64,
    stores: u64,
    ideal: u64,
}

/// Compiles a corpus kernel and runs it once on 2048 floats.
fn count(file: &str) -> Counted {
    let lesson = one_warp_lesson();
    let path = common::root().join("tests/emu_corpus").join(file);
    let source = std::fs::read_to_string(&path).unwrap();
    let kernel =
        compile_kernel(&source, file, &lesson, Target::EMULATOR, None).unwrap_or_else(|e| panic!("{}", e.headline()));
    let prog = load_program(&kernel.ptx, "k").unwrap();
    let input = vec![1.0f32; 2048];
    let mut output = vec![0.0f32; 2048];
    let (stats, _) = run_lesson_kernel(
        &prog,
        &lesson,
        2048,
        &input,
        &mut output,
        &RunOptions::default(),
        &CancelFlag::default(),
    )
    .unwrap();
    let profile = haloscope::backend::emu::sector_profile(&prog, &stats, 2048, 1, &Default::default());
    Counted {
        sectors: profile.sectors,
        loads: profile.load_sectors,
        stores: profile.store_sectors,
        ideal: profile.ideal_sectors,
    }
}

#[test]
fn aligned_row_is_four_sectors_each_way() {
    let c = count("aligned_row.cu");
    assert_eq!((c.loads, c.stores, c.ideal), (4, 4, 8));
}

#[test]
fn misaligned_row_costs_a_fifth_sector() {
    let c = count("misaligned_row.cu");
    assert_eq!((c.loads, c.stores), (5, 4));
    assert_eq!(c.ideal, 8);
}

#[test]
fn strided_column_is_one_sector_per_lane() {
    let c = count("strided_column.cu");
    assert_eq!((c.loads, c.stores), (32, 4));
}

#[test]
fn lone_lane_pays_a_whole_sector() {
    let c = count("lone_lane.cu");
    assert_eq!((c.loads, c.stores, c.ideal), (1, 1, 2));
}

#[test]
fn vector_loads_count_their_bytes() {
    let c = count("vector_load.cu");
    assert_eq!((c.loads, c.stores), (16, 4));
}

#[test]
fn divergent_branch_counts_each_side() {
    let c = count("divergent_branch.cu");
    assert_eq!(c.loads, 4);
    // One store after reconvergence (4) or one per side (2 + 2): either way 4 sectors.
    assert_eq!(c.stores, 4);
}

#[test]
fn predicated_store_counts_only_active_lanes_sectors() {
    let c = count("predicated_store.cu");
    assert_eq!((c.loads, c.stores, c.ideal), (0, 4, 2));
}

#[test]
fn two_store_instructions_stay_two() {
    let c = count("two_stores.cu");
    assert_eq!((c.sectors, c.stores), (8, 8));
}

fn run(lesson: &str, kernel: &str) -> haloscope::report::RunReport {
    common::run_on_emulator(lesson, kernel, 3)
}

#[test]
fn every_cuda_kernel_gives_the_h200_figures() {
    // The H200's sectors, loads, stores and ideal sectors over the contract's 100 launches
    // (docs/archive/measurements-log.md, calls 2 and 3), exactly, and its verdict, except where
    // docs/known-differences.md says why the emulator differs (it names races as faults).
    let known = common::known_differences();
    let mut wrong = Vec::new();
    for h in common::h200::cuda() {
        let report = run(h.lesson(), h.kernel);
        let verdict = report.verdict.as_str();
        let expected_verdict = known
            .iter()
            .find(|d| d.kernel == h.kernel && d.field == "verdict")
            .map_or(h.verdict.as_str(), |d| d.emu.as_str());
        if verdict != expected_verdict {
            wrong.push(format!(
                "{}: verdict {verdict}, expected {expected_verdict}: {}",
                h.kernel, report.headline
            ));
        }
        let Some(p) = &report.profile else {
            wrong.push(format!("{}: no profile: {}", h.kernel, report.headline));
            continue;
        };
        for ((field, h200), seen) in
            h.fields()
                .into_iter()
                .zip([p.sectors, p.load_sectors, p.store_sectors, p.ideal_sectors])
        {
            let expected = common::expected_emulator_figure(h.kernel, field, h200);
            if seen != expected {
                wrong.push(format!(
                    "{} {field}: emulator {seen}, expected {expected} (H200 {h200}; if the emulator now gives the H200's figure, remove the row from docs/known-differences.md)",
                    h.kernel
                ));
            }
        }
        if matches!(report.verdict, Verdict::Pass | Verdict::GateFail) && !report.sizes.iter().all(|s| s.passed()) {
            wrong.push(format!("{}: not every size verified: {}", h.kernel, report.headline));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_race_is_caught_with_thread_and_line() {
    let report = run("stencil-1d", "kernels/stencil-1d/no_barrier.cu");
    assert_eq!(report.verdict, Verdict::KernelFault);
    // Line 32 reads tile[t] and tile[t + 2], which threads t - 1 and t + 1 wrote at line 15
    // with no barrier in between: the first reader the emulator names is thread 1 of block 0.
    let race = report
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::SharedRace && f.at.line == Some(32))
        .unwrap_or_else(|| panic!("a race on line 32: {:?}", report.findings));
    assert_eq!(race.at.block, [0, 0, 0], "{}", race.message);
    assert_eq!(race.at.thread, [1, 0, 0], "{}", race.message);
    assert!(
        race.message.contains("thread (1,0,0) of block (0,0,0) reads byte"),
        "{}",
        race.message
    );
    // Byte 4 is tile[1], thread 0's own cell; byte 12 is tile[3], thread 2's.
    let writer = match race.address {
        4 => "thread (0,0,0)",
        12 => "thread (2,0,0)",
        other => panic!("byte {other}: {}", race.message),
    };
    assert!(
        race.message.contains(&format!(
            "{writer} wrote at line 15: the same warp, with no __syncwarp() or __syncthreads()"
        )),
        "{}",
        race.message
    );
}

#[test]
fn a_missing_barrier_in_the_3d_plane_loop_is_caught() {
    let report = run("stencil-3d", "tests/fixtures/kernels/plane_one_barrier.cu");
    assert_eq!(report.verdict, Verdict::KernelFault, "{}", report.headline);
    assert!(
        report.findings.iter().any(|f| f.kind == FindingKind::SharedRace),
        "{:?}",
        report.findings
    );
}

#[test]
fn an_uninitialised_shared_read_is_caught() {
    let report = run("stencil-1d", "kernels/stencil-1d/no_halo.cu");
    let finding = report
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::UninitialisedSharedRead)
        .expect("finding");
    assert_eq!(finding.at.line, Some(26));
    assert_eq!(finding.at.thread, [255, 0, 0]);
}

#[test]
fn an_out_of_bounds_write_names_thread_line_and_buffer() {
    let report = run("stencil-2d", "tests/fixtures/kernels/oob_write.cu");
    assert_eq!(report.verdict, Verdict::KernelFault);
    let Some(KernelFault::OutOfBounds { at, write, message, .. }) = &report.fault else {
        panic!("{:?}", report.fault)
    };
    assert!(*write);
    assert_eq!(at.line, Some(9));
    assert_eq!(at.block, [0, 0, 0]);
    assert_eq!(at.thread, [0, 0, 0]);
    assert!(message.contains("past the end of `out`"), "{message}");
}

#[test]
fn an_endless_loop_ends_with_a_clear_message() {
    let report = run("stencil-2d", "tests/fixtures/kernels/infinite_loop.cu");
    assert_eq!(report.verdict, Verdict::KernelFault);
    assert!(
        matches!(report.fault, Some(KernelFault::Timeout { .. })),
        "{:?}",
        report.fault
    );
    assert!(report.headline.contains("endless loop"), "{}", report.headline);
}

#[test]
fn a_cancelled_run_stops() {
    let lesson = common::lesson("stencil-2d");
    let path = common::root().join("kernels/stencil-2d/starter.cu");
    let request = RunRequest::from_file(&path, Some(1), None).unwrap();
    let cancel = CancelFlag::default();
    cancel.cancel();
    let report = run_lesson(&lesson, &request, BackendChoice::Emu, &mut |_| {}, &cancel);
    assert_eq!(report.fault, Some(KernelFault::Cancelled));
}

#[test]
fn every_lesson_kernel_behaves_as_its_lesson_declares() {
    for lesson in ["stencil-1d", "stencil-2d", "stencil-3d", "stencil-3d-registers"] {
        let dir = format!("lessons/{lesson}");
        let (code, out, err) = common::haloscope(&["lesson", "check", &dir]);
        assert_eq!(code, 0, "{lesson}:\n{out}\n{err}");
    }
}

#[test]
fn an_emulator_failure_ends_the_run_with_its_line_instead_of_a_crash() {
    // A bug of the emulator (here provoked: the program is told it has one predicate
    // register while the kernel uses several) panics on an emulator thread. The launch
    // catches it and stops with a fault that names the instruction, as a kernel fault does.
    let lesson = one_warp_lesson();
    let source = "extern \"C\" __global__ void k(const float* in, float* out, int n)\n\
                  {\n\
                  \x20   int i = threadIdx.x;\n\
                  \x20   if (i < n) {\n\
                  \x20       out[i] = in[i];\n\
                  \x20   }\n\
                  }\n";
    let kernel =
        compile_kernel(source, "k.cu", &lesson, Target::EMULATOR, None).unwrap_or_else(|e| panic!("{}", e.headline()));
    let prog = load_program(&kernel.ptx, "k").unwrap();
    assert!(prog.predicate_registers() >= 1, "the kernel has a branch");
    let prog = prog.broken_for_tests();
    let input = vec![1.0f32; 32];
    let mut output = vec![0.0f32; 32];
    let fault = run_lesson_kernel(
        &prog,
        &lesson,
        32,
        &input,
        &mut output,
        &RunOptions::default(),
        &CancelFlag::default(),
    )
    .expect_err("the provoked failure");
    assert!(
        matches!(fault.kind, haloscope::backend::emu::EmuFaultKind::Internal { .. }),
        "{fault:?}"
    );
    let pc = fault.pc.expect("the instruction it failed on");
    let opcode = prog.instruction(pc).expect("an instruction").opcode;
    assert!(opcode.starts_with("setp"), "{opcode}");
    let message = haloscope::backend::emu::kernel_fault(&prog, fault).message();
    assert!(
        message.contains("the emulator failed") && message.contains("line 4"),
        "{message}"
    );
}

#[test]
fn kernels_measured_only_on_the_h100_give_its_figures() {
    // The H200 set (common::h200) covers the founding kernels; the variants and cluster kernels
    // measured later on an H100 (the same sector metric, BRIEF.md) are checked here, exactly,
    // and so is any kernel whose rows are still the emulator's own (card `emulator`).
    let all = common::figures::figures();
    let on_h200 = |kernel: &str| all.iter().any(|f| f.kernel == kernel && f.card == "H200");
    let rows: Vec<&common::figures::Figure> = all
        .iter()
        // `emulator`: a kernel not yet measured on a card carries the emulator's own figures.
        .filter(|f| {
            f.card == "emulator" || (f.card == "H100" && f.kernel.starts_with("kernels/") && !on_h200(&f.kernel))
        })
        .filter(|f| ["verdict", "sectors", "loads", "stores", "ideal"].contains(&f.field.as_str()))
        .collect();
    assert!(rows.len() >= 20, "the H100-only kernels' rows in docs/figures.tsv");
    let known = common::known_differences();
    let mut kernels: Vec<&str> = rows.iter().map(|f| f.kernel.as_str()).collect();
    kernels.sort();
    kernels.dedup();
    let mut wrong = Vec::new();
    for kernel in kernels {
        let lesson = kernel.split('/').nth(1).unwrap();
        let report = common::run_on_emulator(lesson, kernel, 7);
        let p = report.profile.clone().unwrap_or_default();
        // A kernel the emulator stops with a fault (a known difference) has only its verdict.
        let fields = rows
            .iter()
            .filter(|f| f.kernel == kernel && (report.profile.is_some() || f.field == "verdict"));
        for f in fields {
            let seen = match f.field.as_str() {
                "verdict" => report.verdict.as_str().to_string(),
                "sectors" => p.sectors.to_string(),
                "loads" => p.load_sectors.to_string(),
                "stores" => p.store_sectors.to_string(),
                "ideal" => p.ideal_sectors.to_string(),
                other => unreachable!("{other}"),
            };
            // docs/known-differences.md says where the emulator's verdict is not the GPU's.
            let expected = known
                .iter()
                .find(|d| d.kernel == kernel && d.field == f.field)
                .map_or(f.value.as_str(), |d| d.emu.as_str());
            if seen != expected {
                wrong.push(format!("{kernel} {}: emulator {seen}, H100 {}", f.field, f.value));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
