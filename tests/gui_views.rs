//! The teaching views driven with egui_kittest: the block replay (play, step, keys, a tile
//! cell's state at a known step), the fetch heat map (hover reads a count), attempts side by
//! side, presenter mode, and a class's grading table; a snapshot of each.

mod common;

use common::app::{click_at, harness, press_at, snapshot, wait_for_run, wait_while};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use haloscope::app::App;
use haloscope::app::view::View;
use haloscope::trace::block_replay::StepKind;

fn run_file(h: &mut Harness<'static, App>, kernel: &str) {
    let source = std::fs::read_to_string(common::root().join(kernel)).unwrap();
    h.state_mut().editor.replace_text(source);
    h.run();
    h.get_by_label("Run (Ctrl+Enter)").click();
    h.step();
    wait_for_run(h);
    // The seed and timings differ per run; hide the lines that show them.
    h.state_mut().status.clear();
    h.run();
}

#[test]
fn the_block_replay_plays_steps_and_shows_who_wrote_the_tile() {
    let data = tempfile::tempdir().unwrap();
    let mut h = harness(data.path(), "stencil-2d");
    run_file(&mut h, "kernels/stencil-2d/solution.cu");
    h.get_by_label("PASS");
    h.get_by_label("Diagram").click();
    h.run();
    h.get_by_label("Block replay");
    let replay = h
        .state()
        .views
        .get::<haloscope::app::replay_view::ReplayState>()
        .model()
        .expect("a replay of the run");
    assert!(replay.len() > 10, "{} steps", replay.len());
    assert_eq!(replay.barriers().len(), 1, "the solution has one barrier");
    // Step with the buttons and the keys.
    for _ in 0..3 {
        h.get_by_label("Next").click();
        h.run();
    }
    assert_eq!(
        h.state().views.get::<haloscope::app::replay_view::ReplayState>().step,
        3
    );
    h.get_by_label("Back").click();
    h.run();
    assert_eq!(
        h.state().views.get::<haloscope::app::replay_view::ReplayState>().step,
        2
    );
    h.key_press(egui::Key::ArrowRight);
    h.run();
    assert_eq!(
        h.state().views.get::<haloscope::app::replay_view::ReplayState>().step,
        3
    );
    // Play advances on its own; pause stops it.
    h.get_by_label("Play").click();
    for _ in 0..20 {
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        h.state()
            .views
            .get::<haloscope::app::replay_view::ReplayState>()
            .playing
    );
    assert!(
        h.state().views.get::<haloscope::app::replay_view::ReplayState>().step > 3,
        "step {}",
        h.state().views.get::<haloscope::app::replay_view::ReplayState>().step
    );
    h.get_by_label("Pause").click();
    h.run();
    assert!(
        !h.state()
            .views
            .get::<haloscope::app::replay_view::ReplayState>()
            .playing
    );

    // The first tile write: warp 0 (threads ty = 0) stores its own cells, row 1 of the
    // 34 x 10 patch. At that step the tile shows cell (1, 1) written by warp 0.
    let replay = h
        .state()
        .views
        .get::<haloscope::app::replay_view::ReplayState>()
        .model()
        .unwrap();
    let first_write = replay
        .steps
        .iter()
        .position(|s| s.kind == StepKind::SharedStore)
        .expect("a tile write");
    let writers = replay.tile_writers(first_write);
    assert_eq!(writers.get(&(1, 1)), Some(&replay.steps[first_write].warp));
    let warp = replay.steps[first_write].warp;
    // No barrier comes before the first tile write.
    assert!(replay.barriers()[0] > first_write);
    h.state_mut()
        .views
        .get_mut::<haloscope::app::replay_view::ReplayState>()
        .step = first_write;
    h.run();
    let rect = h.get_by_label("Replay tile").rect();
    let cell = rect.width() / 34.0;
    h.hover_at(egui::pos2(rect.min.x + cell * 1.5, rect.min.y + cell * 1.5));
    h.run();
    h.get_by_label(&format!("tile row 1, column 1: written by warp {warp}"));
    // Clicking the timeline selects that step's line in the editor.
    let timeline = h.get_by_label("Replay timeline").rect();
    let len = h
        .state()
        .views
        .get::<haloscope::app::replay_view::ReplayState>()
        .model()
        .unwrap()
        .len();
    let k = first_write;
    let pos = egui::pos2(
        timeline.min.x + (k as f32 + 0.5) * timeline.width() / len as f32,
        timeline.center().y,
    );
    click_at(&mut h, pos);
    h.run_steps(20);
    let line = h
        .state()
        .views
        .get::<haloscope::app::replay_view::ReplayState>()
        .model()
        .unwrap()
        .steps[k]
        .line as usize;
    assert_eq!(h.state().editor.cursor_line, line);
    // A click on the status bar takes the focus from the editor: its blinking cursor would
    // make the snapshot depend on the clock.
    click_at(&mut h, egui::pos2(4.0, 912.0));
    assert!(h.ctx.memory(|m| m.focused().is_none()), "nothing has the focus");
    h.hover_at(egui::pos2(1.0, 1.0));
    h.run();
    snapshot(&mut h, "views_replay");
}

#[test]
fn the_heat_map_counts_fetches_per_element() {
    let data = tempfile::tempdir().unwrap();
    let mut h = harness(data.path(), "stencil-2d");
    // The first count starts when the tab opens; a spinner repaints while it runs.
    h.get_by_label("Heat map").click();
    h.step();
    wait_while(&mut h, |app| {
        app.views.get::<haloscope::app::heatmap::HeatMapState>().busy()
    });
    h.get_by_label("33").click();
    h.step();
    wait_while(&mut h, |app| {
        app.views.get::<haloscope::app::heatmap::HeatMapState>().busy()
    });
    let map = h
        .state()
        .views
        .get::<haloscope::app::heatmap::HeatMapState>()
        .map()
        .expect("counts");
    assert_eq!(map.window.n, 33);
    // The starter: an interior element is fetched by its own thread and its four
    // neighbours.
    let rect = h.get_by_label("Fetch heat map").rect();
    let cell = rect.width() / 33.0;
    h.hover_at(egui::pos2(rect.min.x + cell * 5.5, rect.min.y + cell * 5.5));
    h.run();
    h.get_by_label_contains("element (5, 5): fetched 5 times");
    // A border element next to one interior cell: its own copy plus that neighbour.
    h.hover_at(egui::pos2(rect.min.x + cell * 0.5, rect.min.y + cell * 5.5));
    h.run();
    h.get_by_label_contains("element (0, 5): fetched 2 times");
    h.hover_at(egui::pos2(1.0, 1.0));
    h.run();
    snapshot(&mut h, "views_heatmap");
}

#[test]
fn two_attempts_side_by_side() {
    let data = tempfile::tempdir().unwrap();
    let mut h = harness(data.path(), "stencil-2d");
    let solution = std::fs::read_to_string(common::root().join("kernels/stencil-2d/solution.cu")).unwrap();
    h.state_mut().editor.replace_text(solution);
    h.get_by_label("Compare").click();
    h.step();
    wait_while(&mut h, |app| {
        app.views.get::<haloscope::app::compare_view::CompareState>().busy()
    });
    // Left: the starter (default), right: the editor's solution.
    h.get_by_label("right minus left: -786,074,000 sectors");
    assert!(h.query_all_by_label("1,362,688,000").count() >= 1);
    assert!(h.query_all_by_label("576,614,000").count() >= 1);
    h.get_by_label("FAIL (gate)");
    // The centre load's line (22 of the solution) issued sectors on the right only.
    assert!(
        h.query_all_by_label_contains("+ ").count() > 10,
        "lines only on the right"
    );
    snapshot(&mut h, "views_compare");
}

#[test]
fn presenter_mode_shows_the_results_alone_and_restores_the_layout() {
    let data = tempfile::tempdir().unwrap();
    let mut h = harness(data.path(), "stencil-2d");
    assert!(h.query_by_label("Kernel source").is_some());
    h.key_press(egui::Key::F5);
    h.run();
    assert!(h.state().presenting);
    assert!(h.query_by_label("Kernel source").is_none(), "the editor is hidden");
    h.get_by_label("Leave presenter (F5)");
    snapshot(&mut h, "views_presenter");
    h.key_press(egui::Key::Escape);
    h.run();
    assert!(!h.state().presenting);
    assert!(h.query_by_label("Kernel source").is_some(), "the editor is back");
}

#[test]
fn a_grading_table_shows_each_students_submission_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let subs = dir.path().join("subs");
    std::fs::create_dir_all(&subs).unwrap();
    for (student, file) in [("ada", "solution.cu"), ("bea", "starter.cu")] {
        let source = std::fs::read_to_string(common::root().join("kernels/stencil-1d").join(file)).unwrap();
        std::fs::write(subs.join(format!("{student}.cu")), source).unwrap();
    }
    let out = dir.path().join("grades");
    let (code, stdout, stderr) = common::haloscope(&[
        "grade",
        "--lesson",
        "stencil-1d",
        subs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--seed",
        "3",
        "--skip-lesson-check",
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let data = tempfile::tempdir().unwrap();
    let mut h = harness(data.path(), "stencil-1d");
    h.state_mut().open_grading_table(&out.join("grades.json"));
    h.run();
    h.get_by_label("Pick a student to see the submission and its report.");
    h.get_by_label("bea").click();
    h.step();
    // The submission is read by a job ("grading table"), off the frame.
    wait_while(&mut h, |app| app.grading.as_ref().unwrap().busy());
    h.get_by_label_contains("gate-fail: all sizes correct, but 943,718,400 sectors");
    // The submission is shown read-only, with line numbers.
    h.get_by_label_contains("stencil1d(const float* __restrict__ in");
    h.get_by_label("ada").click();
    h.step();
    wait_while(&mut h, |app| app.grading.as_ref().unwrap().busy());
    h.get_by_label_contains("pass: all sizes correct; 432,537,600 sectors");
    // The seed recorded for the student is shown.
    let seed = h.state().grading.as_ref().unwrap().table.rows[0].seed;
    h.get_by_label_contains(&format!("seed {seed}"));
    h.state_mut().status.clear();
    h.run();
    // The row carries the grader's seed and version, which differ per build; no snapshot of
    // it would stay stable, so the window's content is checked through labels above.
}

/// Steps frames for `ms` milliseconds (background work goes on meanwhile).
fn step_for(h: &mut Harness<'static, App>, ms: u64) {
    let started = std::time::Instant::now();
    while started.elapsed() < std::time::Duration::from_millis(ms) {
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// How long after `pressed` the app's background work stopped (frames stepped meanwhile).
fn stopped_after(h: &mut Harness<'static, App>, pressed: std::time::Instant) -> std::time::Duration {
    while h.state().jobs.busy() || h.state().views.busy() {
        assert!(pressed.elapsed().as_secs() < 30, "still working");
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    pressed.elapsed()
}

/// Issue 30: the status bar's "Stop all" ends any job within 1 s. The heat map's count of
/// a window of the profile size runs the whole 4096^2 launch on the emulator's counting path
/// (many seconds on two cores); Stop all is pressed while it counts.
#[test]
fn stop_all_ends_the_heat_maps_count_within_a_second() {
    let data = tempfile::tempdir().unwrap();
    let mut h = harness(data.path(), "stencil-2d");
    h.get_by_label("Heat map").click();
    h.step();
    wait_while(&mut h, |app| {
        app.views.get::<haloscope::app::heatmap::HeatMapState>().busy()
    });
    h.get_by_label_contains("(window)").click();
    step_for(&mut h, 600);
    assert!(
        h.state().views.get::<haloscope::app::heatmap::HeatMapState>().busy(),
        "the window's count is still running"
    );
    assert_eq!(h.state().jobs.running(), vec!["heat map"]);
    h.get_by_label("working: heat map");
    // For looking at (not compared: the spinner turns): the status bar while it counts.
    let shots = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("stop-all-working.png");
    if let Ok(image) = h.render() {
        let _ = image.save(&shots);
    }
    h.get_by_label("Stop all").click();
    let took = stopped_after(&mut h, std::time::Instant::now());
    println!(
        "the heat map's count ended {:.0} ms after Stop all",
        took.as_secs_f64() * 1e3
    );
    assert!(took < std::time::Duration::from_secs(1), "took {took:?}");
    h.run();
    h.get_by_label_contains("cancelled");
    // It stays cancelled: no count starts again by itself.
    step_for(&mut h, 300);
    assert!(!h.state().views.get::<haloscope::app::heatmap::HeatMapState>().busy());
}

/// Issue 30: Compare's Cancel ends its runs within 1 s and nothing starts again until the
/// learner asks ("Run both").
#[test]
fn cancelling_a_comparison_stops_it_within_a_second() {
    let data = tempfile::tempdir().unwrap();
    let mut h = harness(data.path(), "stencil-3d");
    let solution = std::fs::read_to_string(common::root().join("kernels/stencil-3d/solution.cu")).unwrap();
    h.state_mut().editor.replace_text(solution);
    h.get_by_label("Compare").click();
    step_for(&mut h, 400);
    assert!(
        h.state()
            .views
            .get::<haloscope::app::compare_view::CompareState>()
            .busy(),
        "the comparison is running"
    );
    h.get_by_label("Cancel comparison").click();
    let took = stopped_after(&mut h, std::time::Instant::now());
    println!("the comparison ended {:.0} ms after Cancel", took.as_secs_f64() * 1e3);
    assert!(took < std::time::Duration::from_secs(1), "took {took:?}");
    h.run();
    h.get_by_label("cancelled");
    step_for(&mut h, 300);
    assert!(
        !h.state()
            .views
            .get::<haloscope::app::compare_view::CompareState>()
            .busy(),
        "no run starts by itself"
    );
    h.get_by_label("Run both").click();
    // The click's frame clears the mark; the next frame starts the runs.
    h.step();
    h.step();
    assert!(
        h.state()
            .views
            .get::<haloscope::app::compare_view::CompareState>()
            .busy(),
        "asked again, it runs"
    );
}

#[test]
fn the_cluster_lesson_shows_reads_from_a_neighbours_tile_and_the_halo_gone() {
    let data = tempfile::tempdir().unwrap();
    let mut h = harness(data.path(), "stencil-2d-cluster");
    run_file(&mut h, "kernels/stencil-2d-cluster/solution.cu");
    h.get_by_label("PASS");
    h.get_by_label("Diagram").click();
    h.run();
    // The watched block (1, 1)'s corner thread: left and up come from two neighbours' tiles.
    h.get_by_label_contains("left    from shared tile [1][0], copied from neighbour block (0,1,0)'s tile");
    h.get_by_label_contains("up      from shared tile [0][1], copied from neighbour block (1,0,0)'s tile");
    // The replay has the cluster's two barriers and the reads of the neighbours' tiles.
    let replay = h
        .state()
        .views
        .get::<haloscope::app::replay_view::ReplayState>()
        .model()
        .expect("a replay of the run");
    let kinds: Vec<StepKind> = replay.steps.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == StepKind::ClusterBarrier).count(),
        2,
        "{kinds:?}"
    );
    let neighbour = replay
        .steps
        .iter()
        .find(|s| s.kind == StepKind::NeighbourLoad)
        .expect("a read of a neighbour's tile");
    assert!(neighbour.peer.is_some());
    click_at(&mut h, egui::pos2(4.0, 912.0));
    h.hover_at(egui::pos2(1.0, 1.0));
    h.run();
    snapshot(&mut h, "views_cluster_diagram");

    // The heat map at n = 33: inside a cluster the shared halo is fetched once.
    h.get_by_label("Heat map").click();
    h.step();
    wait_while(&mut h, |app| {
        app.views.get::<haloscope::app::heatmap::HeatMapState>().busy()
    });
    h.get_by_label("33").click();
    h.step();
    wait_while(&mut h, |app| {
        app.views.get::<haloscope::app::heatmap::HeatMapState>().busy()
    });
    h.get_by_label_contains("thick: 4 x 2 cluster boundaries");
    let rect = h.get_by_label("Fetch heat map").rect();
    let cell = rect.width() / 33.0;
    // Element (31, 5) is the right edge of block (0, 0) and the left halo of block (1, 0),
    // in the same cluster: fetched once, by its own block.
    h.hover_at(egui::pos2(rect.min.x + cell * 31.5, rect.min.y + cell * 5.5));
    h.run();
    h.get_by_label_contains("element (31, 5): fetched 1 times");

    // The starter (the stencil-2d solution) beside the cluster solution in the editor.
    h.get_by_label("Compare").click();
    h.step();
    wait_while(&mut h, |app| {
        app.views.get::<haloscope::app::compare_view::CompareState>().busy()
    });
    h.get_by_label("right minus left: -104,857,600 sectors");
}

/// The one list of results tabs (`tabs::TABS`) is what the panel shows: every tab's label,
/// left to right in the list's order, and a click on each opens it (its id saved) and draws
/// its views after a run without a panic.
#[test]
fn every_tab_in_the_list_is_shown_in_its_order_and_opens() {
    use haloscope::app::tabs::TABS;
    let data = tempfile::tempdir().unwrap();
    let mut h = harness(data.path(), "stencil-2d");
    run_file(&mut h, "kernels/stencil-2d/solution.cu");
    // A tab's label is the topmost node with its title (the PTX & SASS view names itself too).
    let tab_rect = |h: &egui_kittest::Harness<'static, App>, title: &str| {
        h.get_all_by_label(title)
            .map(|n| n.rect())
            .min_by(|a, b| a.top().total_cmp(&b.top()))
            .unwrap_or_else(|| panic!("no tab labelled {title}"))
    };
    let lefts: Vec<f32> = TABS.iter().map(|t| tab_rect(&h, t.title).left()).collect();
    assert!(lefts.windows(2).all(|w| w[0] < w[1]), "tabs out of order: {lefts:?}");
    for tab in TABS {
        // Pressed and released at the label, then a few frames (a tab with a count in
        // flight repaints until it ends, so no `run` to a still frame here).
        let at = tab_rect(&h, tab.title).center();
        press_at(&mut h, at);
        for _ in 0..3 {
            h.step();
        }
        assert_eq!(h.state().saved.prefs.result_tab, tab.id);
        wait_while(&mut h, |app| app.views.busy());
    }
}
