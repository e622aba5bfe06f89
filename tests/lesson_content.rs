//! Lesson content: every lesson has its text, hints and learning goals; the figures the texts
//! quote come from docs/measurements.md; a teacher can add a lesson by writing files only.

mod common;

fn numbers_in(text: &str) -> Vec<String> {
    // Comma-grouped numbers such as 1,362,688,000.
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_digit() && (i == 0 || !chars[i - 1].is_ascii_digit()) {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || (chars[i] == ',' && i + 1 < chars.len() && chars[i + 1].is_ascii_digit()))
            {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        }
        i += 1;
    }
    out
}

#[test]
fn every_lesson_has_text_hints_and_goals() {
    let course = common::course();
    assert_eq!(
        course.lessons.len(),
        4,
        "{:?}",
        course.lessons.iter().map(|l| &l.id).collect::<Vec<_>>()
    );
    for lesson in &course.lessons {
        assert!(lesson.text.len() > 1500, "{}: the text is a stub", lesson.id);
        assert!(lesson.hints.len() >= 3, "{}: hints", lesson.id);
        assert!(lesson.learn.len() >= 3, "{}: learning goals", lesson.id);
        assert!(
            lesson.figures.starter_sectors.is_some() && lesson.figures.solution_sectors.is_some(),
            "{}",
            lesson.id
        );
        assert!(!lesson.variants.is_empty(), "{}: failing variants", lesson.id);
    }
}

#[test]
fn the_gates_sit_between_starter_and_solution() {
    for lesson in common::course().lessons {
        let (starter, solution) = (
            lesson.figures.starter_sectors.unwrap(),
            lesson.figures.solution_sectors.unwrap(),
        );
        assert!(
            solution < lesson.gate.below && lesson.gate.below < starter,
            "{}",
            lesson.id
        );
    }
}

/// The rows of every markdown table in `text`, keyed by their first cell with any leading
/// `kernels/` removed: (header cells, row cells).
fn table_rows(text: &str) -> Vec<(String, Vec<String>, Vec<String>)> {
    let cells = |line: &str| -> Vec<String> {
        line.trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let mut rows = Vec::new();
    let mut header: Option<Vec<String>> = None;
    for line in text.lines() {
        if !line.starts_with('|') {
            header = None;
            continue;
        }
        let row = cells(line);
        if row.iter().all(|c| c.chars().all(|ch| ch == '-' || ch == ':')) {
            continue;
        }
        match &header {
            None => header = Some(row),
            Some(h) => {
                let key = row[0].trim_start_matches("kernels/").to_string();
                rows.push((key, h.clone(), row));
            }
        }
    }
    rows
}

/// The cell of column `column` (a header prefix) in the first table row of `kernel`
/// (`stencil-2d/starter.cu`) whose table has that column.
fn cell(rows: &[(String, Vec<String>, Vec<String>)], kernel: &str, column: &str) -> Option<String> {
    rows.iter().find_map(|(key, header, row)| {
        let i = header.iter().position(|h| h.starts_with(column))?;
        (key == kernel).then(|| row.get(i).cloned()).flatten()
    })
}

fn measurements() -> String {
    std::fs::read_to_string(common::root().join("docs/measurements.md")).unwrap()
}

#[test]
fn quoted_figures_come_from_the_measurements() {
    let measurements = measurements();
    let rows = table_rows(&measurements);
    let measured: std::collections::HashSet<String> = numbers_in(&measurements).into_iter().collect();
    for lesson in common::course().lessons {
        let toml = std::fs::read_to_string(lesson.dir.join("lesson.toml"))
            .unwrap()
            .replace('_', ",");
        let in_toml: std::collections::HashSet<String> = numbers_in(&toml).into_iter().collect();
        // Every large figure of the text is a whole number of docs/measurements.md (or a
        // setting of the lesson), not a piece of one.
        for number in numbers_in(&lesson.text) {
            let digits = number.chars().filter(char::is_ascii_digit).count();
            if digits < 7 {
                continue;
            }
            assert!(
                measured.contains(&number) || in_toml.contains(&number),
                "{}: {number} is in neither docs/measurements.md nor lesson.toml",
                lesson.id
            );
        }
        // A sentence that names one of the lesson's kernels quotes that kernel's figures.
        let kernels: Vec<String> = std::fs::read_dir(common::root().join("kernels").join(&lesson.id))
            .unwrap()
            .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let mut checked = 0;
        for paragraph in lesson.text.split("\n\n") {
            let paragraph = paragraph.replace('\n', " ");
            for sentence in paragraph.split(". ") {
                let named: Vec<&String> = kernels
                    .iter()
                    .filter(|k| sentence.contains(&format!("`{k}`")))
                    .collect();
                let [name] = named[..] else { continue };
                let kernel = format!("{}/{name}", lesson.id);
                for number in numbers_in(sentence).into_iter().filter(|n| n.len() >= 9) {
                    let in_row = rows.iter().any(|(key, _, row)| key == &kernel && row.contains(&number));
                    assert!(
                        in_row || in_toml.contains(&number),
                        "{}: {number} is quoted for {kernel}, but its row in docs/measurements.md says otherwise",
                        lesson.id
                    );
                    checked += 1;
                }
            }
        }
        if lesson.id == "stencil-2d" {
            assert!(checked > 0, "the x_only.cu sentence was not found");
        }
        // The contract's figures are the H200's for its starter and solution, in their rows:
        // CUPTI, ncu and the emulator's columns, and the median time.
        let figures = [
            (
                "starter",
                lesson.figures.starter_sectors.unwrap(),
                lesson.figures.starter_us.unwrap(),
            ),
            (
                "solution",
                lesson.figures.solution_sectors.unwrap(),
                lesson.figures.solution_us.unwrap(),
            ),
        ];
        for (what, sectors, us) in figures {
            let kernel = format!("{}/{what}.cu", lesson.id);
            let text = haloscope::report::thousands(sectors);
            for column in ["CUPTI", "ncu", "emulator"] {
                assert_eq!(
                    cell(&rows, &kernel, column).as_deref(),
                    Some(text.as_str()),
                    "{}: figures.{what}_sectors against the {column} column of {kernel}'s row",
                    lesson.id
                );
            }
            assert_eq!(
                cell(&rows, &kernel, "median us").as_deref(),
                Some(format!("{us:.1}").as_str()),
                "{}: figures.{what}_us against {kernel}'s row",
                lesson.id
            );
            assert!(
                lesson.text.contains(&text),
                "{}: the text does not quote {text}",
                lesson.id
            );
        }
    }
}

#[test]
fn the_pinned_h200_figures_are_the_documented_ones() {
    // tests/common/h200.rs, which the GPU and emulator tests pin, against the tables of
    // docs/measurements.md (sectors, verdict) and docs/device-runs (loads, stores, ideal).
    let rows = table_rows(&measurements());
    let mut split = String::new();
    for f in [
        "2026-12-02-call3-loads-stores-ideal.md",
        "2026-12-02-call6-rust-loads-stores-ideal.md",
    ] {
        split += &std::fs::read_to_string(common::root().join("docs/device-runs").join(f)).unwrap();
    }
    let t = haloscope::report::thousands;
    for h in common::h200::CUDA.iter().chain(common::h200::RUST) {
        let kernel = h.kernel.trim_start_matches("kernels/");
        let sectors = t(h.sectors);
        let column = if h.kernel.ends_with(".rs") {
            "CUPTI"
        } else {
            "CUPTI sectors"
        };
        assert_eq!(
            cell(&rows, kernel, column),
            Some(sectors.clone()),
            "{}: CUPTI",
            h.kernel
        );
        assert_eq!(cell(&rows, kernel, "ncu"), Some(sectors.clone()), "{}: ncu", h.kernel);
        if h.kernel.ends_with(".cu") {
            assert_eq!(
                cell(&rows, kernel, "verdict").as_deref(),
                Some(h.verdict),
                "{}",
                h.kernel
            );
        }
        let line = split
            .lines()
            .find(|l| l.starts_with(&format!("{}:", h.kernel)))
            .unwrap_or_else(|| panic!("{}: not in docs/device-runs", h.kernel));
        let gpu = line.split('|').next().unwrap();
        let expected = format!("gpu loads {} stores {} ideal {} ", t(h.loads), t(h.stores), t(h.ideal));
        assert!(gpu.contains(&expected), "{}: {line}\nexpected {expected}", h.kernel);
    }
    // The Rust table's verdicts.
    for h in common::h200::RUST {
        let kernel = h.kernel.trim_start_matches("kernels/");
        let table =
            std::fs::read_to_string(common::root().join("docs/device-runs/2026-12-02-call6-rust-table.md")).unwrap();
        assert!(
            table.contains(&format!("| {} | {} | {} |", h.kernel, h.verdict, t(h.sectors))),
            "{kernel}: verdict and sectors in docs/device-runs/2026-12-02-call6-rust-table.md"
        );
    }
}

#[test]
fn a_teacher_adds_a_lesson_from_a_temp_dir() {
    let dir = tempfile::tempdir().unwrap();
    let course = dir.path();
    let lesson = course.join("my-1d");
    std::fs::create_dir_all(&lesson).unwrap();
    for f in ["starter.cu", "solution.cu", "no_barrier.cu"] {
        std::fs::copy(common::root().join("kernels/stencil-1d").join(f), lesson.join(f)).unwrap();
    }
    std::fs::write(lesson.join("lesson.md"), "# My 1D lesson\n\nStage the row.\n").unwrap();
    std::fs::write(
        lesson.join("lesson.toml"),
        r#"id = "my-1d"
title = "My 1D lesson"
order = 1
summary = "A teacher's copy of the 1D prequel with smaller sizes."
hints = ["Use a tile."]

[kernel]
entry = "stencil1d"
params = ["const float* in", "float* out", "int n"]

[launch]
block = [256, 1, 1]
grid = ["ceil(n/256)", "1", "1"]
dynamic_shared_bytes = 0

[problem]
dims = 1
centre = 0.5
neighbour = 0.25
verify_sizes = [17, 1000]
profile_size = 65536
profile_launches = 10

[gate]
metric = "smsp__sass_sectors_mem_global.sum"
below = 250_000

[files]
starter = "starter.cu"
solution = "solution.cu"

[[files.variants]]
path = "no_barrier.cu"
expect = "kernel-fault"
note = "no barrier"
"#,
    )
    .unwrap();
    let course_arg = course.to_string_lossy().into_owned();
    let (code, out, err) = common::haloscope(&["--lessons", &course_arg, "lessons"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("my-1d") && out.contains("250,000"), "{out}");
    let lesson_arg = lesson.to_string_lossy().into_owned();
    let (code, out, err) = common::haloscope(&["lesson", "check", &lesson_arg]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, _) = common::haloscope(&[
        "--lessons",
        &course_arg,
        "run",
        "--lesson",
        "my-1d",
        "--kernel",
        &lesson.join("solution.cu").to_string_lossy(),
        "--json",
    ]);
    assert_eq!(code, 0, "{out}");
}
