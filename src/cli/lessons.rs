//! `haloscope lessons` and `haloscope lesson check`.

use crate::lesson::{Course, load_lesson};
use crate::report::thousands;
use std::path::Path;

pub fn list(course_dir: &Path) -> i32 {
    let course = match Course::load(course_dir) {
        Ok(course) => course,
        Err(e) => {
            eprintln!("cannot read the course directory {}: {e}", course_dir.display());
            return 20;
        }
    };
    println!("{:<14} {:<60} {:>16}", "id", "title", "gate (sectors <)");
    for lesson in &course.lessons {
        println!(
            "{:<14} {:<60} {:>16}",
            lesson.id,
            lesson.title,
            thousands(lesson.gate.below)
        );
    }
    for broken in &course.broken {
        println!("broken lesson: {broken}");
    }
    if course.broken.is_empty() { 0 } else { 20 }
}

pub fn check(dir: &Path, no_run: bool) -> i32 {
    let lesson = match load_lesson(dir) {
        Ok(lesson) => lesson,
        Err(e) => {
            eprintln!("{e}");
            return 20;
        }
    };
    println!("{}: contract and files OK ({})", lesson.id, lesson.title);
    if no_run {
        return 0;
    }
    super::run::check_lesson_kernels(&lesson)
}
