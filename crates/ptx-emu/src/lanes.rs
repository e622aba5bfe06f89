//! Lane-wise operations on a warp's registers without copying them.
//!
//! `BlockRunner::read` hands out a copy of an operand's 32 lanes (256 bytes, a `memcpy`
//! call per operand), which was the largest single cost of an ALU instruction. These
//! helpers read the source registers and write the destination in place, lane by lane,
//! through pointers into the one register file: a destination that is also a source is
//! fine, since lane `l` is read before lane `l` is written and no lane reads another.
//! The loops themselves (one per combination of register and immediate operands, so an
//! immediate is a constant in the loop rather than 32 copies in memory) are in
//! `lane_loops.rs`.

use super::block::BlockRunner;
use super::ir::{Reg, Src};
use super::lane_loops::{Operand, apply};
use super::warp::Warp;
use std::mem::MaybeUninit;

/// Lanes 0..31 as values, for operations that need the lane's index.
static LANE_INDEX: [u64; 32] = {
    let mut v = [0u64; 32];
    let mut l = 0;
    while l < 32 {
        v[l] = l as u64;
        l += 1;
    }
    v
};

impl BlockRunner<'_> {
    /// `src` as an operand; a special register's lanes are computed into `scratch` (left
    /// uninitialised otherwise: most operands are registers and immediates).
    #[inline(always)]
    fn operand(&self, warp: &mut Warp, src: Src, scratch: &mut MaybeUninit<[u64; 32]>) -> Operand {
        match src {
            Src::Reg(r) => {
                let base = r as usize * 32;
                assert!(base + 32 <= warp.vals.len(), "register {r} outside the register file");
                // SAFETY: in bounds (checked above).
                Operand::Lanes(unsafe { warp.vals.as_mut_ptr().add(base) as *const u64 })
            }
            Src::Imm(v) => Operand::Splat(v),
            Src::Special(_) => Operand::Lanes(scratch.write(self.read(warp, src)).as_ptr()),
        }
    }

    /// `d[l] = f(a[l], b[l], c[l])` for the lanes of `m`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn map3(
        &self,
        warp: &mut Warp,
        m: u32,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
        f: impl Fn(u64, u64, u64) -> u64,
    ) {
        let (mut sa, mut sb, mut sc) = (MaybeUninit::uninit(), MaybeUninit::uninit(), MaybeUninit::uninit());
        let oa = self.operand(warp, a, &mut sa);
        let ob = self.operand(warp, b, &mut sb);
        let oc = self.operand(warp, c, &mut sc);
        apply(warp, m, d, [oa, ob, oc], f);
    }

    /// `d[l] = f(a[l], b[l])` for the lanes of `m`.
    #[inline(always)]
    pub(super) fn map2(&self, warp: &mut Warp, m: u32, d: Reg, a: Src, b: Src, f: impl Fn(u64, u64) -> u64) {
        let (mut sa, mut sb) = (MaybeUninit::uninit(), MaybeUninit::uninit());
        let oa = self.operand(warp, a, &mut sa);
        let ob = self.operand(warp, b, &mut sb);
        apply(warp, m, d, [oa, ob, Operand::Splat(0)], |x, y, _| f(x, y));
    }

    /// `d[l] = f(a[l], b[l], l)` for the lanes of `m` (`l`: the lane's index in the warp).
    #[inline(always)]
    pub(super) fn map2_indexed(
        &self,
        warp: &mut Warp,
        m: u32,
        d: Reg,
        a: Src,
        b: Src,
        f: impl Fn(u64, u64, u32) -> u64,
    ) {
        let (mut sa, mut sb) = (MaybeUninit::uninit(), MaybeUninit::uninit());
        let oa = self.operand(warp, a, &mut sa);
        let ob = self.operand(warp, b, &mut sb);
        let index = Operand::Lanes(LANE_INDEX.as_ptr());
        apply(warp, m, d, [oa, ob, index], |x, y, l| f(x, y, l as u32));
    }

    /// `d[l] = f(a[l])` for the lanes of `m`.
    #[inline(always)]
    pub(super) fn map1(&self, warp: &mut Warp, m: u32, d: Reg, a: Src, f: impl Fn(u64) -> u64) {
        let mut sa = MaybeUninit::uninit();
        let oa = self.operand(warp, a, &mut sa);
        apply(warp, m, d, [oa, Operand::Splat(0), Operand::Splat(0)], |x, _, _| f(x));
    }
}

/// The lanes of `m`, lowest first.
pub fn active(m: u32) -> impl Iterator<Item = usize> {
    (0..32usize).filter(move |l| (m >> l) & 1 != 0)
}
