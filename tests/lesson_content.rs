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

#[test]
fn quoted_figures_come_from_the_measurements() {
    let measurements = std::fs::read_to_string(common::root().join("docs/measurements.md")).unwrap();
    for lesson in common::course().lessons {
        let toml = std::fs::read_to_string(lesson.dir.join("lesson.toml"))
            .unwrap()
            .replace('_', ",");
        for number in numbers_in(&lesson.text) {
            let digits = number.chars().filter(char::is_ascii_digit).count();
            if digits < 7 {
                continue;
            }
            assert!(
                measurements.contains(&number) || toml.contains(&number),
                "{}: {number} is in neither docs/measurements.md nor lesson.toml",
                lesson.id
            );
        }
        // The toml figures are quoted in the text, and the text's timings are measured ones.
        for figure in [
            lesson.figures.starter_sectors.unwrap(),
            lesson.figures.solution_sectors.unwrap(),
        ] {
            let text = haloscope::pipeline::thousands(figure);
            assert!(
                lesson.text.contains(&text),
                "{}: the text does not quote {text}",
                lesson.id
            );
            assert!(
                measurements.contains(&text),
                "{}: {text} is not in docs/measurements.md",
                lesson.id
            );
        }
        for us in [lesson.figures.starter_us.unwrap(), lesson.figures.solution_us.unwrap()] {
            let text = format!("{us:.1}");
            assert!(
                measurements.contains(&format!("| {text} |")),
                "{}: {text} us is not a measured time",
                lesson.id
            );
        }
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
