//! Bit-level helpers every lane operation uses: masks and sign extension of n-bit values,
//! f32 results as the GPU writes them (canonical NaN, flush to zero), and IEEE comparisons
//! with PTX's ordered/unordered forms. The lowest layer of the emulator's arithmetic.

use super::ir::Cmp;
use half::{bf16, f16};

#[inline(always)]
pub fn mask(bits: u8) -> u64 {
    if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 }
}

#[inline(always)]
pub fn sext(value: u64, bits: u8) -> i64 {
    if bits >= 64 {
        value as i64
    } else {
        let shift = 64 - bits as u32;
        ((value << shift) as i64) >> shift
    }
}

/// The canonical NaN NVIDIA GPUs produce for f32.
pub const CANONICAL_NAN_F32: u32 = 0x7FFF_FFFF;

#[inline(always)]
pub fn f32_bits(value: f32) -> u64 {
    if value.is_nan() {
        CANONICAL_NAN_F32 as u64
    } else {
        value.to_bits() as u64
    }
}

#[inline(always)]
pub fn ftz32(x: f32) -> f32 {
    if x.is_subnormal() { 0.0f32.copysign(x) } else { x }
}

#[inline(always)]
pub fn ftz64(x: f64) -> f64 {
    if x.is_subnormal() { 0.0f64.copysign(x) } else { x }
}

/// A PTX comparison of two floats (`u` forms are true when either is NaN).
pub fn float_compare(cmp: Cmp, a: f64, b: f64) -> bool {
    let unordered = a.is_nan() || b.is_nan();
    match cmp {
        Cmp::Eq => a == b,
        Cmp::Ne => !unordered && a != b,
        Cmp::Lt => a < b,
        Cmp::Le => a <= b,
        Cmp::Gt => a > b,
        Cmp::Ge => a >= b,
        Cmp::Equ => unordered || a == b,
        Cmp::Neu => unordered || a != b,
        Cmp::Ltu => unordered || a < b,
        Cmp::Leu => unordered || a <= b,
        Cmp::Gtu => unordered || a > b,
        Cmp::Geu => unordered || a >= b,
        Cmp::Num => !unordered,
        Cmp::Nan => unordered,
    }
}

/// The canonical NaN of f16 and bf16 results.
const HALF_NAN: u16 = 0x7FFF;

pub fn half_to_f64(bits: u16, is_bf16: bool) -> f64 {
    if is_bf16 {
        bf16::from_bits(bits).to_f64()
    } else {
        f16::from_bits(bits).to_f64()
    }
}

/// Rounds to f16/bf16 (nearest even), with the canonical NaN.
pub fn f64_to_half(v: f64, is_bf16: bool) -> u16 {
    if v.is_nan() {
        return HALF_NAN;
    }
    if is_bf16 {
        bf16::from_f64(v).to_bits()
    } else {
        f16::from_f64(v).to_bits()
    }
}

pub fn half_to_f32(bits: u16, is_bf16: bool) -> f32 {
    half_to_f64(bits, is_bf16) as f32
}
