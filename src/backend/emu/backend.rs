//! The emulator as a [`Backend`]: decodes the PTX once per kernel, verifies each size, and
//! turns launch counters into the report's sector profile, findings and faults.

use super::ahead::{LaunchAhead, PreparedSizes, launch_size};
use super::{EmuFault, EmuFaultKind, LaunchStats, Program};
use super::{RunOptions, launch_lesson_kernel, launch_on_poisoned_output, load_program};
use crate::backend::{
    Backend, BackendInfo, BackendKind, CancelFlag, Finding, FindingKind, KernelFault, KernelOutput, ProfileStart,
    SizeRun, ThreadPlace, Trace,
};
use crate::compile::{CompiledKernel, MachineCode, Target};
use crate::harness::buffers::{zeroed_f32, zeroed_u32};
use crate::harness::{random_inputs, verify_against};
use crate::lesson::Contract;
use crate::progress::Progress;
use crate::report::thousands;
use crate::report::{GlobalAccess, InstructionAt, ProfileBuilder, SectorProfile, SharedStats};
use ptx_emu::{AccessKind, Printed, RawFinding};
use std::borrow::Borrow;
use std::sync::Arc;

#[derive(Debug, Clone, Default)]
pub struct EmulatorOptions {
    /// Host threads (0: all cores).
    pub threads: usize,
    /// Trace the memory accesses of this block's threads in every launch.
    pub watch: Option<[u32; 3]>,
    /// Launch with the hazard checks off, the kernel cut to what its sectors depend on where
    /// that is sound: a count only (the live figures), never a verdict or a verified output.
    pub unchecked: bool,
}

pub struct EmulatorBackend {
    options: EmulatorOptions,
    program: Option<(String, Arc<Program>)>,
    /// Counters of a verification launch at the profile size, reused by `profile`.
    profile_launch: Option<(String, LaunchStats)>,
    /// The run's sizes' inputs and reference outputs, drawn from `prepare` on (while the
    /// kernel compiles).
    prepared: PreparedSizes,
    /// The profile size's verification launch, started by `start_profile`.
    ahead: Option<LaunchAhead>,
    /// The hazards of the last verification launch that faulted, found before its fault.
    findings_before_fault: Vec<Finding>,
    /// `program` is the kernel cut to its sectors' slice: no value it loads matters.
    counts_a_cut_kernel: bool,
}

impl EmulatorBackend {
    pub fn new(options: EmulatorOptions) -> EmulatorBackend {
        EmulatorBackend {
            options,
            program: None,
            profile_launch: None,
            prepared: PreparedSizes::default(),
            ahead: None,
            findings_before_fault: Vec::new(),
            counts_a_cut_kernel: false,
        }
    }

    /// Which block's accesses to trace from now on (`None`: none).
    pub fn set_watch(&mut self, watch: Option<[u32; 3]>) {
        self.options.watch = watch;
    }

    fn run_options(&self) -> RunOptions {
        let mut o = RunOptions {
            watch: self.options.watch,
            check_hazards: !self.options.unchecked,
            count_by_class: self.options.unchecked,
            ..RunOptions::default()
        };
        if self.options.threads > 0 {
            o.host_threads = self.options.threads;
        }
        o
    }

    fn program(&mut self, kernel: &CompiledKernel) -> Result<Arc<Program>, KernelFault> {
        if let Some((ptx, prog)) = &self.program
            && *ptx == kernel.ptx
        {
            return Ok(prog.clone());
        }
        let prog = load_program(&kernel.ptx, &kernel.entry).map_err(|e| KernelFault::Unsupported {
            message: unsupported_message(&kernel.ptx, &e),
        })?;
        // A launch that only counts runs the kernel cut to what its sectors depend on, where
        // that cut is sound (ptx_emu's count_slice.rs); it never verifies, so the cut's
        // garbage values are never looked at.
        let cut = self.options.unchecked.then(|| prog.count_slice()).flatten();
        self.counts_a_cut_kernel = cut.is_some();
        let prog = Arc::new(cut.unwrap_or(prog));
        self.program = Some((kernel.ptx.clone(), prog.clone()));
        self.profile_launch = None;
        Ok(prog)
    }
}

impl EmulatorBackend {
    /// What the bulk copies of `kernel` move over the contract's profile run, for a run whose
    /// sectors came from the GPU: the hardware metric leaves them out (`BulkCopies`) and CUPTI
    /// has no figure haloscope reads for them, so the emulator counts them, once, at the
    /// profile size. None for a kernel without bulk copies (nothing is run then).
    pub fn bulk_copies_for_gpu_run(
        &mut self,
        lesson: &Contract,
        kernel: &CompiledKernel,
        seed: u64,
        cancel: &CancelFlag,
    ) -> Option<crate::report::BulkCopies> {
        let prog = self.program(kernel).ok()?;
        let has_bulk = prog.instructions().any(|i| i.copy == Some(ptx_emu::CopyKind::Bulk));
        if !has_bulk {
            return None;
        }
        let mut bulk = self.profile(lesson, kernel, None, seed, cancel).ok()?.bulk_copies?;
        bulk.counted_by_emulator = true;
        Some(bulk)
    }
}

impl Drop for EmulatorBackend {
    /// A launch started ahead stops with the backend.
    fn drop(&mut self) {
        self.discard_profile();
    }
}

impl Backend for EmulatorBackend {
    fn info(&self) -> BackendInfo {
        let threads = if self.options.threads > 0 {
            self.options.threads
        } else {
            super::host_threads()
        };
        BackendInfo {
            display_watchdog: false,
            kind: BackendKind::Emulator,
            device: format!("PTX emulator on {threads} host thread(s)"),
        }
    }

    fn target(&self) -> Target {
        Target::EMULATOR
    }

    fn prepare(&mut self, lesson: &Contract, run_seed: u64) {
        self.discard_profile();
        self.prepared = PreparedSizes::draw(lesson, run_seed);
    }

    /// Starts the profile size's verification launch, whose counters are the profile.
    fn start_profile(&mut self, lesson: &Contract, kernel: &CompiledKernel, seed: u64) -> ProfileStart {
        self.discard_profile();
        let key = (lesson.profile_size, seed);
        let (Ok(prog), Some(data)) = (self.program(kernel), self.prepared.claim(key)) else {
            return ProfileStart::Nothing;
        };
        self.ahead = LaunchAhead::start(prog, &kernel.ptx, lesson, key, data, self.run_options());
        if self.ahead.is_some() {
            ProfileStart::VerificationAhead
        } else {
            ProfileStart::Nothing
        }
    }

    fn discard_profile(&mut self) {
        if let Some(ahead) = self.ahead.take() {
            ahead.discard();
        }
    }

    fn findings_before_fault(&mut self) -> Vec<Finding> {
        std::mem::take(&mut self.findings_before_fault)
    }

    fn verify_size(
        &mut self,
        lesson: &Contract,
        kernel: &CompiledKernel,
        n: u32,
        seed: u64,
        progress: &mut dyn FnMut(Progress),
        cancel: &CancelFlag,
    ) -> Result<SizeRun, KernelFault> {
        let prog = self.program(kernel)?;
        let options = self.run_options();
        let launched = match self.ahead.take() {
            Some(ahead) if ahead.is_for(&kernel.ptx, (n, seed)) => ahead.wait(cancel, &mut |done, blocks| {
                progress(Progress::Launching { n, done, blocks })
            }),
            other => {
                self.ahead = other;
                let data = self.prepared.take(lesson, (n, seed));
                launch_size(&prog, lesson, data, &options, cancel)
            }
        };
        let (data, stats, observed, output) = launched.map_err(|mut f| {
            self.findings_before_fault = std::mem::take(&mut f.findings)
                .iter()
                .map(|r| finding(&prog, r))
                .collect();
            kernel_fault(&prog, f)
        })?;
        let verification = verify_against(lesson, &data, &output);
        let findings = observed.findings.iter().map(|f| finding(&prog, f)).collect();
        let output = (!observed.printed.is_empty()).then(|| kernel_output(&observed.printed, &format!("verify n={n}")));
        if n == lesson.profile_size {
            self.profile_launch = Some((kernel.ptx.clone(), stats));
        }
        let trace = options.watch.map(|_| Trace {
            accesses: observed.trace,
            n,
        });
        Ok(SizeRun {
            verification,
            findings,
            output,
            trace,
        })
    }

    fn profile(
        &mut self,
        lesson: &Contract,
        kernel: &CompiledKernel,
        machine_code: Option<&MachineCode>,
        seed: u64,
        cancel: &CancelFlag,
    ) -> Result<SectorProfile, KernelFault> {
        self.profile_then(lesson, kernel, || machine_code, seed, cancel)
    }
}

impl EmulatorBackend {
    /// `profile`, with the machine-code check asked for only once the launch is done: the
    /// live count runs the check (nvdisasm, about 0.3 s for a new kernel) alongside the
    /// launch and joins it in `machine_code` (owned there; a Run lends its own, uncopied).
    pub fn profile_then<M: Borrow<MachineCode>>(
        &mut self,
        lesson: &Contract,
        kernel: &CompiledKernel,
        machine_code: impl FnOnce() -> Option<M>,
        seed: u64,
        cancel: &CancelFlag,
    ) -> Result<SectorProfile, KernelFault> {
        let prog = self.program(kernel)?;
        let n = lesson.profile_size;
        let (stats, reused) = match self.profile_launch.take() {
            Some((ptx, stats)) if ptx == kernel.ptx => (stats, true),
            _ => {
                // The buffers are lent to the launch (no copies of 64 MiB). A cut kernel's
                // count does not depend on any value, so its buffers are left zeroed (pages
                // the system maps on first touch) instead of drawn and poisoned.
                let count = lesson.stencil.elements(n);
                let options = self.run_options();
                let launched = if self.counts_a_cut_kernel {
                    let (input, output) = (zeroed_f32(count), zeroed_u32(count));
                    launch_lesson_kernel(&prog, lesson, n, input, output, &options, cancel)
                } else {
                    launch_on_poisoned_output(&prog, lesson, n, random_inputs(count, seed), &options, cancel)
                };
                (launched.map_err(|f| kernel_fault(&prog, f))?.stats, false)
            }
        };
        let launches = lesson.profile_launches;
        let machine_code = machine_code();
        let machine_code = machine_code.as_ref().map(Borrow::borrow);
        let mut profile = sector_profile(
            &prog,
            &stats,
            n,
            launches,
            machine_code.unwrap_or(&MachineCode::default()),
        );
        if let Some(code) = machine_code {
            profile.machine_code = Some(with_sectors_not_issued(code, &prog, &stats, launches));
        }
        profile.source = format!(
            "emulator: one launch at n={n} executed{}, its counts multiplied by {launches} (every launch of this kernel issues the same sectors)",
            if reused { " (the verification launch)" } else { "" }
        );
        Ok(profile)
    }
}

/// A launch's printf text as the report keeps it.
pub fn kernel_output(printed: &Printed, launch: &str) -> KernelOutput {
    let mut out = KernelOutput::new(launch);
    out.push_text(&printed.in_block_order());
    out.lines_not_shown += printed.cut_lines;
    out.bytes_not_shown += printed.cut_bytes;
    out
}

/// Sector figures of one launch, scaled to `launches`, as the GPU sees them
/// (`compile::machine_code`): instructions on PTX lines ptxas left no machine instruction for
/// issue no sectors and are left out; those it filed under another source line are booked
/// there.
pub fn sector_profile(
    prog: &Program,
    stats: &LaunchStats,
    n: u32,
    launches: u32,
    machine: &MachineCode,
) -> SectorProfile {
    let k = launches as u64;
    let mut builder = ProfileBuilder::new(n, launches, 1);
    for inst in prog.instructions() {
        let s = &stats.per_pc[inst.pc as usize];
        if s.global_warp_insts == 0 || machine.removed_ptx_lines.contains(&inst.ptx_line) {
            continue;
        }
        // A line's lanes are its global memory instructions' (CUPTI's scope): the other
        // instructions on the line neither issue sectors nor change how many lanes did, and a
        // count of the kernel cut to its sectors' slice (count_slice.rs) has the same.
        let line = machine
            .moved_ptx_lines
            .get(&inst.ptx_line)
            .copied()
            .unwrap_or(inst.line);
        builder.add_instructions(line, s.global_warp_insts * k, s.global_lanes * k);
        builder.add_global(GlobalAccess {
            line,
            store: inst.is_store_like(),
            sectors: s.sectors * k,
            ideal_sectors: s.ideal_sectors * k,
            instructions: s.global_warp_insts * k,
            at: Some(InstructionAt::PtxLine(inst.ptx_line)),
        });
    }
    // Every instruction was counted, so the launch's own average is exact; line 0 (code the
    // compiler made up) is listed only where it touched global memory.
    let warp_insts = stats.warp_insts();
    let average = if warp_insts == 0 {
        0.0
    } else {
        stats.lane_insts() as f64 / warp_insts as f64
    };
    let mut profile = builder.finish(Some(average), |l| l.global_instructions > 0 || l.line != 0);
    profile.shared = SharedStats {
        requests: stats.shared_requests * k,
        bank_conflicts: stats.bank_conflicts * k,
    };
    profile.bulk_copies = bulk_copies(prog, stats, k);
    profile
}

/// The bulk copies' bytes and sectors per line, scaled by `k` launches: kept out of the
/// sector figure, as the hardware metric keeps them (`BulkCopies`).
fn bulk_copies(prog: &Program, stats: &LaunchStats, k: u64) -> Option<crate::report::BulkCopies> {
    let mut per_line: std::collections::BTreeMap<u32, (u64, u64)> = Default::default();
    for inst in prog.instructions() {
        let s = &stats.per_pc[inst.pc as usize];
        if s.bulk_bytes > 0 {
            let entry = per_line.entry(inst.line).or_default();
            entry.0 += s.bulk_bytes * k;
            entry.1 += s.bulk_sectors * k;
        }
    }
    if per_line.is_empty() {
        return None;
    }
    Some(crate::report::BulkCopies {
        bytes: per_line.values().map(|v| v.0).sum(),
        sectors: per_line.values().map(|v| v.1).sum(),
        per_line: per_line.into_iter().map(|(line, (b, s))| (line, b, s)).collect(),
        counted_by_emulator: false,
    })
}

/// The check's lines with the sectors the emulator saw their removed instructions issue.
fn with_sectors_not_issued(code: &MachineCode, prog: &Program, stats: &LaunchStats, launches: u32) -> MachineCode {
    let mut code = code.clone();
    for inst in prog.instructions() {
        if !code.removed_ptx_lines.contains(&inst.ptx_line) {
            continue;
        }
        if let Some(line) = code.lines.iter_mut().find(|l| l.line == inst.line) {
            line.sectors_not_issued += stats.per_pc[inst.pc as usize].sectors * launches as u64;
        }
    }
    code
}

fn line_of(prog: &Program, pc: Option<u32>) -> Option<u32> {
    pc.and_then(|pc| prog.instruction(pc))
        .map(|i| i.line)
        .filter(|&l| l > 0)
}

fn place(prog: &Program, f: &EmuFault) -> ThreadPlace {
    ThreadPlace {
        block: f.block,
        thread: f.thread.unwrap_or([0; 3]),
        line: line_of(prog, f.pc),
    }
}

/// What the learner reads when the emulator cannot decode the kernel: the instruction, the
/// line of *their* file it came from (for code inlined from a CUDA header, the call they
/// wrote), and that this is the emulator's limit, not their kernel's fault.
pub fn unsupported_message(ptx: &str, e: &crate::ptx::PtxError) -> String {
    let from = match ptx_emu::ptx::source_of(ptx, e.line) {
        Some((file, line)) if file == crate::compile::kernel_file(ptx) => {
            format!(", which line {line} of your kernel led to")
        }
        Some((file, line)) => {
            let name = std::path::Path::new(&file)
                .file_name()
                .map_or(file.clone(), |n| n.to_string_lossy().into_owned());
            format!(", from line {line} of {name}")
        }
        None => String::new(),
    };
    format!(
        "the emulator cannot run this kernel: {} (PTX line {}){from}. This is a limit of haloscope's emulator, not a \
         fault of your kernel: on a GPU it runs as written (the GPU backend, where one is present); \
         `haloscope emulator-coverage` lists what the emulator runs",
        e.message, e.line
    )
}

/// `block (x,y,z)`, for faults that know the block but not the thread.
fn block_of(at: &ThreadPlace) -> String {
    let [x, y, z] = at.block;
    format!("block ({x},{y},{z})")
}

/// The source line of `at`, `?` when there is none.
fn line_of_place(at: &ThreadPlace) -> String {
    at.line.map_or("?".to_string(), |l| l.to_string())
}

/// An emulator fault in the learner's terms.
pub fn kernel_fault(prog: &Program, f: EmuFault) -> KernelFault {
    let at = place(prog, &f);
    let ptx =
        f.pc.and_then(|pc| prog.instruction(pc))
            .map(|i| format!(" (`{}`, PTX line {})", i.opcode, i.ptx_line))
            .unwrap_or_default();
    match f.kind {
        EmuFaultKind::OutOfBounds {
            address,
            bytes,
            write,
            described,
        } => KernelFault::OutOfBounds {
            message: format!(
                "out-of-bounds global {} of {bytes} bytes at {address:#x}, {described}, by {at}{ptx}",
                if write { "write" } else { "read" }
            ),
            at,
            address,
            bytes,
            write,
        },
        EmuFaultKind::WindowOutOfBounds {
            space,
            offset,
            bytes,
            size,
            write,
        } => KernelFault::OutOfBounds {
            message: format!(
                "out-of-bounds {space} {} of {bytes} bytes at offset {offset}: only {size} bytes are declared; by {at}{ptx}",
                if write { "write" } else { "read" }
            ),
            at,
            address: offset,
            bytes,
            write,
        },
        EmuFaultKind::Misaligned {
            address,
            bytes,
            write,
            described,
        } => KernelFault::Misaligned {
            message: format!(
                "misaligned {} of {bytes} bytes at {address:#x} ({described}): a {bytes}-byte access needs an address that is a multiple of {bytes}; by {at}{ptx}",
                if write { "write" } else { "read" }
            ),
            at,
            address,
            bytes,
            write,
        },
        EmuFaultKind::Barrier { reason } | EmuFaultKind::WarpSync { reason } => KernelFault::Barrier {
            message: format!("{reason} ({at}{ptx})"),
            at,
        },
        EmuFaultKind::Trap { message } => KernelFault::Trapped {
            message: format!("{message}, by {at}{ptx}"),
            at,
        },
        EmuFaultKind::Budget { steps } => KernelFault::Timeout {
            message: format!(
                "stopped after {} instructions in one warp of {}, last at line {}: is there an endless loop? \
                 (The emulator runs one warp until it waits at __syncthreads(), exits or calls __nanosleep(): a loop \
                 that waits for a flag another warp sets needs __nanosleep() in it here.)",
                thousands(steps),
                block_of(&at),
                line_of_place(&at)
            ),
            line: at.line,
        },
        EmuFaultKind::Unsupported { what } => KernelFault::Unsupported {
            message: format!("the emulator does not execute {what}, at {at}{ptx}"),
        },
        EmuFaultKind::Launch { reason } => KernelFault::LaunchRefused {
            message: format!("the launch cannot be made: {reason}"),
        },
        EmuFaultKind::Internal { message } => KernelFault::Infrastructure {
            // Which thread was running is not known here: the block and the line are.
            message: format!(
                "the emulator failed in {} at line {}{ptx}: {message}. This is a fault of haloscope's emulator, not \
                 of your kernel; the GPU backend runs it where there is a GPU. Please report it with the kernel",
                block_of(&at),
                line_of_place(&at),
            ),
        },
        EmuFaultKind::Cancelled => KernelFault::Cancelled,
    }
}

/// What the instruction at `pc` did, in the past tense (the other side of a race).
fn access_word(prog: &Program, pc: u32) -> &'static str {
    match prog.instruction(pc).and_then(|i| i.access) {
        Some(AccessKind::Store) => "wrote",
        Some(AccessKind::Atomic | AccessKind::Reduction) => "updated atomically",
        _ => "read",
    }
}

/// What the instruction at `pc` does, in the present tense.
fn access_verb(prog: &Program, pc: u32) -> &'static str {
    match prog.instruction(pc).and_then(|i| i.access) {
        Some(AccessKind::Store) => "writes",
        Some(AccessKind::Atomic | AccessKind::Reduction) => "updates atomically",
        _ => "reads",
    }
}

fn finding(prog: &Program, f: &RawFinding) -> Finding {
    let at = ThreadPlace {
        block: f.block,
        thread: f.thread,
        line: line_of(prog, Some(f.pc)),
    };
    let [tx, ty, tz] = f.thread;
    let line = at.line.map_or("?".into(), |l| l.to_string());
    let message = match f.kind {
        FindingKind::DivergentBarrier => {
            let other_line = line_of(prog, f.other_pc).map_or("?".into(), |l| l.to_string());
            let other = f.other_thread.map_or(String::new(), |[ox, oy, oz]| {
                format!(" thread ({ox},{oy},{oz}) at line {other_line},")
            });
            format!(
                "threads of block ({},{},{}) completed one barrier through different __syncthreads() calls: thread ({tx},{ty},{tz}) at line {line},{other} and maybe others. It completes on sm_70 and later, but CUDA leaves it undefined: make every thread reach the same __syncthreads()",
                f.block[0], f.block[1], f.block[2]
            )
        }
        FindingKind::WarpSyncOutsideMask => format!(
            "__syncwarp({:#010x}) is executed by thread ({tx},{ty},{tz}) of block ({},{},{}), which its mask does not \
             name: CUDA leaves that undefined. The mask must name every thread that calls it (__syncwarp() names \
             the whole warp); the threads outside it are not ordered with the others",
            f.byte as u32, f.block[0], f.block[1], f.block[2]
        ),
        FindingKind::UninitialisedSharedRead => format!(
            "thread ({tx},{ty},{tz}) of block ({},{},{}) reads shared memory at byte {} that no thread of its block wrote in this launch",
            f.block[0], f.block[1], f.block[2], f.byte
        ),
        FindingKind::GlobalRace => {
            let verb = access_verb(prog, f.pc);
            let buffer = f.buffer.map_or("?", |b| super::buffer_name(prog, b));
            let other = match (f.other_block, f.other_thread) {
                (Some([bx, by, bz]), Some([ox, oy, oz])) => {
                    let other_line = line_of(prog, f.other_pc).map_or("?".into(), |l| l.to_string());
                    let other_verb = f.other_pc.map_or("touched", |pc| access_word(prog, pc));
                    format!("thread ({ox},{oy},{oz}) of block ({bx},{by},{bz}) {other_verb} at line {other_line}")
                }
                _ => "threads of other blocks read".to_string(),
            };
            format!(
                "global-memory race between blocks: thread ({tx},{ty},{tz}) of block ({},{},{}) {verb} byte {} of `{buffer}` (element {}), which {other}; nothing orders the blocks of one launch",
                f.block[0],
                f.block[1],
                f.block[2],
                f.byte,
                f.byte / 4
            )
        }
        FindingKind::SharedRace if f.peer.is_some() || f.other_block.is_some() => cluster_race(prog, f),
        FindingKind::AsyncCopyInFlight => {
            let verb = access_verb(prog, f.pc);
            format!(
                "thread ({tx},{ty},{tz}) of block ({},{},{}) {verb} byte {} of shared memory while an \
                 asynchronous copy into it has not landed yet: wait for the copy first (cp.async.wait_group / \
                 __pipeline_wait_prior / cuda::pipeline::consumer_wait for cp.async, the mbarrier's wait for a bulk \
                 copy), then __syncthreads() if other threads read it",
                f.block[0], f.block[1], f.block[2], f.byte
            )
        }
        FindingKind::SharedAfterExit => {
            let verb = access_verb(prog, f.pc);
            let [ox, oy, oz] = f.other_block.unwrap_or_default();
            let exit = match (f.other_thread, line_of(prog, f.other_pc)) {
                (Some([ex, ey, ez]), Some(exit_line)) => {
                    format!(" (its thread ({ex},{ey},{ez}) left at line {exit_line})")
                }
                _ => String::new(),
            };
            format!(
                "thread ({tx},{ty},{tz}) of block ({},{},{}) {verb} byte {} of the shared memory of block \
                 ({ox},{oy},{oz}) in its cluster, and nothing keeps that block from exiting first{exit}: a block's \
                 shared memory is gone once it exits. Put a cluster.sync() (barrier.cluster) after the last read of a \
                 neighbour's tile, before any block may return",
                f.block[0], f.block[1], f.block[2], f.byte
            )
        }
        FindingKind::SharedRace => {
            let verb = access_verb(prog, f.pc);
            let other = match f.other_thread {
                Some([ox, oy, oz]) => format!("thread ({ox},{oy},{oz})"),
                None => "other threads".to_string(),
            };
            let other_line = line_of(prog, f.other_pc).map_or("?".into(), |l| l.to_string());
            let other_verb = f.other_pc.map_or("touched", |pc| access_word(prog, pc));
            let between = if f.same_warp {
                "the same warp, with no __syncwarp() or __syncthreads() between them (lanes of a warp are not in step since Volta)"
            } else {
                "another warp, with no __syncthreads() between them"
            };
            format!(
                "shared-memory race: thread ({tx},{ty},{tz}) of block ({},{},{}) {verb} byte {} that {other} {other_verb} at line {other_line}: {between}",
                f.block[0], f.block[1], f.block[2], f.byte
            )
        }
    };
    Finding {
        kind: f.kind,
        at,
        address: f.byte,
        message,
        count: f.count,
    }
}

/// A shared-memory race between blocks of one cluster: one side touched the other block's
/// memory, and no cluster barrier lies between them.
fn cluster_race(prog: &Program, f: &RawFinding) -> String {
    let [tx, ty, tz] = f.thread;
    let [bx, by, bz] = f.block;
    let verb = access_verb(prog, f.pc);
    let whose = match f.peer {
        Some([px, py, pz]) => format!("the shared memory of block ({px},{py},{pz})"),
        None => "its own shared memory".to_string(),
    };
    let other_line = line_of(prog, f.other_pc).map_or("?".into(), |l| l.to_string());
    let other_verb = f.other_pc.map_or("touched", |pc| access_word(prog, pc));
    let other = match (f.other_thread, f.other_block.or(f.peer)) {
        (Some([ox, oy, oz]), Some([ob, pb, qb])) => format!("thread ({ox},{oy},{oz}) of block ({ob},{pb},{qb})"),
        (Some([ox, oy, oz]), None) => format!("thread ({ox},{oy},{oz}) of block ({bx},{by},{bz})"),
        _ => "a thread of another block".to_string(),
    };
    format!(
        "shared-memory race across the cluster: thread ({tx},{ty},{tz}) of block ({bx},{by},{bz}) {verb} \
         byte {} of {whose}, which {other} {other_verb} at line {other_line}, with no cluster barrier \
         (cluster.sync(), barrier.cluster) between them: __syncthreads() orders one block's threads only",
        f.byte
    )
}
