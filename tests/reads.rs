//! The read-source diagram's data, from real emulator traces.

mod common;

use haloscope::backend::emu::TraceSpace;

use haloscope::backend::emu::TracedAccess;
use haloscope::backend::emu::{EmulatorBackend, EmulatorOptions};
use haloscope::backend::{Backend, CancelFlag};
use haloscope::compile::{Target, compile_kernel};
use haloscope::trace::reads::{Neighbour, OutputReads, ReadSource, reads_of, watched_block};

/// The reads of `thread`'s first interior output in the watched block, and that thread's
/// traced accesses (in the order it made them). The kernel must verify: the diagram of a
/// wrong kernel would prove nothing.
fn traced(lesson_id: &str, kernel: &str, n: u32, thread: [u32; 3]) -> (OutputReads, Vec<TracedAccess>) {
    let mut lesson = common::lesson(lesson_id);
    lesson.verify_sizes = vec![n];
    let source = std::fs::read_to_string(common::root().join(kernel)).unwrap();
    let compiled = compile_kernel(&source, "k.cu", &lesson, Target::EMULATOR, None).unwrap();
    let mut emu = EmulatorBackend::new(EmulatorOptions {
        threads: 0,
        watch: Some(watched_block(&lesson)),
        ..EmulatorOptions::default()
    });
    let run = emu
        .verify_size(&lesson, &compiled, n, 1, &mut |_| {}, &CancelFlag::default())
        .unwrap();
    assert!(run.verification.passed(), "{kernel}: {}", run.verification.summary());
    assert!(run.findings.is_empty(), "{kernel}: {:?}", run.findings);
    let trace = run.trace.expect("the watched block traced").accesses;
    let reads = reads_of(&lesson, n, &trace, thread).expect("an interior output");
    assert_eq!(reads.thread, thread);
    let mine = trace.iter().filter(|a| a.thread == thread).cloned().collect();
    (reads, mine)
}

fn reads(lesson_id: &str, kernel: &str, n: u32, thread: [u32; 3]) -> OutputReads {
    traced(lesson_id, kernel, n, thread).0
}

/// Element index of grid point `p` in an `n`-cube (or square, or row).
fn element(n: u32, p: [u32; 3]) -> u64 {
    let n = n as u64;
    (p[2] as u64 * n + p[1] as u64) * n + p[0] as u64
}

fn source(r: &OutputReads, n: Neighbour) -> ReadSource {
    r.reads.iter().find(|x| x.neighbour == n).unwrap().source
}

#[test]
fn the_2d_starter_reads_everything_from_global_memory() {
    let r = reads("stencil-2d", "kernels/stencil-2d/starter.cu", 257, [5, 3, 0]);
    assert_eq!(r.output, [32 + 5, 8 + 3, 0]);
    assert_eq!(r.reads.len(), 5);
    assert!(r.reads.iter().all(|x| x.source == ReadSource::Global), "{:?}", r.reads);
}

#[test]
fn the_2d_solution_serves_all_five_reads_from_the_tile() {
    let r = reads("stencil-2d", "kernels/stencil-2d/solution.cu", 257, [0, 0, 0]);
    assert_eq!(source(&r, Neighbour::Centre), ReadSource::Tile { row: 1, col: 1 });
    assert_eq!(source(&r, Neighbour::Left), ReadSource::Tile { row: 1, col: 0 });
    assert_eq!(source(&r, Neighbour::Up), ReadSource::Tile { row: 0, col: 1 });
    // Thread (0,0) also staged its own cell, the halo cell above it and the one to its left.
    assert!(
        r.staged.contains(&[0, 0, 0]) && r.staged.contains(&[0, -1, 0]) && r.staged.contains(&[-1, 0, 0]),
        "{:?}",
        r.staged
    );
}

#[test]
fn x_only_keeps_up_and_down_in_global_memory() {
    let r = reads("stencil-2d", "kernels/stencil-2d/x_only.cu", 257, [4, 4, 0]);
    assert_eq!(source(&r, Neighbour::Up), ReadSource::Global);
    assert_eq!(source(&r, Neighbour::Down), ReadSource::Global);
    // Its tile is 8 x 34 rows of x only: the shared loads are found by value, not by layout.
    assert!(
        matches!(source(&r, Neighbour::Left), ReadSource::Shared { .. }),
        "{:?}",
        r.reads
    );
    assert!(matches!(source(&r, Neighbour::Centre), ReadSource::Shared { .. }));
}

#[test]
fn the_3d_plane_tile_pays_for_the_depth_and_the_register_sweep_does_not() {
    let plane = reads("stencil-3d", "kernels/stencil-3d/solution.cu", 100, [3, 3, 0]);
    assert_eq!(source(&plane, Neighbour::Behind), ReadSource::Global);
    assert_eq!(source(&plane, Neighbour::Ahead), ReadSource::Global);
    assert!(matches!(source(&plane, Neighbour::Right), ReadSource::Tile { .. }));
    let (sweep, trace) = traced(
        "stencil-3d-registers",
        "kernels/stencil-3d-registers/solution.cu",
        100,
        [3, 3, 0],
    );
    assert_eq!(source(&sweep, Neighbour::Behind), ReadSource::Register);
    assert_eq!(source(&sweep, Neighbour::Ahead), ReadSource::Global);
    // "Register" is what the diagram says when it finds no load of the value in this step;
    // check that the value really was in a register: this thread loaded the element behind
    // from global memory before its previous output's store (an earlier z step), and no
    // load of it since.
    let [x, y, z] = sweep.output;
    let behind = element(100, [x, y, z - 1]) * 4;
    let output = element(100, sweep.output) * 4;
    let loaded_at = trace
        .iter()
        .position(|a| {
            !a.store
                && a.space == TraceSpace::Global
                && a.buffer == Some(haloscope::backend::emu::INPUT)
                && a.offset == behind
        })
        .expect("the thread loaded the element behind its output at some step");
    let stored_at = trace
        .iter()
        .position(|a| a.store && a.space == TraceSpace::Global && a.offset == output)
        .expect("the thread stored its output");
    assert!(loaded_at < stored_at, "loaded at {loaded_at}, stored at {stored_at}");
    let earlier_store = trace[loaded_at..stored_at]
        .iter()
        .any(|a| a.store && a.space == TraceSpace::Global);
    assert!(earlier_store, "the load of behind must be from an earlier z step");
    let reloaded = trace[loaded_at + 1..stored_at].iter().any(|a| {
        !a.store
            && a.space == TraceSpace::Global
            && a.buffer == Some(haloscope::backend::emu::INPUT)
            && a.offset == behind
    });
    assert!(!reloaded, "behind was loaded again before the output: not a register");
}

#[test]
fn the_cluster_solution_serves_the_inner_halo_from_the_neighbours_tiles() {
    // The watched block (1, 1) sits in column 1, row 1 of its 4 x 2 cluster: its left and
    // right sides and the row above border blocks of the same cluster, the row below the
    // next cluster. Thread (0, 0) reads left and up across the cluster.
    let r = reads(
        "stencil-2d-cluster",
        "kernels/stencil-2d-cluster/solution.cu",
        257,
        [0, 0, 0],
    );
    let copied = |block: [u32; 3], row: u32, col: u32| ReadSource::Neighbour {
        block,
        row,
        col,
        copied: true,
    };
    assert_eq!(source(&r, Neighbour::Left), copied([0, 1, 0], 1, 0));
    assert_eq!(source(&r, Neighbour::Up), copied([1, 0, 0], 0, 1));
    assert_eq!(source(&r, Neighbour::Centre), ReadSource::Tile { row: 1, col: 1 });
    // Thread (31, 7): right from block (2, 1), down from its own tile, loaded from global
    // memory (the row below lies in the next cluster).
    let r = reads(
        "stencil-2d-cluster",
        "kernels/stencil-2d-cluster/solution.cu",
        257,
        [31, 7, 0],
    );
    assert_eq!(source(&r, Neighbour::Right), copied([2, 1, 0], 8, 33));
    assert_eq!(source(&r, Neighbour::Down), ReadSource::Tile { row: 9, col: 32 });
}

#[test]
fn a_kernel_that_reads_the_neighbours_tile_directly_is_drawn_so() {
    // cluster_ptx.cu copies the side columns through ld.shared::cluster; its trace holds the
    // remote read itself, with the neighbour's block.
    let (r, mine) = traced("stencil-2d-cluster", "tests/learner/cluster_ptx.cu", 257, [0, 2, 0]);
    let remote = mine
        .iter()
        .find(|a| a.peer.is_some())
        .expect("a read of the neighbour's tile");
    assert_eq!(remote.peer, Some([0, 1, 0]));
    assert!(!remote.store && remote.space == TraceSpace::Shared);
    assert!(matches!(
        source(&r, Neighbour::Left),
        ReadSource::Neighbour {
            block: [0, 1, 0],
            copied: true,
            ..
        }
    ));
}
