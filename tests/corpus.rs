//! The generated differential corpus (issue 11): the seeded generator is deterministic, and a
//! fixed sample of it (tests/corpus/sample.txt, 20 of the 320 kernels of seed 2026) compiles
//! and runs on the emulator with the verdicts and sectors recorded in
//! tests/corpus/sample-emulator.tsv. Those figures are the emulator's own, recorded with the
//! NVRTC named in the file (checked only under that NVRTC, since ptxas-independent PTX still
//! changes between NVRTC releases). The H200's figures for the sample
//! (tests/corpus/sample-h200.tsv) are checked against the emulator run on the PTX the
//! device's NVRTC 13.0 made (tests/corpus/ptx-nvrtc-13.0/), so they hold under any NVRTC.

mod common;

use std::collections::BTreeMap;
use std::process::Command;

const SEED: &str = "2026";
const COUNT: &str = "320";

struct Recorded {
    sha256: String,
    verdict: String,
    sectors: Option<u64>,
}

fn recorded() -> (String, BTreeMap<String, Recorded>) {
    let text = std::fs::read_to_string(common::root().join("tests/corpus/sample-emulator.tsv")).unwrap();
    let mut nvrtc = String::new();
    let mut rows = BTreeMap::new();
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("# nvrtc ") {
            nvrtc = v.trim().to_string();
        }
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        rows.insert(
            f[0].to_string(),
            Recorded {
                sha256: f[1].to_string(),
                verdict: f[2].to_string(),
                sectors: f[3].parse().ok(),
            },
        );
    }
    (nvrtc, rows)
}

fn sha256(path: &std::path::Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().expect("sha256sum");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn the_generator_is_deterministic_and_the_sample_runs_as_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new("python3")
        .arg(common::root().join("scripts/corpus/generate.py"))
        .args(["--seed", SEED, "--count", COUNT, "--out"])
        .arg(dir.path())
        .output()
        .expect("python3");
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let manifest: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest.len(), 320);

    let (nvrtc, rows) = recorded();
    let sample = std::fs::read_to_string(common::root().join("tests/corpus/sample.txt")).unwrap();
    let files: Vec<&str> = sample.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(files.len(), rows.len(), "every sample kernel has a recorded row");
    for file in files {
        let row = &rows[file];
        let path = dir.path().join(file);
        assert_eq!(
            sha256(&path),
            row.sha256,
            "{file}: the generator's output changed for seed {SEED}"
        );
        let lesson = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .trim_start_matches("// lesson:")
            .trim()
            .to_string();
        let out = Command::new(common::binary())
            .args([
                "run",
                "--lesson",
                &lesson,
                "--backend",
                "emu",
                "--json",
                "--seed",
                "7",
                "--kernel",
            ])
            .arg(&path)
            .current_dir(common::root())
            .output()
            .unwrap();
        let report: haloscope::report::RunReport = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{file}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        assert_eq!(report.verdict.as_str(), row.verdict, "{file}: {}", report.headline);
        let version = report
            .compile
            .as_ref()
            .map(|c| c.compiler_version.clone())
            .unwrap_or_default();
        if version == nvrtc {
            assert_eq!(report.profile.map(|p| p.sectors), row.sectors, "{file}: sectors");
        }
    }
}

/// The H200's figures for the sample (tests/corpus/sample-h200.tsv): file -> (ncu, CUPTI, mark).
fn h200_figures() -> BTreeMap<String, (Option<u64>, u64, String)> {
    let text = std::fs::read_to_string(common::root().join("tests/corpus/sample-h200.tsv")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                f[0].to_string(),
                (f[2].parse().ok(), f[3].parse().unwrap(), f[4].to_string()),
            )
        })
        .collect()
}

#[test]
fn the_emulator_replays_the_h200s_ptx_with_the_h200s_figures() {
    // The PTX NVRTC 13.0 made on the device machine, run by the emulator on the input a run of
    // seed 7 profiles on: its sectors must be what ncu and CUPTI measured on the H200 for it.
    use haloscope::backend::CancelFlag;
    use haloscope::backend::emu::{RunOptions, load_program, run_lesson_kernel, sector_profile};
    use haloscope::harness::{poisoned_output, random_inputs, size_seed};
    let figures = h200_figures();
    assert_eq!(figures.len(), 20, "every sample kernel has its H200 row");
    let mut replayed = 0;
    for (file, (ncu, cupti, mark)) in &figures {
        if let Some(ncu) = ncu {
            assert_eq!(ncu, cupti, "{file}: ncu and CUPTI agreed on the H200");
        }
        if mark != "-" {
            continue; // ptxas removed loads: only the cubin (machine-code check) says which
        }
        let ptx_path = common::root()
            .join("tests/corpus/ptx-nvrtc-13.0")
            .join(format!("{}.ptx", file.replace('/', "_")));
        let ptx = std::fs::read_to_string(&ptx_path).unwrap();
        let lesson = common::lesson(file.split('/').next().unwrap());
        let prog = load_program(&ptx, &lesson.entry).unwrap_or_else(|e| panic!("{file}: {e:?}"));
        let n = lesson.profile_size;
        let count = lesson.stencil.elements(n);
        let input = random_inputs(count, size_seed(7, n));
        let mut output = poisoned_output(count);
        let options = RunOptions::default();
        let (stats, _) = run_lesson_kernel(&prog, &lesson, n, &input, &mut output, &options, &CancelFlag::default())
            .unwrap_or_else(|e| panic!("{file}: {e:?}"));
        let profile = sector_profile(&prog, &stats, n, lesson.profile_launches, &Default::default());
        assert_eq!(
            profile.sectors, *cupti,
            "{file}: emulator on NVRTC 13.0's PTX vs the H200"
        );
        replayed += 1;
    }
    assert!(replayed >= 19, "{replayed} replayed");
}
