//! Lesson files: the real course loads, grids derive as the contract says, and broken
//! files are rejected with the file, field and line.

mod common;

use haloscope::lesson::{GridDim, load_lesson};

#[test]
fn the_course_loads_both_founding_lessons() {
    let course = common::course();
    assert!(course.broken.is_empty(), "{:?}", course.broken);
    let l2 = common::lesson("stencil-2d");
    assert_eq!(l2.entry, "stencil2d");
    assert_eq!(l2.block, [32, 8, 1]);
    assert_eq!(l2.dynamic_shared_bytes, 0);
    assert_eq!(l2.verify_sizes, vec![33, 257, 4096]);
    assert_eq!((l2.profile_size, l2.profile_launches), (4096, 100));
    assert_eq!(l2.gate.below, 740_000_000);
    assert_eq!(l2.signature(), "stencil2d(const float* in, float* out, int n)");
    let l3 = common::lesson("stencil-3d");
    assert_eq!(l3.block, [32, 16, 1]);
    assert_eq!(l3.grid.0[2], GridDim::Fixed { count: 3 });
    assert_eq!(l3.gate.below, 1_150_000_000);
    assert!(l3.verify_sizes.contains(&33) && l3.verify_sizes.contains(&100) && l3.verify_sizes.contains(&256));
}

#[test]
fn grids_derive_from_n_at_every_size() {
    let l2 = common::lesson("stencil-2d");
    let expect_2d = [(33, [2, 5, 1]), (257, [9, 33, 1]), (4096, [128, 512, 1])];
    for (n, grid) in expect_2d {
        assert_eq!(l2.grid_for(n), grid, "2D n={n}");
        assert!(l2.verify_sizes.contains(&n));
    }
    let l3 = common::lesson("stencil-3d");
    let expect_3d = [(33, [2, 3, 3]), (100, [4, 7, 3]), (256, [8, 16, 3])];
    for (n, grid) in expect_3d {
        assert_eq!(l3.grid_for(n), grid, "3D n={n}");
    }
    // Every verified size is covered by the grid, with at most one partial block per axis.
    for lesson in [&l2, &l3] {
        for &n in &lesson.verify_sizes {
            let grid = lesson.grid_for(n);
            let axes = lesson.stencil.dims.min(2) as usize;
            for (d, (&blocks, &threads)) in grid.iter().zip(&lesson.block).take(axes).enumerate() {
                let covered = blocks * threads;
                assert!(covered >= n && covered - n < threads, "{} n={n} dim {d}", lesson.id);
            }
        }
    }
}

/// Writes a copy of stencil-2d with `edit` applied to its lesson.toml and loads it.
fn load_edited(edit: impl Fn(String) -> String) -> Result<haloscope::lesson::Lesson, haloscope::lesson::LessonError> {
    let dir = tempfile::tempdir().unwrap();
    let lesson_dir = common::copy_lesson(dir.path(), "stencil-2d");
    let toml = std::fs::read_to_string(lesson_dir.join("lesson.toml")).unwrap();
    std::fs::write(lesson_dir.join("lesson.toml"), edit(toml)).unwrap();
    load_lesson(&lesson_dir)
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).expect("needle") + 1
}

#[test]
fn a_copied_lesson_loads_from_a_temp_dir() {
    let lesson = load_edited(|t| t).expect("copy loads");
    assert_eq!(lesson.id, "stencil-2d");
}

#[test]
fn a_missing_field_is_named() {
    let err = load_edited(|t| t.replace("entry = \"stencil2d\"\n", "")).unwrap_err();
    assert_eq!(err.field.as_deref(), Some("kernel.entry"), "{err}");
    assert!(err.to_string().contains("lesson.toml"), "{err}");
    assert!(err.line.is_some(), "{err}");
}

#[test]
fn a_wrong_type_names_field_and_line() {
    let original = std::fs::read_to_string(common::root().join("lessons/stencil-2d/lesson.toml")).unwrap();
    let expected_line = line_of(&original, "block = [32, 8, 1]");
    let err = load_edited(|t| t.replace("block = [32, 8, 1]", "block = [32, 8]")).unwrap_err();
    assert_eq!(err.field.as_deref(), Some("launch.block"), "{err}");
    assert_eq!(err.line, Some(expected_line), "{err}");
}

#[test]
fn a_bad_grid_rule_names_field_and_line() {
    let original = std::fs::read_to_string(common::root().join("lessons/stencil-2d/lesson.toml")).unwrap();
    let expected_line = line_of(&original, "grid = [");
    let err = load_edited(|t| t.replace("\"ceil(n/8)\"", "\"n/8\"")).unwrap_err();
    assert_eq!(err.field.as_deref(), Some("launch.grid"), "{err}");
    assert_eq!(err.line, Some(expected_line), "{err}");
    assert!(err.message.contains("ceil(n/K)"), "{err}");
}

#[test]
fn semantic_errors_name_field_and_line() {
    let err = load_edited(|t| t.replace("smsp__sass_sectors_mem_global.sum", "dram__bytes.sum")).unwrap_err();
    assert_eq!(err.field.as_deref(), Some("gate.metric"), "{err}");
    assert!(err.line.is_some());
    let err = load_edited(|t| t.replace("block = [32, 8, 1]", "block = [64, 32, 1]")).unwrap_err();
    assert_eq!(err.field.as_deref(), Some("launch.block"), "{err}");
    let err = load_edited(|t| t.replace("id = \"stencil-2d\"", "id = \"other\"")).unwrap_err();
    assert_eq!(err.field.as_deref(), Some("id"), "{err}");
    assert_eq!(err.line, Some(1), "{err}");
    let err = load_edited(|t| t.replace("\"int n\"", "\"double n\"")).unwrap_err();
    assert_eq!(err.field.as_deref(), Some("kernel.params"), "{err}");
    let err = load_edited(|t| t.replace("verify_sizes = [33, 257, 4096]", "verify_sizes = []")).unwrap_err();
    assert_eq!(err.field.as_deref(), Some("problem.verify_sizes"), "{err}");
    let err = load_edited(|t| t.replace("expect = \"gate-fail\"", "expect = \"maybe\"")).unwrap_err();
    assert_eq!(err.field.as_deref(), Some("files.variants.0.expect"), "{err}");
}

#[test]
fn unknown_fields_and_syntax_errors_are_rejected() {
    let err = load_edited(|t| t.replace("[gate]", "[gate]\nbelow_or_equal = 3")).unwrap_err();
    assert!(err.message.contains("unknown field"), "{err}");
    assert!(err.field.as_deref().unwrap_or("").starts_with("gate"), "{err}");
    let err = load_edited(|t| t.replace("dims = 2", "dims = = 2")).unwrap_err();
    assert!(err.line.is_some(), "{err}");
}

#[test]
fn a_missing_kernel_file_is_named() {
    let err = load_edited(|t| t.replace("solution.cu", "no_such_solution.cu")).unwrap_err();
    assert_eq!(err.field.as_deref(), Some("files.solution"), "{err}");
    assert!(err.message.contains("no_such_solution.cu"), "{err}");
}

#[test]
fn sizes_are_capped_at_a_512_cubed_grid() {
    // 2D: 11585^2 < 2^27 (512^3) < 11586^2.
    let fits = load_edited(|t| t.replace("verify_sizes = [33, 257, 4096]", "verify_sizes = [33, 257, 11585]"));
    assert!(fits.is_ok(), "{:?}", fits.err());
    let err =
        load_edited(|t| t.replace("verify_sizes = [33, 257, 4096]", "verify_sizes = [33, 257, 11586]")).unwrap_err();
    assert_eq!(err.field.as_deref(), Some("problem.verify_sizes"), "{err}");
    assert!(err.message.contains("134217728"), "{err}");
}
