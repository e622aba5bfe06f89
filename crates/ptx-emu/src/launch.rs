//! A grid launch: blocks are independent, so host threads take them from a shared counter
//! and each keeps its own counters; the first fault (lowest block) stops the launch.

use super::block::{BlockRunner, LaunchConfig};
use super::class_launch::count_by_class;
use super::fault::{EmuFault, EmuFaultKind};
use super::ir::Program;
use super::memory::GlobalMemory;
use super::observe::Observer;
use super::stats::LaunchStats;
use super::stats::Tally;
use crate::CancelFlag;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Blocks a host thread takes at a time.
const CHUNK: u64 = 8;

/// Runs every block of the grid on `threads` host threads (1 for the naive baseline) and
/// returns its counters; `observer` gets the launch's events (see [`Observer`]). The first
/// fault (lowest block) stops the launch and is the error; so does `cancel`.
pub fn launch(
    prog: &Program,
    cfg: &LaunchConfig,
    mem: &GlobalMemory,
    observer: &mut dyn Observer,
    cancel: &CancelFlag,
    threads: usize,
) -> Result<LaunchStats, EmuFault> {
    let shared: &dyn Observer = observer;
    let shape = cfg.cluster_shape(prog);
    if let Err(reason) = super::cluster::check_shape(shape.dims, cfg.grid, prog.cluster_dims) {
        return Err(EmuFault {
            kind: EmuFaultKind::Launch { reason },
            pc: None,
            block: [0; 3],
            thread: None,
            block_index: 0,
            findings: Vec::new(),
        });
    }
    // The unit of work is a cluster: its blocks run together on one host thread.
    let cluster_size = shape.size() as u64;
    let blocks: u64 = cfg.grid.iter().map(|&g| g as u64).product::<u64>() / cluster_size;
    let abort = AtomicBool::new(false);
    let first_fault: Mutex<Option<EmuFault>> = Mutex::new(None);

    // A launch that only counts first counts what it can by classes of blocks that count
    // alike (block_classes); the blocks left run one by one below.
    let classing = cfg.count_by_class
        && !cfg.check_hazards
        && cfg.watch.is_none()
        && cfg.fetch_map.is_none()
        && cfg.lanes_per_warp == 32;
    let (classed, order) = if classing {
        let mut runner = BlockRunner::new(prog, cfg, mem, &abort, cancel);
        match count_by_class(&mut runner, run_cluster_catching) {
            Ok(mut classed) => {
                // Reported once the phase succeeded: a launch that falls back to every
                // block (below) must not have reported these already.
                shared.blocks_finished(classed.tally.blocks);
                let order = std::mem::take(&mut classed.left);
                (Some(classed), Some(order))
            }
            Err(fault) if fault.kind == EmuFaultKind::Cancelled => return Err(fault),
            // A representative faulted: the launch runs every block in order instead, so
            // that the fault reported is the one a launch of every block reports (the lowest
            // block's), not the representative's (taken from the grid's middle).
            Err(_) => (None, None),
        }
    } else {
        (None, None)
    };
    let to_run = order.as_ref().map_or(blocks, |o| o.len() as u64);
    let next = AtomicU64::new(0);
    let threads = threads.clamp(1, to_run.max(1) as usize);

    let results: Vec<Tally> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut runner = BlockRunner::new(prog, cfg, mem, &abort, cancel);
                    loop {
                        let start = next.fetch_add(CHUNK, Ordering::Relaxed);
                        if start >= to_run || abort.load(Ordering::Relaxed) {
                            break;
                        }
                        let end = (start + CHUNK).min(to_run);
                        for nth in start..end {
                            let index = order.as_ref().map_or(nth, |o| o[nth as usize]);
                            if cancel.is_cancelled() {
                                record(
                                    &first_fault,
                                    EmuFault {
                                        kind: EmuFaultKind::Cancelled,
                                        pc: None,
                                        block: [0; 3],
                                        thread: None,
                                        block_index: index,
                                        findings: Vec::new(),
                                    },
                                );
                                abort.store(true, Ordering::Relaxed);
                                break;
                            }
                            if let Err(fault) = run_cluster_catching(&mut runner, index) {
                                if fault.kind != EmuFaultKind::Cancelled {
                                    record(&first_fault, fault);
                                }
                                abort.store(true, Ordering::Relaxed);
                                break;
                            }
                        }
                        shared.blocks_finished((end - start) * cluster_size);
                    }
                    runner.stats.fetch_map = runner.fetch.take().map(|counter| counter.map);
                    runner.stats
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("emulator thread panicked"))
            .collect()
    });

    let mut total = Tally::new(prog.insts.len());
    let (mut blocks_by_class, mut classes) = (0, 0);
    if let Some(classed) = classed {
        // Every block of a class but its representative was counted without running.
        blocks_by_class = classed
            .tally
            .blocks
            .saturating_sub(classed.classes as u64 * cluster_size);
        classes = classed.classes;
        total.merge(classed.tally);
    }
    for r in results {
        total.merge(r);
    }
    total.sort_findings();
    if let Some(mut fault) = first_fault.into_inner().unwrap_or_else(|e| e.into_inner()) {
        // What the launch found before it stopped goes with the fault.
        fault.findings = total.findings;
        return Err(fault);
    }
    if cancel.is_cancelled() {
        return Err(EmuFault {
            kind: EmuFaultKind::Cancelled,
            pc: None,
            block: [0; 3],
            thread: None,
            block_index: 0,
            findings: Vec::new(),
        });
    }
    if cfg.watch.is_some() {
        observer.watched_block(total.trace);
    }
    observer.findings(total.findings);
    if !total.printed.is_empty() {
        observer.printed(total.printed);
    }
    if let Some(map) = total.fetch_map {
        observer.fetch_map(map);
    }
    Ok(LaunchStats {
        per_pc: total.per_pc,
        shared_requests: total.shared_requests,
        bank_conflicts: total.bank_conflicts,
        blocks: total.blocks,
        blocks_by_class,
        classes,
    })
}

/// Runs one cluster (one block, without clusters); a panic inside the emulator (our bug,
/// never the kernel's) becomes a fault that names the instruction it happened on, so the run
/// ends with a message instead of taking the app or the CLI down. The launch stops there:
/// the runner's state is not trusted after it.
fn run_cluster_catching(runner: &mut BlockRunner, index: u64) -> Result<(), EmuFault> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runner.run_cluster(index))) {
        Ok(result) => result,
        Err(payload) => {
            let message = crate::panic_message(payload.as_ref());
            let pc = runner.at_pc;
            Err(runner.fault(EmuFaultKind::Internal { message }, Some(pc), None))
        }
    }
}

fn record(slot: &Mutex<Option<EmuFault>>, fault: EmuFault) {
    let mut guard = slot.lock().unwrap_or_else(|e| e.into_inner());
    match guard.as_ref() {
        Some(existing) if existing.block_index <= fault.block_index && existing.kind != EmuFaultKind::Cancelled => {}
        _ => *guard = Some(fault),
    }
}
