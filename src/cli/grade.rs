//! `haloscope grade`: a folder of submissions against one lesson, into a table (CSV and
//! JSON), with a progress bar. The lesson is checked first, so a broken lesson does not
//! fail forty students.

use super::GradeArgs;
use crate::grade::table::GradeVerdict;
use crate::grade::{GradeOptions, grade};
use crate::lesson::{Course, load_lesson};
use crate::report::Verdict;
use std::path::Path;
use std::time::Duration;

pub fn run(course_dir: &Path, args: &GradeArgs) -> i32 {
    let infra = Verdict::InfraError.exit_code();
    let course = match Course::load(course_dir) {
        Ok(course) => course,
        Err(e) => {
            eprintln!("cannot read the course directory {}: {e}", course_dir.display());
            return infra;
        }
    };
    let Some(lesson) = course.get(&args.lesson).cloned() else {
        eprintln!("{}", course.unknown_lesson_message(&args.lesson));
        return infra;
    };
    // The lesson guard: its files and contract, then (unless told not to) its own kernels
    // behave as it declares.
    if let Err(e) = load_lesson(&lesson.dir) {
        eprintln!("the lesson does not load: {e}");
        return infra;
    }
    if !args.skip_lesson_check {
        eprintln!("checking lesson {} first (--skip-lesson-check skips this)", lesson.id);
        if super::run::check_lesson_kernels(&lesson) != 0 {
            eprintln!("lesson {} fails its own check: fix it before grading", lesson.id);
            return infra;
        }
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.submissions.join(format!("grades-{}", lesson.id)));
    let seed = args.seed.unwrap_or_else(crate::harness::fresh_seed);
    let options = GradeOptions {
        lesson: (*lesson).clone(),
        lessons_dir: course_dir.to_path_buf(),
        submissions: args.submissions.clone(),
        backend: args.backend.clone(),
        jobs: args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        timeout: Duration::from_secs(args.timeout),
        memory: args.memory_mb * 1024 * 1024,
        seed,
        out: out.clone(),
        force: args.force,
    };
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} graded, {elapsed} ({msg})")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let progress = |done: usize, total: usize, student: &str| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        bar.set_message(student.to_string());
    };
    let graded = match grade(&options, &progress) {
        Ok(graded) => graded,
        Err(message) => {
            bar.abandon();
            eprintln!("{message}");
            return infra;
        }
    };
    bar.finish_and_clear();
    let rows = &graded.table.rows;
    let passed = rows.iter().filter(|r| r.verdict == GradeVerdict::PASS).count();
    println!(
        "graded {} submissions ({} run, {} unchanged since the last grading) in {:.1} s, seed {seed}: {passed} pass",
        rows.len(),
        graded.ran,
        graded.reused,
        graded.seconds
    );
    for r in rows {
        let sectors = r.sectors.map_or("-".to_string(), crate::report::thousands);
        println!(
            "  {:<20} {:<14} {:>15}  {}",
            r.student,
            r.verdict,
            sectors,
            first_line(&r.message)
        );
    }
    println!("table: {} and grades.csv", out.join("grades.json").display());
    0
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}
