//! The frame's panels (top bar, lesson panel, editor, results head) as views: each draws from
//! the read-only context and changes the app only through actions. Driven with egui_kittest:
//! a click on a panel's control must reach the app's state (and the preferences on disk) by
//! the end of the frame, and the editor's own dialogs and find bar keep their state in it.

mod common;

use common::app::harness;
use egui_kittest::kittest::Queryable;
use haloscope::app::state::{LessonTab, Theme};

/// The preferences as written to the data directory.
fn saved_prefs(data: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(data.join("prefs.json")).unwrap()).unwrap()
}

#[test]
fn the_top_bar_and_the_lesson_panel_change_preferences_through_actions() {
    let data = tempfile::tempdir().unwrap();
    let mut h = harness(data.path(), "stencil-2d");

    // Top bar: A+ twice (clamped at 3x elsewhere), then the theme.
    h.get_by_label("A+").click();
    h.run();
    h.get_by_label("A+").click();
    h.run();
    assert_eq!(h.state().saved.prefs.zoom, 1.5);
    h.get_by_label("150%");
    assert_eq!(saved_prefs(data.path())["zoom"], 1.5);
    h.get_by_label("Theme").click();
    h.run();
    h.get_by_label("Light").click();
    h.run();
    assert_eq!(h.state().saved.prefs.theme, Theme::Light);
    assert_eq!(saved_prefs(data.path())["theme"], "Light");

    // Lesson panel: the Hints tab, then one hint revealed.
    h.get_by_label("Hints").click();
    h.run();
    assert_eq!(h.state().saved.prefs.lesson_tab, LessonTab::Hints);
    let hints = h.state().lesson().unwrap().hints.clone();
    assert!(hints.len() >= 2, "the 2D lesson has hints");
    h.get_by_label(&format!("Show hint 1 of {}", hints.len())).click();
    h.run();
    assert_eq!(h.state().saved.prefs.hints_shown.get("stencil-2d"), Some(&1));
    h.get_by_label(&format!("1. {}", hints[0]));
    h.get_by_label(&format!("Show hint 2 of {}", hints.len()));
    assert_eq!(saved_prefs(data.path())["hints_shown"]["stencil-2d"], 1);

    // Results head: a tab.
    h.get_by_label("Chart").click();
    h.run();
    assert_eq!(h.state().saved.prefs.result_tab, "chart");

    // Another lesson from the list.
    h.get_by_label_contains("1D").click();
    h.run();
    assert_eq!(h.state().saved.prefs.lesson.as_deref(), Some("stencil-1d"));
    assert_eq!(h.state().editor.lesson_id.as_deref(), Some("stencil-1d"));
}

#[test]
fn the_editors_solution_dialog_and_find_bar_are_its_own() {
    let data = tempfile::tempdir().unwrap();
    let mut h = harness(data.path(), "stencil-2d");
    let starter = h.state().editor.text.clone();
    let solution = std::fs::read_to_string(common::root().join("kernels/stencil-2d/solution.cu")).unwrap();
    assert_ne!(starter, solution);

    // Asked first; "Keep my code" leaves the text alone.
    h.get_by_label("Show solution…").click();
    h.run();
    h.get_by_label("Show the solution?");
    h.get_by_label("Keep my code").click();
    h.run();
    assert!(h.query_by_label("Show the solution?").is_none());
    assert_eq!(h.state().editor.text, starter);

    // Confirmed: the solution replaces it, and "Restore my code" brings it back.
    h.get_by_label("Show solution…").click();
    h.run();
    h.get_by_label("Show solution").click();
    h.run();
    assert!(h.query_by_label("Show the solution?").is_none());
    assert_eq!(h.state().editor.text, solution);
    h.get_by_label("Restore my code").click();
    h.run();
    assert_eq!(h.state().editor.text, starter);

    // The find bar: opened by its button, a query, Next puts the cursor on the line.
    h.get_by_label("Find").click();
    h.run();
    let line = starter.lines().position(|l| l.contains("in[i + n]")).unwrap() + 1;
    let query = h.get_by_label("Find:");
    query.focus();
    h.run();
    h.get_by_label("Find:").type_text("in[i + n]");
    h.run();
    h.get_by_label("Next").click();
    // The editor scrolls to the line found, smoothly: a few frames more than `run` allows.
    h.run_steps(12);
    assert_eq!(h.state().editor.cursor_line, line);
    h.get_by_label(&format!("line {line}"));

    // Wrap lines is a preference.
    let wrap = h.state().saved.prefs.wrap_code;
    h.get_by_label("Wrap lines").click();
    h.run();
    assert_eq!(h.state().saved.prefs.wrap_code, !wrap);
}
