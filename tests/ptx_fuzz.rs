//! Property tests of the PTX parser, decoder and emulator on NVRTC's real output
//! (tests/fixtures/ptx, one file per lesson kernel):
//! - metamorphic: changing whitespace, adding comments, or changing or dropping `.loc`
//!   directives gives the same decoded program (line numbers aside) and the same sectors
//!   per instruction when it runs;
//! - robust: random text, PTX-shaped text and randomly mutated NVRTC output never panic the
//!   parser or decoder, and whatever decodes also runs, under a step budget, without
//!   panicking (it may fault).

mod common;

use haloscope::backend::CancelFlag;
use haloscope::backend::emu::{Program, RunOptions, load_program, run_lesson_kernel};
use haloscope::harness::random_inputs;
use haloscope::lesson::Lesson;
use haloscope::ptx::parse_module;
use proptest::prelude::*;

/// (lesson id, PTX text) of every fixture, `ptx_<lesson>_<kernel>.ptx`, in name order.
fn fixtures() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ptx");
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let lesson = name
                .strip_prefix("ptx_")
                .and_then(|rest| rest.split('_').next())
                .unwrap_or_else(|| panic!("{name}: not ptx_<lesson>_<kernel>"))
                .to_string();
            (lesson, std::fs::read_to_string(&path).unwrap())
        })
        .collect()
}

fn corpus() -> Vec<String> {
    fixtures().into_iter().map(|(_, text)| text).collect()
}

fn entry_of(text: &str) -> String {
    let module = parse_module(text).expect("NVRTC output parses");
    module
        .functions
        .iter()
        .find(|f| f.is_entry)
        .expect("an entry")
        .name
        .clone()
}

/// The smallest size the lesson verifies: a quick launch.
fn small(lesson: &Lesson) -> u32 {
    *lesson.verify_sizes.iter().min().unwrap()
}

/// Runs `p` once under the lesson's contract with `budget` steps per warp: the sectors of
/// each instruction, or the fault's kind.
fn run(p: &Program, lesson: &Lesson, n: u32, budget: u64) -> Result<Vec<u64>, String> {
    let count = lesson.stencil.elements(n);
    let input = random_inputs(count, 7);
    let mut output = vec![f32::NAN; count];
    let options = RunOptions {
        step_budget: budget,
        host_threads: 1,
        ..RunOptions::default()
    };
    run_lesson_kernel(p, lesson, n, &input, &mut output, &options, &CancelFlag::default())
        .map(|(stats, _)| stats.per_pc.iter().map(|s| s.sectors).collect())
        .map_err(|f| format!("{:?}", f.kind))
}

/// Runs a program that decoded from arbitrary text: it may fault, it must not panic. Skips
/// declarations the emulator would allocate as they stand (it reserves what the PTX asks for;
/// a real kernel past the GPU's 227 KiB of shared memory fails to launch anyway).
fn run_briefly(p: &Program, lesson: &Lesson) {
    if p.shared_bytes() > 256 << 10 || p.local_bytes() > 64 << 10 {
        return;
    }
    let _ = run(p, lesson, small(lesson), 1 << 14);
}

/// Replaces every run of spaces and tabs by one of `choices` (picked by `seed`), appends
/// trailing blanks and inserts blank lines.
fn rewhitespace(text: &str, seed: u64) -> String {
    let choices = [" ", "\t", "  ", " \t ", "\t\t"];
    let mut rng = seed;
    let mut next = move || {
        rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (rng >> 33) as usize
    };
    let mut out = String::new();
    for line in text.lines() {
        let mut in_blank = false;
        if next() % 4 == 0 {
            out.push_str(choices[next() % choices.len()]);
        }
        for c in line.chars() {
            if c == ' ' || c == '\t' {
                if !in_blank {
                    out.push_str(choices[next() % choices.len()]);
                }
                in_blank = true;
            } else {
                out.push(c);
                in_blank = false;
            }
        }
        if next() % 3 == 0 {
            out.push_str(" \t");
        }
        out.push('\n');
        if next() % 5 == 0 {
            out.push('\n');
        }
    }
    out
}

/// Adds `//` comments at line ends, `/* */` comments where there was a blank, and comment
/// lines, with words from `words`.
fn comment(text: &str, seed: u64, words: &str) -> String {
    let words = words.replace("*/", "").replace(['\n', '\r'], " ");
    let mut rng = seed;
    let mut next = move || {
        rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (rng >> 33) as usize
    };
    let mut out = String::new();
    for line in text.lines() {
        if next() % 6 == 0 {
            out.push_str(&format!("// {words}\n"));
        }
        for (i, piece) in line.split(' ').enumerate() {
            if i > 0 {
                if next() % 8 == 0 {
                    out.push_str(&format!(" /* {words} */ "));
                } else {
                    out.push(' ');
                }
            }
            out.push_str(piece);
        }
        if next() % 4 == 0 {
            out.push_str(&format!(" // {words}"));
        }
        out.push('\n');
    }
    out
}

/// Rewrites `.loc` directives: new line and column numbers, some dropped.
fn reloc(text: &str, seed: u64) -> String {
    let mut rng = seed;
    let mut next = move || {
        rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (rng >> 33) as usize
    };
    let mut out = String::new();
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix(".loc") {
            let file = rest.split_whitespace().next().unwrap_or("1");
            match next() % 4 {
                0 => {} // dropped
                _ => out.push_str(&format!("\t.loc\t{file} {} {}\n", 1 + next() % 500, next() % 80)),
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[test]
fn the_metamorphic_rewrites_change_something() {
    // Guards the properties below against rewrites that leave the text as it was.
    let (_, text) = &fixtures()[0];
    assert_ne!(&rewhitespace(text, 1), text);
    assert_ne!(&comment(text, 1, "w"), text);
    assert_ne!(&reloc(text, 1), text);
    assert!(text.contains(".loc"));
}

#[test]
fn every_fixture_runs_and_issues_sectors() {
    for (lesson_id, text) in fixtures() {
        let lesson = common::lesson(&lesson_id);
        let p = load_program(&text, &entry_of(&text)).expect("decodes");
        let sectors = run(&p, &lesson, small(&lesson), RunOptions::default().step_budget)
            .unwrap_or_else(|f| panic!("{lesson_id}: {f}"));
        assert!(sectors.iter().sum::<u64>() > 0, "{lesson_id}: no sectors");
    }
}

#[test]
fn every_corpus_module_decodes() {
    for text in corpus() {
        let module = parse_module(&text).expect("NVRTC output parses");
        let entry = module
            .functions
            .iter()
            .find(|f| f.is_entry)
            .expect("an entry")
            .name
            .clone();
        load_program(&text, &entry).expect("and decodes");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(text in "\\PC{0,400}") {
        let _ = parse_module(&text);
        let _ = load_program(&text, "k");
    }

    #[test]
    fn ptx_shaped_text_never_panics(parts in proptest::collection::vec(
        prop_oneof![
            Just(".reg .b32 %r<4>;"), Just(".reg .pred %p<2>;"), Just("ld.global.f32 %f1, [%rd1+4];"),
            Just("@%p1 bra $L1;"), Just("$L1:"), Just("}"), Just("{"), Just(".entry k("), Just(")"),
            Just(".param .u64 k_0"), Just(","), Just("add.s32 %r1, %r2, -3;"), Just("ret;"),
            Just(".shared .align 4 .b8 t[16];"), Just("st.shared.v2.f32 [t+8], {%f1, %f2};"),
            Just("mov.u32 %r1, %tid.x;"), Just(".loc 1 2 3"), Just("bar.sync 0;"), Just("setp.lt.s32 %p1|%p2, %r1, 7;"),
            Just(".version 9.0"), Just(".target sm_90"), Just(".visible"), Just("0f3F800000"), Just("["), Just("]"),
        ], 0..60)) {
        let text = parts.join("\n");
        let _ = parse_module(&text);
        if let Ok(p) = load_program(&text, "k") {
            run_briefly(&p, &common::lesson("stencil-1d"));
        }
    }

    #[test]
    fn mutated_nvrtc_output_never_panics(index in 0usize..16, cut in 0usize..20_000, len in 0usize..200, insert in "\\PC{0,20}") {
        let fixtures = fixtures();
        let (lesson_id, text) = &fixtures[index % fixtures.len()];
        let mut chars: Vec<char> = text.chars().collect();
        let start = cut.min(chars.len());
        let end = (start + len).min(chars.len());
        chars.splice(start..end, insert.chars());
        let mutated: String = chars.into_iter().collect();
        match parse_module(&mutated) {
            Ok(module) => {
                if let Some(f) = module.functions.iter().find(|f| f.is_entry)
                    && let Ok(p) = load_program(&mutated, &f.name.clone())
                {
                    // Decoded: it runs, faults or not, without panicking.
                    run_briefly(&p, &common::lesson(lesson_id));
                }
            }
            Err(e) => prop_assert!(e.line > 0 || mutated.trim().is_empty() || e.message.contains("entry"), "{e}"),
        }
    }
}

proptest! {
    // Each case decodes and runs two programs: fewer cases.
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn whitespace_comments_and_loc_changes_keep_decode_and_sectors(
        index in 0usize..64,
        seed in any::<u64>(),
        words in "[ -~]{0,30}",
        which in 0usize..3,
    ) {
        let fixtures = fixtures();
        let (lesson_id, text) = &fixtures[index % fixtures.len()];
        let rewritten = match which {
            0 => rewhitespace(text, seed),
            1 => comment(text, seed, &words),
            _ => reloc(text, seed),
        };
        let entry = entry_of(text);
        let before = load_program(text, &entry).unwrap();
        let after = load_program(&rewritten, &entry)
            .map_err(|e| TestCaseError::fail(format!("rewrite {which} no longer decodes: {e}")))?;
        prop_assert_eq!(before.shape(), after.shape(), "rewrite {}", which);
        if which < 2 {
            // Only the text around the tokens changed: the source lines are the same too.
            let lines = |p: &Program| p.instructions().map(|i| (i.line, i.file)).collect::<Vec<_>>();
            prop_assert_eq!(lines(&before), lines(&after));
        }
        let lesson = common::lesson(lesson_id);
        let budget = RunOptions::default().step_budget;
        prop_assert_eq!(
            run(&before, &lesson, small(&lesson), budget),
            run(&after, &lesson, small(&lesson), budget),
            "rewrite {}", which
        );
    }
}
