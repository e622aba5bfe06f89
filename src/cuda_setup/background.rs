//! The app's set-up: started when the window opens (the download runs while the learner
//! reads the lesson), shared by the whole process, and waited for by a Run that needs it.

use super::{Installed, Progress};
use crate::backend::CancelFlag;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

#[derive(Debug, Clone, Default)]
enum State {
    #[default]
    NotStarted,
    Running(Option<Progress>),
    Done(Result<Installed, String>),
}

static STATE: Mutex<State> = Mutex::new(State::NotStarted);
static CHANGED: Condvar = Condvar::new();

fn lock() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn set(state: State) {
    *lock() = state;
    CHANGED.notify_all();
}

/// Starts the set-up on its own thread when NVRTC is missing (once per process); `repaint`
/// is called on every step so the status bar moves. Returns whether it started.
pub fn start_if_needed(repaint: impl Fn() + Send + 'static) -> bool {
    let Some(major) = super::needed() else {
        return false;
    };
    {
        let mut state = lock();
        if !matches!(*state, State::NotStarted) {
            return false;
        }
        *state = State::Running(None);
    }
    let spawned = std::thread::Builder::new()
        .name("haloscope-setup".into())
        .spawn(move || {
            let result = super::install(
                major,
                &crate::paths::data_dir(),
                &super::index_url(),
                &mut |p| {
                    set(State::Running(Some(p)));
                    repaint();
                },
                &CancelFlag::default(),
            );
            set(State::Done(result));
            repaint();
        });
    if let Err(e) = spawned {
        set(State::Done(Err(format!("cannot start the set-up thread: {e}"))));
    }
    true
}

/// One line for the status bar: where the set-up is, or how it ended; `None` when there was
/// none.
pub fn status_line() -> Option<(String, Option<f32>)> {
    match &*lock() {
        State::NotStarted => None,
        State::Running(None) => Some(("setting up NVRTC…".into(), None)),
        State::Running(Some(p)) => Some((format!("setting up {p}"), fraction(p))),
        State::Done(Ok(done)) => Some((format!("set up: {}", done.wheels.join(", ")), None)),
        State::Done(Err(e)) => Some((e.lines().next().unwrap_or_default().to_string(), None)),
    }
}

pub fn is_running() -> bool {
    matches!(*lock(), State::Running(_))
}

fn fraction(p: &Progress) -> Option<f32> {
    match p {
        Progress::Downloading { done, total, .. } if *total > 0 => Some(*done as f32 / *total as f32),
        _ => None,
    }
}

/// Blocks a run until a set-up in flight is done, passing its progress on; returns its error
/// (the run then fails to compile and shows it), or `None` when it succeeded or none ran.
pub fn wait(progress: &mut dyn FnMut(&Progress), cancel: &CancelFlag) -> Option<String> {
    let mut state = lock();
    loop {
        match &*state {
            State::NotStarted => return None,
            State::Done(result) => return result.as_ref().err().cloned(),
            State::Running(p) => {
                if cancel.is_cancelled() {
                    return Some("cancelled while NVRTC was being set up".into());
                }
                if let Some(p) = p.clone() {
                    drop(state);
                    progress(&p);
                    state = lock();
                }
                state = CHANGED
                    .wait_timeout(state, Duration::from_millis(100))
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .0;
            }
        }
    }
}
