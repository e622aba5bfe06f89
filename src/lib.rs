//! haloscope: lessons on how GPU stencil kernels spend global-memory traffic.
//!
//! The pipeline, one module per stage: [`lesson`] (the contract as data) -> [`compile`]
//! (NVRTC) -> [`backend`] (emulator or GPU) -> [`harness`] (verification) -> [`report`].
//! [`pipeline`] runs the stages in order for both the CLI and the GUI.

pub mod app;
pub mod backend;
pub mod backend_policy;
pub mod cli;
pub mod compile;
pub mod cuda_setup;
pub mod cudalibs;
pub mod grade;
pub mod harness;
pub mod hazard_check;
pub mod lesson;
pub mod machine;
pub mod paths;
pub mod pipeline;
pub mod progress;
/// PTX parsing lives with the emulator (crates/ptx-emu); the compile step's contract probe
/// uses it too.
pub use ptx_emu::ptx;
pub mod report;
pub mod trace;

/// When this process started (set first thing in `main`), for the launch-to-first-frame figure.
pub static PROCESS_START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// The text a caught panic carried (`panic!` with a literal or with a format).
pub(crate) use ptx_emu::panic_message;

/// With `HALOSCOPE_TIMELINE=1`, prints `[timeline] <ms since start> <what>` to stderr: where
/// a run's wall time goes outside its stages (process start, the GPU worker's Hello,
/// tear-down), for scripts/device/checks/stage-split.sh.
pub fn timeline(what: &str) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("HALOSCOPE_TIMELINE").is_some_and(|v| v == "1")) {
        let since = PROCESS_START.get().map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e3);
        eprintln!("[timeline] {since:.0} {what}");
    }
}
