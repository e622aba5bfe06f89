//! The common memory accesses, fast: one 4- or 8-byte element per lane of global memory
//! (`ld.global.f32`, `st.global.u64`, ...) whose active lanes all fall, aligned, inside one
//! buffer, and one 4-byte element per lane of shared memory (`ld.shared.f32`), outside the
//! watched block. That is almost every access of a stencil kernel, and the general path
//! (block_memory.rs) resolves, bounds-checks and looks up the buffer lane by lane. Anything
//! else (vectors, sub-word sizes, generic addresses, a lane out of bounds or misaligned,
//! tracing) returns `false` and takes the general path, which also words the faults; so the
//! counts and the checks are the same either way.

use super::block::BlockRunner;
use super::ir::{Addr, Load, Mem, MemSpace, Reg, Src, Store};
use super::shared::Row;
use super::warp::{Warp, for_each_lane, one_run};
use std::mem::MaybeUninit;
use std::sync::atomic::Ordering;

/// What a fast path does with each active lane's one element: a load has a destination and a
/// store a value, so neither can lack both.
#[derive(Clone, Copy)]
enum Element {
    /// Into register `d`, a 4-byte element sign-extended when `sign_extend`.
    Load { d: Reg, sign_extend: bool },
    /// The lanes of this operand.
    Store(Src),
}

impl Element {
    #[inline(always)]
    fn is_store(self) -> bool {
        matches!(self, Element::Store(_))
    }
}

/// Every lane's address `base[l] + offset` (inactive lanes too: they are masked later), in
/// a loop the compiler vectorises.
#[inline(always)]
fn lane_addresses(warp: &Warp, addr: Addr) -> [u64; 32] {
    let offset = addr.offset as u64;
    let mut addrs = [offset; 32];
    if let Some(r) = addr.base {
        let base: &[u64; 32] = warp.reg(r).try_into().expect("32 lanes");
        for l in 0..32 {
            addrs[l] = base[l].wrapping_add(offset);
        }
    }
    addrs
}

/// All ones for the active lanes of `m`, zero for the rest.
#[inline(always)]
fn lane_masks(m: u32) -> [u64; 32] {
    let mut masks = [0u64; 32];
    for (l, mask) in masks.iter_mut().enumerate() {
        *mask = (((m >> l) & 1) as u64).wrapping_neg();
    }
    masks
}

/// The lowest and highest address of the active lanes when they are consecutive elements
/// of `1 << shift` bytes by lane (lane l at `base + (l << shift)`): a warp reading or
/// writing a row, whole or in part. Then their bounds, alignment and banks follow from the
/// two ends, in one loop the compiler vectorises, instead of a min, a max and a bank per
/// lane (a sixth of a 3D launch).
#[inline(always)]
fn consecutive_span(addrs: &[u64; 32], active: &[u64; 32], m: u32, shift: u32) -> Option<(u64, u64)> {
    let first_lane = m.trailing_zeros() as u64;
    let base = addrs[first_lane as usize].wrapping_sub(first_lane << shift);
    let mut off_row = 0u64;
    for l in 0..32 {
        off_row |= (addrs[l] ^ base.wrapping_add((l as u64) << shift)) & active[l];
    }
    if off_row != 0 {
        return None;
    }
    let last_lane = 31 - m.leading_zeros() as u64;
    let (lowest, highest) = (
        base.wrapping_add(first_lane << shift),
        base.wrapping_add(last_lane << shift),
    );
    // A row that wraps past the top of the address space is no row: the general loop sees
    // those lanes as the out-of-bounds addresses they are.
    (lowest <= highest).then_some((lowest, highest))
}

impl BlockRunner<'_> {
    /// Runs `access`, the instruction at `pc`, for lanes `m` if it is the common global
    /// access; `false` when the general path must run it (nothing has been changed then).
    #[inline]
    pub(super) fn global_fast(&mut self, warp: &mut Warp, pc: usize, access: &Mem, m: u32) -> bool {
        if self.watching() || self.fetch.is_some() {
            return false;
        }
        let (bytes, addr, element) = match access {
            Mem::Load(Load {
                space: MemSpace::Global,
                bytes,
                signed,
                ds,
                addr,
            }) if ds.len() == 1 && (*bytes == 4 || *bytes == 8) => {
                let Some(d) = ds[0] else { return false };
                let sign_extend = *signed && *bytes == 4;
                (*bytes as u64, *addr, Element::Load { d, sign_extend })
            }
            Mem::Store(Store {
                space: MemSpace::Global,
                bytes,
                srcs,
                addr,
            }) if srcs.len() == 1 && (*bytes == 4 || *bytes == 8) => (*bytes as u64, *addr, Element::Store(srcs[0])),
            _ => return false,
        };
        if m != 0 && bytes == 4 && one_run(m) && self.global_row(warp, pc, m, addr, element) {
            return true;
        }
        let addrs = lane_addresses(warp, addr);
        // One buffer for every active lane, aligned: else the general path decides.
        let first = addrs[m.trailing_zeros() as usize];
        let Ok(buffer) = self.mem.find(first, bytes as u32) else {
            return false;
        };
        // Races between blocks are checked lane by lane, on the general path.
        if self.mem.races(buffer, element.is_store()).is_some() {
            return false;
        }
        let (lo, hi) = {
            let b = &self.mem.buffers[buffer];
            (b.base, b.end() - bytes)
        };
        let active = lane_masks(m);
        let consecutive = consecutive_span(&addrs, &active, m, bytes.trailing_zeros());
        // The active lanes' lowest and highest address and their low bits: in bounds and
        // aligned iff those are (inactive lanes count as MAX for the low, 0 for the rest).
        let (lowest, highest, low_bits) = match consecutive {
            // Every address is the lowest plus whole elements: aligned iff the lowest is.
            Some((lowest, highest)) => (lowest, highest, lowest),
            None => {
                let (mut lowest, mut highest, mut low_bits) = (u64::MAX, 0u64, 0u64);
                for l in 0..32 {
                    let a = addrs[l];
                    lowest = lowest.min(a | !active[l]);
                    highest = highest.max(a & active[l]);
                    low_bits |= a & active[l];
                }
                (lowest, highest, low_bits)
            }
        };
        if low_bits & (bytes - 1) != 0 || lowest < lo || highest > hi {
            return false;
        }
        let (first_sector, last_sector) = (lowest >> 5, highest >> 5);
        let n = m.count_ones() as u64;
        // Aligned 4- and 8-byte elements sit in one sector each: consecutive elements with
        // no gap touch every sector from the first to the last; otherwise the distinct
        // sectors are a bit set over the (usually short) span between the two.
        let sectors = if consecutive.is_some() && one_run(m) {
            last_sector - first_sector + 1
        } else if last_sector - first_sector < 64 {
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
        // A row of 4-byte elements (the stencils' every access) as one slice of the buffer.
        let row = match consecutive {
            Some((lowest, _)) if bytes == 4 => {
                mem.row_words(buffer, ((lowest - lo) / 4) as isize - m.trailing_zeros() as isize)
            }
            _ => None,
        };
        match element {
            Element::Store(src) => {
                let mut scratch = MaybeUninit::uninit();
                let values = self.lanes(warp, src, &mut scratch);
                match row {
                    Some(row) => {
                        mem.note_store(buffer);
                        for_each_lane(
                            m,
                            #[inline(always)]
                            |l| row[l].store(values[l] as u32, Ordering::Relaxed),
                        );
                    }
                    None => for_each_lane(m, |l| mem.store_words(buffer, words(l), bytes, values[l])),
                }
            }
            Element::Load { d, sign_extend } => match row {
                Some(row) => {
                    let dst = warp.reg_mut(d);
                    // A full warp is one run too: one loop serves every mask.
                    if sign_extend {
                        for_each_lane(
                            m,
                            #[inline(always)]
                            |l| dst[l] = row[l].load(Ordering::Relaxed) as i32 as i64 as u64,
                        );
                    } else {
                        for_each_lane(
                            m,
                            #[inline(always)]
                            |l| dst[l] = row[l].load(Ordering::Relaxed) as u64,
                        );
                    }
                }
                // Straight into the register: every address was computed above, so a
                // destination that is also the address register is no problem.
                None => warp.write_lanes(d, m, |l| {
                    let v = mem.load_words(buffer, words(l), bytes);
                    if sign_extend { v as u32 as i32 as i64 as u64 } else { v }
                }),
            },
        }
        self.count_global(pc, n, bytes, sectors);
        true
    }

    /// The commonest access of all, on its own short path: lanes `m` one run of lanes (the
    /// whole warp, or a row cut at the grid's edge), each one 4-byte element, lane l at
    /// `first + 4 l` (a warp reading or writing a row of floats), inside one buffer. `false`
    /// when the access is anything else (nothing changed then); the general path gives the
    /// same result, this one only skips its address array and per-lane masks.
    #[inline(always)]
    fn global_row(&mut self, warp: &mut Warp, pc: usize, m: u32, addr: Addr, element: Element) -> bool {
        let Some(r) = addr.base else { return false };
        let (lo, hi) = (m.trailing_zeros() as usize, 31 - m.leading_zeros() as usize);
        let base: &[u64; 32] = warp.reg(r).try_into().expect("32 lanes");
        // Lane l of the run must hold `base[lo] + 4 (l - lo)`; the lanes outside the run
        // are masked out (a wrapping compare keeps the loop branch-free and vectorised).
        let mut off_row = 0u64;
        for (l, &b) in base.iter().enumerate() {
            let in_run = ((l.wrapping_sub(lo) <= hi - lo) as u64).wrapping_neg();
            off_row |= (b.wrapping_sub(base[lo]) ^ ((l.wrapping_sub(lo) as u64) << 2)) & in_run;
        }
        let first = base[lo].wrapping_add(addr.offset as u64);
        let last = first.wrapping_add(4 * (hi - lo) as u64);
        if off_row != 0 || last < first {
            return false;
        }
        let Ok(buffer) = self.mem.find(first, 4) else {
            return false;
        };
        if self.mem.races(buffer, element.is_store()).is_some() {
            return false;
        }
        let b = &self.mem.buffers[buffer];
        if last + 4 > b.end() {
            return false;
        }
        let mem = self.mem;
        // Word 0 of `row` is lane 0's, which may lie before the buffer (then the general
        // path runs it).
        let Some(row) = mem.row_words(buffer, ((first - b.base) / 4) as isize - lo as isize) else {
            return false;
        };
        match element {
            Element::Store(src) => {
                let mut scratch = MaybeUninit::uninit();
                let values = self.lanes(warp, src, &mut scratch);
                mem.note_store(buffer);
                for l in lo..hi + 1 {
                    row[l].store(values[l] as u32, Ordering::Relaxed);
                }
            }
            Element::Load { d, sign_extend } => {
                let dst = warp.reg_mut(d);
                if sign_extend {
                    for l in lo..hi + 1 {
                        dst[l] = row[l].load(Ordering::Relaxed) as i32 as i64 as u64;
                    }
                } else {
                    for l in lo..hi + 1 {
                        dst[l] = row[l].load(Ordering::Relaxed) as u64;
                    }
                }
            }
        }
        let lanes = (hi - lo + 1) as u64;
        self.count_global(pc, lanes, 4, (last >> 5) - (first >> 5) + 1);
        true
    }

    /// Counts one global access instruction of `lanes` lanes of `bytes` each that touched
    /// `sectors` distinct sectors.
    #[inline(always)]
    fn count_global(&mut self, pc: usize, lanes: u64, bytes: u64, sectors: u64) {
        let s = &mut self.stats.per_pc[pc];
        s.global_warp_insts += 1;
        s.global_lanes += lanes;
        s.sectors += sectors;
        s.ideal_sectors += (lanes * bytes).div_ceil(32);
    }
}

impl BlockRunner<'_> {
    /// Runs `access`, the instruction at `pc`, for lanes `m` if it is a 4-byte shared access
    /// of one element per lane; `false` when the general path must run it (nothing changed
    /// then). Every lane's access still goes through the race and uninitialised-read
    /// bookkeeping.
    #[inline]
    pub(super) fn shared_fast(&mut self, warp: &mut Warp, pc: usize, access: &Mem, m: u32) -> bool {
        if self.watching() {
            return false;
        }
        let (addr, element) = match access {
            // The 4 bytes go into the register zero-extended, `.s32` too (the general path
            // sign-extends those: the two differ only in the upper half, which 32-bit
            // instructions do not read).
            Mem::Load(Load {
                space: MemSpace::Shared,
                bytes: 4,
                ds,
                addr,
                ..
            }) if ds.len() == 1 => {
                let Some(d) = ds[0] else { return false };
                (*addr, Element::Load { d, sign_extend: false })
            }
            Mem::Store(Store {
                space: MemSpace::Shared,
                bytes: 4,
                srcs,
                addr,
            }) if srcs.len() == 1 => (*addr, Element::Store(srcs[0])),
            _ => return false,
        };
        let addrs = lane_addresses(warp, addr);
        let limit = self.shared.size().saturating_sub(4);
        if m == 0 {
            return false;
        }
        let active = lane_masks(m);
        // The highest active offset and the active offsets' low bits: in bounds and aligned
        // iff those are. When every active lane has a bank of its own (a tile row, whole or
        // in part: consecutive words have) there is no conflict, and the general count is
        // spared; otherwise the banks are seen in passing.
        let span = consecutive_span(&addrs, &active, m, 2);
        let (highest, low_bits, conflict_free) = match span {
            Some((lowest, highest)) => (highest, lowest, true),
            None => {
                let (mut highest, mut low_bits, mut banks) = (0u64, 0u64, 0u32);
                for l in 0..32 {
                    let a = addrs[l] & active[l];
                    highest = highest.max(a);
                    low_bits |= a;
                    banks |= ((active[l] & 1) as u32) << ((addrs[l] >> 2) & 31);
                }
                (highest, low_bits, banks.count_ones() == m.count_ones())
            }
        };
        if low_bits & 3 != 0 || highest > limit {
            return false;
        }
        // A row whose every lane passes the checks goes through them all at once; a row with
        // a suspect lane, and any other pattern, lane by lane (which reports the hazard).
        let row = span.map(|(lowest, _)| Row {
            first_word: (lowest / 4) as isize - m.trailing_zeros() as isize,
            mask: m,
        });
        match element {
            Element::Store(src) => {
                let mut scratch = MaybeUninit::uninit();
                let values = self.lanes(warp, src, &mut scratch);
                let stamp = warp.clock.events;
                let stored = row.is_some_and(|row| self.shared.store_row(row, &warp.linear, stamp, pc as u32, values));
                if !stored {
                    for_each_lane(m, |l| {
                        let offset = addrs[l];
                        let unchanged = self.shared.store_unchanged(offset, 4, values[l]);
                        let by = Self::accessor(warp, l, pc);
                        if let Some(h) = self.shared.note_write(offset, 4, by, unchanged) {
                            self.note_hazard(warp, l, pc, h);
                        }
                    });
                }
            }
            Element::Load { d, .. } => {
                let mut loaded = [0u64; 32];
                let stamp = warp.clock.events;
                let read =
                    row.is_some_and(|row| self.shared.load_row(row, &warp.linear, stamp, pc as u32, &mut loaded));
                if !read {
                    for_each_lane(m, |l| {
                        let offset = addrs[l];
                        loaded[l] = self.shared.load(offset, 4);
                        if let Some(h) = self.shared.note_read(offset, 4, Self::accessor(warp, l, pc)) {
                            self.note_hazard(warp, l, pc, h);
                        }
                    });
                }
                warp.write_lanes(d, m, |l| loaded[l]);
            }
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
    pub(super) fn param_fast(&mut self, warp: &mut Warp, access: &Mem, m: u32) -> bool {
        let Mem::Load(Load {
            space: MemSpace::Param,
            bytes,
            signed,
            ds,
            addr,
        }) = access
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

#[cfg(test)]
mod tests {
    use super::*;

    fn row(base: u64, shift: u32) -> [u64; 32] {
        std::array::from_fn(|l| base.wrapping_add((l as u64) << shift))
    }

    #[test]
    fn a_row_whole_or_in_part_is_consecutive() {
        let addrs = row(0x1000, 2);
        assert_eq!(
            consecutive_span(&addrs, &lane_masks(!0), !0, 2),
            Some((0x1000, 0x1000 + 31 * 4))
        );
        // Lanes 3..=5 only; the inactive lanes' addresses do not matter.
        let mut partial = addrs;
        partial[0] = 7;
        let m = 0b111000;
        assert_eq!(consecutive_span(&partial, &lane_masks(m), m, 2), Some((0x100c, 0x1014)));
        assert!(one_run(m) && !one_run(0b101));
    }

    #[test]
    fn a_gap_a_wrong_stride_or_a_wrap_is_not_a_row() {
        let mut gap = row(0x1000, 2);
        gap[9] += 4;
        assert_eq!(consecutive_span(&gap, &lane_masks(!0), !0, 2), None);
        assert_eq!(consecutive_span(&row(0x1000, 3), &lane_masks(!0), !0, 2), None);
        let wraps = row(u64::MAX - 63, 2);
        assert_eq!(consecutive_span(&wraps, &lane_masks(!0), !0, 2), None);
    }
}
