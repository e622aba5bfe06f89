//! Asynchronous copies from global into shared memory: `cp.async` (each lane copies 4, 8
//! or 16 bytes; `__pipeline_memcpy_async`, `cuda::memcpy_async`, cooperative groups'
//! `memcpy_async`) and Hopper's `cp.async.bulk` (one thread moves a whole run of bytes,
//! completed through an mbarrier's transaction count).
//!
//! The global side happens when the instruction issues: its sectors are counted there, as
//! the hardware counts the LDGSTS instruction's, and the bytes are read (global memory a
//! kernel reads does not change during a launch, so when exactly they are read does not
//! matter). The shared side happens when the copy *lands*, which the emulator puts as late
//! as the program allows, so that a kernel reading the tile too early reads what was there
//! before, as it may on the GPU:
//! - a `cp.async` lands at its thread's `cp.async.wait_group` / `wait_all` that covers its
//!   group, or at its thread's `cp.async.mbarrier.arrive`;
//! - a bulk copy lands when some thread waits on its mbarrier (`mbarrier.try_wait`), which
//!   then sees its transaction bytes complete;
//! - whatever is still in flight lands when the block ends.
//!
//! Until then its destination bytes are *in flight*: an access to them is a finding
//! (shared.rs). A landed `cp.async` is a write by its own thread (the other threads still
//! need a barrier to read it); a landed bulk copy is a write of the copy engine, ordered by
//! the mbarrier phase it completes.

use super::block::BlockRunner;
use super::block_memory::distinct_sectors;
use super::fault::{EmuFault, EmuFaultKind};
use super::global_races::Access;
use super::ir::{Addr, AsyncOp, MemSpace, Src};
use super::mbarrier::BulkCopy;
use super::memory::BufferId;
use super::shared::{ASYNC_PROXY, Accessor};
use super::stats::TraceSpace;
use super::warp::{PendingCopy, UNCOMMITTED, Warp};

impl BlockRunner<'_> {
    /// Runs an instruction of the asynchronous copy family for lanes `m`.
    #[inline(never)]
    pub(super) fn async_op(&mut self, warp: &mut Warp, pc: usize, op: &AsyncOp, m: u32) -> Result<(), EmuFault> {
        match *op {
            AsyncOp::Copy {
                dst,
                src,
                bytes,
                src_size,
            } => self.issue_copy(warp, pc, dst, src, bytes, src_size, m),
            AsyncOp::Commit => {
                for l in super::lanes::active(m) {
                    let group = warp.committed[l];
                    for c in warp
                        .copies
                        .iter_mut()
                        .filter(|c| c.lane as usize == l && c.group == UNCOMMITTED)
                    {
                        c.group = group;
                    }
                    warp.committed[l] += 1;
                }
                Ok(())
            }
            AsyncOp::Wait { keep, all } => {
                for l in super::lanes::active(m) {
                    let newest_kept = warp.committed[l].saturating_sub(keep);
                    self.land_copies(warp, |c| {
                        c.lane as usize == l && ((all && c.group == UNCOMMITTED) || c.group < newest_kept)
                    });
                }
                Ok(())
            }
            AsyncOp::CopyArrive { mbar, noinc } => {
                for l in super::lanes::active(m) {
                    self.land_copies(warp, |c| c.lane as usize == l);
                    // Without `.noinc` the instruction raises the pending count by one and the
                    // copies' completion lowers it again: no arrival of its own.
                    if noinc {
                        self.mbarrier_arrive_one(warp, l, pc, mbar)?;
                    }
                }
                Ok(())
            }
            AsyncOp::Bulk { dst, src, size, mbar } => self.issue_bulk(warp, pc, dst, src, size, mbar, m),
            _ => self.mbarrier_op(warp, pc, op, m),
        }
    }

    /// The fault of a copy whose operands the hardware would refuse.
    fn copy_fault(&self, warp: &Warp, pc: usize, l: usize, reason: String) -> EmuFault {
        self.fault(
            EmuFaultKind::Misaligned {
                address: 0,
                bytes: 0,
                write: true,
                described: reason,
            },
            Some(pc as u32),
            Some((warp, l as u32)),
        )
    }

    /// Reads `count` bytes of global memory at `at` for lane `l` (bounds checked against one
    /// buffer, alignment `align`), noting the read for the race and fetch checks.
    #[allow(clippy::too_many_arguments)]
    fn read_global_run(
        &mut self,
        warp: &Warp,
        pc: usize,
        l: usize,
        at: u64,
        count: u32,
        align: u32,
        out: &mut [u8],
    ) -> Result<usize, EmuFault> {
        let buffer = self.global_buffer(at, align.min(8), false, pc, warp, l)?;
        let end = self.mem.buffers[buffer].end();
        if at + count as u64 > end {
            let described = self.mem.describe_address(at + count as u64 - 1);
            return Err(self.fault(
                EmuFaultKind::OutOfBounds {
                    address: at,
                    bytes: count,
                    write: false,
                    described,
                },
                Some(pc as u32),
                Some((warp, l as u32)),
            ));
        }
        let line = self.prog.insts[pc].line;
        for k in (0..count).step_by(4) {
            let word_at = at + k as u64;
            let take = (count - k).min(4);
            let value = self.mem.load(buffer, word_at, take);
            out[k as usize..(k + take) as usize].copy_from_slice(&value.to_le_bytes()[..take as usize]);
            if let Some(fetch) = &mut self.fetch {
                fetch.lane_load(word_at, take, line);
            }
            if self.mem.track_races {
                self.note_global_race(warp, l, pc, buffer, word_at, take, Access::Read);
            }
        }
        Ok(buffer)
    }

    /// `cp.async`: reads each lane's bytes now and counts their sectors; the copy lands later.
    #[allow(clippy::too_many_arguments)]
    fn issue_copy(
        &mut self,
        warp: &mut Warp,
        pc: usize,
        dst: Addr,
        src: Addr,
        bytes: u8,
        src_size: Option<Src>,
        m: u32,
    ) -> Result<(), EmuFault> {
        let (dsts, srcs) = (self.addresses(warp, dst), self.addresses(warp, src));
        let sizes = src_size.map(|s| self.read(warp, s));
        let mut sectors = [0u64; 128];
        let (mut sector_count, mut lanes, mut read_bytes) = (0usize, 0u64, 0u64);
        for l in super::lanes::active(m) {
            let (rank, offset) = self.shared_place(MemSpace::Shared, dsts[l], bytes as u32, pc, warp, l)?;
            if rank != self.cluster.rank {
                return Err(self.copy_fault(warp, pc, l, "cp.async into another block's shared memory".into()));
            }
            let n = sizes.map_or(bytes as u32, |s| s[l] as u32);
            if n > bytes as u32 {
                return Err(self.copy_fault(
                    warp,
                    pc,
                    l,
                    format!("cp.async with a source size of {n} bytes, more than the {bytes} it copies"),
                ));
            }
            let mut data = [0u8; 16];
            if n > 0 {
                let buffer = self.read_global_run(warp, pc, l, srcs[l], n, bytes as u32, &mut data)?;
                for s in (srcs[l] >> 5)..=((srcs[l] + n as u64 - 1) >> 5) {
                    sectors[sector_count] = s;
                    sector_count += 1;
                }
                lanes += 1;
                read_bytes += n as u64;
                if self.tracing(warp, l) {
                    let base = self.mem.buffers[buffer].base;
                    for k in (0..n).step_by(4) {
                        let value = u32::from_le_bytes(data[k as usize..k as usize + 4].try_into().unwrap());
                        let offset = srcs[l] + k as u64 - base;
                        let id = Some(BufferId(buffer as u32));
                        self.trace(
                            warp,
                            l,
                            pc,
                            TraceSpace::Global,
                            id,
                            offset,
                            4,
                            false,
                            value as u64,
                            None,
                        );
                    }
                }
            }
            if self.cfg.check_hazards {
                self.shared.set_in_flight(offset, bytes as u32, false);
            }
            warp.copies.push(PendingCopy {
                lane: l as u8,
                group: UNCOMMITTED,
                dst: offset,
                bytes,
                data,
                pc: pc as u32,
            });
        }
        if lanes > 0 {
            let s = &mut self.stats.per_pc[pc];
            s.global_warp_insts += 1;
            s.global_lanes += lanes;
            s.sectors += distinct_sectors(&mut sectors[..sector_count]);
            s.ideal_sectors += read_bytes.div_ceil(32);
        }
        if let Some(fetch) = &mut self.fetch {
            fetch.end_instruction();
        }
        Ok(())
    }

    /// Lands the warp's copies that `which` picks: their bytes are written into shared
    /// memory by their own thread, now.
    pub(super) fn land_copies(&mut self, warp: &mut Warp, which: impl Fn(&PendingCopy) -> bool) {
        if warp.copies.is_empty() {
            return;
        }
        let copies = std::mem::take(&mut warp.copies);
        let (landing, staying): (Vec<PendingCopy>, Vec<PendingCopy>) = copies.into_iter().partition(|c| which(c));
        warp.copies = staying;
        for c in landing {
            let l = c.lane as usize;
            if self.cfg.check_hazards {
                self.shared.set_in_flight(c.dst, c.bytes as u32, true);
            }
            let mut unchanged = true;
            for k in (0..c.bytes as usize).step_by(4) {
                let value = u32::from_le_bytes(c.data[k..k + 4].try_into().unwrap()) as u64;
                unchanged &= self.shared.store_unchanged(c.dst + k as u64, 4, value);
            }
            if self.tracing(warp, l) {
                let value = u32::from_le_bytes(c.data[..4].try_into().unwrap()) as u64;
                self.trace(
                    warp,
                    l,
                    c.pc as usize,
                    TraceSpace::Shared,
                    None,
                    c.dst,
                    4,
                    true,
                    value,
                    None,
                );
            }
            let by = Accessor {
                thread: warp.linear[l],
                pc: c.pc,
                stamp: warp.clock.events,
                seen: &warp.clock.seen[l],
            };
            if let Some(h) = self.shared.note_landing(c.dst, c.bytes as u32, by, unchanged) {
                self.note_hazard(warp, l, c.pc as usize, h);
            }
        }
    }

    /// `cp.async.bulk` from global into shared memory: the issuing lanes' runs are read now
    /// and land when their mbarrier is waited on.
    #[allow(clippy::too_many_arguments)]
    fn issue_bulk(
        &mut self,
        warp: &mut Warp,
        pc: usize,
        dst: Addr,
        src: Addr,
        size: Src,
        mbar: Addr,
        m: u32,
    ) -> Result<(), EmuFault> {
        let (dsts, srcs, mbars) = (
            self.addresses(warp, dst),
            self.addresses(warp, src),
            self.addresses(warp, mbar),
        );
        let sizes = self.read(warp, size);
        for l in super::lanes::active(m) {
            let size = sizes[l] as u32;
            if size == 0 || !size.is_multiple_of(16) || !srcs[l].is_multiple_of(16) {
                return Err(self.copy_fault(
                    warp,
                    pc,
                    l,
                    format!(
                        "cp.async.bulk of {size} bytes from address {:#x}: the size must be a positive multiple of \
                         16 and the source 16-byte aligned",
                        srcs[l]
                    ),
                ));
            }
            let (rank, offset) = self.shared_place(MemSpace::SharedCluster, dsts[l], 16, pc, warp, l)?;
            let (mbar_rank, mbar_offset) = self.shared_place(MemSpace::Shared, mbars[l], 8, pc, warp, l)?;
            if rank != self.cluster.rank || mbar_rank != self.cluster.rank {
                return Err(self.fault(
                    EmuFaultKind::Unsupported {
                        what: "a bulk copy into another block's shared memory".into(),
                    },
                    Some(pc as u32),
                    Some((warp, l as u32)),
                ));
            }
            let shared_size = self.shared.size();
            if offset + size as u64 > shared_size {
                return Err(self.window_fault("shared", offset, size as u64, shared_size, true, pc, warp, l));
            }
            let mut data = vec![0u8; size as usize];
            self.read_global_run(warp, pc, l, srcs[l], size, 16, &mut data)?;
            let s = &mut self.stats.per_pc[pc];
            s.bulk_bytes += size as u64;
            s.bulk_sectors += ((srcs[l] + size as u64 - 1) >> 5) - (srcs[l] >> 5) + 1;
            if self.cfg.check_hazards {
                self.shared.set_in_flight(offset, size, false);
            }
            self.bulk.push(BulkCopy {
                dst: offset,
                data,
                mbar: mbar_offset,
                pc: pc as u32,
            });
        }
        if let Some(fetch) = &mut self.fetch {
            fetch.end_instruction();
        }
        Ok(())
    }

    /// Lands the bulk copies that complete through the mbarrier at `mbar`: their bytes are
    /// written and its transaction count drops by as many.
    pub(super) fn land_bulk_copies(&mut self, mbar: u64) -> Result<(), EmuFault> {
        if self.bulk.is_empty() {
            return Ok(());
        }
        let (landing, staying): (Vec<BulkCopy>, Vec<BulkCopy>) =
            std::mem::take(&mut self.bulk).into_iter().partition(|b| b.mbar == mbar);
        self.bulk = staying;
        for b in landing {
            self.write_bulk(&b);
            match self.mbars.transaction(mbar, b.data.len() as u32, true) {
                Ok(true) => self.mbarrier_phase_completed(self.cluster.rank),
                Ok(false) => {}
                Err(reason) => {
                    return Err(self.fault(EmuFaultKind::Barrier { reason }, Some(b.pc), None));
                }
            }
        }
        Ok(())
    }

    /// A bulk copy's bytes into shared memory, written by the copy engine.
    fn write_bulk(&mut self, b: &BulkCopy) {
        if self.cfg.check_hazards {
            self.shared.set_in_flight(b.dst, b.data.len() as u32, true);
        }
        let nobody = [0u32; 32];
        for (k, word) in b.data.chunks(4).enumerate() {
            let at = b.dst + 4 * k as u64;
            let value = u32::from_le_bytes(word.try_into().unwrap()) as u64;
            let unchanged = self.shared.store_unchanged(at, 4, value);
            let by = Accessor {
                thread: ASYNC_PROXY,
                pc: b.pc,
                stamp: 0,
                seen: &nobody,
            };
            // The engine's write races with no thread (the mbarrier orders it); it only
            // marks the bytes written.
            let _ = self.shared.note_landing(at, 4, by, unchanged);
        }
    }

    /// At the block's end: every copy still in flight lands (nothing can read it any more,
    /// but the shared memory's state is the finished block's).
    pub(super) fn land_everything(&mut self, warps: &mut [Warp]) {
        for w in warps.iter_mut() {
            self.land_copies(w, |_| true);
        }
        for b in std::mem::take(&mut self.bulk) {
            self.write_bulk(&b);
        }
    }
}
