//! `haloscope grade` on a class of 23 submissions of every kind (passing, over the gate,
//! wrong, unwritten, not compiling, wrong signature, hanging, out of bounds, racing,
//! printf in every thread, including headers, including files outside the headers, a
//! folder with no kernel, a folder with two), every row checked; then a re-run that reuses
//! the unchanged rows, and the memory limit.

mod common;

use haloscope::grade::table::{GradeRow, GradeTable};
use std::path::Path;

fn kernel(name: &str) -> String {
    std::fs::read_to_string(common::root().join("kernels/stencil-1d").join(name)).unwrap()
}

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The class: (student, file, source, expected verdict).
fn class(dir: &Path) -> Vec<(&'static str, &'static str)> {
    let solution = kernel("solution.cu");
    let starter = kernel("starter.cu");
    let body = starter.find('{').unwrap() + 1;
    let in_starter = |code: &str| format!("{}\n    {code}\n{}", &starter[..body], &starter[body..]);
    let files: Vec<(&str, &str, String, &str)> = vec![
        ("ada", "ada.cu", solution.clone(), "pass"),
        ("babbage", "babbage/stencil.cu", solution.clone(), "pass"),
        ("curie", "curie.cu", starter.clone(), "gate-fail"),
        (
            "darwin",
            "darwin.cu",
            solution.replace("0.25f *", "0.3f *"),
            "wrong-results",
        ),
        (
            "euler",
            "euler.cu",
            starter.replace("out[i] = 0.5f", "if (i == 5) return;\n    out[i] = 0.5f"),
            "wrong-results",
        ),
        (
            "fermi",
            "fermi.cu",
            starter.replace("int i =", "int i = ;"),
            "compile-error",
        ),
        (
            "gauss",
            "gauss.cu",
            starter.replace("float* __restrict__ out", "double* __restrict__ out"),
            "contract-error",
        ),
        // Runs far past the time limit: every thread spins for millions of steps.
        (
            "hopper",
            "hopper.cu",
            in_starter("for (volatile int k = 0; k < 4000000; ++k) {}"),
            "timeout",
        ),
        // An endless loop the emulator stops by its instruction budget.
        (
            "ising",
            "ising.cu",
            in_starter("volatile int spin = 1; while (spin) {}"),
            "kernel-fault",
        ),
        (
            "joule",
            "joule.cu",
            starter.replace("out[i] = in[i];", "out[i + 1] = in[i];"),
            "kernel-fault",
        ),
        (
            "kepler",
            "kepler.cu",
            starter.replace("0.5f * in[i]", "0.5f * in[i + 100000000]"),
            "kernel-fault",
        ),
        ("lovelace", "lovelace.cu", kernel("no_barrier.cu"), "kernel-fault"),
        ("maxwell", "maxwell.cu", kernel("no_halo.cu"), "kernel-fault"),
        (
            "noether",
            "noether.cu",
            format!(
                "#include <cstdio>\n{}",
                in_starter("printf(\"thread %d\\n\", (int)threadIdx.x);")
            ),
            "gate-fail",
        ),
        (
            "ohm",
            "ohm.cu",
            format!("#include <cstdio>\n#include <cstdint>\n{solution}"),
            "pass",
        ),
        (
            "pascal",
            "pascal.cu",
            format!("#include \"/etc/passwd\"\n{solution}"),
            "compile-error",
        ),
        (
            "riemann",
            "riemann.cu",
            format!("#include \"../../secret.h\"\n{solution}"),
            "compile-error",
        ),
        (
            "shannon",
            "shannon.cu",
            format!("#include \"helper.h\"\n{solution}"),
            "compile-error",
        ),
        ("turing", "turing/a.cu", solution.clone(), "pass"),
        (
            "wien",
            "wien.cu",
            starter.replace(
                "extern \"C\" __global__ void stencil1d",
                "extern \"C\" __global__ void stencil",
            ),
            "contract-error",
        ),
        ("young", "young.cu", starter.replace("0.25f", "0.25"), "gate-fail"),
        // An empty file compiles, but has no kernel to launch.
        ("zuse", "zuse.cu", String::new(), "contract-error"),
    ];
    for (_, file, source, _) in &files {
        write(dir, file, source);
    }
    // A second kernel in turing's folder is ignored (the row says so); xu handed in nothing.
    write(dir, "turing/old.rs", "// an earlier try\n");
    std::fs::create_dir_all(dir.join("xu")).unwrap();
    // What riemann's include would reach from a grading child's folder, and shannon's
    // helper.h beside the submission: neither may end up in a report.
    write(dir, "secret.h", "TOPSECRET_TOKEN\n");
    write(dir, "helper.h", "TOPSECRET_TOKEN\n");
    let mut expected: Vec<(&str, &str)> = files.iter().map(|(s, _, _, v)| (*s, *v)).collect();
    expected.push(("xu", "missing"));
    expected.sort();
    expected
}

/// What an escaping include names (`secret.h`, `/etc/passwd`) never reaches a report or the
/// table in `out`.
fn assert_no_escaped_include(out: &Path) {
    let everything = std::fs::read_dir(out.join("reports"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .chain([std::fs::read_to_string(out.join("grades.csv")).unwrap()])
        .collect::<String>();
    assert!(!everything.contains("TOPSECRET_TOKEN"));
    assert!(!everything.contains("root:x:0"));
}

fn grade(args: &[&str]) -> (i32, String, String) {
    common::haloscope(&[&["grade", "--lesson", "stencil-1d"], args].concat())
}

fn row<'a>(table: &'a GradeTable, student: &str) -> &'a GradeRow {
    table
        .rows
        .iter()
        .find(|r| r.student == student)
        .unwrap_or_else(|| panic!("a row for {student}"))
}

#[test]
fn a_class_of_submissions_is_graded_row_by_row() {
    let dir = tempfile::tempdir().unwrap();
    let subs = dir.path().join("submissions");
    let out = dir.path().join("grades");
    let expected = class(&subs);
    assert!(expected.len() >= 20);
    let started = std::time::Instant::now();
    let (code, stdout, stderr) = grade(&[
        subs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--seed",
        "42",
        "--timeout",
        "25",
    ]);
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    eprintln!(
        "graded {} submissions in {seconds:.1} s (lesson check included)",
        expected.len()
    );
    let table = GradeTable::load(&out.join("grades.json")).unwrap();
    let got: Vec<(&str, &str)> = table
        .rows
        .iter()
        .map(|r| (r.student.as_str(), r.verdict.as_str()))
        .collect();
    assert_eq!(got, expected, "{stdout}");

    // Every row carries its seed, version and grader; runs carry their report.
    for r in &table.rows {
        assert_eq!(r.haloscope_version, env!("CARGO_PKG_VERSION"));
        if !matches!(r.verdict.as_str(), "missing" | "timeout" | "crashed") {
            assert!(
                r.graded_on.starts_with("PTX emulator"),
                "{}: {}",
                r.student,
                r.graded_on
            );
            let report = r.report.as_ref().expect("a report");
            assert!(out.join(report).is_file());
            assert_eq!(r.content_hash.len(), 64);
        }
    }
    // Per-kind details.
    assert_eq!(row(&table, "ada").sectors, Some(432_537_600));
    assert_eq!(row(&table, "ada").gate_passed, Some(true));
    assert_eq!(row(&table, "curie").sectors, Some(943_718_400));
    assert_eq!(row(&table, "curie").gate_passed, Some(false));
    assert!(row(&table, "darwin").wrong > 0);
    assert!(row(&table, "euler").unwritten > 0);
    assert!(
        row(&table, "fermi")
            .compile_errors
            .as_ref()
            .unwrap()
            .contains("fermi.cu")
    );
    assert!(row(&table, "hopper").message.contains("time limit of 25 s"));
    assert!(
        row(&table, "joule").message.contains("out-of-bounds"),
        "{}",
        row(&table, "joule").message
    );
    assert!(
        row(&table, "lovelace").message.contains("race"),
        "{}",
        row(&table, "lovelace").message
    );
    let noether = std::fs::read_to_string(out.join(row(&table, "noether").report.as_ref().unwrap())).unwrap();
    assert!(noether.contains("thread 0") && noether.contains("lines_not_shown"));
    assert!(
        row(&table, "pascal")
            .compile_errors
            .as_ref()
            .unwrap()
            .contains("outside haloscope's headers")
    );
    assert!(row(&table, "turing").message.contains("turing/old.rs"));
    assert_eq!(row(&table, "turing").file, "turing/a.cu");
    // The seeds are per student and recorded; the same --seed gives the same ones.
    assert_ne!(row(&table, "ada").seed, row(&table, "babbage").seed);
    assert_no_escaped_include(&out);
    let csv = std::fs::read_to_string(out.join("grades.csv")).unwrap();
    assert_eq!(csv.lines().next().unwrap().split(',').count(), 17);

    // A re-run grades only what changed (and what the machine cut short).
    write(&subs, "curie.cu", &kernel("solution.cu"));
    let (code, stdout, _) = grade(&[
        subs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--seed",
        "42",
        "--timeout",
        "25",
        "--skip-lesson-check",
    ]);
    assert_eq!(code, 0);
    // curie (changed), hopper (timeout), xu (nothing to hash) run again.
    assert!(stdout.contains("(3 run, 20 unchanged"), "{stdout}");
    let again = GradeTable::load(&out.join("grades.json")).unwrap();
    assert_eq!(row(&again, "curie").verdict, "pass");
    assert_eq!(row(&again, "ada"), row(&table, "ada"));
}

#[test]
fn a_submission_over_the_memory_limit_gets_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let subs = dir.path().join("subs");
    write(&subs, "ada.cu", &kernel("solution.cu"));
    write(&subs, "bea.cu", &kernel("starter.cu"));
    let out = dir.path().join("out");
    // 256 MiB of address space loads NVRTC but not the 1D lesson's 16.7-million-element
    // buffers: the process dies, the row says so. (Where the loader maps more, NVRTC
    // itself cannot be opened under the limit: the run then reports that, as its row.)
    let (code, stdout, stderr) = grade(&[
        subs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--memory-mb",
        "256",
        "--skip-lesson-check",
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let table = GradeTable::load(&out.join("grades.json")).unwrap();
    assert_eq!(table.rows.len(), 2);
    for r in &table.rows {
        match r.verdict.as_str() {
            // An allocation refused (abort) or a thread that could not start (panic),
            // whichever the process hit first under the limit.
            "crashed" => assert!(r.message.contains("the grading process died ("), "{}", r.message),
            "infra-error" => assert!(r.message.contains("NVRTC"), "{}", r.message),
            other => panic!("{}: {other}: {}", r.student, r.message),
        }
    }
}

/// The same class graded on the GPU backend (each submission's run opens its own worker;
/// `--memory-mb` becomes a data-segment limit there, see src/grade/child.rs). The GPU cannot
/// see races or reads of unwritten shared memory, so those rows carry what the hardware
/// computed; everything the GPU can judge must be judged as on the emulator.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_class_is_graded_on_the_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let subs = dir.path().join("submissions");
    let out = dir.path().join("grades");
    let expected = class(&subs);
    let (code, stdout, stderr) = grade(&[
        subs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--backend",
        "gpu",
        "--seed",
        "42",
        "--timeout",
        "60",
        "--jobs",
        "4",
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let table = GradeTable::load(&out.join("grades.json")).unwrap();
    let mut failures = Vec::new();
    for (student, on_emulator) in &expected {
        let r = row(&table, student);
        eprintln!(
            "{student}: {} ({} s) {:?} on {}: {}",
            r.verdict, r.seconds, r.sectors, r.graded_on, r.message
        );
        let accepted: &[&str] = match *student {
            // Spins for seconds per thread: the GPU may finish it inside the limits.
            "hopper" => &["timeout", "gate-fail", "kernel-fault"],
            // Endless in the PTX, and in the machine code of NVRTC 13.5 (the worker's
            // launch timeout ends it); NVRTC 13.0.88's ptxas (the H200's toolkit, seen
            // 2026-12-04) drops the spin on a volatile local, and the GPU finishes it.
            "ising" => &["kernel-fault", "gate-fail"],
            // One element past the end: inside the allocation, so only the values are wrong.
            "joule" => &["wrong-results", "kernel-fault"],
            // A race and a read of unwritten shared memory: the GPU computes whatever it computes.
            "lovelace" | "maxwell" => &["pass", "wrong-results"],
            _ => std::slice::from_ref(on_emulator),
        };
        if !accepted.contains(&r.verdict.as_str()) {
            failures.push(format!("{student}: {} not in {accepted:?}: {}", r.verdict, r.message));
        }
        if !matches!(
            r.verdict.as_str(),
            "missing" | "compile-error" | "contract-error" | "timeout"
        ) {
            // The report says which GPU graded it.
            if !r.graded_on.contains("(sm_") {
                failures.push(format!("{student}: graded on `{}`", r.graded_on));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The GPU's sectors equal the emulator's for the lesson's own kernels.
    assert_eq!(row(&table, "ada").sectors, Some(432_537_600));
    assert_eq!(row(&table, "curie").sectors, Some(943_718_400));
    assert_no_escaped_include(&out);
}
