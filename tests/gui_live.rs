//! Figures while typing (issue 44), driven with egui_kittest: the app counts the text in the
//! editor by itself once it rests, the gutter's figures and the line above the code say
//! "live" and give the gate, an edit gives the new text's figures, a compile error keeps the
//! last ones greyed with the error on its line, and a Run makes them the verified ones.

mod common;

use common::app::{harness, snapshot, wait_for_run, wait_while};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use haloscope::app::App;
use haloscope::app::editor::FiguresState;

/// Frames until the live count of the current text has landed (or 120 s).
fn wait_for_live(h: &mut Harness<'static, App>) {
    let started = std::time::Instant::now();
    loop {
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let app = h.state();
        if !app.live.busy()
            && !matches!(app.editor.figures, FiguresState::Outdated)
            && started.elapsed().as_millis() > 300
        {
            break;
        }
        assert!(started.elapsed().as_secs() < 120, "no live figures");
    }
    h.step();
}

/// The per-line sectors of a full emulator run of `kernel`.
fn run_figures(kernel: &str) -> Vec<(u32, u64)> {
    let report = common::run_on_emulator("stencil-2d", kernel, 3);
    report
        .profile
        .unwrap()
        .per_line
        .iter()
        .filter(|l| l.sectors > 0)
        .map(|l| (l.line, l.sectors))
        .collect()
}

fn shown(h: &Harness<'static, App>) -> Vec<(u32, u64)> {
    h.state()
        .editor
        .line_figures
        .iter()
        .map(|(l, f)| (*l, f.sectors))
        .collect()
}

#[test]
fn figures_follow_the_text_while_typing() {
    let data = tempfile::tempdir().unwrap();
    let mut h = harness(data.path(), "stencil-2d");
    h.state_mut().saved.prefs.live_figures = true;

    // The starter, counted by itself once the lesson is open.
    wait_for_live(&mut h);
    assert!(
        matches!(h.state().editor.figures, FiguresState::Live(_)),
        "{:?}",
        h.state().editor.figures
    );
    assert_eq!(shown(&h), run_figures("kernels/stencil-2d/starter.cu"));
    h.get_by_label_contains("live: 1,362,688,000 sectors, gate: under 740,000,000 — not passed");
    let latency = h.state().live.last_latency.unwrap();
    eprintln!(
        "starter: live figures {} ms after the text last changed",
        latency.as_millis()
    );

    // An edit: the solution's text gives the solution's figures.
    let solution = std::fs::read_to_string(common::root().join("kernels/stencil-2d/solution.cu")).unwrap();
    h.state_mut().editor.text = solution.clone();
    wait_for_live(&mut h);
    assert_eq!(shown(&h), run_figures("kernels/stencil-2d/solution.cu"));
    h.get_by_label_contains("live: 576,614,000 sectors, gate: under 740,000,000 — passed");
    snapshot(&mut h, "live_figures");

    // A compile error: the solution's figures stay, greyed, and the error is on its line.
    let broken = solution.replacen(
        "float centre = tile[ty + 1][tx + 1];",
        "float centre = tile[ty + 1][tx + 1]",
        1,
    );
    let line = broken
        .lines()
        .position(|l| l.contains("float centre = tile[ty + 1][tx + 1]"))
        .unwrap() as u32
        + 1;
    h.state_mut().editor.text = broken;
    wait_for_live(&mut h);
    assert!(
        matches!(h.state().editor.figures, FiguresState::Broken(_)),
        "{:?}",
        h.state().editor.figures
    );
    assert_eq!(shown(&h), run_figures("kernels/stencil-2d/solution.cu"));
    let markers = &h.state().editor.markers;
    assert!(
        markers
            .iter()
            .any(|m| m.error && (m.line == line || m.line == line + 1)),
        "the error near line {line}: {markers:?}"
    );
    h.get_by_label_contains("figures of the last text that compiled (greyed)");
    snapshot(&mut h, "live_figures_compile_error");

    // Mended and Run: the verified figures.
    h.state_mut().editor.text = solution;
    h.step();
    h.get_by_label("Run (Ctrl+Enter)").click();
    h.step();
    wait_for_run(&mut h);
    wait_while(&mut h, |app| app.live.busy());
    assert_eq!(h.state().editor.figures, FiguresState::Run);
    assert_eq!(shown(&h), run_figures("kernels/stencil-2d/solution.cu"));
}
