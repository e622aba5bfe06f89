//! The app under egui_kittest: a harness on a fresh data directory with the emulator chosen,
//! and waiting for work the app does on its own threads.

use egui_kittest::Harness;
use haloscope::app::{App, GuiOptions};
use haloscope::backend::BackendChoice;

pub fn harness(data: &std::path::Path, lesson: &str) -> Harness<'static, App> {
    let options = GuiOptions {
        course_dir: super::root().join("lessons"),
        data_dir: data.to_path_buf(),
        lesson: Some(lesson.to_string()),
        seed: Some(1234),
        ..GuiOptions::default()
    };
    let mut h = Harness::builder().with_size([1500.0, 920.0]).build_eframe(move |_cc| {
        let mut app = App::new(options);
        app.saved.prefs.backend = BackendChoice::Emu;
        // No count while typing unless a test asks for it (tests/gui_live.rs): the other
        // tests step frames until the app is idle, and a count in the background keeps it busy.
        app.saved.prefs.live_figures = false;
        app
    });
    h.run();
    h
}

/// Steps the UI until `busy` says the background work is done (the UI keeps painting).
pub fn wait_while(h: &mut Harness<'static, App>, busy: impl Fn(&App) -> bool) {
    let started = std::time::Instant::now();
    while busy(h.state()) {
        assert!(started.elapsed().as_secs() < 120, "the background work did not finish");
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    h.run();
}

/// A primary click at `pos` (moved there, pressed, released), then the frames it causes.
pub fn click_at(h: &mut Harness<'static, App>, pos: egui::Pos2) {
    press_at(h, pos);
    h.run();
}

/// The events of a primary click at `pos`, for the next frame (no frame is run: the caller
/// steps, where background work keeps the app from resting).
pub fn press_at(h: &mut Harness<'static, App>, pos: egui::Pos2) {
    h.event(egui::Event::PointerMoved(pos));
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: Default::default(),
        });
    }
}

/// Steps the UI until the background run has finished.
pub fn wait_for_run(h: &mut Harness<'static, App>) {
    wait_while(h, |app| app.is_running());
}

/// A snapshot of the window (tests/snapshots/NAME.png), failing the test on a difference.
pub fn snapshot(h: &mut Harness<'static, App>, name: &str) {
    if let Err(e) = h.try_snapshot(name) {
        panic!("{e}");
    }
}
