//! Lesson content: every lesson has its text, hints and learning goals; the figures the texts
//! quote come from docs/figures.tsv; a teacher can add a lesson by writing files only.

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
        5,
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

/// Every value of docs/figures.tsv as a text may show it: whole numbers with thousands
/// separators (and bare, for small ones), decimals as written.
fn recorded_figures() -> std::collections::HashSet<String> {
    let mut shown = std::collections::HashSet::new();
    for f in common::figures::figures() {
        if let Ok(n) = f.value.parse::<u64>() {
            shown.insert(haloscope::report::thousands(n));
            shown.insert(n.to_string());
        } else {
            shown.insert(f.value.clone());
        }
    }
    shown
}

/// The values docs/figures.tsv records for the kernel's `field`, on any card (lesson.toml
/// says which card its figures are from).
fn recorded(kernel: &str, field: &str) -> Vec<String> {
    common::figures::figures()
        .iter()
        .filter(|f| f.kernel == format!("kernels/{kernel}") && f.field == field)
        .map(|f| f.value.clone())
        .collect()
}

#[test]
fn quoted_figures_come_from_the_figures_table() {
    let measured = recorded_figures();
    for lesson in common::course().lessons {
        let toml = std::fs::read_to_string(lesson.dir.join("lesson.toml"))
            .unwrap()
            .replace('_', ",");
        let in_toml: std::collections::HashSet<String> = numbers_in(&toml).into_iter().collect();
        // Every large figure of the text is a whole figure of docs/figures.tsv (or a
        // setting of the lesson, or one the text works out, listed in `derived`), not a piece
        // of one.
        let derived = derived(&lesson.id);
        for number in numbers_in(&lesson.text) {
            let digits = number.chars().filter(char::is_ascii_digit).count();
            if digits < 7 {
                continue;
            }
            assert!(
                measured.contains(&number)
                    || in_toml.contains(&number)
                    || derived.iter().any(|(v, _)| shows(&number, *v)),
                "{}: {number} is in neither docs/figures.tsv, lesson.toml nor the lesson's derived figures",
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
                    let in_row = common::figures::figures()
                        .iter()
                        .any(|f| f.kernel == format!("kernels/{kernel}") && f.number_text() == number);
                    assert!(
                        in_row || in_toml.contains(&number),
                        "{}: {number} is quoted for {kernel}, but its rows in docs/figures.tsv say otherwise",
                        lesson.id
                    );
                    checked += 1;
                }
            }
        }
        if lesson.id == "stencil-2d" {
            assert!(checked > 0, "the x_only.cu sentence was not found");
        }
        // The contract's figures are the H200's for its starter and solution, in the table:
        // the sectors (CUPTI = ncu x 100) and the median time.
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
            assert!(
                recorded(&kernel, "sectors").contains(&sectors.to_string()),
                "{}: figures.{what}_sectors {sectors} is not {kernel}'s in docs/figures.tsv",
                lesson.id
            );
            assert!(
                recorded(&kernel, "median_us").contains(&format!("{us:.1}")),
                "{}: figures.{what}_us {us} is not {kernel}'s in docs/figures.tsv",
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
fn every_kernel_has_its_figures_and_they_are_the_recorded_ones() {
    // Every kernel in kernels/ has a verdict and sectors in docs/figures.tsv, with its card,
    // date and command: a new lesson's kernels need rows there, nothing else.
    let mut missing = Vec::new();
    for dir in std::fs::read_dir(common::root().join("kernels")).unwrap() {
        let dir = dir.unwrap().path();
        if !dir
            .join("..")
            .join("..")
            .join("lessons")
            .join(dir.file_name().unwrap())
            .exists()
        {
            continue; // kernels/prelude: no lesson
        }
        for file in std::fs::read_dir(&dir).unwrap() {
            let path = file.unwrap().path();
            let kernel = format!(
                "kernels/{}/{}",
                dir.file_name().unwrap().to_string_lossy(),
                path.file_name().unwrap().to_string_lossy()
            );
            for field in ["verdict", "sectors"] {
                let row = common::figures::figures()
                    .iter()
                    .find(|f| f.kernel == kernel && f.field == field);
                match row {
                    Some(f) => assert!(
                        !f.card.is_empty() && !f.date.is_empty() && !f.command.is_empty(),
                        "{kernel} {field}: a figure needs its card, date and command"
                    ),
                    // A kernel that faults on the card has no sectors.
                    None if field == "sectors"
                        && common::figures::figures()
                            .iter()
                            .any(|f| f.kernel == kernel && f.field == "verdict" && f.value == "kernel-fault") => {}
                    None => missing.push(format!("{kernel}: {field}")),
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "kernels with no figures in docs/figures.tsv:\n{}",
        missing.join("\n")
    );

    // The H200 rows agree with the device runs they came from (docs/device-runs: loads,
    // stores, ideal per kernel).
    let mut split = String::new();
    for f in [
        "2026-12-02-call3-loads-stores-ideal.md",
        "2026-12-02-call6-rust-loads-stores-ideal.md",
    ] {
        split += &std::fs::read_to_string(common::root().join("docs/device-runs").join(f)).unwrap();
    }
    let t = haloscope::report::thousands;
    for h in common::h200::cuda().into_iter().chain(common::h200::rust()) {
        let line = split
            .lines()
            .find(|l| l.starts_with(&format!("{}:", h.kernel)))
            .unwrap_or_else(|| panic!("{}: not in docs/device-runs", h.kernel));
        let gpu = line.split('|').next().unwrap();
        let expected = format!("gpu loads {} stores {} ideal {} ", t(h.loads), t(h.stores), t(h.ideal));
        assert!(gpu.contains(&expected), "{}: {line}\nexpected {expected}", h.kernel);
    }
    let table =
        std::fs::read_to_string(common::root().join("docs/device-runs/2026-12-02-call6-rust-table.md")).unwrap();
    for h in common::h200::rust() {
        assert!(
            table.contains(&format!("| {} | {} | {} |", h.kernel, h.verdict.as_str(), t(h.sectors))),
            "{}: verdict and sectors in docs/device-runs/2026-12-02-call6-rust-table.md",
            h.kernel
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

/// The values the lesson texts derive, each with the arithmetic that gives it (issue 41): a
/// number in a text is one of these, a recorded figure, or a small count.
fn derived(lesson: &str) -> Vec<(f64, &'static str)> {
    // Warps at the profile sizes: 2^24 floats, 32 to a warp.
    let warps = 16_777_216.0 / 32.0;
    let common = vec![
        (32.0, "threads in a warp, floats in a warp's row"),
        (warps, "warps at the profile size: 16,777,216 / 32"),
    ];
    let own: Vec<(f64, &'static str)> = match lesson {
        "stencil-1d" => vec![
            (14.0, "load sectors per warp of the starter: 4 + 5 + 5"),
            (18.0, "the starter per warp: 14 + 4 stored"),
            (30.0, "thread 30, the lane before thread 31"),
            (31.0, "thread 31, the last lane of warp 0"),
            (255.0, "the block's last thread: 256 - 1"),
            (257.0, "the right halo cell: 256 + 1"),
            (258.0, "the tile: 256 + 2"),
            (8.25, "the solution per warp: 4 + 2 / 8 + 4"),
            (18.0 * warps, "the starter per launch"),
            (8.25 * warps, "the solution per launch"),
            (600_000_000.0 / 100.0 / warps, "the gate per warp"),
        ],
        "stencil-2d" => vec![
            (13_626_880.0, "the starter's sectors per launch: 1,362,688,000 / 100"),
            (10.0, "tile rows: 8 + 2"),
            (34.0, "tile columns: 32 + 2"),
            (80.0, "the ring: 2 x (32 + 8)"),
            (256.0, "outputs of a 32 x 8 block"),
            (336.0, "cells a block reads: 256 + 80"),
            (1_280.0, "loads of a block's threads: 256 x 5"),
            (40.0, "warp-level loads of a block: 8 x 5"),
            (22.0, "starter load sectors per warp: 4 + 5 + 5 + 4 + 4"),
            (26.0, "the starter per warp: 22 + 4"),
            (26.0 * warps, "the starter per launch, before the borders"),
            (740_000_000.0 / 100.0 / warps, "the gate per warp"),
            (740_000_000.0 / 100.0 / warps - 4.0, "the gate's load sectors per warp"),
            (56.0, "solution load sectors per block: 32 + 8 + 16"),
            (176.0, "starter load sectors per block: 8 x 22"),
            (16.0, "side-column sectors of a 32 x 8 block: 2 x 8"),
            (1_362_688_000.0 / 576_614_000.0, "starter over solution"),
            (336.0 / 256.0, "loads per output: (256 + 80) / 256"),
            (320.0, "a 16 x 16 tile: 256 + 64"),
            (64.0, "a 16 x 16 tile's ring: 4 x 16"),
            (68.0, "a 16 x 16 tile's load sectors: 32 + 4 + 32"),
            (14.0, "x-only load sectors per warp: 4 + 2 + 4 + 4"),
            (18.0, "x-only per warp: 14 + 4"),
            (31.0, "lane 31"),
            (64.0, "MiB of input and of output: 2^24 floats x 4 bytes"),
            (
                2.0 * 67_108_864.0 / 2_975e9 * 1e6,
                "us to copy 64 MiB in and out at the card's copy rate",
            ),
            (69.2 / 45.1, "the starter's time over that floor"),
            (
                2_950.0,
                "the card's copy rate, lowest (docs/archive/measurements-log.md)",
            ),
            (
                2_990.0,
                "the card's copy rate, highest (docs/archive/measurements-log.md)",
            ),
            (90.71, "warps active, the solution (ncu, docs/figures.tsv)"),
            (75.11, "warps active, the starter (ncu, docs/figures.tsv)"),
            (79.4 / 69.3, "loads_first's time over the starter's, in the same run"),
        ],
        "stencil-3d" => vec![
            (17_484_600.0, "the starter's sectors per launch: 1,748,460,000 / 100"),
            (18.0, "plane tile rows: 16 + 2"),
            (34.0, "plane tile columns: 32 + 2"),
            (16.0, "block rows, warps per block"),
            (16.8, "million points: 256^3"),
            (85.0, "a hard-coded depth: 256 / 3, rounded down"),
            (254.0, "the last plane three chunks of 85 cover: 3 x 85 - 1"),
            (255.0, "the plane they miss: 256 - 1"),
            (65_536.0, "elements of one plane: 256^2"),
            (22.0, "in-plane load sectors per warp-row: 4 + 5 + 5 + 4 + 4"),
            (30.0, "starter load sectors per warp-row: 22 + 4 + 4"),
            (
                64.0,
                "sectors of a block's own cells per z step: 16 x 4; a brick face: 8 x 8",
            ),
            (
                128.0,
                "behind and ahead per block and z step: 64 + 64; a brick's side cells: 2 x 64",
            ),
            (232.0, "the plane tile per block and z step: 64 + 8 + 32 + 128"),
            (6.5, "the tile's in-plane loads per warp-row: 4 + 0.5 + 2"),
            (14.5, "the plane tile's load sectors per warp-row: 6.5 + 8"),
            (18.5, "the plane tile per warp-row: 14.5 + 4"),
            (1_748_460_000.0 / 948_659_200.0, "starter over plane tile"),
            (612.0, "cells of the 18 x 34 tile"),
            (608.0, "cells it stages: 612 - 4 corners"),
            (96.0, "the plane's ring: 2 x (32 + 16)"),
            (512.0, "outputs per plane of a block: 32 x 16; a brick's own cells: 8^3"),
            (896.0, "a brick's cells: 512 + 6 x 64"),
            (224.0, "a brick's load sectors: 64 + 128 + 32"),
            (104.0, "the register sweep per block and z step: 64 + 8 + 32"),
            (56.3, "the starter's time on the H200 (lesson.toml)"),
        ],
        "stencil-3d-registers" => vec![
            (16.0, "block rows"),
            (6.5, "in-plane loads per warp-row: 4 + 0.5 + 2"),
            (14.5, "the plane tile's load sectors per warp-row"),
            (18.5, "the plane tile per warp-row: 14.5 + 4"),
            (10.5, "the register sweep per warp-row: 6.5 + 4"),
            (128.0, "behind and ahead per block and z step"),
            (232.0, "the plane tile's load sectors per block and z step"),
            (948_659_200.0 / 539_033_600.0, "plane tile over register sweep"),
            (
                1_748_460_000.0 / 539_033_600.0,
                "the 3D starter over the register sweep",
            ),
            (56.3, "the 3D starter's time on the H200 (its lesson.toml)"),
        ],
        "stencil-2d-cluster" => vec![
            (9.0, "compute capability 9.0"),
            (34.0, "tile columns: 32 + 2"),
            (10.0, "tile rows: 8 + 2"),
            (80.0, "the ring: 2 x (32 + 8)"),
            (256.0, "own cells of a block"),
            (64.0, "floats of the two halo rows: 2 x 32"),
            (16.0, "side-column sectors (and floats) of a block: 2 x 8"),
            (88.0, "a block of 8 warps x 11"),
            (65_536.0, "blocks at n = 4096: 128 x 512"),
            (88.0 * 65_536.0, "the starter per launch before the borders"),
            (9.0 * warps, "the cluster solution per launch before the borders"),
            (24.0, "blocks at n = 33: 4 x 6"),
            (14.0, "blocks past the grid at n = 33: 24 - 2 x 5"),
            (111.0, "blocks past the grid at n = 257: 12 x 34 - 9 x 33"),
            (
                128.0,
                "grid columns at n = 4096: 4096 / 32; column sectors per cluster: 16 x 8",
            ),
            (512.0, "grid rows at n = 4096: 4096 / 8"),
            (2_048.0, "the probe's stored sectors (docs/archive/measurements-log.md)"),
            (
                8_192.0,
                "the probe's bulk-copied sectors (docs/archive/measurements-log.md)",
            ),
        ],
        _ => Vec::new(),
    };
    common.into_iter().chain(own).collect()
}

/// Whether `text` (a number as the text writes it) is `value` to as many decimals as it shows.
fn shows(text: &str, value: f64) -> bool {
    let decimals = text.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    let t: f64 = text.replace(',', "").parse().unwrap();
    let scale = 10f64.powi(decimals);
    (t * scale).round() == (value * scale).round()
}

/// Every number of a text, with decimals (`1,362,688,000`, `14.1`), but not the digits of a
/// name (`H200`, `sm_90`, `tile2d`, `x86`).
fn all_numbers_in(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = chars[i].is_ascii_digit()
            && (i == 0 || !(chars[i - 1].is_ascii_alphanumeric() || chars[i - 1] == '_' || chars[i - 1] == '.'));
        if !starts {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len()
            && (chars[i].is_ascii_digit()
                || ((chars[i] == ',' || chars[i] == '.') && chars.get(i + 1).is_some_and(|c| c.is_ascii_digit())))
        {
            i += 1;
        }
        let named = chars.get(i).is_some_and(|c| c.is_ascii_alphabetic() || *c == '_');
        if !named {
            out.push(chars[start..i].iter().collect());
        }
    }
    out
}

#[test]
fn every_number_in_the_texts_is_a_figure_or_derived() {
    let measured = recorded_figures();
    let course = common::course();
    // Every lesson's recorded settings and figures (a lesson may quote another's).
    let recorded: Vec<String> = course
        .lessons
        .iter()
        .flat_map(|l| {
            let toml = std::fs::read_to_string(l.dir.join("lesson.toml")).unwrap();
            all_numbers_in(&toml.replace('_', ","))
        })
        .collect();
    let mut unexplained = Vec::new();
    for lesson in &course.lessons {
        let derived = derived(&lesson.id);
        for number in all_numbers_in(&lesson.text) {
            let value: f64 = number.replace(',', "").parse().unwrap();
            let ok = (value.fract() == 0.0 && value <= 12.0)
                || measured.contains(&number)
                || recorded.iter().any(|r| r.replace(',', "") == number.replace(',', ""))
                || derived.iter().any(|(v, _)| shows(&number, *v));
            if !ok {
                unexplained.push(format!("{}: {number}", lesson.id));
            }
        }
    }
    unexplained.sort();
    unexplained.dedup();
    assert!(
        unexplained.is_empty(),
        "numbers in the lesson texts that are neither a recorded figure nor derived (tests/lesson_content.rs, `derived`):\n{}",
        unexplained.join("\n")
    );
}
