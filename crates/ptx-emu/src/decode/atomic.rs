//! Decoding of `atom` and `red`: atomic read-modify-writes on global, shared or generic
//! memory, 32- and 64-bit, integer and float add.

use super::Decoder;
use crate::ir::*;
use crate::ptx::ast;

impl Decoder {
    pub(super) fn atomic(&self, i: &ast::Instruction, red: bool, mods: &[&str]) -> Result<Atomic, String> {
        let mut space = MemSpace::Generic;
        let mut op = None;
        let mut ty = None;
        for m in mods {
            match *m {
                "global" => space = MemSpace::Global,
                "shared" => space = MemSpace::Shared,
                "relaxed" | "acquire" | "release" | "acq_rel" | "sc" | "cta" | "gpu" | "sys" | "cluster" | "noftz" => {}
                "add" => op = Some(AtomOp::Add),
                "min" => op = Some(AtomOp::Min),
                "max" => op = Some(AtomOp::Max),
                "inc" => op = Some(AtomOp::Inc),
                "dec" => op = Some(AtomOp::Dec),
                "and" => op = Some(AtomOp::And),
                "or" => op = Some(AtomOp::Or),
                "xor" => op = Some(AtomOp::Xor),
                "exch" => op = Some(AtomOp::Exch),
                "cas" => op = Some(AtomOp::Cas),
                "u32" => ty = Some(AtomTy::U32),
                "s32" => ty = Some(AtomTy::S32),
                "u64" => ty = Some(AtomTy::U64),
                "s64" => ty = Some(AtomTy::S64),
                "f32" => ty = Some(AtomTy::F32),
                "f64" => ty = Some(AtomTy::F64),
                "b32" => ty = Some(AtomTy::B32),
                "b64" => ty = Some(AtomTy::B64),
                other => return Err(format!("atomic modifier `.{other}` is not supported")),
            }
        }
        let op = op.ok_or("atomic without an operation")?;
        let ty = ty.ok_or("atomic without a supported type")?;
        let float = matches!(ty, AtomTy::F32 | AtomTy::F64);
        if float && op != AtomOp::Add && op != AtomOp::Exch {
            return Err("float atomics other than add and exch are not supported".into());
        }
        let bits = ty.bytes() as u8 * 8;
        let (d, rest) = if red {
            (None, &i.operands[..])
        } else {
            let first = i.operands.first().ok_or("missing destination")?;
            (Some(self.dst(first)?), &i.operands[1..])
        };
        let wanted = if op == AtomOp::Cas { 3 } else { 2 };
        if rest.len() != wanted {
            return Err(format!(
                "expected {} operands, found {}",
                wanted + d.is_some() as usize,
                i.operands.len()
            ));
        }
        let (addr, symbol_space) = self.addr(&rest[0])?;
        if let Some(sym) = symbol_space {
            if space == MemSpace::Generic {
                space = sym;
            } else if sym != space {
                return Err(format!("symbol is in {sym:?} space but accessed as {space:?}"));
            }
        }
        Ok(Atomic {
            space,
            op,
            ty,
            d,
            addr,
            b: self.src(&rest[1], bits, float)?,
            c: rest.get(2).map(|c| self.src(c, bits, float)).transpose()?,
        })
    }
}
