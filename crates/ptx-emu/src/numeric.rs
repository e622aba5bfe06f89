//! Lane semantics of the arithmetic beyond the lessons' kernels: `prmt`, `dp4a`/`dp2a`,
//! `testp`, `copysign`, `bfind`, the `.approx` transcendentals, and half precision.
//!
//! `.approx` instructions are modelled as the exact function rounded to the result type.
//! The PTX ISA bounds the hardware's error (for example ex2.approx.f32: 2 ulp; sin/cos:
//! absolute error 2^-20.5 in [-pi, pi]), so the emulator's value is always within the bound
//! of the GPU's, though not bit-identical to it. Half precision is computed in f64 and
//! rounded once to f16/bf16 (round to nearest even), which is exact for add, sub and mul.

use super::bits::{f32_bits, f64_to_half, float_compare, ftz32, half_to_f32, half_to_f64, mask, sext};
use super::block::BlockRunner;
use super::ir::*;
use super::warp::Warp;

/// `mul24`: the product of the low 24 bits of `a` and `b` (sign-extended when `signed`),
/// its bits 31..0, or 47..16 with `hi`.
pub fn mul24(hi: bool, signed: bool, a: u32, b: u32) -> u32 {
    let (a, b) = if signed {
        (sext(a as u64, 24), sext(b as u64, 24))
    } else {
        ((a & 0xFF_FFFF) as i64, (b & 0xFF_FFFF) as i64)
    };
    let product = a * b;
    if hi { (product >> 16) as u32 } else { product as u32 }
}

/// `lop3`: bit `i` of the result is bit `(a_i << 2) | (b_i << 1) | c_i` of `lut` (the truth
/// table PTX builds from `0xF0` for a, `0xCC` for b, `0xAA` for c).
pub fn lop3(lut: u8, a: u32, b: u32, c: u32) -> u32 {
    let mut out = 0;
    for row in 0..8u32 {
        if (lut >> row) & 1 != 0 {
            let pick = |x: u32, bit: u32| if (row >> bit) & 1 != 0 { x } else { !x };
            out |= pick(a, 2) & pick(b, 1) & pick(c, 0);
        }
    }
    out
}

/// `sad`: `c + |a - b|` in `bits`-wide arithmetic (`a` and `b` signed or not), wrapping.
pub fn sad(bits: u8, signed: bool, a: u64, b: u64, c: u64) -> u64 {
    let (a, b) = if signed {
        (sext(a, bits) as i128, sext(b, bits) as i128)
    } else {
        ((a & mask(bits)) as i128, (b & mask(bits)) as i128)
    };
    (((a - b).unsigned_abs() as u64).wrapping_add(c)) & mask(bits)
}

/// `shf`: the 64-bit value `b:a` (`b` the upper half) shifted by `c` (its low five bits, or
/// `c` capped at 32 with `.clamp`); `.l` keeps the upper 32 bits, `.r` the lower.
pub fn shf(left: bool, clamp: bool, a: u32, b: u32, c: u32) -> u32 {
    let n = if clamp { c.min(32) } else { c & 31 };
    let wide = ((b as u64) << 32) | a as u64;
    if left {
        ((wide << n) >> 32) as u32
    } else {
        (wide >> n) as u32
    }
}

pub fn prmt(mode: PrmtMode, a: u32, b: u32, c: u32) -> u32 {
    let x = (a as u64) | ((b as u64) << 32);
    let byte = |i: u32| ((x >> ((i & 7) * 8)) & 0xFF) as u32;
    let s = c & 3;
    let pick: [u32; 4] = match mode {
        PrmtMode::Default => {
            let mut out = 0u32;
            for k in 0..4 {
                let sel = (c >> (k * 4)) & 0xF;
                let v = byte(sel & 7);
                let v = if sel & 8 != 0 {
                    if v & 0x80 != 0 { 0xFF } else { 0 }
                } else {
                    v
                };
                out |= v << (k * 8);
            }
            return out;
        }
        // Byte indices for d.b0, d.b1, d.b2, d.b3.
        PrmtMode::F4e => [s, s + 1, s + 2, s + 3],
        PrmtMode::B4e => [s, (s + 7) & 7, (s + 6) & 7, (s + 5) & 7],
        PrmtMode::Rc8 => [s; 4],
        PrmtMode::Ecl => [s, s.max(1), s.max(2), 3],
        PrmtMode::Ecr => [0, s.min(1), s.min(2), s],
        PrmtMode::Rc16 => {
            let lo = (s & 1) * 2;
            [lo, lo + 1, lo, lo + 1]
        }
    };
    pick.iter()
        .enumerate()
        .fold(0u32, |acc, (k, &i)| acc | byte(i) << (k * 8))
}

pub fn dp(four: bool, hi: bool, a_signed: bool, b_signed: bool, a: u32, b: u32, c: u32) -> u32 {
    let part = |v: u32, width: u32, i: u32, signed: bool| -> i64 {
        let raw = (v >> (i * width)) & ((1u32 << width) - 1);
        if signed {
            sext(raw as u64, width as u8)
        } else {
            raw as i64
        }
    };
    let sum: i64 = if four {
        (0..4).map(|i| part(a, 8, i, a_signed) * part(b, 8, i, b_signed)).sum()
    } else {
        let base = if hi { 2 } else { 0 };
        (0..2)
            .map(|i| part(a, 16, i, a_signed) * part(b, 8, base + i, b_signed))
            .sum()
    };
    (c as i64).wrapping_add(sum) as u32
}

pub fn testp(op: TestpOp, double: bool, bits: u64) -> bool {
    let (nan, inf, sub, zero) = if double {
        let v = f64::from_bits(bits);
        (v.is_nan(), v.is_infinite(), v.is_subnormal(), v == 0.0)
    } else {
        let v = f32::from_bits(bits as u32);
        (v.is_nan(), v.is_infinite(), v.is_subnormal(), v == 0.0)
    };
    match op {
        TestpOp::Finite => !nan && !inf,
        TestpOp::Infinite => inf,
        TestpOp::Number => !nan,
        TestpOp::NotANumber => nan,
        TestpOp::Normal => !nan && !inf && !sub && !zero,
        TestpOp::Subnormal => sub,
    }
}

pub fn bfind(bits: u8, signed: bool, shiftamt: bool, a: u64) -> u64 {
    let v = a & mask(bits);
    // For a negative signed value the first bit that differs from the sign.
    let search = if signed && sext(v, bits) < 0 {
        !v & mask(bits)
    } else {
        v
    };
    if search == 0 {
        return 0xFFFF_FFFF;
    }
    let pos = 63 - search.leading_zeros() as u64;
    if shiftamt { bits as u64 - 1 - pos } else { pos }
}

/// `fns.b32`: the position of the |offset|-th set bit of `mask`, searching from bit `base`
/// up (offset > 0) or down (offset < 0), `base` itself when offset is 0 and its bit is set;
/// 0xffffffff when there is none. A base past bit 31 is undefined in PTX: none is found.
pub fn fns(mask: u32, base: u32, offset: i32) -> u32 {
    const NONE: u32 = u32::MAX;
    if base > 31 {
        return NONE;
    }
    if offset == 0 {
        return if (mask >> base) & 1 == 1 { base } else { NONE };
    }
    // The bits at or beyond base in the search's direction, nearest first.
    let mut left = offset.unsigned_abs();
    let mut pos = base as i32;
    while (0..32).contains(&pos) {
        if (mask >> pos) & 1 == 1 {
            left -= 1;
            if left == 0 {
                return pos as u32;
            }
        }
        pos += offset.signum();
    }
    NONE
}

pub fn approx(op: ApproxOp, double: bool, ftz: bool, a: u64, b: u64) -> u64 {
    let (x, y) = if double {
        (f64::from_bits(a), f64::from_bits(b))
    } else {
        let f = |v: u64| {
            let v = f32::from_bits(v as u32);
            (if ftz { ftz32(v) } else { v }) as f64
        };
        (f(a), f(b))
    };
    let r = match op {
        ApproxOp::Ex2 => x.exp2(),
        ApproxOp::Lg2 => x.log2(),
        ApproxOp::Sin => x.sin(),
        ApproxOp::Cos => x.cos(),
        ApproxOp::Tanh => x.tanh(),
        ApproxOp::Rsqrt => 1.0 / x.sqrt(),
        ApproxOp::Rcp => 1.0 / x,
        ApproxOp::Sqrt => x.sqrt(),
        ApproxOp::Div => x / y,
    };
    if double {
        r.to_bits()
    } else {
        let r = r as f32;
        f32_bits(if ftz { ftz32(r) } else { r })
    }
}

fn half_ftz(v: f64, is_bf16: bool) -> f64 {
    let min_normal = if is_bf16 {
        f32::MIN_POSITIVE as f64
    } else {
        6.103_515_625e-5
    };
    if v != 0.0 && v.abs() < min_normal {
        0.0f64.copysign(v)
    } else {
        v
    }
}

/// One 16-bit lane of a half-precision operation.
#[allow(clippy::too_many_arguments)]
fn half_lane(op: HalfOp, is_bf16: bool, ftz: bool, sat: bool, a: u16, b: u16, c: u16) -> u16 {
    match op {
        HalfOp::Neg => return a ^ 0x8000,
        HalfOp::Abs => return a & 0x7FFF,
        _ => {}
    }
    let f = |v: u16| {
        let x = half_to_f64(v, is_bf16);
        if ftz { half_ftz(x, is_bf16) } else { x }
    };
    let (x, y, z) = (f(a), f(b), f(c));
    let r = match op {
        HalfOp::Add => x + y,
        HalfOp::Sub => x - y,
        HalfOp::Mul => x * y,
        HalfOp::Fma => x.mul_add(y, z),
        HalfOp::Min => {
            if x.is_nan() {
                y
            } else if y.is_nan() {
                x
            } else {
                x.min(y)
            }
        }
        HalfOp::Max => {
            if x.is_nan() {
                y
            } else if y.is_nan() {
                x
            } else {
                x.max(y)
            }
        }
        HalfOp::Neg | HalfOp::Abs | HalfOp::CvtPack => unreachable!(),
    };
    let r = if sat && !r.is_nan() { r.clamp(0.0, 1.0) } else { r };
    let h = f64_to_half(r, is_bf16);
    if ftz {
        f64_to_half(half_ftz(half_to_f64(h, is_bf16), is_bf16), is_bf16)
    } else {
        h
    }
}

#[allow(clippy::too_many_arguments)]
pub fn half(op: HalfOp, is_bf16: bool, x2: bool, ftz: bool, sat: bool, a: u64, b: u64, c: u64) -> u64 {
    if op == HalfOp::CvtPack {
        let cvt = |v: u64| {
            let x = f32::from_bits(v as u32) as f64;
            let x = if sat && !x.is_nan() { x.clamp(0.0, 1.0) } else { x };
            f64_to_half(x, is_bf16) as u64
        };
        return (cvt(a) << 16) | cvt(b);
    }
    let lane = |shift: u32| {
        let p = |v: u64| ((v >> shift) & 0xFFFF) as u16;
        (half_lane(op, is_bf16, ftz, sat, p(a), p(b), p(c)) as u64) << shift
    };
    if x2 { lane(0) | lane(16) } else { lane(0) }
}

pub fn half_compare(cmp: Cmp, is_bf16: bool, a: u16, b: u16) -> bool {
    let x = half_to_f32(a, is_bf16);
    let y = half_to_f32(b, is_bf16);
    float_compare(cmp, x as f64, y as f64)
}

impl BlockRunner<'_> {
    // Out of line: keeps the hot ALU dispatch in `execute` small (its stack frame, too).
    #[inline(never)]
    pub(super) fn numeric(&mut self, warp: &mut Warp, op: NumericKind, m: u32) {
        match op {
            NumericKind::Prmt { mode, d, a, b, c } => {
                self.map3(warp, m, d, a, b, c, |x, y, z| {
                    prmt(mode, x as u32, y as u32, z as u32) as u64
                });
            }
            NumericKind::Shf {
                left,
                clamp,
                d,
                a,
                b,
                c,
            } => {
                self.map3(warp, m, d, a, b, c, |x, y, z| {
                    shf(left, clamp, x as u32, y as u32, z as u32) as u64
                });
            }
            NumericKind::Dp {
                four,
                hi,
                a_signed,
                b_signed,
                d,
                a,
                b,
                c,
            } => {
                let (a, b, c) = (self.read(warp, a), self.read(warp, b), self.read(warp, c));
                warp.write_lanes(d, m, |l| {
                    dp(four, hi, a_signed, b_signed, a[l] as u32, b[l] as u32, c[l] as u32) as u64
                });
            }
            NumericKind::Testp { op, double, d, a } => {
                let a = self.read(warp, a);
                let bits = (0..32).fold(0u32, |acc, l| acc | (testp(op, double, a[l]) as u32) << l);
                warp.write_pred(d, m, bits);
            }
            NumericKind::Copysign { double, d, a, b } => {
                let (a, b) = (self.read(warp, a), self.read(warp, b));
                let sign = if double { 1u64 << 63 } else { 1u64 << 31 };
                warp.write_lanes(d, m, |l| (b[l] & !sign) | (a[l] & sign));
            }
            NumericKind::FDirected {
                op,
                round,
                ftz,
                sat,
                d,
                a,
                b,
                c,
            } => {
                let (a, b, c) = (self.read(warp, a), self.read(warp, b), self.read(warp, c));
                warp.write_lanes(d, m, |l| {
                    let operand = |v: u64| {
                        let x = f32::from_bits(v as u32);
                        if ftz { ftz32(x) } else { x }
                    };
                    let mut r = super::alu::f32_directed(op, round, operand(a[l]), operand(b[l]), operand(c[l]));
                    if ftz {
                        r = ftz32(r);
                    }
                    if sat {
                        r = if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) };
                    }
                    f32_bits(r)
                });
            }
            NumericKind::Mul24 { hi, signed, d, a, b } => {
                self.map2(warp, m, d, a, b, |x, y| mul24(hi, signed, x as u32, y as u32) as u64);
            }
            NumericKind::Lop3 { d, a, b, c, lut } => {
                self.map3(warp, m, d, a, b, c, |x, y, z| {
                    lop3(lut, x as u32, y as u32, z as u32) as u64
                });
            }
            NumericKind::Sad {
                bits,
                signed,
                d,
                a,
                b,
                c,
            } => {
                self.map3(warp, m, d, a, b, c, |x, y, z| sad(bits, signed, x, y, z));
            }
            NumericKind::Bfind {
                bits,
                signed,
                shiftamt,
                d,
                a,
            } => {
                let a = self.read(warp, a);
                warp.write_lanes(d, m, |l| bfind(bits, signed, shiftamt, a[l]));
            }
            NumericKind::Fns { d, mask, base, offset } => {
                self.map3(warp, m, d, mask, base, offset, |x, y, z| {
                    fns(x as u32, y as u32, z as u32 as i32) as u64
                });
            }
            NumericKind::FApprox {
                op,
                double,
                ftz,
                d,
                a,
                b,
            } => {
                let (a, b) = (self.read(warp, a), self.read(warp, b));
                warp.write_lanes(d, m, |l| approx(op, double, ftz, a[l], b[l]));
            }
            NumericKind::Half {
                op,
                bf16,
                x2,
                ftz,
                sat,
                d,
                a,
                b,
                c,
            } => {
                let (a, b, c) = (self.read(warp, a), self.read(warp, b), self.read(warp, c));
                warp.write_lanes(d, m, |l| half(op, bf16, x2, ftz, sat, a[l], b[l], c[l]));
            }
            NumericKind::HalfSetp {
                cmp,
                bf16,
                x2,
                d,
                d2,
                a,
                b,
            } => {
                let (a, b) = (self.read(warp, a), self.read(warp, b));
                let test = |shift: u32| {
                    (0..32).fold(0u32, |acc, l| {
                        let p = |v: u64| ((v >> shift) & 0xFFFF) as u16;
                        acc | (half_compare(cmp, bf16, p(a[l]), p(b[l])) as u32) << l
                    })
                };
                warp.write_pred(d, m, test(0));
                if let (true, Some(d2)) = (x2, d2) {
                    warp.write_pred(d2, m, test(16));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    #[test]
    fn mul24_and_lop3() {
        assert_eq!(mul24(false, false, 0xFF00_0003, 5), 15);
        assert_eq!(mul24(false, true, 0x00FF_FFFF, 3), (-3i32) as u32); // 24-bit -1 * 3
        assert_eq!(
            mul24(true, false, 0x00FF_FFFF, 0x00FF_FFFF),
            ((0xFF_FFFFu64 * 0xFF_FFFF) >> 16) as u32
        );
        let (a, b, c) = (0xF0F0_1234u32, 0xCCCC_5678u32, 0xAAAA_9ABCu32);
        assert_eq!(lop3(0x96, a, b, c), a ^ b ^ c);
        assert_eq!(lop3(0xE8, a, b, c), (a & b) | (a & c) | (b & c)); // majority
        assert_eq!(lop3(0xF0, a, b, c), a);
        assert_eq!(lop3(0x80, a, b, c), a & b & c);
        assert_eq!(lop3(0x00, a, b, c), 0);
    }

    #[test]
    fn sad_adds_the_absolute_difference() {
        assert_eq!(sad(32, true, (-5i32) as u32 as u64, 7, 3), 15);
        assert_eq!(sad(32, false, (-5i32) as u32 as u64, 7, 3), 0xFFFF_FFF7);
        assert_eq!(sad(16, false, 2, 0xFFFF, 0xFFFF), 0xFFFC);
    }

    #[test]
    fn shf_funnels_and_rotates() {
        // A rotate: the same word in both halves.
        assert_eq!(shf(true, false, 0x8000_0001, 0x8000_0001, 1), 0x0000_0003);
        assert_eq!(shf(false, false, 0x8000_0001, 0x8000_0001, 1), 0xC000_0000);
        // wrap takes the amount mod 32; clamp stops at 32 (all of the other half).
        assert_eq!(
            shf(true, false, 0xAAAA_AAAA, 0x1234_5678, 36),
            shf(true, false, 0xAAAA_AAAA, 0x1234_5678, 4)
        );
        assert_eq!(shf(true, true, 0xAAAA_AAAA, 0x1234_5678, 40), 0xAAAA_AAAA);
        assert_eq!(shf(false, true, 0xAAAA_AAAA, 0x1234_5678, 99), 0x1234_5678);
        assert_eq!(shf(true, false, 0xF000_0000, 0x0000_000F, 4), 0x0000_00FF);
        assert_eq!(shf(false, false, 0x0000_00F0, 0x0000_000F, 4), 0xF000_000F);
    }

    #[test]
    fn prmt_default_and_modes() {
        // Selector 0x3210 copies a; 0x7654 copies b; bit 3 replicates the sign.
        assert_eq!(prmt(PrmtMode::Default, 0x4433_2211, 0x8877_6655, 0x3210), 0x4433_2211);
        assert_eq!(prmt(PrmtMode::Default, 0x4433_2211, 0x8877_6655, 0x7654), 0x8877_6655);
        assert_eq!(prmt(PrmtMode::Default, 0x0000_0080, 0, 0x0008), 0x8080_80FF);
        assert_eq!(prmt(PrmtMode::F4e, 0x4433_2211, 0x8877_6655, 1), 0x5544_3322);
        assert_eq!(prmt(PrmtMode::B4e, 0x4433_2211, 0x8877_6655, 0), 0x6677_8811);
        assert_eq!(prmt(PrmtMode::Rc8, 0x4433_2211, 0, 2), 0x3333_3333);
        assert_eq!(prmt(PrmtMode::Ecl, 0x4433_2211, 0, 1), 0x4433_2222);
        assert_eq!(prmt(PrmtMode::Ecr, 0x4433_2211, 0, 2), 0x3333_2211);
        assert_eq!(prmt(PrmtMode::Rc16, 0x4433_2211, 0, 1), 0x4433_4433);
    }

    #[test]
    fn dot_products() {
        // (1,2,3,4) . (5,6,7,8) = 70, plus 1.
        assert_eq!(dp(true, false, false, false, 0x0403_0201, 0x0807_0605, 1), 71);
        // Signed bytes: -1 * 2 = -2.
        assert_eq!(dp(true, false, true, false, 0x0000_00FF, 0x0000_0002, 0) as i32, -2);
        // dp2a.hi: halves (3, 4) . bytes 2, 3 (5, 6) = 39.
        assert_eq!(dp(false, true, false, false, 0x0004_0003, 0x0605_0000, 0), 39);
    }

    #[test]
    fn fns_finds_the_nth_set_bit_either_way() {
        // The PTX ISA's examples.
        assert_eq!(fns(0xaaaa_aaaa, 3, 1), 3);
        assert_eq!(fns(0xaaaa_aaaa, 3, -1), 3);
        assert_eq!(fns(0xaaaa_aaaa, 2, 1), 3);
        assert_eq!(fns(0xaaaa_aaaa, 2, -1), 1);
        assert_eq!(fns(0xaaaa_aaaa, 2, 0), u32::MAX);
        assert_eq!(fns(0xaaaa_aaaa, 3, 0), 3);
        assert_eq!(fns(0xaaaa_aaaa, 0, 3), 5);
        assert_eq!(fns(0xaaaa_aaaa, 31, -16), 1);
        assert_eq!(fns(0xaaaa_aaaa, 31, -17), u32::MAX);
        assert_eq!(fns(0, 0, 1), u32::MAX);
    }

    #[test]
    fn bfind_and_testp() {
        assert_eq!(bfind(32, false, false, 0x10), 4);
        assert_eq!(bfind(32, false, true, 0x10), 27);
        assert_eq!(bfind(32, false, false, 0), 0xFFFF_FFFF);
        assert_eq!(bfind(32, true, false, (-1i32) as u32 as u64), 0xFFFF_FFFF);
        assert_eq!(bfind(32, true, false, (-2i32) as u32 as u64), 0);
        assert!(testp(TestpOp::Subnormal, false, 1));
        assert!(!testp(TestpOp::Normal, false, 0));
        assert!(testp(TestpOp::NotANumber, true, f64::NAN.to_bits()));
    }

    #[test]
    fn half_precision_rounds_once() {
        let h = |v: f32| f16::from_f32(v).to_bits() as u64;
        let add = half(HalfOp::Add, false, false, false, false, h(1.0), h(0.000_488_281_25), 0);
        // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: even is 1.
        assert_eq!(add, h(1.0));
        let packed = half(
            HalfOp::Mul,
            false,
            true,
            false,
            false,
            h(2.0) | h(3.0) << 16,
            h(0.5) | h(0.5) << 16,
            0,
        );
        assert_eq!(packed, h(1.0) | h(1.5) << 16);
        let pack = half(
            HalfOp::CvtPack,
            false,
            true,
            false,
            false,
            2.0f32.to_bits() as u64,
            1.0f32.to_bits() as u64,
            0,
        );
        assert_eq!(pack, h(2.0) << 16 | h(1.0));
        assert!(half_compare(Cmp::Lt, false, h(1.0) as u16, h(2.0) as u16));
        assert_eq!(half(HalfOp::Neg, true, false, false, false, 0x3F80, 0, 0), 0xBF80);
    }

    #[test]
    fn approximations_stay_within_the_isa_bounds() {
        let ex2 = approx(ApproxOp::Ex2, false, true, 3.0f32.to_bits() as u64, 0);
        assert_eq!(f32::from_bits(ex2 as u32), 8.0);
        let s = f32::from_bits(approx(ApproxOp::Sin, false, false, 1.0f32.to_bits() as u64, 0) as u32);
        assert!((s as f64 - 1.0f64.sin()).abs() < 2f64.powf(-20.5));
        let rs = f32::from_bits(approx(ApproxOp::Rsqrt, false, false, 4.0f32.to_bits() as u64, 0) as u32);
        assert_eq!(rs, 0.5);
    }
}
