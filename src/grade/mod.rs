//! Grading a class: every submission in a folder run the same way (its own process, a time
//! and memory limit, a recorded seed), in parallel over the cores, into one table. A broken,
//! hanging or crashing submission gets its row with the reason and never stops the others;
//! a re-run reuses the rows of unchanged submissions.

pub mod child;
pub mod submissions;
pub mod table;

use crate::lesson::Lesson;
use child::{ChildFailure, ChildRun};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use submissions::{Submission, content_hash, student_seed};
use table::{GradeRow, GradeTable, NoReport};

pub struct GradeOptions {
    pub lesson: Lesson,
    pub lessons_dir: PathBuf,
    pub submissions: PathBuf,
    /// `emu`, `gpu` or `auto`, as `haloscope run --backend`.
    pub backend: String,
    /// Submissions graded at once.
    pub jobs: usize,
    pub timeout: Duration,
    /// Address-space limit per submission, bytes (0: none).
    pub memory: u64,
    /// The grading run's seed (each student's is derived from it).
    pub seed: u64,
    /// Where grades.json, grades.csv and the reports go.
    pub out: PathBuf,
    /// Grade every submission again, changed or not.
    pub force: bool,
}

/// What a grading run did, for the summary line.
pub struct Graded {
    pub table: GradeTable,
    pub ran: usize,
    pub reused: usize,
    pub seconds: f64,
}

/// Grades every submission; `progress(done, total, student)` after each.
pub fn grade(options: &GradeOptions, progress: &(dyn Fn(usize, usize, &str) + Sync)) -> Result<Graded, String> {
    let started = Instant::now();
    let found = submissions::find(&options.submissions, &options.out).map_err(|e| {
        format!(
            "cannot read the submissions folder {}: {e}",
            options.submissions.display()
        )
    })?;
    if found.is_empty() {
        return Err(format!(
            "no submissions in {}: expected .cu/.rs files or one folder per student",
            options.submissions.display()
        ));
    }
    let previous = GradeTable::load(&options.out.join("grades.json")).ok();
    let lesson_toml = std::fs::read(options.lesson.dir.join("lesson.toml")).unwrap_or_default();
    let reports = options.out.join("reports");
    std::fs::create_dir_all(&reports).map_err(|e| format!("cannot create {}: {e}", reports.display()))?;
    let scratch = options.out.join("scratch");
    std::fs::create_dir_all(&scratch).map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;

    let rows: Vec<Mutex<Option<GradeRow>>> = found.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let ran = AtomicUsize::new(0);
    let jobs = options.jobs.clamp(1, found.len());
    // Each child's emulator gets its share of the cores.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let emu_threads = (cores / jobs).max(1);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(submission) = found.get(i) else { break };
                    // Read and hashed once: it decides reuse and is recorded in the row.
                    let hash = hash_of(options, submission, &lesson_toml);
                    let reuse = previous
                        .as_ref()
                        .and_then(|p| reusable(p, options, submission, hash.as_deref()?));
                    let row = match reuse {
                        Some(row) => row,
                        None => {
                            ran.fetch_add(1, Ordering::Relaxed);
                            let hash = hash.unwrap_or_default();
                            grade_one(options, submission, hash, emu_threads, &scratch, &reports)
                        }
                    };
                    *rows[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(row);
                    let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                    progress(d, found.len(), &submission.student);
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&scratch);
    let table = GradeTable {
        lesson: options.lesson.id.clone(),
        backend: options.backend.clone(),
        submissions: options.submissions.clone(),
        rows: rows
            .into_iter()
            .map(|r| {
                r.into_inner()
                    .unwrap_or_else(|e| e.into_inner())
                    .expect("every submission graded")
            })
            .collect(),
    };
    table.write(&options.out)?;
    let ran = ran.into_inner();
    Ok(Graded {
        ran,
        reused: table.rows.len() - ran,
        table,
        seconds: started.elapsed().as_secs_f64(),
    })
}

fn relative(options: &GradeOptions, path: &Path) -> String {
    path.strip_prefix(&options.submissions)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

fn hash_of(options: &GradeOptions, submission: &Submission, lesson_toml: &[u8]) -> Option<String> {
    let source = std::fs::read(submission.file.as_ref()?).ok()?;
    Some(content_hash(&source, lesson_toml, &options.backend))
}

/// The earlier row of an unchanged submission, unless `--force`.
fn reusable(previous: &GradeTable, options: &GradeOptions, submission: &Submission, hash: &str) -> Option<GradeRow> {
    if options.force || previous.lesson != options.lesson.id {
        return None;
    }
    let file = relative(options, submission.file.as_ref()?);
    previous
        .rows
        .iter()
        .find(|r| r.student == submission.student && r.file == file && r.content_hash == hash)
        // A row cut short by the machine (time limit, crash) is tried again.
        .filter(|r| !r.verdict.cut_short())
        .cloned()
}

fn grade_one(
    options: &GradeOptions,
    submission: &Submission,
    hash: String,
    emu_threads: usize,
    scratch: &Path,
    reports: &Path,
) -> GradeRow {
    let seed = student_seed(options.seed, &submission.student);
    let Some(file) = &submission.file else {
        return GradeRow::without_report(
            &submission.student,
            "",
            NoReport::Missing,
            "no .cu or .rs file in the student's folder".into(),
            seed,
            String::new(),
        );
    };
    let name = relative(options, file);
    // Each child runs in an empty folder of its own: a quoted #include finds nothing there.
    let own = scratch.join(format!("{:016x}", seed));
    let _ = std::fs::create_dir_all(&own);
    let kernel = std::fs::canonicalize(file).unwrap_or_else(|_| file.clone());
    let run = ChildRun {
        kernel,
        lesson: options.lesson.id.clone(),
        lessons_dir: std::fs::canonicalize(&options.lessons_dir).unwrap_or_else(|_| options.lessons_dir.clone()),
        backend: options.backend.clone(),
        seed,
        timeout: options.timeout,
        memory: options.memory,
        emu_threads,
    };
    let started = Instant::now();
    let result = run.run(&own);
    let seconds = started.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&own);
    let mut row = match result {
        Ok(report) => {
            let mut row = GradeRow::from_report(&submission.student, &name, &options.lesson, &report, hash);
            let file_name = format!("{}.json", safe_name(&submission.student));
            if let Ok(json) = serde_json::to_string_pretty(&report)
                && std::fs::write(reports.join(&file_name), json).is_ok()
            {
                row.report = Some(format!("reports/{file_name}"));
            }
            row
        }
        Err(failure) => {
            let why = match failure {
                ChildFailure::TimedOut(_) => NoReport::Timeout,
                _ => NoReport::Crashed,
            };
            GradeRow::without_report(&submission.student, &name, why, failure.describe(), seed, hash)
        }
    };
    if !submission.ignored.is_empty() {
        let ignored: Vec<String> = submission.ignored.iter().map(|p| relative(options, p)).collect();
        row.message = format!(
            "{} (also in the folder, not graded: {})",
            row.message,
            ignored.join(", ")
        );
    }
    row.seconds = seconds;
    row
}

/// A student name as a file name: letters, digits, `-`, `_` and `.` kept, the rest `_`.
fn safe_name(student: &str) -> String {
    student
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}
