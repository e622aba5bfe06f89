//! The cubin reader (src/compile/cubin.rs, the live count's route past nvdisasm) against
//! nvdisasm itself: for every kernel of the course, every learner kernel, the emulator corpus
//! and the hazard corpus of seed 1 (a seed the opcode table was not learnt from: it was
//! learnt from seed 77, scripts/sass/opcode-table.py), the reader must find the global memory
//! instructions nvdisasm finds, at the same offsets, under the same PTX and source lines, and
//! the figures part of the machine-code check must equal the whole check's.

mod common;

use haloscope::compile::machine_code::{self, REFERENCE_SM};
use haloscope::compile::{Target, compile_kernel, cubin, kernel_file};
use haloscope::lesson::Lesson;
use std::path::{Path, PathBuf};

/// How one kernel went.
enum Outcome {
    /// The reader read it and agreed with nvdisasm.
    Agreed,
    /// The reader gave up (the caller then asks nvdisasm): why.
    NotRead(String),
    /// The kernel did not compile for this lesson (some hazard-corpus kernels are meant for
    /// the checks, not the compiler).
    NotCompiled,
}

fn check_kernel(lesson: &Lesson, path: &Path) -> Outcome {
    let source = std::fs::read_to_string(path).unwrap();
    let Ok(kernel) = compile_kernel(&source, "kernel.cu", lesson, Target::EMULATOR, None) else {
        return Outcome::NotCompiled;
    };
    let cubin_bytes = kernel.cubin.as_deref().expect("the emulator target makes a cubin");
    let ptx = &kernel.ptx;
    let name = path.display();
    let by_nvdisasm =
        machine_code::global_instructions_by_nvdisasm(ptx, cubin_bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    let file = kernel_file(ptx);
    let lines = machine_code::kernel_lines(ptx);
    let read = match cubin::global_instructions(cubin_bytes, &file, &lines) {
        Ok(read) => read,
        Err(why) => return Outcome::NotRead(why),
    };
    assert_eq!(read, by_nvdisasm, "{name}: the global memory instructions");
    let whole = machine_code::check(ptx, cubin_bytes, REFERENCE_SM).unwrap();
    let figures = machine_code::figures_check(ptx, cubin_bytes, REFERENCE_SM).unwrap();
    assert_eq!(
        (&figures.removed_ptx_lines, &figures.moved_ptx_lines, &figures.lines),
        (&whole.removed_ptx_lines, &whole.moved_ptx_lines, &whole.lines),
        "{name}: what moves the figures"
    );
    Outcome::Agreed
}

/// Every `.cu` file of `dir`, with the lesson its first lines name (`// lesson: id`) or, for
/// kernels/<lesson>/, its folder's.
fn kernels_in(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?;
            let named = text.lines().take(3).find_map(|l| l.split("lesson: ").nth(1)).map(|id| {
                id.split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .trim_end_matches(',')
                    .to_string()
            });
            let folder = dir.file_name().map(|f| f.to_string_lossy().into_owned());
            Some((named.or(folder)?, p))
        })
        .collect();
    found.sort();
    found
}

#[test]
fn the_reader_finds_what_nvdisasm_finds_in_every_course_and_learner_kernel() {
    let course = common::course();
    let root = common::root();
    let mut dirs: Vec<PathBuf> = course
        .lessons
        .iter()
        .map(|l| root.join("kernels").join(&l.id))
        .collect();
    dirs.push(root.join("tests/learner"));
    let mut agreed = 0;
    for dir in dirs {
        for (id, path) in kernels_in(&dir) {
            let Some(lesson) = course.get(&id) else { continue };
            match check_kernel(lesson, &path) {
                Outcome::Agreed => agreed += 1,
                Outcome::NotRead(why) => panic!("{}: the reader gave up: {why}", path.display()),
                Outcome::NotCompiled => {}
            }
        }
    }
    assert!(agreed >= 60, "only {agreed} kernels were compared");
}

#[test]
fn the_reader_finds_what_nvdisasm_finds_in_a_generated_corpus() {
    let course = common::course();
    let corpus = common::generated_corpus(1, "cubin-corpus", false);
    let (mut agreed, mut not_read) = (0, Vec::new());
    for lesson in &course.lessons {
        let dir = corpus.join(&lesson.id);
        if !dir.is_dir() {
            continue;
        }
        for (_, path) in kernels_in(&dir) {
            match check_kernel(lesson, &path) {
                Outcome::Agreed => agreed += 1,
                Outcome::NotRead(why) => not_read.push(format!("{}: {why}", path.display())),
                Outcome::NotCompiled => {}
            }
        }
    }
    let _ = std::fs::remove_dir_all(&corpus);
    println!("{agreed} kernels agreed; not read (nvdisasm answers for them): {not_read:#?}");
    assert!(agreed >= 150, "only {agreed} kernels were compared");
    // A kernel the reader cannot read costs time (nvdisasm), never a wrong figure; it must
    // stay the exception.
    assert!(
        not_read.len() * 20 <= agreed,
        "{} kernels not read: {not_read:#?}",
        not_read.len()
    );
}
