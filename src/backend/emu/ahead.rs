//! Work the emulator does ahead of the pipeline's calls, on threads of its own: the sizes'
//! inputs and reference outputs drawn while the kernel compiles, and the profile size's
//! verification launch (by far the longest) started as soon as the kernel is compiled, so
//! that the smaller sizes are verified while it runs and every core has work.

use super::{Collect, EmuFault, EmuFaultKind, LaunchStats, Program};
use super::{RunOptions, launch_on_poisoned_output};
use crate::backend::CancelFlag;
use crate::harness::{SizeData, size_seed};
use crate::lesson::Contract;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Which size of which run: (n, seed).
pub type SizeKey = (u32, u64);

/// The sizes' data, drawn in the background: smallest first, so the first launches wait
/// least.
#[derive(Default)]
pub struct PreparedSizes {
    pending: Vec<(SizeKey, Receiver<SizeData>)>,
}

impl PreparedSizes {
    /// Starts drawing every verification size of the run of `run_seed`.
    pub fn draw(lesson: &Contract, run_seed: u64) -> PreparedSizes {
        let mut sizes = lesson.verify_sizes.clone();
        sizes.sort_by_key(|&n| lesson.stencil.elements(n));
        let mut pending = Vec::new();
        let mut senders = Vec::new();
        for n in sizes {
            let (send, receive) = sync_channel(1);
            pending.push(((n, size_seed(run_seed, n)), receive));
            senders.push((n, send));
        }
        let contract = lesson.clone();
        let spawned = std::thread::Builder::new().name("size data".into()).spawn(move || {
            for (n, send) in senders {
                // A run that ended early has dropped its receivers: stop drawing.
                if send.send(SizeData::draw(&contract, n, size_seed(run_seed, n))).is_err() {
                    return;
                }
            }
        });
        match spawned {
            Ok(_) => PreparedSizes { pending },
            Err(_) => PreparedSizes::default(),
        }
    }

    /// Where size `key`'s data will arrive, if it is being drawn (once: the caller owns it).
    pub fn claim(&mut self, key: SizeKey) -> Option<Receiver<SizeData>> {
        let i = self.pending.iter().position(|(k, _)| *k == key)?;
        Some(self.pending.swap_remove(i).1)
    }

    /// Size `key`'s data: as drawn ahead when it was, else drawn now.
    pub fn take(&mut self, lesson: &Contract, key: SizeKey) -> SizeData {
        self.claim(key)
            .and_then(|receive| receive.recv().ok())
            .unwrap_or_else(|| SizeData::draw(lesson, key.0, key.1))
    }
}

/// What one verification launch leaves: its data, its counters and the output it wrote.
pub type Launched = (SizeData, LaunchStats, Collect, Vec<f32>);

/// One verification launch on the calling thread.
pub fn launch_size(
    prog: &Program,
    lesson: &Contract,
    data: SizeData,
    options: &RunOptions,
    cancel: &CancelFlag,
) -> Result<Launched, EmuFault> {
    let SizeData {
        n,
        seed,
        input,
        expected,
    } = data;
    let launched = launch_on_poisoned_output(prog, lesson, n, input, options, cancel)?;
    // A kernel that stored into its (const) input through a cast is verified, as on the
    // GPU, against the input it was given: drawn again from its seed.
    let data = if launched.input_changed {
        SizeData::draw(lesson, n, seed)
    } else {
        SizeData {
            n,
            seed,
            input: launched.input,
            expected,
        }
    };
    Ok((data, launched.stats, launched.observed, launched.output))
}

/// A verification launch running on a thread of its own.
pub struct LaunchAhead {
    /// The kernel's PTX and the size: the launch answers only that call.
    ptx: String,
    key: SizeKey,
    stop: CancelFlag,
    /// Blocks finished, and of how many.
    done: Arc<AtomicU64>,
    blocks: u64,
    handle: JoinHandle<Result<Launched, EmuFault>>,
}

/// How often a waiting caller hears how far the launch is (a run at the lessons' sizes
/// takes about a second; a 64-million-thread launch tens of seconds).
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

impl LaunchAhead {
    /// Starts the launch of `prog` (compiled from `ptx`) at size `key` on the data that
    /// `data` delivers.
    pub fn start(
        prog: Arc<Program>,
        ptx: &str,
        lesson: &Contract,
        key: SizeKey,
        data: Receiver<SizeData>,
        mut options: RunOptions,
    ) -> Option<LaunchAhead> {
        let stop = CancelFlag::default();
        let done = Arc::new(AtomicU64::new(0));
        options.blocks_done = Some(done.clone());
        let blocks = lesson.grid_for(key.0).iter().map(|&g| g as u64).product();
        let lesson = lesson.clone();
        let thread_stop = stop.clone();
        let handle = std::thread::Builder::new()
            .name("profile-size launch".into())
            .spawn(move || {
                let data = data.recv().unwrap_or_else(|_| SizeData::draw(&lesson, key.0, key.1));
                launch_size(&prog, &lesson, data, &options, &thread_stop)
            })
            .ok()?;
        Some(LaunchAhead {
            ptx: ptx.to_string(),
            key,
            stop,
            done,
            blocks,
            handle,
        })
    }

    /// Whether this is the launch of `ptx` at size `key`.
    pub fn is_for(&self, ptx: &str, key: SizeKey) -> bool {
        self.key == key && self.ptx == ptx
    }

    /// Waits for the launch, telling `progress` (blocks done, of how many) every
    /// [`PROGRESS_EVERY`]; `cancel` (the run's Cancel) stops it.
    pub fn wait(self, cancel: &CancelFlag, progress: &mut dyn FnMut(u64, u64)) -> Result<Launched, EmuFault> {
        let mut told = Instant::now();
        while !self.handle.is_finished() {
            if cancel.is_cancelled() {
                self.stop.cancel();
            }
            if told.elapsed() >= PROGRESS_EVERY {
                progress(self.done.load(Ordering::Relaxed), self.blocks);
                told = Instant::now();
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        self.handle.join().unwrap_or_else(|_| {
            Err(EmuFault {
                kind: EmuFaultKind::Trap {
                    message: "the emulator's launch thread panicked".into(),
                },
                pc: None,
                block: [0; 3],
                thread: None,
                block_index: 0,
                findings: Vec::new(),
            })
        })
    }

    /// Stops the launch; nobody will collect it (its thread ends at its next block).
    pub fn discard(self) {
        self.stop.cancel();
    }
}
