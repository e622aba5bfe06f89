//! What a launch tells its caller besides the counters: the observer's events.
//!
//! `blocks_finished` comes live, from the launch's host threads, as blocks finish (a progress
//! bar). The others come once, on the caller's thread, after the last block: the launch runs
//! blocks on several host threads in no fixed order, and merging first makes every event the
//! same whatever the thread count (findings in the launch's order of execution, the trace in
//! the watched block's order, printf text in block order).

use crate::fetch_map::FetchMap;
use crate::stats::{Printed, RawFinding, TracedAccess};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Receives a launch's events; every method ignores its event unless overridden.
pub trait Observer: Sync {
    /// `count` more blocks finished (called from the launch's host threads).
    fn blocks_finished(&self, _count: u64) {}
    /// The watched block's global and shared accesses and completed barriers, in the order
    /// its warps made them. Called once when the launch configuration names a block.
    fn watched_block(&mut self, _accesses: Vec<TracedAccess>) {}
    /// The hazards found (races, uninitialised shared reads, divergent barriers): one per
    /// kind and instruction, the earliest place kept, in the launch's order of execution.
    /// Called once, with an empty list when there were none.
    fn findings(&mut self, _findings: Vec<RawFinding>) {}
    /// What `printf` wrote (capped). Called once, when anything was printed.
    fn printed(&mut self, _printed: Printed) {}
    /// The input's fetch counts in the window the configuration asked for. Called once,
    /// when it asked.
    fn fetch_map(&mut self, _map: FetchMap) {}
}

/// An observer that wants nothing.
pub struct Ignore;

impl Observer for Ignore {}

/// An observer that keeps every event (what most callers want), and counts finished blocks
/// into `blocks_done` when given one (a progress bar reads it from another thread).
#[derive(Debug, Default)]
pub struct Collect {
    pub trace: Vec<TracedAccess>,
    pub findings: Vec<RawFinding>,
    pub printed: Printed,
    pub fetch_map: Option<FetchMap>,
    pub blocks_done: Option<Arc<AtomicU64>>,
}

impl Observer for Collect {
    fn blocks_finished(&self, count: u64) {
        if let Some(done) = &self.blocks_done {
            done.fetch_add(count, Ordering::Relaxed);
        }
    }
    fn watched_block(&mut self, accesses: Vec<TracedAccess>) {
        self.trace = accesses;
    }
    fn findings(&mut self, findings: Vec<RawFinding>) {
        self.findings = findings;
    }
    fn printed(&mut self, printed: Printed) {
        self.printed = printed;
    }
    fn fetch_map(&mut self, map: FetchMap) {
        self.fetch_map = Some(map);
    }
}
