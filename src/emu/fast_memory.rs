//! The common memory accesses, fast: one 4- or 8-byte element per lane of global memory
//! (`ld.global.f32`, `st.global.u64`, ...) whose active lanes all fall, aligned, inside one
//! buffer, and one 4-byte element per lane of shared memory (`ld.shared.f32`), outside the
//! watched block. That is almost every access of a stencil kernel, and the general path
//! (block_memory.rs) resolves, bounds-checks and looks up the buffer lane by lane. Anything
//! else (vectors, sub-word sizes, generic addresses, a lane out of bounds or misaligned,
//! tracing) returns `false` and takes the general path, which also words the faults; so the
//! counts and the checks are the same either way.

use super::block::BlockRunner;
use super::ir::{Kind, MemSpace};
use super::warp::{Warp, for_each_lane};
use std::mem::MaybeUninit;

/// Every lane's address `base[l] + offset` (inactive lanes too: they are masked later), in
/// a loop the compiler vectorises.
#[inline(always)]
fn lane_addresses(warp: &Warp, addr: super::ir::Addr) -> [u64; 32] {
    let offset = addr.offset as u64;
    match addr.base {
        Some(r) => {
            let base: &[u64; 32] = warp.reg(r).try_into().expect("32 lanes");
            std::array::from_fn(|l| base[l].wrapping_add(offset))
        }
        None => [offset; 32],
    }
}

/// All ones for the active lanes of `m`, zero for the rest.
#[inline(always)]
fn lane_masks(m: u32) -> [u64; 32] {
    std::array::from_fn(|l| (((m >> l) & 1) as u64).wrapping_neg())
}

impl BlockRunner<'_> {
    /// Runs the instruction at `pc` for lanes `m` if it is the common global access;
    /// `false` when the general path must run it (nothing has been changed then).
    #[inline]
    pub(super) fn global_fast(&mut self, warp: &mut Warp, pc: usize, m: u32) -> bool {
        if self.watching() || self.fetch.is_some() {
            return false;
        }
        let inst = &self.prog.insts[pc];
        let (bytes, addr, store_src, load) = match &inst.kind {
            Kind::Ld {
                space: MemSpace::Global,
                bytes,
                signed,
                ds,
                addr,
            } if ds.len() == 1 && (*bytes == 4 || *bytes == 8) => {
                let Some(d) = ds[0] else { return false };
                (*bytes as u64, *addr, None, Some((d, *signed && *bytes == 4)))
            }
            Kind::St {
                space: MemSpace::Global,
                bytes,
                srcs,
                addr,
            } if srcs.len() == 1 && (*bytes == 4 || *bytes == 8) => (*bytes as u64, *addr, Some(srcs[0]), None),
            _ => return false,
        };
        let addrs = lane_addresses(warp, addr);
        // One buffer for every active lane, aligned: else the general path decides.
        let first = addrs[m.trailing_zeros() as usize];
        let Ok(buffer) = self.mem.find(first, bytes as u32) else {
            return false;
        };
        let (lo, hi) = {
            let b = &self.mem.buffers[buffer];
            (b.base, b.end() - bytes)
        };
        let active = lane_masks(m);
        // The active lanes' lowest and highest address and their low bits: in bounds and
        // aligned iff those are (inactive lanes count as MAX for the low, 0 for the rest).
        let (mut lowest, mut highest, mut low_bits) = (u64::MAX, 0u64, 0u64);
        for l in 0..32 {
            let a = addrs[l];
            lowest = lowest.min(a | !active[l]);
            highest = highest.max(a & active[l]);
            low_bits |= a & active[l];
        }
        if low_bits & (bytes - 1) != 0 || lowest < lo || highest > hi {
            return false;
        }
        let (first_sector, last_sector) = (lowest >> 5, highest >> 5);
        let n = m.count_ones() as u64;
        // Aligned 4- and 8-byte elements sit in one sector each: the distinct sectors are
        // a bit set over the (usually short) span between the first and the last.
        let sectors = if last_sector - first_sector < 64 {
            let mut bits = 0u64;
            for l in 0..32 {
                bits |= (1u64 << (((addrs[l] >> 5).wrapping_sub(first_sector)) & 63)) & active[l];
            }
            bits.count_ones() as u64
        } else {
            let mut list = [0u64; 32];
            let mut k = 0;
            for (l, a) in addrs.iter().enumerate() {
                if (m >> l) & 1 != 0 {
                    list[k] = a >> 5;
                    k += 1;
                }
            }
            super::block_memory::distinct_sectors(&mut list[..k])
        };
        let mem = self.mem;
        let words = |l: usize| ((addrs[l] - lo) / 4) as usize;
        match (store_src, load) {
            (Some(src), _) => {
                let mut scratch = MaybeUninit::uninit();
                let values = self.lanes(warp, src, &mut scratch);
                for_each_lane(m, |l| mem.store_words(buffer, words(l), bytes, values[l]));
            }
            (None, Some((d, sign_extend))) => {
                // Straight into the register: every address was computed above, so a
                // destination that is also the address register is no problem.
                warp.write_lanes(d, m, |l| {
                    let v = mem.load_words(buffer, words(l), bytes);
                    if sign_extend { v as u32 as i32 as i64 as u64 } else { v }
                });
            }
            (None, None) => unreachable!("a load has a destination"),
        }
        let s = &mut self.stats.per_pc[pc];
        s.global_warp_insts += 1;
        s.global_lanes += n;
        s.sectors += sectors;
        s.ideal_sectors += (n * bytes).div_ceil(32);
        true
    }
}

impl BlockRunner<'_> {
    /// Runs the instruction at `pc` for lanes `m` if it is a 4-byte shared access of one
    /// element per lane; `false` when the general path must run it (nothing changed then).
    /// Every lane's access still goes through the race and uninitialised-read bookkeeping.
    #[inline]
    pub(super) fn shared_fast(&mut self, warp: &mut Warp, pc: usize, m: u32) -> bool {
        if self.watching() {
            return false;
        }
        let inst = &self.prog.insts[pc];
        let (addr, store_src, load) = match &inst.kind {
            Kind::Ld {
                space: MemSpace::Shared,
                bytes: 4,
                ds,
                addr,
                ..
            } if ds.len() == 1 => {
                let Some(d) = ds[0] else { return false };
                (*addr, None, Some(d))
            }
            Kind::St {
                space: MemSpace::Shared,
                bytes: 4,
                srcs,
                addr,
            } if srcs.len() == 1 => (*addr, Some(srcs[0]), None),
            _ => return false,
        };
        let addrs = lane_addresses(warp, addr);
        let limit = self.shared.size().saturating_sub(4);
        let active = lane_masks(m);
        // The highest active offset and the active offsets' low bits: in bounds and aligned
        // iff those are. The banks the active lanes touch, seen in passing: when every active
        // lane has a bank of its own (a tile row, whole or in part) there is no conflict, and
        // the general count is spared.
        let (mut highest, mut low_bits, mut banks) = (0u64, 0u64, 0u32);
        for l in 0..32 {
            let a = addrs[l] & active[l];
            highest = highest.max(a);
            low_bits |= a;
            banks |= ((active[l] & 1) as u32) << ((addrs[l] >> 2) & 31);
        }
        if low_bits & 3 != 0 || highest > limit || m == 0 {
            return false;
        }
        let conflict_free = banks.count_ones() == m.count_ones();
        match (store_src, load) {
            (Some(src), _) => {
                let mut scratch = MaybeUninit::uninit();
                let values = self.lanes(warp, src, &mut scratch);
                let mut bits = m;
                while bits != 0 {
                    let l = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let offset = addrs[l];
                    let unchanged = self.shared.store_unchanged(offset, 4, values[l]);
                    if let Some(h) = self.shared.note_write(offset, 4, warp.linear[l], pc as u32, unchanged) {
                        self.note_hazard(warp, l, pc, h);
                    }
                }
            }
            (None, Some(d)) => {
                let mut loaded = [0u64; 32];
                let mut bits = m;
                while bits != 0 {
                    let l = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let offset = addrs[l];
                    loaded[l] = self.shared.load(offset, 4);
                    if let Some(h) = self.shared.note_read(offset, 4, warp.linear[l], pc as u32) {
                        self.note_hazard(warp, l, pc, h);
                    }
                }
                warp.write_lanes(d, m, |l| loaded[l]);
            }
            (None, None) => unreachable!("a load has a destination"),
        }
        self.stats.shared_requests += 1;
        if !conflict_free {
            let mut offsets = [(0u64, 4u32); 32];
            let mut n = 0;
            for (l, &a) in addrs.iter().enumerate() {
                if (m >> l) & 1 != 0 {
                    offsets[n].0 = a;
                    n += 1;
                }
            }
            self.stats.bank_conflicts += super::shared::bank_conflicts(&offsets[..n]);
        }
        true
    }
}

impl BlockRunner<'_> {
    /// `ld.param` of one element at a fixed offset (how kernels read their arguments): the
    /// same value for every lane; `false` for anything else.
    #[inline]
    pub(super) fn param_fast(&mut self, warp: &mut Warp, pc: usize, m: u32) -> bool {
        let inst = &self.prog.insts[pc];
        let Kind::Ld {
            space: MemSpace::Param,
            bytes,
            signed,
            ds,
            addr,
        } = &inst.kind
        else {
            return false;
        };
        let (Some(Some(d)), 1, None) = (ds.first(), ds.len(), addr.base) else {
            return false;
        };
        let (at, bytes) = (addr.offset as usize, *bytes as usize);
        let Some(raw) = self.cfg.params.get(at..at + bytes) else {
            return false; // past the parameters: the general path says so
        };
        let mut v = [0u8; 8];
        v[..bytes].copy_from_slice(raw);
        let mut value = u64::from_le_bytes(v);
        if *signed && bytes < 8 {
            value = super::alu::sext(value, bytes as u8 * 8) as u64;
        }
        warp.write_lanes(*d, m, |_| value);
        true
    }
}
