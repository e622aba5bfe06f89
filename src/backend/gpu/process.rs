//! Talking to a worker process: spawn it, send one JSON request, wait for one JSON reply
//! with a timeout, and kill it when it hangs.

use super::protocol::{Request, Response};
use crate::backend::CancelFlag;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug)]
pub enum WorkerError {
    /// No reply within the time limit; the worker was killed.
    Timeout(Duration),
    /// The worker exited; with the end of what it wrote to stderr.
    Died(String),
    Spawn(String),
    /// The learner pressed Cancel; the worker was killed.
    Cancelled,
}

/// How often a wait for a worker looks at the Cancel flag: Cancel must stop a run within 1 s.
const CANCEL_POLL: Duration = Duration::from_millis(50);

pub struct Worker {
    child: Child,
    stdin: ChildStdin,
    replies: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    /// Whether the child was waited for already (its pid may belong to another process).
    reaped: bool,
}

/// The haloscope binary to run as a worker: `$HALOSCOPE_WORKER_EXE`, else this executable.
fn worker_exe() -> Result<std::path::PathBuf, String> {
    if let Some(exe) = std::env::var_os("HALOSCOPE_WORKER_EXE") {
        return Ok(exe.into());
    }
    std::env::current_exe().map_err(|e| format!("cannot find the haloscope executable: {e}"))
}

impl Worker {
    /// Starts `haloscope worker [--one-shot]`.
    pub fn spawn(one_shot: bool) -> Result<Worker, WorkerError> {
        let exe = worker_exe().map_err(WorkerError::Spawn)?;
        let mut command = Command::new(&exe);
        command.arg("worker");
        if one_shot {
            command.arg("--one-shot");
        }
        // Eager module loading: lazy loading can deadlock CUPTI's SASS patching.
        command.env("CUDA_MODULE_LOADING", "EAGER");
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| WorkerError::Spawn(format!("cannot start {} worker: {e}", exe.display())))?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr_pipe = child.stderr.take().expect("piped stderr");
        let (tx, replies) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut s = sink.lock().unwrap_or_else(|e| e.into_inner());
                s.push_str(&String::from_utf8_lossy(&buf[..n]));
                if s.len() > 8192 {
                    let cut = s.len() - 4096;
                    s.replace_range(..cut, "");
                }
            }
        });
        Ok(Worker {
            child,
            stdin,
            replies,
            stderr,
            reaped: false,
        })
    }

    /// Sends `request` and waits for the reply, at most `timeout`; when `cancel` is raised
    /// meanwhile the worker is killed (a kernel cannot be stopped any other way) and the wait
    /// ends within `CANCEL_POLL`.
    pub fn request(
        &mut self,
        request: &Request,
        timeout: Duration,
        cancel: Option<&CancelFlag>,
    ) -> Result<Response, WorkerError> {
        let line = serde_json::to_string(request).map_err(|e| WorkerError::Spawn(e.to_string()))?;
        if writeln!(self.stdin, "{line}").and_then(|_| self.stdin.flush()).is_err() {
            return Err(self.died());
        }
        let deadline = Instant::now() + timeout;
        loop {
            if cancel.is_some_and(CancelFlag::is_cancelled) {
                self.kill();
                return Err(WorkerError::Cancelled);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.replies.recv_timeout(left.min(CANCEL_POLL)) {
                Ok(reply) => {
                    return serde_json::from_str(&reply)
                        .map_err(|e| WorkerError::Died(format!("unreadable reply ({e}): {reply}")));
                }
                Err(RecvTimeoutError::Timeout) if left > CANCEL_POLL => continue,
                Err(RecvTimeoutError::Timeout) => {
                    self.kill();
                    return Err(WorkerError::Timeout(timeout));
                }
                Err(RecvTimeoutError::Disconnected) => return Err(self.died()),
            }
        }
    }

    fn died(&mut self) -> WorkerError {
        self.reaped = true;
        let status = self
            .child
            .wait()
            .map(|s| s.to_string())
            .unwrap_or_else(|e| e.to_string());
        std::thread::sleep(Duration::from_millis(50)); // let the stderr reader catch up
        let tail = self.stderr.lock().map(|s| s.trim().to_string()).unwrap_or_default();
        WorkerError::Died(format!(
            "{status}{}",
            if tail.is_empty() {
                String::new()
            } else {
                format!(": {tail}")
            }
        ))
    }

    /// The worker's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.reaped = true;
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if self.reaped {
            return;
        }
        let _ = self.child.kill();
        // Reaping waits for the driver to tear the worker's context down: a thread does it,
        // so closing a backend (the end of every CLI run) does not wait for that.
        #[cfg(unix)]
        {
            let pid = self.child.id() as libc::pid_t;
            let _ = std::thread::Builder::new().name("reap worker".into()).spawn(move || {
                // SAFETY: waits for our own child, which `Child` will never wait for again.
                unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
            });
        }
        #[cfg(not(unix))]
        let _ = self.child.wait();
    }
}
