//! Lane-level semantics of arithmetic, comparison and conversion, as the PTX ISA defines
//! them. Values travel as u64 bits; an n-bit value lives in the low n bits.

use super::ir::{BoolOp, Cmp, DirectedOp, FOp, FUnOp, IntOp, IntUnOp, NumTy, Round};

// The bit-level helpers live in bits.rs (numeric.rs needs them too); re-exported so that
// `alu::mask` and friends read as the ALU's vocabulary in the executor.
pub use super::bits::{f32_bits, float_compare, ftz32, ftz64, mask, sext};

#[inline(always)]
fn sat32(x: f32) -> f32 {
    if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
}

#[inline(always)]
fn sat64(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
}

/// Integer binary operation on `bits`-wide operands.
#[inline(always)]
pub fn int_bin(op: IntOp, bits: u8, signed: bool, a: u64, b: u64) -> u64 {
    let m = mask(bits);
    let (a, b) = (a & m, b & m);
    let r = match op {
        IntOp::Add => a.wrapping_add(b),
        IntOp::Sub => a.wrapping_sub(b),
        IntOp::MulLo => a.wrapping_mul(b),
        IntOp::MulHi => {
            if signed {
                ((sext(a, bits) as i128 * sext(b, bits) as i128) >> bits) as u64
            } else {
                ((a as u128 * b as u128) >> bits) as u64
            }
        }
        IntOp::Div => {
            if b == 0 {
                m // the hardware's all-ones for a division by zero
            } else if signed {
                sext(a, bits).wrapping_div(sext(b, bits)) as u64
            } else {
                a / b
            }
        }
        IntOp::Rem => {
            if b == 0 {
                a
            } else if signed {
                sext(a, bits).wrapping_rem(sext(b, bits)) as u64
            } else {
                a % b
            }
        }
        IntOp::Min => {
            if signed {
                sext(a, bits).min(sext(b, bits)) as u64
            } else {
                a.min(b)
            }
        }
        IntOp::Max => {
            if signed {
                sext(a, bits).max(sext(b, bits)) as u64
            } else {
                a.max(b)
            }
        }
        IntOp::And => a & b,
        IntOp::Or => a | b,
        IntOp::Xor => a ^ b,
        IntOp::Shl => {
            let s = b & 0xFFFF_FFFF;
            if s >= bits as u64 { 0 } else { a << s }
        }
        IntOp::Shr => {
            let s = b & 0xFFFF_FFFF;
            if signed {
                (sext(a, bits) >> s.min(bits as u64 - 1)) as u64
            } else if s >= bits as u64 {
                0
            } else {
                a >> s
            }
        }
    };
    r & m
}

#[inline(always)]
pub fn int_un(op: IntUnOp, bits: u8, a: u64) -> u64 {
    let m = mask(bits);
    let a = a & m;
    let r = match op {
        IntUnOp::Neg => a.wrapping_neg(),
        IntUnOp::Not => !a,
        IntUnOp::Abs => sext(a, bits).unsigned_abs(),
        IntUnOp::Popc => a.count_ones() as u64,
        IntUnOp::Clz => (a.leading_zeros() - (64 - bits as u32)) as u64,
        IntUnOp::Brev => a.reverse_bits() >> (64 - bits as u32),
        IntUnOp::Cnot => (a == 0) as u64,
    };
    r & m
}

#[inline(always)]
pub fn f32_bin(op: FOp, ftz: bool, sat: bool, a: u64, b: u64) -> u64 {
    let (mut a, mut b) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
    if ftz {
        a = ftz32(a);
        b = ftz32(b);
    }
    let mut r = match op {
        FOp::Add => a + b,
        FOp::Sub => a - b,
        FOp::Mul => a * b,
        FOp::Div => a / b,
        FOp::Min => fmin32(a, b),
        FOp::Max => fmax32(a, b),
    };
    if ftz {
        r = ftz32(r);
    }
    if sat {
        r = sat32(r);
    }
    f32_bits(r)
}

fn fmin32(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == b {
        if a.is_sign_negative() { a } else { b }
    } else {
        a.min(b)
    }
}

fn fmax32(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == b {
        if a.is_sign_positive() { a } else { b }
    } else {
        a.max(b)
    }
}

#[inline(always)]
pub fn f64_bin(op: FOp, ftz: bool, sat: bool, a: u64, b: u64) -> u64 {
    let (mut a, mut b) = (f64::from_bits(a), f64::from_bits(b));
    if ftz {
        a = ftz64(a);
        b = ftz64(b);
    }
    let mut r = match op {
        FOp::Add => a + b,
        FOp::Sub => a - b,
        FOp::Mul => a * b,
        FOp::Div => a / b,
        FOp::Min => {
            if a.is_nan() {
                b
            } else if b.is_nan() {
                a
            } else {
                a.min(b)
            }
        }
        FOp::Max => {
            if a.is_nan() {
                b
            } else if b.is_nan() {
                a
            } else {
                a.max(b)
            }
        }
    };
    if sat {
        r = sat64(r);
    }
    r.to_bits()
}

#[inline(always)]
pub fn f32_fma(ftz: bool, sat: bool, a: u64, b: u64, c: u64) -> u64 {
    let (mut a, mut b, mut c) = (
        f32::from_bits(a as u32),
        f32::from_bits(b as u32),
        f32::from_bits(c as u32),
    );
    if ftz {
        a = ftz32(a);
        b = ftz32(b);
        c = ftz32(c);
    }
    let mut r = a.mul_add(b, c);
    if ftz {
        r = ftz32(r);
    }
    if sat {
        r = sat32(r);
    }
    f32_bits(r)
}

#[inline(always)]
pub fn f64_fma(sat: bool, a: u64, b: u64, c: u64) -> u64 {
    let r = f64::from_bits(a).mul_add(f64::from_bits(b), f64::from_bits(c));
    (if sat { sat64(r) } else { r }).to_bits()
}

pub fn f_un(op: FUnOp, double: bool, ftz: bool, a: u64) -> u64 {
    if double {
        let a = f64::from_bits(a);
        let r = match op {
            FUnOp::Neg => -a,
            FUnOp::Abs => a.abs(),
            FUnOp::Rcp => 1.0 / a,
            FUnOp::Sqrt => a.sqrt(),
        };
        r.to_bits()
    } else {
        let mut a = f32::from_bits(a as u32);
        if ftz {
            a = ftz32(a);
        }
        let r = match op {
            // neg and abs only flip or clear the sign bit, NaN payload included.
            FUnOp::Neg => return (a.to_bits() ^ 0x8000_0000) as u64,
            FUnOp::Abs => return (a.to_bits() & 0x7FFF_FFFF) as u64,
            FUnOp::Rcp => 1.0 / a,
            FUnOp::Sqrt => a.sqrt(),
        };
        f32_bits(if ftz { ftz32(r) } else { r })
    }
}

#[inline(always)]
pub fn compare(cmp: Cmp, ty: NumTy, a: u64, b: u64) -> bool {
    match ty {
        NumTy::Int { bits, signed } => {
            let m = mask(bits);
            let ord = if signed {
                sext(a & m, bits).cmp(&sext(b & m, bits))
            } else {
                (a & m).cmp(&(b & m))
            };
            use std::cmp::Ordering::*;
            match cmp {
                Cmp::Eq => ord == Equal,
                Cmp::Ne => ord != Equal,
                Cmp::Lt => ord == Less,
                Cmp::Le => ord != Greater,
                Cmp::Gt => ord == Greater,
                Cmp::Ge => ord != Less,
                _ => false,
            }
        }
        NumTy::F32 => float_compare(cmp, f32::from_bits(a as u32) as f64, f32::from_bits(b as u32) as f64),
        NumTy::F64 => float_compare(cmp, f64::from_bits(a), f64::from_bits(b)),
        NumTy::F16 | NumTy::BF16 => false,
    }
}

/// `compare` for all 32 lanes as a lane mask; the common 32-bit integer comparisons get
/// their own loops so that the comparison is chosen once per instruction, not per lane.
/// `a(l)`, `b(l)`: lane l's operands (an immediate is a closure that ignores `l`, which spares
/// writing it into 32 lanes first and then reading them back).
#[inline(always)]
pub fn compare_lanes(cmp: Cmp, ty: NumTy, a: impl Fn(usize) -> u64, b: impl Fn(usize) -> u64) -> u32 {
    macro_rules! lanes {
        (|$x:ident, $y:ident| $e:expr) => {{
            let mut bits = 0u32;
            for l in 0..32 {
                let ($x, $y) = (a(l), b(l));
                bits |= ($e as u32) << l;
            }
            bits
        }};
    }
    match (ty, cmp) {
        (NumTy::Int { bits: 32, signed: true }, Cmp::Lt) => lanes!(|x, y| (x as i32) < (y as i32)),
        (NumTy::Int { bits: 32, signed: true }, Cmp::Le) => lanes!(|x, y| (x as i32) <= (y as i32)),
        (NumTy::Int { bits: 32, signed: true }, Cmp::Gt) => lanes!(|x, y| (x as i32) > (y as i32)),
        (NumTy::Int { bits: 32, signed: true }, Cmp::Ge) => lanes!(|x, y| (x as i32) >= (y as i32)),
        (
            NumTy::Int {
                bits: 32,
                signed: false,
            },
            Cmp::Lt,
        ) => lanes!(|x, y| (x as u32) < (y as u32)),
        (
            NumTy::Int {
                bits: 32,
                signed: false,
            },
            Cmp::Ge,
        ) => lanes!(|x, y| (x as u32) >= (y as u32)),
        (NumTy::Int { bits: 32, .. }, Cmp::Eq) => lanes!(|x, y| (x as u32) == (y as u32)),
        (NumTy::Int { bits: 32, .. }, Cmp::Ne) => lanes!(|x, y| (x as u32) != (y as u32)),
        _ => lanes!(|x, y| compare(cmp, ty, x, y)),
    }
}

#[inline(always)]
pub fn bool_op(op: BoolOp, a: u32, b: u32) -> u32 {
    match op {
        BoolOp::And => a & b,
        BoolOp::Or => a | b,
        BoolOp::Xor => a ^ b,
    }
}

/// `cvt`. Err names a conversion the emulator does not execute.
pub fn convert(to: NumTy, from: NumTy, round: Round, ftz: bool, sat: bool, a: u64) -> Result<u64, &'static str> {
    Ok(match (to, from) {
        (NumTy::Int { bits: tb, signed: ts }, NumTy::Int { bits: fb, signed: fs }) => {
            let v = if fs {
                sext(a, fb) as i128
            } else {
                (a & mask(fb)) as i128
            };
            let v = if sat {
                let (lo, hi) = if ts {
                    (-(1i128 << (tb - 1)), (1i128 << (tb - 1)) - 1)
                } else {
                    (0, (1i128 << tb) - 1)
                };
                v.clamp(lo, hi)
            } else {
                v
            };
            (v as u64) & mask(tb)
        }
        (NumTy::F32 | NumTy::F64, NumTy::Int { bits, signed }) => {
            if !matches!(round, Round::Default | Round::Nearest) {
                if to != NumTy::F32 {
                    return Err("directed rounding of an integer-to-f64 cvt");
                }
                // `__int2float_rz` and kin: the integer as an exact f64 pair, rounded once.
                let v: i128 = if signed {
                    sext(a, bits) as i128
                } else {
                    (a & mask(bits)) as i128
                };
                let hi = v as f64;
                let lo = (v - hi as i128) as f64;
                return Ok(f32_bits(round_f64_to_f32(hi, lo, round)));
            }
            // Convert straight from the integer: going through f64 would round twice.
            if to == NumTy::F32 {
                f32_bits(if signed {
                    sext(a, bits) as f32
                } else {
                    (a & mask(bits)) as f32
                })
            } else if signed {
                (sext(a, bits) as f64).to_bits()
            } else {
                ((a & mask(bits)) as f64).to_bits()
            }
        }
        (NumTy::Int { bits, signed }, NumTy::F32 | NumTy::F64) => {
            let mut v = if from == NumTy::F32 {
                f32::from_bits(a as u32) as f64
            } else {
                f64::from_bits(a)
            };
            if ftz && from == NumTy::F32 {
                v = ftz32(v as f32) as f64;
            }
            let r = round_to_integer(v, round)?;
            if r.is_nan() {
                return Ok(0);
            }
            // Float-to-integer conversions saturate.
            if signed {
                let lo = -(2f64.powi(bits as i32 - 1));
                let hi = 2f64.powi(bits as i32 - 1) - 1.0;
                (r.clamp(lo, hi) as i64 as u64) & mask(bits)
            } else {
                let hi = 2f64.powi(bits as i32) - 1.0;
                (r.clamp(0.0, hi) as u64) & mask(bits)
            }
        }
        (NumTy::F32, NumTy::F32) => {
            let mut v = f32::from_bits(a as u32);
            if ftz {
                v = ftz32(v);
            }
            let r = if round == Round::Default {
                v
            } else {
                round_to_integer(v as f64, round)? as f32
            };
            f32_bits(if sat { sat32(r) } else { r })
        }
        (NumTy::F64, NumTy::F64) => {
            let v = f64::from_bits(a);
            let r = if round == Round::Default {
                v
            } else {
                round_to_integer(v, round)?
            };
            (if sat { sat64(r) } else { r }).to_bits()
        }
        (NumTy::F64, NumTy::F32) => {
            let mut v = f32::from_bits(a as u32);
            if ftz {
                v = ftz32(v);
            }
            let r = v as f64;
            (if sat { sat64(r) } else { r }).to_bits()
        }
        (NumTy::F32, NumTy::F64) => {
            if !matches!(round, Round::Default | Round::Nearest) {
                return Err("directed rounding of an f64-to-f32 cvt");
            }
            let mut r = f64::from_bits(a) as f32;
            if ftz {
                r = ftz32(r);
            }
            f32_bits(if sat { sat32(r) } else { r })
        }
        _ => return convert_half(to, from, round, ftz, sat, a),
    })
}

/// Conversions to and from f16 / bf16: through f64, which holds every half value and every
/// f32 exactly, so the only rounding is the final one.
fn convert_half(to: NumTy, from: NumTy, round: Round, ftz: bool, sat: bool, a: u64) -> Result<u64, &'static str> {
    use super::bits::{f64_to_half, half_to_f32};
    let value = match from {
        NumTy::F16 => half_to_f32(a as u16, false) as f64,
        NumTy::BF16 => half_to_f32(a as u16, true) as f64,
        NumTy::F32 => {
            let v = f32::from_bits(a as u32);
            (if ftz { ftz32(v) } else { v }) as f64
        }
        NumTy::F64 => f64::from_bits(a),
        NumTy::Int { bits, signed } => {
            if signed {
                sext(a, bits) as f64
            } else {
                (a & mask(bits)) as f64
            }
        }
    };
    match to {
        NumTy::F16 | NumTy::BF16 => {
            if !matches!(round, Round::Default | Round::Nearest) {
                return Err("directed rounding of a conversion to f16/bf16");
            }
            let v = if sat { sat64(value) } else { value };
            Ok(f64_to_half(v, to == NumTy::BF16) as u64)
        }
        _ => convert(to, NumTy::F64, round, ftz, sat, value.to_bits()),
    }
}

fn round_to_integer(v: f64, round: Round) -> Result<f64, &'static str> {
    Ok(match round {
        Round::Nearest => v.round_ties_even(),
        Round::Zero => v.trunc(),
        Round::Down => v.floor(),
        Round::Up => v.ceil(),
        Round::Default => return Err("a float-to-integer cvt without a rounding modifier"),
    })
}

/// `a + b`, `a - b`, `a * b` or `a * b + c` in f32, rounded toward zero (`Round::Zero`),
/// down or up. The exact result is `hi + lo` in f64: a product of two f32 is exact there,
/// and a sum's rounding error is recovered exactly (Knuth's two-sum); the nearest f32 of
/// `hi` is then moved one step when it lies on the wrong side of the exact value.
pub fn f32_directed(op: DirectedOp, round: Round, a: f32, b: f32, c: f32) -> f32 {
    let (a, b, c) = (a as f64, b as f64, c as f64);
    let (p, q) = match op {
        DirectedOp::Add => (a, b),
        DirectedOp::Sub => (a, -b),
        // Exact, and its zero keeps the product's sign (adding +0 would lose a -0).
        DirectedOp::Mul => return round_f64_to_f32(a * b, 0.0, round),
        DirectedOp::Fma => (a * b, c),
    };
    let hi = p + q;
    if hi == 0.0 && p == -q {
        // An exact zero from opposite signs is +0, but -0 when rounding down; two zeros of
        // one sign keep it.
        let negative = if p.is_sign_negative() == q.is_sign_negative() {
            p.is_sign_negative()
        } else {
            round == Round::Down
        };
        return if negative { -0.0 } else { 0.0 };
    }
    let lo = if hi.is_finite() {
        let b_part = hi - p;
        (p - (hi - b_part)) + (q - b_part)
    } else {
        0.0
    };
    round_f64_to_f32(hi, lo, round)
}

/// The f32 nearest `hi + lo` in the direction `round` (`|lo|` at most half an f64 ulp of
/// `hi`).
pub fn round_f64_to_f32(hi: f64, lo: f64, round: Round) -> f32 {
    let r = hi as f32;
    if hi.is_nan() || hi.is_infinite() {
        return r;
    }
    // The sign of r - (hi + lo): r - hi is exact (r is hi's nearest f32, or an infinity past
    // f32's range, which gives the right sign).
    let above = ((r as f64) - hi) - lo;
    match round {
        Round::Down if above > 0.0 => r.next_down(),
        Round::Up if above < 0.0 => r.next_up(),
        Round::Zero if (r > 0.0 && above > 0.0) || (r < 0.0 && above < 0.0) => {
            if r > 0.0 {
                r.next_down()
            } else {
                r.next_up()
            }
        }
        _ => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_edges() {
        assert_eq!(int_bin(IntOp::Add, 32, true, 0xFFFF_FFFF, 1), 0);
        assert_eq!(int_bin(IntOp::Shr, 32, true, 0x8000_0000, 31), 0xFFFF_FFFF);
        assert_eq!(int_bin(IntOp::Shr, 32, false, 0x8000_0000, 40), 0);
        assert_eq!(int_bin(IntOp::Shl, 32, false, 1, 32), 0);
        assert_eq!(
            int_bin(IntOp::Div, 32, true, (-7i32) as u32 as u64, 2),
            (-3i32) as u32 as u64
        );
        assert_eq!(int_bin(IntOp::Div, 32, false, 7, 0), 0xFFFF_FFFF);
        assert_eq!(int_bin(IntOp::MulHi, 32, false, 0xFFFF_FFFF, 0xFFFF_FFFF), 0xFFFF_FFFE);
        assert_eq!(int_bin(IntOp::Min, 32, true, (-1i32) as u32 as u64, 3), 0xFFFF_FFFF);
        assert_eq!(int_un(IntUnOp::Clz, 32, 1), 31);
        assert_eq!(int_un(IntUnOp::Neg, 64, 1), u64::MAX);
    }

    #[test]
    fn float_rounding_is_ieee() {
        let third = f32_bin(FOp::Div, false, false, 1f32.to_bits() as u64, 3f32.to_bits() as u64);
        assert_eq!(third, 0x3EAA_AAAB); // 1/3 rounded to nearest: 0.333333343
        // fma rounds once: (1 + 2^-23) * (1 - 2^-23) - 1 = -2^-46 exactly.
        let a = f32::from_bits(0x3F80_0001);
        let b = f32::from_bits(0x3F7F_FFFE);
        let r = f32_fma(
            false,
            false,
            a.to_bits() as u64,
            b.to_bits() as u64,
            (-1f32).to_bits() as u64,
        );
        assert_eq!(f32::from_bits(r as u32), a.mul_add(b, -1.0));
        assert_ne!(f32::from_bits(r as u32), a * b - 1.0);
        assert_eq!(
            f32_bin(FOp::Add, false, false, f32::NAN.to_bits() as u64, 0),
            crate::bits::CANONICAL_NAN_F32 as u64
        );
    }

    /// Quotients against values worked out by hand (IEEE 754 round-to-nearest-even bit
    /// patterns, truncating integer division), not against the host's own `/`.
    #[test]
    fn division_against_independent_values() {
        let f = |x: f32| x.to_bits() as u64;
        let div32 = |a: f32, b: f32| f32_bin(FOp::Div, false, false, f(a), f(b));
        assert_eq!(div32(1.0, 3.0), 0x3EAA_AAAB); // 0.333333343
        assert_eq!(div32(2.0, 3.0), 0x3F2A_AAAB); // 0.666666687
        assert_eq!(div32(1.0, 10.0), 0x3DCC_CCCD); // 0.100000001
        assert_eq!(div32(10.0, 4.0), 0x4020_0000); // 2.5 exactly
        assert_eq!(div32(-7.0, 2.0), 0xC060_0000); // -3.5
        assert_eq!(div32(1.0, 0.0), 0x7F80_0000); // +inf
        assert_eq!(div32(-1.0, 0.0), 0xFF80_0000); // -inf
        assert_eq!(div32(1.0, -0.0), 0xFF80_0000);
        assert_eq!(div32(0.0, 0.0), 0x7FFF_FFFF); // the GPU's canonical NaN
        assert_eq!(div32(3.0e38, 0.5), 0x7F80_0000); // overflows to +inf
        // The smallest normal halved is the subnormal 2^-127; flushed to +0 under .ftz.
        let min_normal = 0x0080_0000;
        assert_eq!(f32_bin(FOp::Div, false, false, min_normal, f(2.0)), 0x0040_0000);
        assert_eq!(f32_bin(FOp::Div, true, false, min_normal, f(2.0)), 0);
        // .sat clamps to [0, 1].
        assert_eq!(f32_bin(FOp::Div, false, true, f(3.0), f(2.0)), 0x3F80_0000);
        let div64 = |a: f64, b: f64| f64_bin(FOp::Div, false, false, a.to_bits(), b.to_bits());
        assert_eq!(div64(1.0, 3.0), 0x3FD5_5555_5555_5555);
        assert_eq!(div64(2.0, 3.0), 0x3FE5_5555_5555_5555);
        assert_eq!(div64(1.0, 10.0), 0x3FB9_9999_9999_999A);
        // Integers truncate toward zero; the remainder takes the dividend's sign.
        let s32 = |x: i32| x as u32 as u64;
        assert_eq!(int_bin(IntOp::Div, 32, true, s32(-7), s32(2)), s32(-3));
        assert_eq!(int_bin(IntOp::Div, 32, true, s32(7), s32(-2)), s32(-3));
        assert_eq!(int_bin(IntOp::Div, 32, true, s32(-8), s32(-2)), 4);
        assert_eq!(int_bin(IntOp::Rem, 32, true, s32(-7), s32(2)), s32(-1));
        assert_eq!(int_bin(IntOp::Rem, 32, true, s32(7), s32(-2)), 1);
        assert_eq!(int_bin(IntOp::Div, 32, false, 0xFFFF_FFFF, 16), 0x0FFF_FFFF);
        assert_eq!(int_bin(IntOp::Div, 32, false, s32(-7), 2), 0x7FFF_FFFC); // unsigned: 4294967289 / 2
        assert_eq!(int_bin(IntOp::Rem, 32, false, 0xFFFF_FFFF, 10), 5);
        assert_eq!(int_bin(IntOp::Div, 64, false, u64::MAX, 3), 0x5555_5555_5555_5555);
        assert_eq!(int_bin(IntOp::Div, 64, true, (-9i64) as u64, 4), (-2i64) as u64);
        assert_eq!(int_bin(IntOp::Div, 16, true, 0xFFF8, 3), 0xFFFE); // -8 / 3 = -2 in 16 bits
        // Only the low `bits` of each operand count.
        assert_eq!(int_bin(IntOp::Div, 32, false, 0x1_0000_0010, 4), 4);
    }

    #[test]
    fn conversions() {
        let neg = (-5i32) as u32 as u64;
        assert_eq!(
            convert(
                NumTy::Int { bits: 64, signed: true },
                NumTy::Int { bits: 32, signed: true },
                Round::Default,
                false,
                false,
                neg
            ),
            Ok((-5i64) as u64)
        );
        assert_eq!(
            convert(
                NumTy::Int {
                    bits: 32,
                    signed: false
                },
                NumTy::Int {
                    bits: 64,
                    signed: false
                },
                Round::Default,
                false,
                false,
                0x1_0000_0005
            ),
            Ok(5)
        );
        let f = convert(
            NumTy::F32,
            NumTy::Int { bits: 32, signed: true },
            Round::Nearest,
            false,
            false,
            neg,
        )
        .unwrap();
        assert_eq!(f32::from_bits(f as u32), -5.0);
        let i = convert(
            NumTy::Int { bits: 32, signed: true },
            NumTy::F32,
            Round::Zero,
            false,
            false,
            (-2.7f32).to_bits() as u64,
        )
        .unwrap();
        assert_eq!(i as u32 as i32, -2);
        let sat = convert(
            NumTy::Int { bits: 32, signed: true },
            NumTy::F32,
            Round::Nearest,
            false,
            false,
            1e20f32.to_bits() as u64,
        )
        .unwrap();
        assert_eq!(sat as u32 as i32, i32::MAX);
    }

    #[test]
    fn directed_rounding_brackets_the_exact_value() {
        let tiny = 2f32.powi(-30);
        assert_eq!(f32_directed(DirectedOp::Add, Round::Up, 1.0, tiny, 0.0), 1f32.next_up());
        assert_eq!(f32_directed(DirectedOp::Add, Round::Down, 1.0, tiny, 0.0), 1.0);
        assert_eq!(f32_directed(DirectedOp::Add, Round::Zero, -1.0, -tiny, 0.0), -1.0);
        assert_eq!(
            f32_directed(DirectedOp::Add, Round::Down, -1.0, -tiny, 0.0),
            (-1f32).next_down()
        );
        assert_eq!(
            f32_directed(DirectedOp::Sub, Round::Down, 1.0, 1.0, 0.0).to_bits(),
            (-0f32).to_bits()
        );
        assert_eq!(
            f32_directed(DirectedOp::Sub, Round::Zero, 1.0, 1.0, 0.0).to_bits(),
            0f32.to_bits()
        );
        assert_eq!(f32_directed(DirectedOp::Mul, Round::Zero, f32::MAX, 2.0, 0.0), f32::MAX);
        assert_eq!(
            f32_directed(DirectedOp::Mul, Round::Up, f32::MAX, 2.0, 0.0),
            f32::INFINITY
        );
        // Integers past f32's 24 bits.
        assert_eq!(round_f64_to_f32(16_777_217.0, 0.0, Round::Zero), 16_777_216.0);
        assert_eq!(round_f64_to_f32(16_777_217.0, 0.0, Round::Up), 16_777_218.0);
        assert_eq!(round_f64_to_f32(-16_777_217.0, 0.0, Round::Down), -16_777_218.0);
        // The error is far below f64's precision of the sum: two-sum keeps its sign.
        assert_eq!(
            f32_directed(DirectedOp::Fma, Round::Down, 1.0, 1.0, -1e-30),
            1f32.next_down()
        );
        // Random operands: down <= exact <= up, one ulp apart at most, toward zero is one of them.
        let mut x = 0x9E37_79B9u32;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            f32::from_bits((x & 0x3FFF_FFFF) | ((x & 1) << 31)) // finite, both signs
        };
        for _ in 0..20_000 {
            let (a, b) = (next(), next());
            let exact = a as f64 * b as f64; // exact in f64
            let (down, up) = (
                f32_directed(DirectedOp::Mul, Round::Down, a, b, 0.0),
                f32_directed(DirectedOp::Mul, Round::Up, a, b, 0.0),
            );
            assert!(down as f64 <= exact && exact <= up as f64, "{a} * {b}");
            assert!(up == down || up == down.next_up(), "{a} * {b}: {down} {up}");
            let zero = f32_directed(DirectedOp::Mul, Round::Zero, a, b, 0.0);
            assert_eq!(zero, if exact >= 0.0 { down } else { up }, "{a} * {b}");
        }
    }
}
