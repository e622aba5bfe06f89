//! Lane-wise operations on a warp's registers without copying them.
//!
//! `BlockRunner::read` hands out a copy of an operand's 32 lanes (256 bytes, a `memcpy`
//! call per operand), which was the largest single cost of an ALU instruction. These
//! helpers read the source registers and write the destination in place, lane by lane,
//! through pointers into the one register file: a destination that is also a source is
//! fine, since lane `l` is read before lane `l` is written and no lane reads another.
//! Each combination of register and immediate operands gets a loop of its own, so an
//! immediate is a constant in the loop rather than 32 copies in memory.

use super::block::BlockRunner;
use super::ir::{Reg, Src};
use super::warp::{FULL, Warp, for_each_lane};
use std::mem::MaybeUninit;

/// One source operand while an instruction runs.
#[derive(Clone, Copy)]
pub(super) enum Operand {
    /// 32 lanes in memory: a register of the file, or the caller's copy of a special.
    Lanes(*const u64),
    /// The same value in every lane (an immediate).
    Splat(u64),
}

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

/// Writes `f` of the operands into register `d` for the lanes of `m`, with one loop per
/// combination of in-memory and immediate operands.
#[inline(always)]
pub(super) fn apply(warp: &mut Warp, m: u32, d: Reg, ops: [Operand; 3], f: impl Fn(u64, u64, u64) -> u64) {
    let dst = d as usize * 32;
    assert!(dst + 32 <= warp.vals.len(), "register {d} outside the register file");
    // SAFETY: in bounds (checked above).
    let pd = unsafe { warp.vals.as_mut_ptr().add(dst) };
    use Operand::{Lanes as P, Splat as S};
    // SAFETY (every arm): operand pointers address 32 lanes (a checked register, a local
    // copy or LANE_INDEX) and stay valid for the call; they may alias `pd` (read before write
    // per lane).
    unsafe {
        match ops {
            [P(a), P(b), P(c)] => run(pd, m, |l| f(*a.add(l), *b.add(l), *c.add(l))),
            [P(a), P(b), S(c)] => run(pd, m, |l| f(*a.add(l), *b.add(l), c)),
            [P(a), S(b), P(c)] => run(pd, m, |l| f(*a.add(l), b, *c.add(l))),
            [P(a), S(b), S(c)] => run(pd, m, |l| f(*a.add(l), b, c)),
            [S(a), P(b), P(c)] => run(pd, m, |l| f(a, *b.add(l), *c.add(l))),
            [S(a), P(b), S(c)] => run(pd, m, |l| f(a, *b.add(l), c)),
            [S(a), S(b), P(c)] => run(pd, m, |l| f(a, b, *c.add(l))),
            [S(a), S(b), S(c)] => run(pd, m, |_| f(a, b, c)),
        }
    }
}

/// `pd[l] = value(l)` for the lanes of `m`.
///
/// # Safety
/// `pd` addresses 32 writable lanes, and `value` reads only memory that is valid.
#[inline(always)]
unsafe fn run(pd: *mut u64, m: u32, value: impl Fn(usize) -> u64) {
    if m == FULL {
        for l in 0..32 {
            // SAFETY: l < 32 (the caller's contract).
            unsafe { *pd.add(l) = value(l) };
        }
    } else {
        // SAFETY: as above (every lane of `m` is below 32).
        for_each_lane(
            m,
            #[inline(always)]
            |l| unsafe { *pd.add(l) = value(l) },
        );
    }
}
