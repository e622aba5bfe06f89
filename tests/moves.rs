//! Where the compiler moved accesses (issue 32): on the real lesson kernels, compiled by
//! NVRTC, traced on the emulator against their unoptimised build.

mod common;

use haloscope::backend::CancelFlag;
use haloscope::compile::{Target, compile_kernel, compile_unoptimised, machine_code};
use haloscope::trace::compiler_moves::{self as moves, MoveKind};

fn moves_of(lesson_id: &str, file: &str) -> moves::Moves {
    let lesson = common::lesson(lesson_id);
    let path = common::root().join("kernels").join(lesson_id).join(file);
    let source = std::fs::read_to_string(&path).unwrap();
    let kernel = compile_kernel(&source, file, &lesson, Target::EMULATOR, None).unwrap();
    let machine = machine_code::check(&kernel.ptx, kernel.cubin.as_deref().unwrap(), 90).ok();
    let reference = compile_unoptimised(&source, file, &lesson, None).unwrap();
    let traced = moves::trace(&lesson, &kernel, &reference, &CancelFlag::default()).unwrap();
    moves::explain(&traced, machine.as_ref())
}

#[test]
fn the_2d_starters_centre_read_is_explained_on_lines_17_23_and_27() {
    let moves = moves_of("stencil-2d", "starter.cu");
    for m in &moves.moves {
        eprintln!(
            "{:?} {:?} -> {:?} ptx {:?}: {}",
            m.kind, m.source_lines, m.counted_on, m.ptx_lines, m.text
        );
    }
    let centre = moves
        .moves
        .iter()
        .find(|m| m.kind == MoveKind::Merged && !m.store)
        .expect("a merged load");
    assert_eq!(centre.source_lines, vec![17, 23], "{}", centre.text);
    assert_eq!(centre.counted_on, vec![27], "{}", centre.text);
}

#[test]
fn print_every_lesson_kernels_moves() {
    for lesson in common::course().lessons {
        for file in ["starter.cu", "solution.cu"] {
            let moves = moves_of(&lesson.id, file);
            eprintln!("== {} {file}", lesson.id);
            for m in &moves.moves {
                eprintln!(
                    "  {:?} {:?} -> {:?} ptx {:?}: {}",
                    m.kind, m.source_lines, m.counted_on, m.ptx_lines, m.text
                );
            }
        }
    }
}
