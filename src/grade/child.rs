//! One submission graded in a process of its own (`haloscope run --json`), with a wall-time
//! limit and an address-space limit, in an empty working directory: a submission that
//! hangs, crashes or eats memory ends its own process and nothing else.

use crate::report::RunReport;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub struct ChildRun {
    pub kernel: PathBuf,
    pub lesson: String,
    pub lessons_dir: PathBuf,
    pub backend: String,
    pub seed: u64,
    pub timeout: Duration,
    /// Memory limit of the child, bytes (0: none); see `limit_memory` for which limit.
    pub memory: u64,
    /// Emulator host threads of the child (grading runs several children at once).
    pub emu_threads: usize,
}

/// How a child ended when it gave no report.
#[derive(Debug, Clone, PartialEq)]
pub enum ChildFailure {
    TimedOut(Duration),
    /// Killed by a signal (`SIGKILL`, `SIGSEGV`; an allocation refused under the memory
    /// limit usually ends as an abort) or exited without a readable report.
    Died {
        status: String,
        stderr: String,
    },
    CannotStart(String),
}

impl ChildFailure {
    pub fn describe(&self) -> String {
        match self {
            ChildFailure::TimedOut(t) => format!("stopped after the time limit of {} s", t.as_secs()),
            ChildFailure::Died { status, stderr } => {
                // An allocation refused under the memory limit says so on one line, a
                // panic on the line after "panicked at"; else the last thing it said.
                let lines: Vec<&str> = stderr.lines().collect();
                let panic = lines
                    .iter()
                    .position(|l| l.contains("panicked at"))
                    .and_then(|i| lines.get(i + 1))
                    .copied();
                let last = lines
                    .iter()
                    .find(|l| l.contains("memory allocation of"))
                    .copied()
                    .or(panic)
                    .or_else(|| lines.iter().rev().find(|l| !l.trim().is_empty()).copied())
                    .unwrap_or("");
                format!(
                    "the grading process died ({status}){}",
                    if last.is_empty() {
                        String::new()
                    } else {
                        format!(": {last}")
                    }
                )
            }
            ChildFailure::CannotStart(why) => format!("cannot start the grading process: {why}"),
        }
    }
}

impl ChildRun {
    pub fn run(&self, scratch: &Path) -> Result<RunReport, ChildFailure> {
        let exe = std::env::current_exe().map_err(|e| ChildFailure::CannotStart(e.to_string()))?;
        let mut command = Command::new(exe);
        command
            .args(["run", "--json", "--lesson", &self.lesson, "--backend", &self.backend])
            .arg("--lessons")
            .arg(&self.lessons_dir)
            .arg("--kernel")
            .arg(&self.kernel)
            .args(["--seed", &self.seed.to_string()])
            .current_dir(scratch)
            .env("HALOSCOPE_EMU_THREADS", self.emu_threads.max(1).to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        limit_memory(&mut command, self.memory, self.backend != "emu");
        let started = Instant::now();
        let mut child = command.spawn().map_err(|e| ChildFailure::CannotStart(e.to_string()))?;
        // Read both pipes on threads so a chatty child never blocks on a full pipe.
        let mut stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let out = std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = stdout.read_to_end(&mut s);
            s
        });
        let err = std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = stderr.take(1 << 20).read_to_end(&mut s);
            s
        });
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() > self.timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(ChildFailure::TimedOut(self.timeout));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(ChildFailure::CannotStart(e.to_string())),
            }
        };
        let stdout = out.join().unwrap_or_default();
        let stderr = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
        serde_json::from_slice::<RunReport>(&stdout).map_err(|_| ChildFailure::Died {
            status: status.to_string(),
            stderr,
        })
    }
}

/// The emulator's memory is all the child's own, so its address space is limited
/// (`RLIMIT_AS`). A child that may open a CUDA context cannot live under that limit: the
/// driver reserves address space for unified memory far beyond any host limit a teacher
/// would set, and `cuInit` fails. There the limit is on the data segment (`RLIMIT_DATA`:
/// heap and private writable mappings, which is where a run's buffers live).
#[cfg(unix)]
fn limit_memory(command: &mut Command, bytes: u64, may_use_gpu: bool) {
    use std::os::unix::process::CommandExt;
    if bytes == 0 {
        return;
    }
    let resource = if may_use_gpu {
        libc::RLIMIT_DATA
    } else {
        libc::RLIMIT_AS
    };
    // SAFETY: setrlimit is async-signal-safe and touches only the child being started.
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: bytes as libc::rlim_t,
                rlim_max: bytes as libc::rlim_t,
            };
            if libc::setrlimit(resource, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(not(unix))]
fn limit_memory(_command: &mut Command, _bytes: u64, _may_use_gpu: bool) {}
