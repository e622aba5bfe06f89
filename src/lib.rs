//! haloscope: lessons on how GPU stencil kernels spend global-memory traffic.
//!
//! The pipeline, one module per stage: [`lesson`] (the contract as data) -> [`compile`]
//! (NVRTC) -> [`backend`] (emulator or GPU) -> [`harness`] (verification) -> [`report`].
//! [`pipeline`] runs the stages in order for both the CLI and the GUI.

pub mod app;
pub mod backend;
pub mod cli;
pub mod compile;
pub mod cudalibs;
pub mod emu;
pub mod gpu;
pub mod harness;
pub mod lesson;
pub mod pipeline;
pub mod reads;
pub mod ptx;
pub mod report;
