//! The models built from the emulator's trace of a run, each for one view or report part:
//! where one output's reads were served from (`reads`, the diagram), the watched block step
//! by step (`block_replay`), how often each input element was fetched (`fetches`, the heat
//! map), where the compiler moved the global accesses (`compiler_moves`, the Code view), what
//! only the unoptimised build executes (`unexecuted`), and two attempts line by line
//! (`side_by_side`, the compare view). None of them draws; the app's views and the CLI do.

pub mod block_replay;
pub mod compiler_moves;
pub mod fetches;
pub mod reads;
pub mod side_by_side;
pub mod unexecuted;
