//! Counting by classes of blocks (ptx_emu's block_classes, the live count's launch) against
//! running every block: on every kernel of the course, every learner kernel and the hazard
//! corpus of seed 1 (generated kernels nobody wrote for this), at sizes that are not
//! multiples of the block (so that edge blocks differ from the interior), the launch counted
//! by class must give every instruction the same warp instructions, lanes, global lanes,
//! sectors and ideal sectors, and the same blocks, or fail the same way.

mod common;

use haloscope::backend::CancelFlag;
use haloscope::backend::emu::{LaunchStats, RunOptions, launch_lesson_kernel, load_program};
use haloscope::compile::{Target, compile_kernel};
use haloscope::harness::random_inputs;
use haloscope::lesson::Lesson;
use std::path::{Path, PathBuf};

/// Sizes with ragged edges, per lesson dimension count.
fn ragged_sizes(lesson: &Lesson) -> Vec<u32> {
    match lesson.stencil.elements(2) {
        2 => vec![100_003],
        4 => vec![203, 517],
        _ => vec![37, 70],
    }
}

fn launch(
    prog: &haloscope::backend::emu::Program,
    lesson: &Lesson,
    n: u32,
    by_class: bool,
) -> Result<LaunchStats, String> {
    let count = lesson.stencil.elements(n);
    let options = RunOptions {
        check_hazards: false,
        count_by_class: by_class,
        ..RunOptions::default()
    };
    let words = vec![0u32; count];
    launch_lesson_kernel(
        prog,
        lesson,
        n,
        random_inputs(count, 3),
        words,
        &options,
        &CancelFlag::default(),
    )
    .map(|l| l.stats)
    .map_err(|f| format!("{:?}", f.kind))
}

/// The blocks counted by class without being run, summed over the sizes (None: it did not
/// compile or cannot be loaded for this lesson).
fn compare(lesson: &Lesson, path: &Path) -> Option<u64> {
    let source = std::fs::read_to_string(path).unwrap();
    let kernel = compile_kernel(&source, "kernel.cu", lesson, Target::EMULATOR, None).ok()?;
    let whole = load_program(&kernel.ptx, &lesson.entry).ok()?;
    // The live count launches the cut kernel where it can be cut: classes must hold on both.
    let programs: Vec<_> = std::iter::once(whole.clone()).chain(whole.count_slice()).collect();
    let mut skipped = 0;
    for prog in &programs {
        for n in ragged_sizes(lesson) {
            let every = launch(prog, lesson, n, false);
            let classed = launch(prog, lesson, n, true);
            match (every, classed) {
                (Ok(every), Ok(classed)) => {
                    let name = path.display();
                    assert_eq!(classed.per_pc, every.per_pc, "{name} n={n}: per instruction");
                    assert_eq!(
                        (classed.blocks, classed.shared_requests, classed.bank_conflicts),
                        (every.blocks, every.shared_requests, every.bank_conflicts),
                        "{name} n={n}"
                    );
                    skipped += classed.blocks_by_class;
                }
                (Err(a), Err(b)) => assert_eq!(a, b, "{}: n={n}: the same failure", path.display()),
                (every, classed) => panic!("{} n={n}: every block {every:?}, by class {classed:?}", path.display()),
            }
        }
    }
    Some(skipped)
}

fn kernels(dir: &Path, lesson_of: impl Fn(&Path) -> Option<String>) -> Vec<(String, PathBuf)> {
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .filter_map(|p| Some((lesson_of(&p)?, p)))
        .collect();
    found.sort();
    found
}

/// `// lesson: id` in a learner kernel's first line.
fn named_lesson(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let id = text.lines().next()?.split("lesson: ").nth(1)?;
    Some(id.split_whitespace().next()?.to_string())
}

#[test]
fn counting_by_class_counts_what_every_block_counts_on_the_course_and_learner_kernels() {
    let course = common::course();
    let root = common::root();
    let mut skipped = 0;
    for lesson in &course.lessons {
        for (_, path) in kernels(&root.join("kernels").join(&lesson.id), |_| Some(lesson.id.clone())) {
            skipped += compare(lesson, &path).unwrap_or(0);
        }
    }
    for (id, path) in kernels(&root.join("tests/learner"), named_lesson) {
        if let Some(lesson) = course.get(&id) {
            skipped += compare(lesson, &path).unwrap_or(0);
        }
    }
    println!("{skipped} blocks counted by class");
    // Not a test that holds by doing nothing: most blocks were counted without running.
    assert!(skipped > 20_000, "only {skipped} blocks were counted by class");
}

#[test]
fn counting_by_class_counts_what_every_block_counts_on_a_generated_corpus() {
    let course = common::course();
    let corpus = common::generated_corpus(1, "classes-corpus", false);
    let (mut compared, mut skipped) = (0, 0);
    for lesson in &course.lessons {
        let dir = corpus.join(&lesson.id);
        if dir.is_dir() {
            for (_, path) in kernels(&dir, |_| Some(lesson.id.clone())) {
                if let Some(s) = compare(lesson, &path) {
                    compared += 1;
                    skipped += s;
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&corpus);
    println!("{compared} generated kernels compared, {skipped} blocks counted by class");
    assert!(compared >= 150, "only {compared} kernels were compared");
    assert!(skipped > 35_000, "only {skipped} blocks were counted by class");
}
