//! Counters one launch collects, per instruction and in total, merged across host threads.

use crate::FindingKind;
use crate::fetch_map::FetchMap;
use crate::memory::BufferId;

/// Per PTX instruction (global loads and stores get sector figures).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PcStats {
    /// Warp-level executions with at least one active lane.
    pub warp_insts: u64,
    pub active_lanes: u64,
    /// Executions that touched global memory, and their lanes that did.
    pub global_warp_insts: u64,
    pub global_lanes: u64,
    /// Distinct 32-byte sectors touched, summed over executions.
    pub sectors: u64,
    /// ceil(active lanes x access bytes / 32), summed.
    pub ideal_sectors: u64,
    /// Bulk copies (`cp.async.bulk`): the bytes they moved and the distinct 32-byte sectors
    /// of global memory they read, kept apart from `sectors` (whether the hardware metric
    /// counts them is the caller's to say: docs/archive/measurements-log.md).
    pub bulk_bytes: u64,
    pub bulk_sectors: u64,
}

/// A hazard or fault location before it is turned into words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawFinding {
    pub kind: FindingKind,
    pub pc: u32,
    pub block: [u32; 3],
    pub thread: [u32; 3],
    pub byte: u64,
    pub other_thread: Option<[u32; 3]>,
    pub other_pc: Option<u32>,
    /// Linear index of the block, to keep the earliest when merging.
    pub block_index: u64,
    pub count: u64,
    /// The order in which the block found it: with `block_index`, which finding came first
    /// in the launch's order of execution.
    pub seq: u64,
    /// A global race: the other block (None when several blocks read and which is not
    /// known), and the buffer whose byte `byte` is.
    pub other_block: Option<[u32; 3]>,
    pub buffer: Option<BufferId>,
    /// A shared race between two lanes of one warp (what `__syncwarp()` would order).
    pub same_warp: bool,
    /// A shared-memory finding in another block's memory (distributed shared memory): that
    /// block. None for the accessing block's own memory.
    pub peer: Option<[u32; 3]>,
}

/// What a traced access is: a global or shared load or store, or a barrier the block
/// completed. Written as `global`, `shared`, `barrier` in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceSpace {
    Global,
    Shared,
    Barrier,
    /// A cluster barrier (`barrier.cluster`, `cluster.sync()`) the block's cluster completed.
    #[serde(rename = "cluster-barrier")]
    ClusterBarrier,
}

/// One global or shared load or store made by a thread of the watched block (for the
/// read-source diagram and the block replay), or a barrier the block completed (space
/// `Barrier`, thread (0,0,0), the barrier's line).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TracedAccess {
    /// Thread index within the block.
    pub thread: [u32; 3],
    pub store: bool,
    pub pc: u32,
    pub line: u32,
    /// The PTX line of the instruction (the compiler's moves are told per PTX instruction).
    #[serde(default)]
    pub ptx_line: u32,
    pub space: TraceSpace,
    /// The global buffer, for global accesses.
    pub buffer: Option<BufferId>,
    /// Byte offset into the buffer or into shared memory.
    pub offset: u64,
    pub bytes: u32,
    /// The bits loaded or stored (the diagram matches shared loads to input values).
    pub value: u64,
    /// A shared access to another block's memory (distributed shared memory in a cluster):
    /// that block's index in the grid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<[u32; 3]>,
}

/// At most this many lines and bytes of `printf` text are kept per launch; the rest is
/// counted in `cut_lines` / `cut_bytes`.
pub const PRINTED_LINES_KEPT: usize = 4096;
pub const PRINTED_BYTES_KEPT: usize = 1 << 20;

/// What `printf` wrote in one host thread's blocks, capped like the report's output (the
/// lowest blocks' text is kept, so merged and sorted by block it is the launch's beginning).
#[derive(Debug, Clone, Default)]
pub struct Printed {
    /// (block index, text of one printf call), in execution order within a block.
    pub chunks: Vec<(u64, String)>,
    kept_lines: usize,
    kept_bytes: usize,
    pub cut_lines: u64,
    pub cut_bytes: u64,
}

impl Printed {
    pub fn push(&mut self, block: u64, text: String) {
        let lines = text.matches('\n').count().max(1);
        if self.kept_lines + lines > PRINTED_LINES_KEPT || self.kept_bytes + text.len() > PRINTED_BYTES_KEPT {
            self.cut_lines += lines as u64;
            self.cut_bytes += text.len() as u64;
            return;
        }
        self.kept_lines += lines;
        self.kept_bytes += text.len();
        self.chunks.push((block, text));
    }

    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty() && self.cut_lines == 0
    }

    fn merge(&mut self, other: Printed) {
        self.chunks.extend(other.chunks);
        self.kept_lines += other.kept_lines;
        self.kept_bytes += other.kept_bytes;
        self.cut_lines += other.cut_lines;
        self.cut_bytes += other.cut_bytes;
    }

    /// The kept text in block order (each block's calls in the order it made them).
    pub fn in_block_order(&self) -> String {
        let mut chunks: Vec<&(u64, String)> = self.chunks.iter().collect();
        chunks.sort_by_key(|(block, _)| *block);
        chunks.iter().map(|(_, t)| t.as_str()).collect()
    }
}

/// What one host thread counted over its blocks, merged into the launch's at the end; split
/// into [`LaunchStats`] (returned) and observer events by `launch`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tally {
    pub per_pc: Vec<PcStats>,
    pub shared_requests: u64,
    pub bank_conflicts: u64,
    pub findings: Vec<RawFinding>,
    pub trace: Vec<TracedAccess>,
    pub blocks: u64,
    pub printed: Printed,
    /// The heat map's counts, when the launch asked for them.
    pub fetch_map: Option<FetchMap>,
}

/// The counters of one launch: per PTX instruction (index = pc) and in total. Traces,
/// findings, printf text and fetch maps are not here: they are [`crate::Observer`] events.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchStats {
    pub per_pc: Vec<PcStats>,
    pub shared_requests: u64,
    pub bank_conflicts: u64,
    pub blocks: u64,
    /// Blocks counted by class (block_classes) without being run, and the classes: both 0
    /// for a launch that ran every block.
    pub blocks_by_class: u64,
    pub classes: usize,
}

impl LaunchStats {
    /// All warp-level instructions executed (any kind): the per-instruction counts summed
    /// here, not counted twice in the interpreter's loop.
    pub fn warp_insts(&self) -> u64 {
        self.per_pc.iter().map(|p| p.warp_insts).sum()
    }

    /// The active lanes of [`LaunchStats::warp_insts`].
    pub fn lane_insts(&self) -> u64 {
        self.per_pc.iter().map(|p| p.active_lanes).sum()
    }

    /// Global-memory sectors of every instruction.
    pub fn sectors(&self) -> u64 {
        self.per_pc.iter().map(|p| p.sectors).sum()
    }
}

impl Tally {
    pub fn new(instructions: usize) -> Tally {
        Tally {
            per_pc: vec![PcStats::default(); instructions],
            ..Tally::default()
        }
    }

    /// Adds a finding; one entry per (kind, instruction), keeping the earliest place (the
    /// lowest block, then the first found in it).
    pub fn note_finding(&mut self, finding: RawFinding) {
        if let Some(existing) = self
            .findings
            .iter_mut()
            .find(|f| f.kind == finding.kind && f.pc == finding.pc)
        {
            let count = existing.count + finding.count;
            if (finding.block_index, finding.seq) < (existing.block_index, existing.seq) {
                *existing = finding;
            }
            existing.count = count;
        } else {
            self.findings.push(finding);
        }
    }

    /// The findings in the launch's order of execution (blocks in order, then as each block
    /// found them): the first is the earliest hazard, the headline.
    pub fn sort_findings(&mut self) {
        self.findings.sort_by_key(|f| (f.block_index, f.seq));
    }

    /// Adds `times` copies of the counters of `one` (blocks that count exactly as the one
    /// block `one` tallied: block_classes). Only counters: a launch classed that way has no
    /// findings, trace, printf text or fetch map.
    pub fn add_times(&mut self, one: &Tally, times: u64) {
        for (a, b) in self.per_pc.iter_mut().zip(&one.per_pc) {
            a.warp_insts += b.warp_insts * times;
            a.active_lanes += b.active_lanes * times;
            a.global_warp_insts += b.global_warp_insts * times;
            a.global_lanes += b.global_lanes * times;
            a.sectors += b.sectors * times;
            a.ideal_sectors += b.ideal_sectors * times;
            a.bulk_bytes += b.bulk_bytes * times;
            a.bulk_sectors += b.bulk_sectors * times;
        }
        self.shared_requests += one.shared_requests * times;
        self.bank_conflicts += one.bank_conflicts * times;
        self.blocks += one.blocks * times;
    }

    pub fn merge(&mut self, other: Tally) {
        self.add_times(&other, 1);
        for f in other.findings {
            self.note_finding(f);
        }
        self.trace.extend(other.trace);
        self.printed.merge(other.printed);
        match (&mut self.fetch_map, other.fetch_map) {
            (Some(mine), Some(theirs)) => mine.merge(&theirs),
            (mine @ None, theirs) => *mine = theirs,
            _ => {}
        }
    }
}
