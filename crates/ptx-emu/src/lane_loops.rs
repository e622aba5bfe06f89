//! The loops under every lane-wise ALU instruction: `d[l] = f(a[l], b[l], c[l])` for the
//! lanes of a mask, reading the operands in place (a register of the file, a copy of a
//! special register, or an immediate kept as a constant), one loop per combination of
//! operand kinds. `lanes.rs` (operands given as `Src`) and `quick.rs` (operands resolved at
//! decode) both end here; this file depends on neither, so neither depends on the other.

use super::ir::Reg;
use super::warp::{FULL, Warp};

/// One source operand while an instruction runs.
#[derive(Clone, Copy)]
pub(super) enum Operand {
    /// 32 lanes in memory: a register of the file, or the caller's copy of a special.
    Lanes(*const u64),
    /// The same value in every lane (an immediate).
    Splat(u64),
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
/// Every lane is computed and the inactive ones keep their old value through a blend, so
/// the register is written in whole vectors. Writing only the active lanes, one 8-byte store
/// each, made the next instruction's vector read of that register wait for those stores to
/// retire (a failed store-to-load forward); that wait showed as the hottest line of the
/// interpreter. `value` must therefore be safe for any lane (the lane-wise ALU functions
/// are: pure, total, no panics).
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
        for l in 0..32 {
            let keep = (((m >> l) & 1) as u64).wrapping_sub(1);
            // SAFETY: as above.
            unsafe { *pd.add(l) = (value(l) & !keep) | (*pd.add(l) & keep) };
        }
    }
}
