//! Kernels written the way learners write them (tests/learner/), on the emulator: each must
//! reach the H200's verdict and exactly its sectors, loads, stores and ideal sectors over the
//! contract's 100 launches (docs/archive/measurements-log.md, "Learner kernels on the H200"), or differ
//! where the emulator says why on the line (a barrier completed through two calls).

mod common;

use haloscope::backend::FindingKind;
use haloscope::report::{RunReport, Verdict};

fn run(kernel: &str) -> RunReport {
    common::run_on_emulator("stencil-2d", &format!("tests/learner/{kernel}"), 11)
}

/// The H200's figures (CUPTI = ncu x 100), 2026-12-02: kernel, verdict, sectors, loads,
/// stores, ideal.
const H200: &[(&str, Verdict, u64, u64, u64, u64)] = &[
    (
        "atomic_add_red.cu",
        Verdict::GateFail,
        1_782_732_400,
        1_572_198_400,
        210_534_000,
        1_678_744_800,
    ),
    (
        "atomic_exch.cu",
        Verdict::GateFail,
        1_361_869_200,
        1_361_869_200,
        0,
        1_257_881_600,
    ),
    (
        "cg_tile.cu",
        Verdict::GateFail,
        943_462_400,
        732_928_400,
        210_534_000,
        943_462_400,
    ),
    (
        "cstdint_restrict.cu",
        Verdict::GateFail,
        1_363_506_800,
        1_152_972_800,
        210_534_000,
        1_259_519_200,
    ),
    (
        "early_return_tiled.cu",
        Verdict::Pass,
        576_614_000,
        366_080_000,
        210_534_000,
        576_614_000,
    ),
    (
        "half_precision.cu",
        Verdict::WrongResults,
        1_362_688_000,
        1_152_154_000,
        210_534_000,
        1_258_700_400,
    ),
    (
        "helper_function.cu",
        Verdict::GateFail,
        1_362_688_000,
        1_152_154_000,
        210_534_000,
        1_258_700_400,
    ),
    (
        // H200 2026-12-04 (CUPTI; docs/archive/measurements-log.md): the skipped printf's argument load
        // still issues its sectors on the GPU.
        "printf_argument_load.cu",
        Verdict::GateFail,
        1_624_422_400,
        1_413_888_400,
        210_534_000,
        1_468_415_600,
    ),
    (
        "printf_debug.cu",
        Verdict::GateFail,
        1_362_688_000,
        1_152_154_000,
        210_534_000,
        1_258_700_400,
    ),
    (
        "recursion.cu",
        Verdict::GateFail,
        1_363_506_800,
        1_152_972_800,
        210_534_000,
        1_259_519_200,
    ),
    (
        "shfl_after_return.cu",
        Verdict::GateFail,
        943_462_400,
        732_928_400,
        210_534_000,
        943_462_400,
    ),
    (
        "shfl_in_branch.cu",
        Verdict::GateFail,
        943_462_400,
        732_928_400,
        210_534_000,
        943_462_400,
    ),
    (
        "shfl_neighbours.cu",
        Verdict::GateFail,
        943_462_400,
        732_928_400,
        210_534_000,
        943_462_400,
    ),
    (
        "vote_ballot.cu",
        Verdict::GateFail,
        1_362_688_000,
        1_152_154_000,
        210_534_000,
        1_258_700_400,
    ),
];

/// The H200 figures above were measured with the device machine's NVRTC 13.0. Where a newer
/// NVRTC emits PTX with other memory instructions, the figure follows the PTX: for
/// cstdint_restrict.cu, NVRTC 13.5 compiles the unsigned border test into the same branches
/// as the CUDA starter (whose 1,362,688,000 the H200 measured), NVRTC 13.0 into branches that
/// split one warp's border accesses (8,188 sectors more per launch, on the H200 too).
fn expected_for_nvrtc(kernel: &str, nvrtc: &str, h200: (u64, u64, u64, u64)) -> (u64, u64, u64, u64) {
    if kernel == "cstdint_restrict.cu" && !nvrtc.starts_with("13.0") {
        return (1_362_688_000, 1_152_154_000, 210_534_000, 1_258_700_400);
    }
    h200
}

#[test]
fn learner_kernels_give_the_h200_verdict_and_figures() {
    let mut wrong = Vec::new();
    for &(kernel, verdict, sectors, loads, stores, ideal) in H200 {
        let r = run(kernel);
        let nvrtc = r
            .compile
            .as_ref()
            .map(|c| c.compiler_version.clone())
            .unwrap_or_default();
        let (sectors, loads, stores, ideal) = expected_for_nvrtc(kernel, &nvrtc, (sectors, loads, stores, ideal));
        let p = r.profile.as_ref();
        let got = (
            r.verdict,
            p.map(|p| p.sectors),
            p.map(|p| p.load_sectors),
            p.map(|p| p.store_sectors),
            p.map(|p| p.ideal_sectors),
        );
        let want = (verdict, Some(sectors), Some(loads), Some(stores), Some(ideal));
        if got != want {
            wrong.push(format!("{kernel}: emulator {got:?}, H200 {want:?}: {}", r.headline));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_debugging_printf_is_shown_per_launch() {
    let r = run("printf_debug.cu");
    assert_eq!(r.verdict, Verdict::GateFail, "{}", r.headline);
    let launches: Vec<&str> = r.output.iter().map(|o| o.launch.as_str()).collect();
    assert_eq!(launches, ["verify n=33", "verify n=257", "verify n=4096"]);
    for o in &r.output {
        let n = o.launch.trim_start_matches("verify n=");
        assert_eq!(o.lines.len(), 1, "{o:?}");
        let line = &o.lines[0];
        assert!(line.starts_with(&format!("n={n} block=(0,0) centre>0: ")), "{line}");
        assert!(line.ends_with(" tag=dbg hex=ff"), "{line}");
    }
}

#[test]
fn a_printf_in_every_thread_is_capped_and_the_run_finishes() {
    let r = run("printf_every_thread.cu");
    assert_eq!(r.verdict, Verdict::GateFail, "{}", r.headline);
    assert_eq!(r.profile.as_ref().unwrap().sectors, 1_362_688_000);
    let big = r.output.iter().find(|o| o.launch == "verify n=4096").unwrap();
    assert_eq!(big.lines.len(), 4096);
    assert_eq!(big.total_lines(), 4096 * 4096);
    // Thread order: block (0,0) first, its rows in order.
    assert_eq!(big.lines[0], "thread (0,0)");
    assert_eq!(big.lines[33], "thread (1,1)");
    assert!(big.cut_note().unwrap().contains("more lines"));
    let small = r.output.iter().find(|o| o.launch == "verify n=33").unwrap();
    assert_eq!((small.lines.len(), small.lines_not_shown), (33 * 33, 0));
}

#[test]
fn a_barrier_completed_through_two_calls_is_named_on_its_lines() {
    // The H200 completes it (gate-fail, same sectors); CUDA leaves it undefined, so the
    // emulator reports it as a finding on both lines (docs/known-differences.md).
    let r = run("barrier_in_branch.cu");
    assert_eq!(r.verdict, Verdict::KernelFault, "{}", r.headline);
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::DivergentBarrier)
        .expect("a divergent-barrier finding");
    assert_eq!(f.at.line, Some(19));
    assert!(f.message.contains("line 12"), "{}", f.message);
    assert_eq!(r.profile.as_ref().unwrap().sectors, 1_362_688_000);
}

#[test]
fn a_kernel_that_scribbles_on_its_const_input_is_verified_against_the_input_it_was_given() {
    // The emulator lends the drawn input array to the launch instead of copying it; the
    // stores into it must be noticed and the input drawn again for verification, as the GPU
    // backend verifies against the host's untouched copy.
    let r = common::run_on_emulator("stencil-1d", "tests/learner/writes_const_input.cu", 5);
    // Right results; the scribbling stores cost it the gate.
    assert_eq!(r.verdict, Verdict::GateFail, "{}", r.headline);
    assert!(r.sizes.iter().all(|s| s.passed()), "{}", r.headline);
}

#[test]
fn intrinsics_and_math_functions_run_on_the_emulator() {
    // Funnel shifts (`__funnelshift_*`, rotates), sums of absolute differences (`__sad`),
    // directed rounding (`fma.rz` inside `fmodf`, `__int2float_rz`) stopped the emulator with
    // "not supported" before; the H200 runs them all. Not a stencil: its values are wrong for
    // the lesson, and that is the verdict, with every size run and compared.
    let r = common::run_on_emulator("stencil-1d", "tests/learner/intrinsics_mix.cu", 7);
    assert!(r.fault.is_none(), "{}", r.headline);
    assert_eq!(r.verdict, Verdict::WrongResults, "{}", r.headline);
    assert_eq!(r.sizes.len(), 3, "{}", r.headline);
}

#[test]
fn dynamic_shared_memory_size_is_the_contracts() {
    // `%dynamic_smem_size` read with inline PTX: the contract's dynamic_shared_bytes (0 for
    // the 1D lesson, as on the H200), added to every output; any other value fails them all.
    let r = common::run_on_emulator("stencil-1d", "tests/learner/dynamic_smem_size.cu", 3);
    assert!(r.fault.is_none(), "{}", r.headline);
    assert!(r.sizes.iter().all(|s| s.passed()), "{}", r.headline);
}

#[test]
fn block_scoped_registers_and_cxx_habits_run_with_every_size_right() {
    // Kernels that once crashed the emulator (registers declared again in a `{ }` block:
    // NVRTC's `__syncthreads_or`/`_count`, two inline-asm blocks declaring `p`), and C++ a
    // learner brings from elsewhere (templates and lambdas, float4 views and __ldg, volatile
    // shared memory, ballot masks, an atomicCAS loop, <cstdint> types). Every size right,
    // and the H200's verdict and sectors over the contract's launches (CUPTI = ncu x 100 =
    // emulator, scripts/device/checks/learner-values.sh, 2026-12-05).
    let cases = [
        ("syncthreads_or_count.cu", "stencil-2d", Verdict::Pass, 577_484_400),
        ("asm_blocks_same_names.cu", "stencil-1d", Verdict::GateFail, 943_718_200),
        ("template_tile_lambda.cu", "stencil-2d", Verdict::Pass, 577_535_600),
        ("float4_view_ldg.cu", "stencil-1d", Verdict::GateFail, 943_718_600),
        ("volatile_plane_3d.cu", "stencil-3d", Verdict::Pass, 959_942_400),
        ("ballot_mask_shuffles.cu", "stencil-1d", Verdict::Pass, 524_288_000),
        (
            "atomic_cas_float_max.cu",
            "stencil-1d",
            Verdict::GateFail,
            1_363_148_600,
        ),
        (
            "registers_cstdint_3d.cu",
            "stencil-3d-registers",
            Verdict::GateFail,
            1_338_834_400,
        ),
        // Member masks that differ by lane (tiled_partition<16>) and `fns` (a coalesced
        // group's shfl): refused before.
        ("halfwarp_masks.cu", "stencil-1d", Verdict::Pass, 432_537_600),
        (
            "cg_tiled_partition16_reduce.cu",
            "stencil-3d",
            Verdict::Pass,
            948_659_200,
        ),
        ("coalesced_group_shfl.cu", "stencil-1d", Verdict::Pass, 524_288_000),
    ];
    let mut wrong = Vec::new();
    for (kernel, lesson, verdict, sectors) in cases {
        let r = common::run_on_emulator(lesson, &format!("tests/learner/{kernel}"), 5);
        let sizes_right = !r.sizes.is_empty() && r.sizes.iter().all(|s| s.passed());
        let got = r.profile.as_ref().map(|p| p.sectors);
        if r.verdict != verdict || !sizes_right || got != Some(sectors) {
            wrong.push(format!(
                "{kernel}: {:?}, {got:?} sectors (H200 {sectors}), {}",
                r.verdict, r.headline
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_warp_spinning_on_another_warps_flag_finishes() {
    // Warps wait for each other's flags with __nanosleep() in the loop: the emulator runs one
    // warp at a time, so a sleeping warp gives way to the others (it ran until its step budget
    // and was called an endless loop before). Its checks then report the handoff as a race
    // (the H200 passes it): they know barriers, not flags.
    let r = common::run_on_emulator("stencil-1d", "tests/fixtures/kernels/flag_handoff_spin.cu", 5);
    assert!(r.fault.is_none(), "{}", r.headline);
    assert_eq!(r.verdict, Verdict::KernelFault, "{}", r.headline);
    let race = r.findings.first().expect("the handoff reported as a race");
    assert_eq!(race.kind, FindingKind::SharedRace, "{}", race.message);
}

/// Asynchronous copies and clusters on the H100, 2026-12-07 (CUPTI = ncu x 100, the same
/// metric as the H200's; docs/device-runs/2026-12-07-async-cluster-loads-stores-ideal.md):
/// kernel, lesson, the card's verdict, and (sectors, loads, stores, ideal) where it ran.
type H100Row = (&'static str, &'static str, &'static str, Option<(u64, u64, u64, u64)>);
const H100_ASYNC_AND_CLUSTERS: &[H100Row] = &[
    (
        "tests/learner/async_cg_memcpy.cu",
        "stencil-2d",
        "pass",
        Some(SOLUTION_2D),
    ),
    (
        "tests/learner/async_pipeline_primitives.cu",
        "stencil-2d",
        "pass",
        Some(SOLUTION_2D),
    ),
    (
        "tests/learner/async_cuda_pipeline.cu",
        "stencil-2d",
        "pass",
        Some(SOLUTION_2D),
    ),
    (
        "tests/learner/async_cuda_barrier.cu",
        "stencil-2d",
        "pass",
        Some(SOLUTION_2D),
    ),
    (
        "tests/learner/mbarrier_ptx_2d.cu",
        "stencil-2d",
        "pass",
        Some(SOLUTION_2D),
    ),
    (
        "tests/learner/async_no_wait.cu",
        "stencil-2d",
        "pass",
        Some(SOLUTION_2D),
    ),
    (
        "tests/learner/bulk_rows_2d.cu",
        "stencil-2d",
        "pass",
        Some((315_494_000, 104_960_000, 210_534_000, 315_494_000)),
    ),
    (
        "tests/learner/bulk_copy_1d.cu",
        "stencil-1d",
        "pass",
        Some((222_822_400, 13_107_000, 209_715_400, 222_822_400)),
    ),
    (
        "tests/learner/async_plane_3d.cu",
        "stencil-3d",
        "pass",
        Some((961_562_400, 738_944_000, 222_618_400, 961_562_400)),
    ),
    (
        "tests/learner/cluster_ptx.cu",
        "stencil-2d-cluster",
        "pass",
        Some(CLUSTER_PTX),
    ),
    (
        "tests/learner/cluster_dims_generic.cu",
        "stencil-2d-cluster",
        "pass",
        Some(CLUSTER_PTX),
    ),
    (
        "kernels/stencil-2d-cluster/starter.cu",
        "stencil-2d-cluster",
        "gate-fail",
        Some(SOLUTION_2D),
    ),
    (
        "kernels/stencil-2d-cluster/starter.rs",
        "stencil-2d-cluster",
        "gate-fail",
        Some(SOLUTION_2D),
    ),
    (
        "kernels/stencil-2d-cluster/solution.cu",
        "stencil-2d-cluster",
        "pass",
        Some(CLUSTER),
    ),
    (
        "kernels/stencil-2d-cluster/solution.rs",
        "stencil-2d-cluster",
        "pass",
        Some(CLUSTER),
    ),
    (
        "kernels/stencil-2d-cluster/global_sides.cu",
        "stencil-2d-cluster",
        "gate-fail",
        Some((550_399_600, 339_865_600, 210_534_000, 550_399_600)),
    ),
    (
        "kernels/stencil-2d-cluster/no_cluster_sync.cu",
        "stencil-2d-cluster",
        "wrong-results",
        Some(CLUSTER),
    ),
    // CUDA_ERROR_LAUNCH_FAILED on the card: no profile.
    (
        "kernels/stencil-2d-cluster/exit_before_neighbours.cu",
        "stencil-2d-cluster",
        "kernel-fault",
        None,
    ),
];
/// The 2D tiled solution's figures, which every one-block tile copy reaches however it copies.
const SOLUTION_2D: (u64, u64, u64, u64) = (576_614_000, 366_080_000, 210_534_000, 576_614_000);
/// The cluster solution: the side columns come from the neighbours' shared memory.
const CLUSTER: (u64, u64, u64, u64) = (471_756_400, 261_222_400, 210_534_000, 471_756_400);
/// A cluster of two along x only (cluster_ptx.cu, cluster_dims_generic.cu).
const CLUSTER_PTX: (u64, u64, u64, u64) = (497_970_800, 287_436_800, 210_534_000, 497_970_800);

#[test]
fn asynchronous_copies_and_clusters_give_the_h100_verdict_and_figures() {
    let recorded =
        std::fs::read_to_string(common::root().join("docs/device-runs/2026-12-07-async-cluster-loads-stores-ideal.md"))
            .unwrap();
    let known = common::known_differences();
    let t = haloscope::report::thousands;
    let mut wrong = Vec::new();
    for &(kernel, lesson, gpu, figures) in H100_ASYNC_AND_CLUSTERS {
        // The pinned figures are the recorded ones.
        let line = recorded
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{kernel}:")))
            .unwrap_or_else(|| panic!("{kernel}: not in the device-run file"));
        let mut said = format!("gpu verdict {gpu} ");
        if let Some((s, l, st, i)) = figures {
            said += &format!("sectors {} loads {} stores {} ideal {}", t(s), t(l), t(st), t(i));
        }
        assert!(line.contains(&said), "{line}\nexpected {said}");

        // The emulator: the card's verdict, or the one docs/known-differences.md gives and why.
        let r = common::run_on_emulator(lesson, kernel, 13);
        let verdict = r.verdict.as_str();
        let expected = match known.iter().find(|d| d.kernel == kernel && d.field == "verdict") {
            Some(d) => {
                assert!(
                    d.gpu.split('|').any(|v| v == gpu),
                    "{kernel}: known-differences row's GPU verdict"
                );
                d.emu.clone()
            }
            None => gpu.to_string(),
        };
        if verdict != expected {
            wrong.push(format!(
                "{kernel}: emulator {verdict}, expected {expected}: {}",
                r.headline
            ));
        }
        let Some(want) = figures else { continue };
        let got = r
            .profile
            .as_ref()
            .map(|p| (p.sectors, p.load_sectors, p.store_sectors, p.ideal_sectors));
        if got != Some(want) {
            wrong.push(format!("{kernel}: emulator {got:?}, H100 {want:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn bulk_copies_are_reported_beside_the_figure_not_in_it() {
    // The metric leaves out what cp.async.bulk moves (the H100 probe, docs/archive/measurements-log.md);
    // the report says how much it was, on the copy's line.
    let r = common::run_on_emulator("stencil-2d", "tests/learner/bulk_rows_2d.cu", 13);
    let p = r.profile.as_ref().expect("a profile");
    assert_eq!(p.sectors, 315_494_000);
    let bulk = p.bulk_copies.as_ref().expect("the bulk copies reported");
    assert_eq!(bulk.sectors, 261_120_000);
    assert!(bulk.bytes > 0 && bulk.bytes <= bulk.sectors * 32, "{bulk:?}");
    assert!(!bulk.per_line.is_empty());
    assert!(bulk.note().contains("261,120,000 sectors"), "{}", bulk.note());
}

#[test]
fn reading_a_tile_before_its_copies_land_names_the_copy() {
    // The card passes async_no_wait.cu by timing; racecheck and the emulator report the read.
    let r = common::run_on_emulator("stencil-2d", "tests/learner/async_no_wait.cu", 13);
    assert_eq!(r.verdict, Verdict::KernelFault, "{}", r.headline);
    assert!(
        r.findings
            .iter()
            .any(|f| f.kind == FindingKind::AsyncCopyInFlight && f.at.line.is_some()),
        "{:?}",
        r.findings
    );
}

#[test]
fn a_kernel_with_the_standard_headers_of_a_course_runs() {
    // <cassert>, <cmath>, <climits>, <type_traits>, ... at the top, std:: helpers, an
    // assert that holds: every size right; it loads like the starter, so the gate fails.
    let r = common::run_on_emulator("stencil-1d", "tests/learner/std_headers_1d.cu", 17);
    assert!(r.fault.is_none(), "{}", r.headline);
    assert_eq!(r.verdict, Verdict::GateFail, "{}", r.headline);
    assert!(r.sizes.iter().all(|s| s.passed()), "{}", r.headline);
}

#[test]
fn a_failed_assert_names_the_thread_the_line_and_the_expression() {
    let r = common::run_on_emulator("stencil-1d", "tests/learner/assert_fails_1d.cu", 17);
    assert_eq!(r.verdict, Verdict::KernelFault, "{}", r.headline);
    let fault = r.fault.as_ref().expect("a fault");
    let message = fault.message();
    assert!(message.contains("assertion `i + 1 < n` failed"), "{message}");
    assert_eq!(fault.line(), Some(11), "{message}");
    // n = 33 (the first size): thread 32 of block 0 is the last element.
    assert!(message.contains("thread (32,0,0)"), "{message}");
}

#[test]
fn a_read_the_optimiser_removed_is_reported_beside_the_verdict() {
    // NVRTC moves the neighbour loads below the border test: the GPU never reads in[-1], and
    // the verdict is the GPU's. The unoptimised build reads it, so the report says so, on
    // the line, for thread 0.
    let r = common::run_on_emulator("stencil-1d", "tests/learner/unguarded_neighbours_1d.cu", 19);
    assert!(r.fault.is_none() && r.findings.is_empty(), "{}", r.headline);
    assert_eq!(r.verdict, Verdict::GateFail, "{}", r.headline);
    let [u] = &r.unexecuted[..] else {
        panic!("one unexecuted access: {:?}", r.unexecuted)
    };
    assert_eq!(
        (u.at.line, u.at.block, u.at.thread, u.n),
        (Some(10), [0, 0, 0], [0, 0, 0], 33),
        "{u:?}"
    );
    assert!(
        u.message.contains("out-of-bounds global read") && u.message.contains("the optimised build never made it"),
        "{}",
        u.message
    );
    // A kernel whose unoptimised build is as clean as its optimised one gets nothing.
    let clean = common::run_on_emulator("stencil-1d", "kernels/stencil-1d/solution.cu", 19);
    assert!(clean.unexecuted.is_empty(), "{:?}", clean.unexecuted);
}

#[test]
fn after_a_gpu_run_the_emulator_counts_what_bulk_copies_moved() {
    // The GPU's sectors leave the bulk copies out and CUPTI gives no figure for them: the
    // policy has the emulator count them for the report (src/backend_policy.rs). Here without a
    // GPU: the same call on the kernel the GPU would have run.
    use haloscope::backend::emu::{EmulatorBackend, EmulatorOptions};
    use haloscope::compile::{Target, compile_kernel};
    let lesson = common::lesson("stencil-2d");
    let compile = |file: &str| {
        let source = std::fs::read_to_string(common::root().join(file)).unwrap();
        compile_kernel(&source, "kernel.cu", &lesson, Target::EMULATOR, None).unwrap()
    };
    let mut emulator = EmulatorBackend::new(EmulatorOptions::default());
    let cancel = haloscope::backend::CancelFlag::default();
    let bulk = emulator
        .bulk_copies_for_gpu_run(&lesson, &compile("tests/learner/bulk_rows_2d.cu"), 5, &cancel)
        .expect("bulk copies counted");
    assert_eq!(bulk.sectors, 261_120_000);
    assert!(bulk.counted_by_emulator);
    assert!(bulk.note().contains("counted on the emulator"), "{}", bulk.note());
    // A kernel without bulk copies is not run again.
    let none = emulator.bulk_copies_for_gpu_run(&lesson, &compile("kernels/stencil-2d/solution.cu"), 5, &cancel);
    assert!(none.is_none());
}
