//! Decoding of the arithmetic that learner kernels bring beyond the lessons' kernels: byte
//! permutes, packed dot products, float classification, approximate transcendentals, and
//! half precision (`__half`, `__nv_bfloat16` and their x2 forms).

use super::Decoder;
use crate::ir::*;
use crate::ptx::ast::{self, Operand};

/// `.f16`, `.bf16`, `.f16x2`, `.bf16x2`: (bf16, x2).
pub(super) fn half_type(ty: &str) -> Option<(bool, bool)> {
    match ty {
        "f16" => Some((false, false)),
        "f16x2" => Some((false, true)),
        "bf16" => Some((true, false)),
        "bf16x2" => Some((true, true)),
        _ => None,
    }
}

impl Decoder {
    pub(super) fn numeric(
        &self,
        i: &ast::Instruction,
        base: &str,
        mods: &[&str],
        ty: &str,
    ) -> Result<NumericKind, String> {
        let has = |m: &str| mods.contains(&m);
        let double = ty == "f64";
        let bits = if double { 64 } else { 32 };
        match base {
            "prmt" => {
                let mode = match mods.iter().find(|m| **m != "b32").copied() {
                    None => PrmtMode::Default,
                    Some("f4e") => PrmtMode::F4e,
                    Some("b4e") => PrmtMode::B4e,
                    Some("rc8") => PrmtMode::Rc8,
                    Some("ecl") => PrmtMode::Ecl,
                    Some("ecr") => PrmtMode::Ecr,
                    Some("rc16") => PrmtMode::Rc16,
                    Some(other) => return Err(format!("prmt mode `.{other}` is not supported")),
                };
                let o = self.operands(i, 4)?;
                Ok(NumericKind::Prmt {
                    mode,
                    d: self.dst(&o[0])?,
                    a: self.src(&o[1], 32, false)?,
                    b: self.src(&o[2], 32, false)?,
                    c: self.src(&o[3], 32, false)?,
                })
            }
            "shf" => {
                let o = self.operands(i, 4)?;
                Ok(NumericKind::Shf {
                    left: has("l"),
                    clamp: has("clamp"),
                    d: self.dst(&o[0])?,
                    a: self.src(&o[1], 32, false)?,
                    b: self.src(&o[2], 32, false)?,
                    c: self.src(&o[3], 32, false)?,
                })
            }
            "dp4a" | "dp2a" => {
                // dp4a.atype.btype, dp2a.{lo,hi}.atype.btype
                let types: Vec<&str> = mods.iter().copied().filter(|m| matches!(*m, "u32" | "s32")).collect();
                if types.len() != 2 {
                    return Err("dp4a/dp2a need two operand types".into());
                }
                let o = self.operands(i, 4)?;
                Ok(NumericKind::Dp {
                    four: base == "dp4a",
                    hi: has("hi"),
                    a_signed: types[0] == "s32",
                    b_signed: types[1] == "s32",
                    d: self.dst(&o[0])?,
                    a: self.src(&o[1], 32, false)?,
                    b: self.src(&o[2], 32, false)?,
                    c: self.src(&o[3], 32, false)?,
                })
            }
            "testp" => {
                let op = if has("finite") {
                    TestpOp::Finite
                } else if has("infinite") {
                    TestpOp::Infinite
                } else if has("number") {
                    TestpOp::Number
                } else if has("notanumber") {
                    TestpOp::NotANumber
                } else if has("normal") {
                    TestpOp::Normal
                } else if has("subnormal") {
                    TestpOp::Subnormal
                } else {
                    return Err("testp needs a test".into());
                };
                let o = self.operands(i, 2)?;
                Ok(NumericKind::Testp {
                    op,
                    double,
                    d: self.pred(super::name_of(&o[0])?)?,
                    a: self.src(&o[1], bits, true)?,
                })
            }
            "copysign" => {
                let o = self.operands(i, 3)?;
                Ok(NumericKind::Copysign {
                    double,
                    d: self.dst(&o[0])?,
                    a: self.src(&o[1], bits, true)?,
                    b: self.src(&o[2], bits, true)?,
                })
            }
            "mul24" => {
                let o = self.operands(i, 3)?;
                Ok(NumericKind::Mul24 {
                    hi: has("hi"),
                    signed: ty == "s32",
                    d: self.dst(&o[0])?,
                    a: self.src(&o[1], 32, false)?,
                    b: self.src(&o[2], 32, false)?,
                })
            }
            "lop3" => {
                // The predicate-producing form (`lop3.or.b32 d|p, ...`) is not decoded.
                let o = self.operands(i, 5)?;
                let lut = match &o[4] {
                    ast::Operand::Int(v) if (0..=255).contains(v) => *v as u8,
                    _ => return Err("lop3 needs an immediate truth table (0..255)".into()),
                };
                Ok(NumericKind::Lop3 {
                    d: self.dst(&o[0])?,
                    a: self.src(&o[1], 32, false)?,
                    b: self.src(&o[2], 32, false)?,
                    c: self.src(&o[3], 32, false)?,
                    lut,
                })
            }
            "sad" => {
                let o = self.operands(i, 4)?;
                let bits = crate::ptx::type_bytes(ty).ok_or("sad needs a type")? as u8 * 8;
                Ok(NumericKind::Sad {
                    bits,
                    signed: ty.starts_with('s'),
                    d: self.dst(&o[0])?,
                    a: self.src(&o[1], bits, false)?,
                    b: self.src(&o[2], bits, false)?,
                    c: self.src(&o[3], bits, false)?,
                })
            }
            "fns" => {
                let o = self.operands(i, 4)?;
                Ok(NumericKind::Fns {
                    d: self.dst(&o[0])?,
                    mask: self.src(&o[1], 32, false)?,
                    base: self.src(&o[2], 32, false)?,
                    offset: self.src(&o[3], 32, true)?,
                })
            }
            "bfind" => {
                let o = self.operands(i, 2)?;
                let width = crate::ptx::type_bytes(ty).ok_or("bfind needs a type")? as u8 * 8;
                Ok(NumericKind::Bfind {
                    bits: width,
                    signed: ty.starts_with('s'),
                    shiftamt: has("shiftamt"),
                    d: self.dst(&o[0])?,
                    a: self.src(&o[1], width, false)?,
                })
            }
            _ => Err("this instruction is not supported by the emulator".into()),
        }
    }

    /// `add`/`sub`/`mul`/`fma.{rz,rm,rp}.f32`: `Some` when the instruction is one of those
    /// (operands `o` already split), `None` for every other float form.
    pub(super) fn directed(
        &self,
        base: &str,
        mods: &[&str],
        o: &[ast::Operand],
    ) -> Result<Option<NumericKind>, String> {
        let round = match mods.iter().find(|m| matches!(**m, "rz" | "rm" | "rp")) {
            Some(&"rz") => Round::Zero,
            Some(&"rm") => Round::Down,
            Some(&"rp") => Round::Up,
            _ => return Ok(None),
        };
        if !mods.contains(&"f32") {
            return Err(format!(
                "`{base}` rounded toward zero, down or up is supported on .f32 only"
            ));
        }
        let op = match base {
            "add" => DirectedOp::Add,
            "sub" => DirectedOp::Sub,
            "mul" => DirectedOp::Mul,
            "fma" | "mad" => DirectedOp::Fma,
            _ => return Err(format!("`{base}` rounded toward zero, down or up is not supported")),
        };
        Ok(Some(NumericKind::FDirected {
            op,
            round,
            ftz: mods.contains(&"ftz"),
            sat: mods.contains(&"sat"),
            d: self.dst(&o[0])?,
            a: self.src(&o[1], 32, true)?,
            b: self.src(&o[2], 32, true)?,
            c: match o.get(3) {
                Some(c) => self.src(c, 32, true)?,
                None => Src::Imm(0),
            },
        }))
    }

    /// `ex2`, `lg2`, `sin`, `cos`, `tanh`, and the `.approx` forms of `rcp`, `sqrt`, `rsqrt`,
    /// `div` (and `div.full`).
    pub(super) fn approx(
        &self,
        i: &ast::Instruction,
        base: &str,
        mods: &[&str],
        ty: &str,
    ) -> Result<NumericKind, String> {
        let double = ty == "f64";
        if !matches!(ty, "f32" | "f64") {
            return Err(format!("`{base}` on `.{ty}` is not supported"));
        }
        let op = match base {
            "ex2" => ApproxOp::Ex2,
            "lg2" => ApproxOp::Lg2,
            "sin" => ApproxOp::Sin,
            "cos" => ApproxOp::Cos,
            "tanh" => ApproxOp::Tanh,
            "rcp" => ApproxOp::Rcp,
            "sqrt" => ApproxOp::Sqrt,
            "rsqrt" => ApproxOp::Rsqrt,
            "div" => ApproxOp::Div,
            _ => return Err("not an approximate operation".into()),
        };
        let bits = if double { 64 } else { 32 };
        let ftz = mods.contains(&"ftz");
        if op == ApproxOp::Div {
            let o = self.operands(i, 3)?;
            return Ok(NumericKind::FApprox {
                op,
                double,
                ftz,
                d: self.dst(&o[0])?,
                a: self.src(&o[1], bits, true)?,
                b: self.src(&o[2], bits, true)?,
            });
        }
        let o = self.operands(i, 2)?;
        Ok(NumericKind::FApprox {
            op,
            double,
            ftz,
            d: self.dst(&o[0])?,
            a: self.src(&o[1], bits, true)?,
            b: Src::Imm(0),
        })
    }

    /// Arithmetic and comparisons on f16 / bf16 (scalar or x2).
    pub(super) fn half(
        &self,
        i: &ast::Instruction,
        base: &str,
        mods: &[&str],
        ty: &str,
    ) -> Result<NumericKind, String> {
        let (bf16, x2) = half_type(ty).ok_or("not a half type")?;
        let width = if x2 { 32 } else { 16 };
        let has = |m: &str| mods.contains(&m);
        for m in mods {
            if half_type(m).is_none() && !matches!(*m, "rn" | "ftz" | "sat" | "NaN") {
                return Err(format!("modifier `.{m}` is not supported on half precision"));
            }
        }
        let op = match base {
            "add" => HalfOp::Add,
            "sub" => HalfOp::Sub,
            "mul" => HalfOp::Mul,
            "fma" => HalfOp::Fma,
            "min" => HalfOp::Min,
            "max" => HalfOp::Max,
            "neg" => HalfOp::Neg,
            "abs" => HalfOp::Abs,
            _ => return Err(format!("`{base}` on half precision is not supported")),
        };
        let count = match op {
            HalfOp::Neg | HalfOp::Abs => 2,
            HalfOp::Fma => 4,
            _ => 3,
        };
        let o = self.operands(i, count)?;
        let src = |k: usize| -> Result<Src, String> {
            match o.get(k) {
                Some(Operand::Name(_)) | Some(Operand::Int(_)) => self.src(&o[k], width, false),
                Some(other) => Err(format!("unsupported half-precision operand {other:?}")),
                None => Ok(Src::Imm(0)),
            }
        };
        Ok(NumericKind::Half {
            op,
            bf16,
            x2,
            ftz: has("ftz"),
            sat: has("sat"),
            d: self.dst(&o[0])?,
            a: src(1)?,
            b: src(2)?,
            c: src(3)?,
        })
    }
}
