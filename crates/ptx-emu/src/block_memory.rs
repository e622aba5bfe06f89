//! Loads and stores: address resolution per lane, bounds checks, sector counting for global
//! memory, hazard tracking and bank conflicts for shared memory, and the watched thread's
//! read trace.

use super::block::{BlockRunner, Scratch};
use super::fault::{EmuFault, EmuFaultKind};
use super::global_races::{Access, Who};
use super::ir::{Addr, Mem, MemSpace};
use super::memory::{AccessError, BufferId, CLUSTER_RANK_SHIFT, LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE};
use super::shared::{Accessor, bank_conflicts};
use super::stats::TraceSpace;
use super::stats::{RawFinding, TracedAccess};
use super::warp::Warp;
use crate::FindingKind;

/// Where one lane's access goes once generic addresses are resolved.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Resolved {
    Global,
    Shared(u64),
    /// The shared memory of block `rank` of the cluster (maybe the accessing block's own:
    /// [`BlockRunner::own_or_peer`] tells).
    Peer {
        rank: u32,
        offset: u64,
    },
    Local(u64),
}

/// A `.shared::cluster` address: the block's own memory, or another block's.
#[inline]
fn cluster_shared(address: u64) -> Resolved {
    match address >> CLUSTER_RANK_SHIFT {
        0 => Resolved::Shared(address),
        high => Resolved::Peer {
            rank: (high - 1) as u32,
            offset: address & ((1 << CLUSTER_RANK_SHIFT) - 1),
        },
    }
}

/// Resolves `address` of an access in `space` (generic addresses by window).
#[inline]
pub(super) fn resolve(space: MemSpace, address: u64) -> Resolved {
    match space {
        MemSpace::Global => Resolved::Global,
        MemSpace::Shared => Resolved::Shared(address),
        MemSpace::SharedCluster => cluster_shared(address),
        MemSpace::Local => Resolved::Local(address),
        _ => {
            if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&address) {
                cluster_shared(address - SHARED_WINDOW)
            } else if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_SIZE).contains(&address) {
                Resolved::Local(address - LOCAL_WINDOW)
            } else {
                Resolved::Global
            }
        }
    }
}

/// Distinct 32-byte sectors among `sectors` (sorted or not).
pub(super) fn distinct_sectors(sectors: &mut [u64]) -> u64 {
    if sectors.is_empty() {
        return 0;
    }
    if !sectors.windows(2).all(|w| w[0] <= w[1]) {
        sectors.sort_unstable();
    }
    1 + sectors.windows(2).filter(|w| w[0] != w[1]).count() as u64
}

impl BlockRunner<'_> {
    pub(super) fn addresses(&self, warp: &Warp, addr: Addr) -> [u64; 32] {
        match addr.base {
            Some(r) => {
                let base = warp.reg(r);
                std::array::from_fn(|l| base[l].wrapping_add(addr.offset as u64))
            }
            None => [addr.offset as u64; 32],
        }
    }

    /// The global buffer holding `[at, at + bytes)`, or the fault of lane `l` at `pc`.
    pub(super) fn global_buffer(
        &self,
        at: u64,
        bytes: u32,
        write: bool,
        pc: usize,
        warp: &Warp,
        l: usize,
    ) -> Result<usize, EmuFault> {
        match self.mem.find(at, bytes) {
            Ok(i) => Ok(i),
            Err(AccessError::Misaligned) => Err(self.fault(
                EmuFaultKind::Misaligned {
                    address: at,
                    bytes,
                    write,
                    described: self.mem.describe_address(at),
                },
                Some(pc as u32),
                Some((warp, l as u32)),
            )),
            Err(AccessError::OutOfBounds) => {
                let described = self.mem.describe_address(at);
                Err(self.fault(
                    EmuFaultKind::OutOfBounds {
                        address: at,
                        bytes,
                        write,
                        described,
                    },
                    Some(pc as u32),
                    Some((warp, l as u32)),
                ))
            }
        }
    }

    /// Records a shared-memory hazard of lane `l` at `pc` as a finding. An uninitialised
    /// read waits for the end of its barrier epoch: if another thread writes the byte later
    /// in the epoch, unordered, the two are a race, which that write reports.
    pub(super) fn note_hazard(&mut self, warp: &Warp, l: usize, pc: usize, h: super::shared::Hazard) {
        self.note_hazard_in(warp, l, pc, h, self.cluster.rank);
    }

    /// [`note_hazard`](Self::note_hazard) for an access to the shared memory of block
    /// `memory_rank` of the cluster (the running block's own, or a neighbour's): thread ids
    /// in that memory name their block (shared.rs, `remote_thread`).
    pub(super) fn note_hazard_in(
        &mut self,
        warp: &Warp,
        l: usize,
        pc: usize,
        h: super::shared::Hazard,
        memory_rank: u32,
    ) {
        let dims = self.cfg.block;
        let coord = |t: u32| [t % dims[0], (t / dims[0]) % dims[1], t / (dims[0] * dims[1])];
        // The other thread's block: its own rank in the id, else the memory's owner.
        let other = h.other_thread.map(|t| {
            let (rank, linear) = super::shared::split_thread(t);
            (rank.unwrap_or(memory_rank), linear)
        });
        let other_block = other
            .filter(|&(rank, _)| rank != self.cluster.rank)
            .map(|(rank, _)| self.cluster_block(rank));
        let mut finding = RawFinding {
            kind: h.kind,
            pc: pc as u32,
            block: self.ctaid,
            thread: [warp.tid[0][l], warp.tid[1][l], warp.tid[2][l]],
            byte: h.byte,
            other_thread: other.map(|(_, t)| coord(t)),
            other_pc: h.other_pc,
            block_index: self.block_index,
            count: 1,
            seq: self.findings_noted,
            other_block,
            buffer: None,
            same_warp: other_block.is_none()
                && other.is_some_and(|(_, t)| t / 32 == warp.linear[l] / 32 && self.cfg.lanes_per_warp == 32),
            peer: (memory_rank != self.cluster.rank).then(|| self.cluster_block(memory_rank)),
        };
        if h.kind == FindingKind::UninitialisedSharedRead {
            self.findings_noted += 1;
            if let Some(back) = self.shared_of(memory_rank).defer_uninitialised(h.byte, finding) {
                finding = back;
            } else {
                return;
            }
        }
        self.note_finding(finding);
    }

    /// The grid position of block `rank` of the running block's cluster.
    pub(super) fn cluster_block(&self, rank: u32) -> [u32; 3] {
        let shape = self.cluster.shape;
        let (_, at) = shape.place(self.ctaid);
        let d = shape.dims;
        let there = [rank % d[0], (rank / d[0]) % d[1], rank / (d[0] * d[1])];
        [0, 1, 2].map(|k| self.ctaid[k] - at[k] + there[k])
    }

    /// Checks lane `l`'s global access (`access` of `bytes` at `at` in `buffer`) for a race
    /// with another block of the launch, and records one as a finding.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn note_global_race(
        &mut self,
        warp: &Warp,
        l: usize,
        pc: usize,
        buffer: usize,
        at: u64,
        bytes: u32,
        access: Access,
    ) {
        let mem = self.mem;
        let Some(races) = mem.races(buffer, access != Access::Read) else {
            return;
        };
        let b = &mem.buffers[buffer];
        let who = Who {
            block: self.block_index,
            thread: warp.linear[l],
            pc: pc as u32,
        };
        let Some(c) = races.note(at - b.base, bytes, access, who) else {
            return;
        };
        let [bx, by, _] = self.cfg.grid;
        let [dx, dy, _] = self.cfg.block;
        let (bx, by, dx, dy) = (bx as u64, by as u64, dx, dy);
        let block_of = |i: u64| [(i % bx) as u32, ((i / bx) % by) as u32, (i / (bx * by)) as u32];
        let thread_of = |t: u32| [t % dx, (t / dx) % dy, t / (dx * dy)];
        let known = c.other.block != u64::MAX;
        self.note_finding(RawFinding {
            kind: FindingKind::GlobalRace,
            pc: pc as u32,
            block: self.ctaid,
            thread: [warp.tid[0][l], warp.tid[1][l], warp.tid[2][l]],
            byte: c.byte,
            other_thread: known.then(|| thread_of(c.other.thread)),
            other_pc: known.then_some(c.other.pc),
            block_index: self.block_index,
            count: 1,
            seq: 0,
            other_block: known.then(|| block_of(c.other.block)),
            buffer: Some(BufferId(buffer as u32)),
            same_warp: false,
            peer: None,
        });
    }

    /// Lane `l` of `warp` as the shared-memory checks see it at `pc`.
    #[inline(always)]
    pub(super) fn accessor(warp: &Warp, l: usize, pc: usize) -> Accessor<'_> {
        Accessor {
            thread: warp.linear[l],
            pc: pc as u32,
            stamp: warp.clock.events,
            seen: &warp.clock.seen[l],
        }
    }

    /// A shared or local access at an offset that is no multiple of its size.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn misaligned(
        &self,
        space: &'static str,
        offset: u64,
        bytes: u32,
        write: bool,
        pc: usize,
        warp: &Warp,
        l: usize,
    ) -> EmuFault {
        let kind = EmuFaultKind::Misaligned {
            address: offset,
            bytes,
            write,
            described: format!("{space} memory byte {offset}"),
        };
        self.fault(kind, Some(pc as u32), Some((warp, l as u32)))
    }

    /// An access past the end of shared or local memory.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn window_fault(
        &self,
        space: &'static str,
        offset: u64,
        span: u64,
        size: u64,
        write: bool,
        pc: usize,
        warp: &Warp,
        l: usize,
    ) -> EmuFault {
        let kind = EmuFaultKind::WindowOutOfBounds {
            space,
            offset,
            bytes: span as u32,
            size,
            write,
        };
        self.fault(kind, Some(pc as u32), Some((warp, l as u32)))
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn trace(
        &mut self,
        warp: &Warp,
        l: usize,
        pc: usize,
        space: TraceSpace,
        buffer: Option<BufferId>,
        offset: u64,
        bytes: u32,
        store: bool,
        value: u64,
        peer: Option<[u32; 3]>,
    ) {
        self.traced[warp.linear[l] as usize] += 1;
        self.stats.trace.push(TracedAccess {
            thread: [warp.tid[0][l], warp.tid[1][l], warp.tid[2][l]],
            store,
            pc: pc as u32,
            line: self.prog.insts[pc].line,
            ptx_line: self.prog.insts[pc].ptx_line,
            space,
            buffer,
            offset,
            bytes,
            value,
            peer,
        });
    }

    /// The load or store `access` at `pc` for lanes `m`, the general way: any space, size
    /// and vector width, lane by lane, with every check, trace and count.
    #[inline(never)]
    pub(super) fn memory(&mut self, warp: &mut Warp, pc: usize, access: &Mem, m: u32) -> Result<(), EmuFault> {
        // Scratch arrays live in the runner so that no instruction clears kilobytes of stack.
        let mut scratch = self.scratch.take().unwrap_or_default();
        let result = self.memory_with(warp, pc, access, m, &mut scratch);
        self.scratch = Some(scratch);
        result
    }

    fn memory_with(
        &mut self,
        warp: &mut Warp,
        pc: usize,
        access: &Mem,
        m: u32,
        scratch: &mut Scratch,
    ) -> Result<(), EmuFault> {
        let Scratch {
            store_values,
            loaded,
            sectors,
            shared_offsets,
        } = scratch;
        let (space, bytes, addr, count) = (access.space(), access.bytes() as u32, access.addr(), access.elements());
        let is_store = access.is_store();
        let addrs = self.addresses(warp, addr);
        if let Mem::Store(store) = access {
            for (i, s) in store.srcs.iter().enumerate() {
                store_values[i] = self.read(warp, *s);
            }
        }
        match space {
            MemSpace::Param | MemSpace::Const => {
                if is_store {
                    return Err(self.fault(
                        EmuFaultKind::Unsupported {
                            what: "stores to .param or .const space".into(),
                        },
                        Some(pc as u32),
                        None,
                    ));
                }
                let data: &[u8] = if space == MemSpace::Param {
                    &self.cfg.params
                } else {
                    &self.prog.const_data
                };
                for l in 0..32 {
                    if (m >> l) & 1 == 0 {
                        continue;
                    }
                    for (e, slot) in loaded.iter_mut().enumerate().take(count) {
                        let at = addrs[l] + (e as u64) * bytes as u64;
                        let end = at as usize + bytes as usize;
                        if end > data.len() {
                            let size = data.len() as u64;
                            let name = if space == MemSpace::Param { "param" } else { "const" };
                            return Err(self.fault(
                                EmuFaultKind::WindowOutOfBounds {
                                    space: name,
                                    offset: at,
                                    bytes,
                                    size,
                                    write: false,
                                },
                                Some(pc as u32),
                                Some((warp, l as u32)),
                            ));
                        }
                        let mut v = [0u8; 8];
                        v[..bytes as usize].copy_from_slice(&data[at as usize..end]);
                        slot[l] = u64::from_le_bytes(v);
                    }
                }
            }
            _ => {
                let mut sector_count = 0usize;
                let mut global_lanes = 0u32;
                let mut shared_lanes = 0usize;
                let mut buffer_hint = 0usize;
                for l in 0..32usize {
                    if (m >> l) & 1 == 0 {
                        continue;
                    }
                    let address = addrs[l];
                    let resolved = self.own_or_peer(resolve(space, address));
                    let span = bytes as u64 * count as u64;
                    match resolved {
                        Resolved::Global => {
                            global_lanes += 1;
                            let first = address >> 5;
                            let last = (address + span - 1) >> 5;
                            for s in first..=last {
                                if sector_count < sectors.len() {
                                    sectors[sector_count] = s;
                                    sector_count += 1;
                                }
                            }
                            for e in 0..count {
                                let at = address.wrapping_add(e as u64 * bytes as u64);
                                let b = &self.mem.buffers;
                                let buffer = if buffer_hint < b.len()
                                    && at >= b[buffer_hint].base
                                    && at + bytes as u64 <= b[buffer_hint].end()
                                    && super::memory::aligned(at, bytes)
                                {
                                    buffer_hint
                                } else {
                                    self.global_buffer(at, bytes, is_store, pc, warp, l)?
                                };
                                buffer_hint = buffer;
                                if self.mem.track_races {
                                    let access = if is_store {
                                        let old = self.mem.load(buffer, at, bytes);
                                        Access::Write {
                                            unchanged: old == store_values[e][l] & super::alu::mask(bytes as u8 * 8),
                                        }
                                    } else {
                                        Access::Read
                                    };
                                    self.note_global_race(warp, l, pc, buffer, at, bytes, access);
                                }
                                if is_store {
                                    self.mem.store(buffer, at, bytes, store_values[e][l]);
                                } else {
                                    loaded[e][l] = self.mem.load(buffer, at, bytes);
                                    if let Some(fetch) = &mut self.fetch {
                                        fetch.lane_load(at, bytes, self.prog.insts[pc].line);
                                    }
                                }
                                if self.tracing(warp, l) {
                                    let offset = at - self.mem.buffers[buffer].base;
                                    let value = if is_store { store_values[e][l] } else { loaded[e][l] };
                                    self.trace(
                                        warp,
                                        l,
                                        pc,
                                        TraceSpace::Global,
                                        Some(BufferId(buffer as u32)),
                                        offset,
                                        bytes,
                                        is_store,
                                        value,
                                        None,
                                    );
                                }
                            }
                        }
                        Resolved::Shared(offset) => {
                            let size = self.shared.size();
                            if offset + span > size {
                                return Err(self.window_fault("shared", offset, span, size, is_store, pc, warp, l));
                            }
                            if offset % bytes as u64 != 0 {
                                return Err(self.misaligned("shared", offset, bytes, is_store, pc, warp, l));
                            }
                            shared_offsets[shared_lanes] = (offset, span as u32);
                            shared_lanes += 1;
                            let hazard = if is_store {
                                let mut unchanged = true;
                                for (e, values) in store_values.iter().enumerate().take(count) {
                                    let at = offset + e as u64 * bytes as u64;
                                    unchanged &= self.shared.store_unchanged(at, bytes, values[l]);
                                }
                                if self.tracing(warp, l) {
                                    let value = store_values[0][l];
                                    self.trace(warp, l, pc, TraceSpace::Shared, None, offset, bytes, true, value, None);
                                }
                                self.shared
                                    .note_write(offset, span as u32, Self::accessor(warp, l, pc), unchanged)
                            } else {
                                for (e, slot) in loaded.iter_mut().enumerate().take(count) {
                                    slot[l] = self.shared.load(offset + e as u64 * bytes as u64, bytes);
                                }
                                if self.tracing(warp, l) {
                                    let value = loaded[0][l];
                                    self.trace(
                                        warp,
                                        l,
                                        pc,
                                        TraceSpace::Shared,
                                        None,
                                        offset,
                                        bytes,
                                        false,
                                        value,
                                        None,
                                    );
                                }
                                self.shared.note_read(offset, span as u32, Self::accessor(warp, l, pc))
                            };
                            if let Some(h) = hazard {
                                self.note_hazard(warp, l, pc, h);
                            }
                        }
                        Resolved::Peer { rank, offset } => {
                            self.peer_access(warp, pc, l, rank, offset, bytes, count, is_store, store_values, loaded)?;
                        }
                        Resolved::Local(offset) => {
                            let size = self.prog.local_bytes;
                            if offset + span > size {
                                return Err(self.window_fault("local", offset, span, size, is_store, pc, warp, l));
                            }
                            if offset % bytes as u64 != 0 {
                                return Err(self.misaligned("local", offset, bytes, is_store, pc, warp, l));
                            }
                            let base = l * size as usize + offset as usize;
                            for e in 0..count {
                                let at = base + e * bytes as usize;
                                if is_store {
                                    warp.local[at..at + bytes as usize]
                                        .copy_from_slice(&store_values[e][l].to_le_bytes()[..bytes as usize]);
                                } else {
                                    let mut v = [0u8; 8];
                                    v[..bytes as usize].copy_from_slice(&warp.local[at..at + bytes as usize]);
                                    loaded[e][l] = u64::from_le_bytes(v);
                                }
                            }
                        }
                    }
                }
                if let Some(fetch) = &mut self.fetch {
                    fetch.end_instruction();
                }
                if global_lanes > 0 {
                    let s = &mut self.stats.per_pc[pc];
                    s.global_warp_insts += 1;
                    s.global_lanes += global_lanes as u64;
                    s.sectors += distinct_sectors(&mut sectors[..sector_count]);
                    s.ideal_sectors += (global_lanes as u64 * bytes as u64 * count as u64).div_ceil(32);
                }
                if shared_lanes > 0 {
                    self.stats.shared_requests += 1;
                    self.stats.bank_conflicts += bank_conflicts(&shared_offsets[..shared_lanes]);
                }
            }
        }

        if let Mem::Load(load) = access {
            let extend = load.signed && bytes < 8;
            for (e, d) in load.ds.iter().enumerate() {
                let Some(d) = d else { continue };
                let dst = warp.reg_mut(*d);
                for l in 0..32 {
                    if (m >> l) & 1 != 0 {
                        let v = loaded[e][l];
                        dst[l] = if extend {
                            super::alu::sext(v, bytes as u8 * 8) as u64
                        } else {
                            v
                        };
                    }
                }
            }
        }
        Ok(())
    }

    /// Lane `l`'s load or store of `count` elements of `bytes` at `offset` in the shared
    /// memory of block `rank` of the cluster, not the running block (distributed shared
    /// memory): bounds, alignment, the cluster's race checks and the remote use.
    #[allow(clippy::too_many_arguments)]
    fn peer_access(
        &mut self,
        warp: &Warp,
        pc: usize,
        l: usize,
        rank: u32,
        offset: u64,
        bytes: u32,
        count: usize,
        is_store: bool,
        store_values: &[[u64; 32]; 4],
        loaded: &mut [[u64; 32]; 4],
    ) -> Result<(), EmuFault> {
        let span = bytes as u64 * count as u64;
        let blocks = self.cluster.shape.size();
        if rank >= blocks {
            return Err(self.fault(
                EmuFaultKind::WindowOutOfBounds {
                    space: "cluster shared",
                    offset: ((rank as u64 + 1) << CLUSTER_RANK_SHIFT) | offset,
                    bytes: span as u32,
                    size: blocks as u64,
                    write: is_store,
                },
                Some(pc as u32),
                Some((warp, l as u32)),
            ));
        }
        let size = self.shared_of(rank).size();
        if offset + span > size {
            return Err(self.window_fault("shared", offset, span, size, is_store, pc, warp, l));
        }
        if !offset.is_multiple_of(bytes as u64) {
            return Err(self.misaligned("shared", offset, bytes, is_store, pc, warp, l));
        }
        let by = Accessor {
            thread: super::shared::remote_thread(self.cluster.rank, warp.linear[l]),
            ..Self::accessor(warp, l, pc)
        };
        let peer = Some(self.cluster_block(rank));
        let memory = self.shared_of(rank);
        let hazard = if is_store {
            let mut unchanged = true;
            for (e, values) in store_values.iter().enumerate().take(count) {
                unchanged &= memory.store_unchanged(offset + e as u64 * bytes as u64, bytes, values[l]);
            }
            memory.note_write(offset, span as u32, by, unchanged)
        } else {
            for (e, slot) in loaded.iter_mut().enumerate().take(count) {
                slot[l] = memory.load(offset + e as u64 * bytes as u64, bytes);
            }
            memory.note_read(offset, span as u32, by)
        };
        if self.tracing(warp, l) {
            let value = if is_store { store_values[0][l] } else { loaded[0][l] };
            self.trace(
                warp,
                l,
                pc,
                TraceSpace::Shared,
                None,
                offset,
                bytes,
                is_store,
                value,
                peer,
            );
        }
        if let Some(h) = hazard {
            self.note_hazard_in(warp, l, pc, h, rank);
        }
        if self.cfg.check_hazards {
            self.note_remote_use(warp, l, pc, rank, offset);
        }
        Ok(())
    }
}
