//! haloscope: lessons on how GPU stencil kernels spend global-memory traffic.
//!
//! The pipeline, one module per stage: [`lesson`] (the contract as data) -> [`compile`]
//! (NVRTC) -> [`backend`] (emulator or GPU) -> [`harness`] (verification) -> [`report`].
//! [`pipeline`] runs the stages in order for both the CLI and the GUI.

pub mod app;
pub mod backend;
pub mod backends;
pub mod cli;
pub mod compare;
pub mod compile;
pub mod cudalibs;
pub mod emu;
pub mod fetches;
pub mod gpu;
pub mod grade;
pub mod harness;
pub mod lesson;
pub mod pipeline;
pub mod ptx;
pub mod reads;
pub mod replay;
pub mod report;

/// When this process started (set first thing in `main`), for the launch-to-first-frame figure.
pub static PROCESS_START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
