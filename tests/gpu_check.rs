//! scripts/device/checks/kernel-figures.sh and compare-kernel-figures.py, here, with fake inputs
//! and fake GPU tools: CUPTI, ncu and the emulator must agree per kernel unless
//! docs/known-differences.md lists the difference, and any failing step fails the script.

mod common;

use common::h200::{H200, cuda, rust};
use haloscope::report::Verdict;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

fn python(args: &[&str]) -> (i32, String) {
    let out = Command::new("python3")
        .arg(common::root().join("scripts/device/checks/compare-kernel-figures.py"))
        .args(args)
        .output()
        .expect("python3 (a prerequisite, see README.md)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn report(verdict: &str, sectors: u64, loads: u64, stores: u64, ideal: u64) -> Value {
    let exit_code = Verdict::parse(verdict).map_or(Verdict::InfraError.exit_code(), Verdict::exit_code);
    json!({
        "verdict": verdict, "exit_code": exit_code, "headline": format!("fake {verdict}"),
        "profile": {"sectors": sectors, "load_sectors": loads, "store_sectors": stores,
                    "ideal_sectors": ideal, "launches": 100, "per_line": []},
    })
}

/// One kernel's line as kernel-figures.sh collects it, every source agreeing on `h`.
fn agreeing(h: &H200) -> Value {
    let r = report(h.verdict.as_str(), h.sectors, h.loads, h.stores, h.ideal);
    json!({"lesson": h.lesson(), "kernel": h.kernel, "gpu": r.clone(), "emu": r,
           "gpu_exit": r["exit_code"], "emu_exit": r["exit_code"], "ncu_exit": 0,
           "ncu_per_launch": h.sectors / 100, "ncu_tail": null})
}

/// Runs `compare` on `runs` against `known` (the text of a known-differences file).
fn compare(runs: &[Value], known: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let runs_path = dir.path().join("runs.jsonl");
    let lines: Vec<String> = runs.iter().map(Value::to_string).collect();
    std::fs::write(&runs_path, lines.join("\n") + "\n").unwrap();
    let known_path = dir.path().join("known.md");
    std::fs::write(&known_path, known).unwrap();
    python(&["compare", &runs_path.to_string_lossy(), &known_path.to_string_lossy()])
}

const NO_KNOWN: &str = "# none\n\n```tsv\nkernel\tfield\tgpu\temu\tkind\treason\n```\n";

fn known(rows: &[&str]) -> String {
    format!(
        "```tsv\nkernel\tfield\tgpu\temu\tkind\treason\n{}\n```\n",
        rows.join("\n")
    )
}

fn starter() -> &'static H200 {
    H200::find("kernels/stencil-2d/starter.cu")
}

#[test]
fn agreeing_runs_pass() {
    let (code, out) = compare(&[agreeing(starter())], NO_KNOWN);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("| kernels/stencil-2d/starter.cu | gate-fail / gate-fail | 1,362,688,000 |"),
        "{out}"
    );
}

#[test]
fn dropped_cupti_records_fail() {
    // CUPTI lost one record of 10 sectors; ncu and the emulator still agree.
    let mut run = agreeing(starter());
    run["gpu"]["profile"]["sectors"] = json!(starter().sectors - 10);
    let (code, out) = compare(&[run], NO_KNOWN);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("CUPTI 1,362,687,990 != ncu 13,626,880 x 100"), "{out}");
}

#[test]
fn one_emulator_sector_too_many_fails() {
    let mut run = agreeing(starter());
    run["emu"]["profile"]["sectors"] = json!(starter().sectors + 1);
    let (code, out) = compare(&[run], NO_KNOWN);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("sectors: gpu 1,362,688,000 != emu 1,362,688,001 (not a known difference)"),
        "{out}"
    );
}

#[test]
fn a_load_store_split_difference_fails_even_with_equal_totals() {
    let mut run = agreeing(starter());
    run["emu"]["profile"]["load_sectors"] = json!(starter().loads + 4);
    run["emu"]["profile"]["store_sectors"] = json!(starter().stores - 4);
    let (code, out) = compare(&[run], NO_KNOWN);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("loads: gpu") && out.contains("stores: gpu"), "{out}");
}

#[test]
fn a_known_difference_passes_only_with_its_exact_values() {
    let mut run = agreeing(starter());
    run["emu"]["profile"]["sectors"] = json!(starter().sectors + 100);
    let row = "kernels/stencil-2d/starter.cu\tsectors\t1,362,688,000\t1,362,688,100\tptxas\ta reason";
    let (code, out) = compare(std::slice::from_ref(&run), &known(&[row]));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("known (ptxas): a reason"), "{out}");
    // The same difference, grown by one sector, is not the known one.
    run["emu"]["profile"]["sectors"] = json!(starter().sectors + 101);
    let (code, out) = compare(&[run], &known(&[row]));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("but the known difference says"), "{out}");
}

#[test]
fn a_known_difference_no_longer_seen_fails() {
    let row = "kernels/stencil-2d/starter.cu\tsectors\t1,362,688,000\t1,362,688,100\temulator\tfixed since";
    let (code, out) = compare(&[agreeing(starter())], &known(&[row]));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("known difference no longer seen"), "{out}");
    // Known differences of kernels that did not run (ONLY=...) are not judged.
    let other = agreeing(H200::find("kernels/stencil-1d/starter.cu"));
    let (code, out) = compare(&[other], &known(&[row]));
    assert_eq!(code, 0, "{out}");
}

#[test]
fn verdict_alternatives() {
    let h = H200::find("kernels/stencil-1d/no_barrier.cu");
    let row = "kernels/stencil-1d/no_barrier.cu\tverdict\twrong-results|pass\tkernel-fault\tchecks\trace";
    for gpu_verdict in ["wrong-results", "pass"] {
        let mut run = agreeing(h);
        run["gpu"] = report(gpu_verdict, h.sectors, h.loads, h.stores, h.ideal);
        run["gpu_exit"] = run["gpu"]["exit_code"].clone();
        run["emu"] = report("kernel-fault", h.sectors, h.loads, h.stores, h.ideal);
        run["emu_exit"] = json!(14);
        let (code, out) = compare(std::slice::from_ref(&run), &known(&[row]));
        assert_eq!(code, 0, "{gpu_verdict}: {out}");
        let (code, out) = compare(&[run], NO_KNOWN);
        assert_eq!(code, 1, "{gpu_verdict}: {out}");
        assert!(out.contains("verdict: gpu"), "{out}");
    }
}

#[test]
fn missing_or_broken_runs_fail() {
    let h = starter();
    let mut no_ncu = agreeing(h);
    no_ncu["ncu_per_launch"] = Value::Null;
    no_ncu["ncu_tail"] = json!("==ERROR== ERR_NVGPUCTRPERM");
    let mut gpu_error = agreeing(h);
    gpu_error["gpu"] = json!({"error": "Expecting value: line 1 column 1"});
    let mut infra = agreeing(h);
    infra["gpu"] = json!({"verdict": "infra-error", "exit_code": 20, "headline": "no CUPTI"});
    infra["gpu_exit"] = json!(20);
    let mut no_profile = agreeing(h);
    no_profile["emu"]["profile"] = Value::Null;
    let mut exit_mismatch = agreeing(h);
    exit_mismatch["gpu_exit"] = json!(139);
    let mut ncu_failed = agreeing(h);
    ncu_failed["ncu_exit"] = json!(1);
    for (what, run, needle) in [
        ("no ncu figure", no_ncu, "ncu gave no smsp__sass_sectors_mem_global.sum"),
        ("no GPU report", gpu_error, "gpu run gave no report"),
        ("infrastructure error", infra, "infrastructure error"),
        ("no emulator profile", no_profile, "the emulator run has no profile"),
        ("exit status", exit_mismatch, "gpu run exited 139"),
        ("ncu failed", ncu_failed, "ncu exited 1"),
    ] {
        let (code, out) = compare(&[run], NO_KNOWN);
        assert_eq!(code, 1, "{what}: {out}");
        assert!(out.contains(needle), "{what}: {out}");
    }
    let (code, out) = compare(&[], NO_KNOWN);
    assert_eq!(code, 1, "{out}");
    let (code, out) = compare(&[agreeing(h)], "no table here");
    assert_eq!(code, 2, "{out}");
    let (code, out) = compare(&[agreeing(h)], &known(&["too\tfew\tcells"]));
    assert_eq!(code, 2, "{out}");
}

#[test]
fn the_shipped_known_differences_fit_the_h200_figures() {
    // Every kernel as the H200 measured it, and the emulator as the known differences say:
    // the comparison passes, so each row's GPU value is the H200's and none is stale.
    let rows = common::known_differences();
    let text = std::fs::read_to_string(common::root().join("docs/known-differences.md")).unwrap();
    let mut runs = Vec::new();
    for h in cuda().into_iter().chain(rust()) {
        let mut run = agreeing(h);
        for d in rows.iter().filter(|d| d.kernel == h.kernel) {
            match d.field.as_str() {
                "verdict" => {
                    run["emu"]["verdict"] = json!(d.emu);
                    run["emu"]["exit_code"] = json!(14);
                    run["emu_exit"] = json!(14);
                }
                f => {
                    let key = match f {
                        "sectors" => "sectors",
                        "loads" => "load_sectors",
                        "stores" => "store_sectors",
                        "ideal" => "ideal_sectors",
                        other => panic!("field {other}"),
                    };
                    run["emu"]["profile"][key] = json!(common::figure(&d.emu));
                }
            }
        }
        runs.push(run);
    }
    let (code, out) = compare(&runs, &text);
    assert_eq!(code, 0, "{out}");
    for d in &rows {
        assert!(common::root().join(&d.kernel).is_file(), "{}: no such kernel", d.kernel);
        assert!(
            ["ptxas", "checks", "emulator"].contains(&d.kind.as_str()),
            "{}: kind {}",
            d.kernel,
            d.kind
        );
        assert!(d.reason.len() > 20, "{} {}: give the reason", d.kernel, d.field);
    }
}

#[test]
fn collect_reads_the_runs_and_ncus_csv() {
    let dir = tempfile::tempdir().unwrap();
    let h = starter();
    let r = report(h.verdict.as_str(), h.sectors, h.loads, h.stores, h.ideal);
    std::fs::write(dir.path().join("gpu.json"), r.to_string()).unwrap();
    std::fs::write(dir.path().join("emu.json"), "not json").unwrap();
    std::fs::write(dir.path().join("emu.err"), "the emulator crashed").unwrap();
    std::fs::write(
        dir.path().join("ncu.csv"),
        "==PROF== Connected to process 4242\n\
         \"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\
         \"0\",\"4242\",\"haloscope\",\"127.0.0.1\",\"stencil2d\",\"1\",\"7\",\"(32, 8, 1)\",\"(128, 512, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"smsp__sass_sectors_mem_global.sum\",\"sector\",\"13,626,880\"\n\
         ==PROF== Disconnected from process 4242\n",
    )
    .unwrap();
    let work = dir.path().to_string_lossy().into_owned();
    let args = ["collect", "stencil-2d", h.kernel, &work, "10", "1", "0"];
    let (code, out) = python(&args);
    assert_eq!(code, 0, "{out}");
    let line: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(line["ncu_per_launch"], 13_626_880);
    assert_eq!(line["gpu"]["profile"]["sectors"], h.sectors);
    assert!(line["emu"]["error"].as_str().unwrap().contains("the emulator crashed"));
    assert_eq!(
        (line["gpu_exit"].clone(), line["emu_exit"].clone()),
        (json!(10), json!(1))
    );
    // ncu failing leaves no figure, whatever it printed.
    let (_, out) = python(&["collect", "stencil-2d", h.kernel, &work, "10", "1", "9"]);
    let line: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(line["ncu_per_launch"], Value::Null);
}

// --- the whole script, with fake GPU tools -------------------------------------------

fn write_exe(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A checkout with one kernel, fake `haloscope`, `ncu` and `nvidia-smi`, and a fake GPU test
/// binary; runs kernel-figures.sh there with `env` and returns (exit code, log).
fn fake_gpu_check(env: &[(&str, &str)]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    for sub in [
        "scripts/device/checks",
        "docs",
        "kernels/stencil-2d",
        "lessons/stencil-2d",
        ".devbin",
        "bin",
    ] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    for f in [
        "scripts/device/checks/kernel-figures.sh",
        "scripts/device/checks/compare-kernel-figures.py",
        "docs/known-differences.md",
    ] {
        std::fs::copy(common::root().join(f), root.join(f)).unwrap();
    }
    std::fs::write(root.join("kernels/stencil-2d/starter.cu"), "// fake\n").unwrap();
    std::fs::write(root.join("lessons/stencil-2d/lesson.toml"), "# fake\n").unwrap();
    let h = starter();
    let gpu = report(h.verdict.as_str(), h.sectors, h.loads, h.stores, h.ideal).to_string();
    write_exe(
        &root.join(".devbin/haloscope"),
        &format!(
            r#"#!/usr/bin/env bash
case "$1" in
  doctor) echo "fake doctor" ;;
  launch) echo "fake launch" ;;
  run)
    sectors={sectors}
    [[ " $* " == *" --backend gpu "* ]] && sectors="${{FAKE_CUPTI:-{sectors}}}"
    echo '{gpu}' | sed "s/\"sectors\":{sectors}/\"sectors\":$sectors/"
    exit 10 ;;
esac
"#,
            sectors = h.sectors,
        ),
    );
    write_exe(
        &root.join("bin/ncu"),
        &format!(
            r#"#!/usr/bin/env bash
[ "$1" = --version ] && {{ echo "fake ncu 2025.3.1"; exit 0; }}
echo '"ID","Metric Name","Metric Unit","Metric Value","x","y"' > /dev/null
echo '"0","4242","haloscope","h","stencil2d","1","7","b","g","0","9.0","s","smsp__sass_sectors_mem_global.sum","sector","{per_launch}"'
"#,
            per_launch = h.sectors / 100
        ),
    );
    write_exe(
        &root.join("bin/nvidia-smi"),
        "#!/bin/sh\necho 'name, NVIDIA H200 (fake)'\n",
    );
    write_exe(
        &root.join(".devbin/test-gpu"),
        "#!/usr/bin/env bash\n[[ \" $* \" == *\" --ignored \"* ]] || { echo 'not run with --ignored'; exit 99; }\necho \"fake GPU tests $*\"\nexit ${FAKE_TEST_EXIT:-0}\n",
    );
    let out_dir = dir.path().join("out");
    let path = format!("{}:{}", root.join("bin").display(), std::env::var("PATH").unwrap());
    let mut cmd = Command::new("bash");
    cmd.arg("scripts/device/checks/kernel-figures.sh")
        .current_dir(&root)
        .env("PATH", path)
        .env("OUT", &out_dir)
        .env("STEPS", "kernels,tests");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    // The script tees everything into its log, and waits for tee before it exits.
    let log = std::fs::read_to_string(out_dir.join("gpu-check.log")).unwrap_or_default();
    assert_eq!(log, String::from_utf8_lossy(&out.stdout), "the log is the whole output");
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), log)
}

#[test]
fn gpu_check_passes_when_all_agree() {
    let (code, log) = fake_gpu_check(&[]);
    assert_eq!(code, 0, "{log}");
    assert!(log.contains("all steps passed"), "{log}");
    assert!(log.contains("fake GPU tests --ignored"), "{log}");
}

#[test]
fn gpu_check_fails_on_dropped_cupti_records() {
    let dropped = (starter().sectors - 32).to_string();
    let (code, log) = fake_gpu_check(&[("FAKE_CUPTI", &dropped)]);
    assert_eq!(code, 1, "{log}");
    assert!(
        log.contains("FAILED (exit 1): compare CUPTI, ncu and the emulator"),
        "{log}"
    );
    assert!(log.contains("CUPTI 1,362,687,968 != ncu"), "{log}");
}

#[test]
fn gpu_check_fails_when_a_gpu_test_fails() {
    let (code, log) = fake_gpu_check(&[("FAKE_TEST_EXIT", "101")]);
    assert_eq!(code, 1, "{log}");
    assert!(log.contains("FAILED: test-gpu --ignored (exit 101)"), "{log}");
}
