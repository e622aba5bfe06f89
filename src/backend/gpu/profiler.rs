//! The profiler child, kept off a run's critical path. CUPTI collects SASS metrics once per
//! process, so every profile needs a fresh child, and a fresh child needs a CUDA context
//! (a few hundred milliseconds) before its patched launches (about a second for 100 launches
//! at the profile size). So the child is started when a run starts (it makes its context
//! while the kernel compiles), is handed its request as soon as the kernel has compiled, and
//! measures while the worker verifies the sizes; the run collects the figures after the
//! last size. Sector counts do not depend on what else runs on the card: CUPTI counts the
//! instructions of the profiled kernel's own launches.

use super::process::{Worker, WorkerError};
use super::protocol::{GpuProfile, Request, Response};
use crate::backend::{CancelFlag, KernelFault};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// A profile being measured in its own child process.
pub struct PendingProfile {
    pid: u32,
    /// The child's reply, and how long after the request it came.
    result: Receiver<(Result<Response, WorkerError>, Duration)>,
}

/// A child started ahead of its request, when none is waiting yet.
pub fn ensure_spare(spare: &mut Option<Worker>) {
    if spare.is_none() {
        *spare = Worker::spawn(true).ok();
    }
}

/// Sends `request` (a `Request::Profile`) to the spare child, or to a new one, on a thread
/// of its own.
pub fn start(spare: &mut Option<Worker>, request: Request, timeout: Duration) -> Result<PendingProfile, WorkerError> {
    let mut child = match spare.take() {
        Some(child) => child,
        None => Worker::spawn(true)?,
    };
    let pid = child.id();
    let (tx, result) = channel();
    std::thread::Builder::new()
        .name("profiler child".into())
        .spawn(move || {
            // The child is dropped (killed, if still alive) when the thread ends.
            let started = Instant::now();
            // Cancel reaches this child through `PendingProfile::collect`, which kills it.
            let reply = child.request(&request, timeout, None);
            crate::timeline("profiler child replied");
            let _ = tx.send((reply, started.elapsed()));
        })
        .map_err(|e| WorkerError::Spawn(format!("cannot start the profiler thread: {e}")))?;
    Ok(PendingProfile { pid, result })
}

impl PendingProfile {
    /// Waits for the child's figures. Also returns how long the child took from the request
    /// to its reply (it overlaps the verification).
    /// Cancel kills the child and returns at once.
    pub fn collect(self, cancel: &CancelFlag) -> (Result<GpuProfile, KernelFault>, Duration) {
        let (reply, took) = loop {
            if cancel.is_cancelled() {
                self.discard();
                return (Err(KernelFault::Cancelled), Duration::ZERO);
            }
            match self.result.recv_timeout(Duration::from_millis(50)) {
                Ok(reply) => break reply,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    break (
                        Err(WorkerError::Died("the profiler thread ended without a reply".into())),
                        Duration::ZERO,
                    );
                }
            }
        };
        let result = match reply {
            Ok(Response::Profiled { profile }) => Ok(profile),
            Ok(Response::Fault { fault }) => Err(fault),
            Ok(other) => Err(super::unexpected(&other)),
            Err(error) => Err(super::worker_fault(&error)),
        };
        (result, took)
    }

    /// Ends the child now (the run stopped before it needed the figures).
    pub fn discard(self) {
        if self.result.try_recv().is_err() {
            // SAFETY: kill(2) on the child we spawned. With no reply sent yet its thread
            // still holds the child unreaped, so the pid is still the child's (the thread
            // reaps it only after sending; a reply racing this call leaves a window of a
            // few instructions).
            unsafe {
                libc::kill(self.pid as libc::pid_t, libc::SIGKILL);
            }
        }
    }
}
