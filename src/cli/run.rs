//! `haloscope run`: one lesson, one kernel, one report.

use super::RunArgs;
use super::print::print_report;
use crate::backend::{BackendChoice, CancelFlag};
use crate::backend_policy::run_lesson;
use crate::lesson::{Course, Expectation, Lesson};
use crate::pipeline::RunRequest;
use crate::report::Verdict;
use crate::report::thousands;
use std::path::Path;

pub fn run(course_dir: &Path, args: &RunArgs) -> i32 {
    let (lesson, request) = match lesson_and_kernel(
        course_dir,
        &args.lesson,
        args.kernel.as_deref(),
        args.seed,
        args.nvrtc.clone(),
    ) {
        Ok(found) => found,
        Err(code) => return code,
    };
    let lesson = &lesson;
    let json = args.json;
    let mut progress = |p: crate::pipeline::Progress| {
        if !json {
            eprintln!("  .. {}", p.describe());
        }
    };
    let report = run_lesson(lesson, &request, args.backend, &mut progress, &CancelFlag::default());
    crate::timeline("run finished, backends closed");
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
        );
    } else {
        print_report(lesson, &report);
    }
    report.exit_code
}

/// The lesson `lesson_id` of the course and the kernel to run against it (its starter when
/// none is given). Errors are printed; the `Err` is the exit code.
pub(super) fn lesson_and_kernel(
    course_dir: &Path,
    lesson_id: &str,
    kernel: Option<&Path>,
    seed: Option<u64>,
    nvrtc: Option<std::path::PathBuf>,
) -> Result<(Lesson, RunRequest), i32> {
    let infra = Verdict::InfraError.exit_code();
    let course = Course::load(course_dir).map_err(|e| {
        eprintln!("cannot read the course directory {}: {e}", course_dir.display());
        infra
    })?;
    let Some(lesson) = course.get(lesson_id) else {
        eprintln!("{}", course.unknown_lesson_message(lesson_id));
        return Err(infra);
    };
    let request = RunRequest::from_file(kernel.unwrap_or(&lesson.starter), seed, nvrtc).map_err(|message| {
        eprintln!("{message}");
        infra
    })?;
    Ok(((**lesson).clone(), request))
}

/// Runs the starter, solution and every variant of a lesson and checks each ends as the
/// lesson declares (solution passes, starter fails the gate, variants as listed).
pub fn check_lesson_kernels(lesson: &Lesson) -> i32 {
    let mut cases = vec![
        (lesson.solution.clone(), Expectation::Pass, "solution".to_string()),
        (lesson.starter.clone(), Expectation::GateFail, "starter".to_string()),
    ];
    cases.extend(
        lesson
            .variants
            .iter()
            .map(|v| (v.path.clone(), v.expect, v.note.clone())),
    );
    let mut failures = 0;
    // Rust kernels: the lesson declares them, so they must be checked too; a machine whose
    // rustc cannot build them cannot validate the lesson.
    let rust: Vec<(std::path::PathBuf, Expectation, String)> = [
        (&lesson.rust_solution, Expectation::Pass, "rust solution"),
        (&lesson.rust_starter, Expectation::GateFail, "rust starter"),
    ]
    .into_iter()
    .filter_map(|(path, expect, what)| path.clone().map(|p| (p, expect, what.to_string())))
    .collect();
    if !rust.is_empty() {
        match crate::compile::rust_toolchain() {
            Ok(_) => cases.extend(rust),
            Err(why) => {
                for (path, _, what) in &rust {
                    println!(
                        "  FAIL {:<40} {what}: cannot be checked: {why}",
                        path.file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default()
                    );
                    failures += 1;
                }
            }
        }
    }
    for (path, expect, what) in cases {
        let report = match RunRequest::from_file(&path, None, None) {
            Ok(request) => run_lesson(
                lesson,
                &request,
                BackendChoice::Emu,
                &mut |_| {},
                &CancelFlag::default(),
            ),
            Err(message) => {
                println!("  {what}: {message}");
                failures += 1;
                continue;
            }
        };
        let mut ok = verdict_matches(expect, report.verdict);
        // The figures the lesson quotes must still be what the kernels issue.
        let quoted = match what.as_str() {
            "starter" => lesson.figures.starter_sectors,
            "solution" => lesson.figures.solution_sectors,
            _ => None,
        };
        let measured = report.profile.as_ref().map(|p| p.sectors);
        let figure_note = match (quoted, measured) {
            (Some(q), Some(m)) if q != m => {
                ok = false;
                format!(
                    " [figures.{what}_sectors = {} but the emulator counts {}]",
                    thousands(q),
                    thousands(m)
                )
            }
            (Some(_), Some(_)) => format!(" [matches figures.{what}_sectors]"),
            _ => String::new(),
        };
        println!(
            "  {} {:<40} expected {:?}, got {} — {}{figure_note}",
            if ok { "ok  " } else { "FAIL" },
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            expect,
            report.verdict.label(),
            report.headline
        );
        if !ok {
            failures += 1;
        }
        if report.verdict == Verdict::InfraError {
            println!("  (stopping: the backend is not usable here)");
            return report.exit_code;
        }
    }
    if failures == 0 { 0 } else { 1 }
}

fn verdict_matches(expect: Expectation, verdict: Verdict) -> bool {
    matches!(
        (expect, verdict),
        (Expectation::Pass, Verdict::Pass)
            | (Expectation::GateFail, Verdict::GateFail)
            | (Expectation::WrongResults, Verdict::WrongResults)
            | (
                Expectation::CompileError,
                Verdict::CompileError | Verdict::ContractError
            )
            | (Expectation::KernelFault, Verdict::KernelFault)
    )
}

/// `haloscope launch`: compile each kernel for the GPU and launch it `count` times, nothing
/// else, in the order given. One line per kernel on stdout (`launched FILE`, `not launched
/// FILE: why` when it does not compile, `faulted FILE: why`), so that `ncu`'s rows, which come in launch order, can be matched to files
/// (scripts/corpus/run.py ncu). A fault stops the run (the context is lost): the exit code
/// says so and the lines say which kernels were launched.
/// The input is the one a run of `seed` profiles on, so ncu measures what the backends do.
pub fn launch(
    course_dir: &Path,
    lesson_id: &str,
    kernels: &[std::path::PathBuf],
    sizes: &[u32],
    count: u32,
    seed: u64,
) -> i32 {
    let sm = match crate::backend::gpu::compute_capability() {
        Ok(cc) => (cc.0 * 10 + cc.1) as u32,
        Err(message) => {
            eprintln!("{message}");
            return Verdict::InfraError.exit_code();
        }
    };
    let (lesson, _) = match lesson_and_kernel(course_dir, lesson_id, None, None, None) {
        Ok(found) => found,
        Err(code) => return code,
    };
    // Every kernel is compiled before the first launch, on all cores, so that the launches
    // under ncu follow each other with nothing in between (issue 11: the corpus in one call).
    let compiled = compile_all(course_dir, lesson_id, kernels, sm);
    let mut exit = 0;
    let mut ready = Vec::new();
    for (kernel, result) in kernels.iter().zip(compiled) {
        match result {
            Ok(k) => ready.push((kernel.display().to_string(), k)),
            Err((code, message)) => {
                println!("not launched {}: {message}", kernel.display());
                exit = code;
            }
        }
    }
    let sizes = if sizes.is_empty() {
        vec![lesson.profile_size]
    } else {
        sizes.to_vec()
    };
    for n in sizes {
        let input_seed = crate::harness::size_seed(seed, n);
        // Under compute-sanitizer its reports of a launch come before this line (stdout is
        // flushed per line), so a log can be cut into launches.
        let faulted =
            crate::backend::gpu::launch_each(&lesson, &ready, n, count, input_seed, |label, result| match result {
                Ok(()) => println!("launched {label} n={n}"),
                Err(f) => println!("faulted {label} n={n}: {}", f.message()),
            });
        if faulted {
            return Verdict::KernelFault.exit_code();
        }
    }
    exit
}

/// Each kernel compiled to a cubin for `sm`, in the order given, or its exit code and
/// headline; spread over the machine's cores (NVRTC programs are independent).
fn compile_all(
    course_dir: &Path,
    lesson_id: &str,
    kernels: &[std::path::PathBuf],
    sm: u32,
) -> Vec<Result<crate::compile::CompiledKernel, (i32, String)>> {
    let one = |kernel: &std::path::PathBuf| {
        let (lesson, request) = lesson_and_kernel(course_dir, lesson_id, Some(kernel), None, None)
            .map_err(|code| (code, "cannot read the kernel".to_string()))?;
        let target = crate::compile::Target::Cubin { sm };
        crate::compile::compile_kernel(&request.source, &request.source_name, &lesson, target, None)
            .map_err(|f| (Verdict::CompileError.exit_code(), f.headline()))
    };
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(kernels.len().max(1));
    let chunk = kernels.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let parts: Vec<_> = kernels
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(one).collect::<Vec<_>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|h| h.join().expect("compile thread"))
            .collect()
    })
}

/// `haloscope compile`: the PTX a kernel turns into, with its diagnostics.
pub fn compile(
    course_dir: &Path,
    lesson_id: &str,
    kernel: &Path,
    sm: u32,
    output: Option<&Path>,
    printf_gate: bool,
) -> i32 {
    let (lesson, request) = match lesson_and_kernel(course_dir, lesson_id, Some(kernel), None, None) {
        Ok(found) => found,
        Err(code) => return code,
    };
    let lesson = &lesson;
    match crate::compile::compile_kernel(
        &request.source,
        &request.source_name,
        lesson,
        crate::compile::Target::Ptx { compute: sm },
        None,
    ) {
        Ok(k) => {
            for d in &k.diagnostics {
                eprintln!("{d}");
            }
            let ptx = match printf_gate {
                true => crate::backend::gpu::gate_printf(&k.ptx).unwrap_or(k.ptx),
                false => k.ptx,
            };
            match output {
                Some(path) => match std::fs::write(path, &ptx) {
                    Ok(()) => 0,
                    Err(e) => {
                        eprintln!("cannot write {}: {e}", path.display());
                        Verdict::InfraError.exit_code()
                    }
                },
                None => {
                    print!("{ptx}");
                    0
                }
            }
        }
        Err(f) => {
            eprintln!("{}", f.headline());
            match f {
                crate::compile::CompileFailure::Contract { .. } => Verdict::ContractError.exit_code(),
                crate::compile::CompileFailure::Errors { .. } => Verdict::CompileError.exit_code(),
                _ => Verdict::InfraError.exit_code(),
            }
        }
    }
}
