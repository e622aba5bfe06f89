//! The figures shown while the learner types (`pipeline::live_count`) are the ones a full Run
//! gives: the same sectors per line, the same loads, stores and total, the same gate value,
//! on every lesson kernel and every held-out learner kernel; and where the Run's launch at the
//! profile size fails, the live count has no figures either.

mod common;

use haloscope::backend::CancelFlag;
use haloscope::pipeline::RunRequest;
use haloscope::pipeline::live_count::{LiveFailure, live_count};

/// Every CUDA kernel of kernels/ and tests/learner/ with the lesson it is for.
fn kernels() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in ["kernels", "tests/learner"] {
        let mut files: Vec<_> = std::fs::read_dir(common::root().join(dir))
            .unwrap()
            .flat_map(|e| {
                let path = e.unwrap().path();
                if path.is_dir() {
                    std::fs::read_dir(path).unwrap().map(|f| f.unwrap().path()).collect()
                } else {
                    vec![path]
                }
            })
            .filter(|p| p.extension().is_some_and(|e| e == "cu"))
            .collect();
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            let lesson = text
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("// lesson:"))
                .map(|l| l.trim().to_string())
                .unwrap_or_else(|| {
                    path.parent()
                        .unwrap()
                        .file_name()
                        .unwrap()
                        .to_string_lossy()
                        .into_owned()
                });
            if common::course().get(&lesson).is_none() {
                continue;
            }
            let rel = path
                .strip_prefix(common::root())
                .unwrap()
                .to_string_lossy()
                .into_owned();
            out.push((lesson, rel));
        }
    }
    out
}

#[test]
fn live_figures_are_the_full_runs_on_every_kernel() {
    let mut wrong = Vec::new();
    let mut compared = 0;
    for (lesson_id, kernel) in kernels() {
        let lesson = common::lesson(&lesson_id);
        let run = common::run_on_emulator(&lesson_id, &kernel, 5);
        let request = RunRequest::from_file(&common::root().join(&kernel), Some(5), None).unwrap();
        let live = live_count(&lesson, &request, &CancelFlag::default());
        match (&run.profile, live) {
            (Some(p), Ok(live)) => {
                compared += 1;
                // Everything the gutter shows of a line: sectors (loads, stores), ideal
                // sectors, memory instructions and their lanes.
                let lines = |per_line: &[haloscope::report::LineSectors]| -> Vec<(u32, [u64; 5])> {
                    per_line
                        .iter()
                        .map(|l| {
                            let figures = [
                                l.load_sectors,
                                l.store_sectors,
                                l.ideal_sectors,
                                l.warp_instructions,
                                l.active_lanes,
                            ];
                            (l.line, figures)
                        })
                        .collect()
                };
                let got = (
                    live.profile.sectors,
                    live.profile.load_sectors,
                    live.profile.store_sectors,
                );
                let want = (p.sectors, p.load_sectors, p.store_sectors);
                if got != want || lines(&live.profile.per_line) != lines(&p.per_line) {
                    wrong.push(format!("{kernel}: live {got:?}, run {want:?} (or per line)"));
                }
                if Some(live.gate.value) != run.gate.as_ref().map(|g| g.value) {
                    wrong.push(format!("{kernel}: live gate {}, run {:?}", live.gate.value, run.gate));
                }
            }
            (None, Err(LiveFailure::Compile(_) | LiveFailure::Launch(_))) => {}
            (None, Err(LiveFailure::Cancelled)) => wrong.push(format!("{kernel}: cancelled, never asked")),
            (Some(_), Err(e)) => wrong.push(format!("{kernel}: the run has figures, the live count {e:?}")),
            (None, Ok(_)) => {
                // A run that stopped before profiling (wrong results at a small size, a race
                // found while verifying) still has a launch at the profile size that counts.
            }
        }
    }
    assert!(compared >= 50, "only {compared} kernels compared");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_compile_error_gives_its_diagnostics_and_no_figures() {
    let lesson = common::lesson("stencil-2d");
    let source = std::fs::read_to_string(common::root().join("kernels/stencil-2d/starter.cu")).unwrap();
    let request = RunRequest {
        source: source.replace("float left = in[i - 1];", "float left = in[i - 1]"),
        source_name: "starter.cu".into(),
        kernel_file: "<editor>".into(),
        seed: Some(1),
        nvrtc_path: None,
    };
    match live_count(&lesson, &request, &CancelFlag::default()) {
        Err(LiveFailure::Compile(failure)) => assert!(failure.headline().contains("error"), "{}", failure.headline()),
        other => panic!("expected a compile failure, got {other:?}"),
    }
}

#[test]
fn a_cancelled_count_ends_without_figures() {
    let lesson = common::lesson("stencil-2d");
    let request = RunRequest::from_file(&common::root().join("kernels/stencil-2d/solution.cu"), Some(1), None).unwrap();
    let cancel = CancelFlag::default();
    cancel.cancel();
    assert!(matches!(
        live_count(&lesson, &request, &cancel),
        Err(LiveFailure::Cancelled)
    ));
}
