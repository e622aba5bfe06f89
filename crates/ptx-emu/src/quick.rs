//! Quick forms of the plain instructions a kernel is mostly made of (integer and float
//! arithmetic on registers and immediates, compares, predicate logic, integer
//! conversions), chosen once per program, when it is built, as a small `Copy` value with
//! the operands' places in the register file already worked out: the instruction becomes
//! `Kind::Quick` in place of its general `Kind::Work(Work::Alu(..))` (the way wasmi picks
//! specialised instructions when it translates a module).
//!
//! `BlockRunner::execute` gets to the same loops through a call with a large stack frame,
//! a match on the instruction's family and kind, a second match on its operation and width,
//! and a look at each operand's kind; for an `add.s32` that was as much work as the 32
//! additions. `run_warp` runs a quick form in place and hands the other work to `execute`,
//! whose general path (`alu::int_bin`, `alu::f32_bin`, `alu::convert`, ...) is the
//! reference: tests/quick_forms.rs runs real kernels both ways
//! (`Program::without_quick_forms` puts the general forms back) and wants the same bits.
//! The types are in `ir.rs`, with the rest of the decoded program.

use super::alu;
use super::ir::{Alu, BinOp, FOp, Inst, IntOp, Kind, MadPart, NumTy, Opd, Quick, Reg, Src, Work};
use super::lane_loops::{Operand, apply};
use super::warp::Warp;

/// Gives every plain ALU instruction of `insts` that has a quick form that form
/// (`Kind::Quick`, keeping the general form beside it). `value_regs`: the program's register
/// count.
pub fn choose_quick_forms(insts: &mut [Inst], value_regs: usize) {
    for inst in insts {
        if let Kind::Work(Work::Alu(alu)) = &inst.kind
            && let Some(quick) = quick_form(alu, value_regs)
        {
            let general = Box::new(alu.clone());
            inst.kind = Kind::Quick { quick, general };
        }
    }
}

/// The quick form of `alu`, if it has one. `value_regs`: the program's register count (an
/// operand outside it is left to `execute`, which names the problem).
fn quick_form(alu: &Alu, value_regs: usize) -> Option<Quick> {
    let reg = |r: Reg| ((r as usize) < value_regs).then_some(r);
    let opd = |s: Src| match s {
        Src::Reg(r) => reg(r).map(Opd::Reg),
        Src::Imm(v) => Some(Opd::Imm(v)),
        Src::Special(_) => None,
    };
    let bin = |op: BinOp, d: Reg, a: Src, b: Src| {
        Some(Quick::Bin {
            op,
            d: reg(d)?,
            a: opd(a)?,
            b: opd(b)?,
        })
    };
    let form = || -> Option<Quick> {
        Some(match alu {
            Alu::Mov { d, a } => Quick::Mov {
                d: reg(*d)?,
                a: opd(*a)?,
            },
            Alu::IntBin {
                op,
                bits,
                signed,
                d,
                a,
                b,
            } => {
                let op = match (op, bits) {
                    (IntOp::Add, 32) => BinOp::Add32,
                    (IntOp::Sub, 32) => BinOp::Sub32,
                    (IntOp::MulLo, 32) => BinOp::MulLo32,
                    (IntOp::And, 32) => BinOp::And32,
                    (IntOp::Or, 32) => BinOp::Or32,
                    (IntOp::Xor, 32) => BinOp::Xor32,
                    (IntOp::Shr, 32) if !*signed => BinOp::ShrU32,
                    (IntOp::Shr, 32) => BinOp::ShrS32,
                    (IntOp::Min, 32) if *signed => BinOp::MinS32,
                    (IntOp::Max, 32) if *signed => BinOp::MaxS32,
                    (IntOp::Add, 64) => BinOp::Add64,
                    (IntOp::Sub, 64) => BinOp::Sub64,
                    (IntOp::MulLo, 64) => BinOp::MulLo64,
                    (IntOp::Shl, 32) => BinOp::Shl32,
                    (IntOp::Shl, 64) => BinOp::Shl64,
                    _ => BinOp::Int {
                        op: *op,
                        bits: *bits,
                        signed: *signed,
                    },
                };
                return bin(op, *d, *a, *b);
            }
            Alu::MulWide {
                bits: 32,
                signed,
                d,
                a,
                b,
            } => return bin(BinOp::MulWide32 { signed: *signed }, *d, *a, *b),
            Alu::FBin {
                op,
                double: false,
                ftz: false,
                sat: false,
                d,
                a,
                b,
            } => {
                let op = match op {
                    FOp::Add => BinOp::AddF32,
                    FOp::Mul => BinOp::MulF32,
                    FOp::Sub => BinOp::SubF32,
                    _ => return None,
                };
                return bin(op, *d, *a, *b);
            }
            Alu::FFma {
                double: false,
                ftz: false,
                sat: false,
                d,
                a,
                b,
                c,
            } => Quick::FmaF32 {
                d: reg(*d)?,
                a: opd(*a)?,
                b: opd(*b)?,
                c: opd(*c)?,
            },
            Alu::Mad {
                part: MadPart::Lo,
                bits,
                d,
                a,
                b,
                c,
                ..
            } => Quick::MadLo {
                bits: *bits,
                d: reg(*d)?,
                a: opd(*a)?,
                b: opd(*b)?,
                c: opd(*c)?,
            },
            Alu::Cvt {
                to: NumTy::Int { bits: to, .. },
                from: NumTy::Int { bits: from, signed },
                sat: false,
                d,
                a,
                ..
            } => Quick::CvtInt {
                d: reg(*d)?,
                a: opd(*a)?,
                from: *from,
                sext: *signed,
                keep: alu::mask(*to) & if *signed { u64::MAX } else { alu::mask(*from) },
            },
            Alu::Setp {
                cmp,
                ty,
                d,
                d_not: None,
                a,
                b,
                combine: None,
            } => Quick::Setp {
                cmp: *cmp,
                ty: *ty,
                d: *d,
                a: opd(*a)?,
                b: opd(*b)?,
            },
            Alu::PredSet { d, op, a, b } => Quick::Pred {
                d: *d,
                op: *op,
                a: *a,
                b: *b,
            },
            _ => return None,
        })
    };
    form()
}

/// The 32 lanes of `o` in the register file, or the immediate.
#[inline(always)]
fn operand(warp: &Warp, o: Opd) -> Operand {
    match o {
        Opd::Reg(r) => Operand::Lanes(warp.reg(r).as_ptr()),
        Opd::Imm(v) => Operand::Splat(v),
    }
}

/// Register `r`'s 32 lanes.
#[inline(always)]
fn reg_lanes(warp: &Warp, r: Reg) -> &[u64; 32] {
    warp.reg(r).try_into().expect("32 lanes")
}

impl Quick {
    /// Runs this quick form for the lanes of `m`.
    #[inline(always)]
    pub fn run(&self, warp: &mut Warp, m: u32) {
        match *self {
            Quick::Mov { d, a } => {
                let a = operand(warp, a);
                apply(warp, m, d, [a, Operand::Splat(0), Operand::Splat(0)], |x, _, _| x);
            }
            Quick::Bin { op, d, a, b } => {
                let (a, b) = (operand(warp, a), operand(warp, b));
                let ops = [a, b, Operand::Splat(0)];
                match op {
                    BinOp::Add32 => apply(warp, m, d, ops, |x, y, _| (x as u32).wrapping_add(y as u32) as u64),
                    BinOp::Sub32 => apply(warp, m, d, ops, |x, y, _| (x as u32).wrapping_sub(y as u32) as u64),
                    BinOp::MulLo32 => apply(warp, m, d, ops, |x, y, _| (x as u32).wrapping_mul(y as u32) as u64),
                    BinOp::And32 => apply(warp, m, d, ops, |x, y, _| (x & y) & 0xFFFF_FFFF),
                    BinOp::Or32 => apply(warp, m, d, ops, |x, y, _| (x | y) & 0xFFFF_FFFF),
                    BinOp::Xor32 => apply(warp, m, d, ops, |x, y, _| (x ^ y) & 0xFFFF_FFFF),
                    BinOp::ShrU32 => apply(warp, m, d, ops, |x, y, _| {
                        (x & 0xFFFF_FFFF) >> (y & 0xFFFF_FFFF).min(63)
                    }),
                    BinOp::ShrS32 => apply(warp, m, d, ops, |x, y, _| {
                        ((x as i32) >> (y & 0xFFFF_FFFF).min(31)) as u32 as u64
                    }),
                    BinOp::MinS32 => apply(warp, m, d, ops, |x, y, _| (x as i32).min(y as i32) as u32 as u64),
                    BinOp::MaxS32 => apply(warp, m, d, ops, |x, y, _| (x as i32).max(y as i32) as u32 as u64),
                    BinOp::Add64 => apply(warp, m, d, ops, |x, y, _| x.wrapping_add(y)),
                    BinOp::Sub64 => apply(warp, m, d, ops, |x, y, _| x.wrapping_sub(y)),
                    BinOp::MulLo64 => apply(warp, m, d, ops, |x, y, _| x.wrapping_mul(y)),
                    // A shift by the width or more clears the register, as `int_bin` has it.
                    BinOp::Shl32 => apply(warp, m, d, ops, |x, y, _| {
                        (x << (y & 0xFFFF_FFFF).min(63)) & 0xFFFF_FFFF
                    }),
                    BinOp::Shl64 => apply(
                        warp,
                        m,
                        d,
                        ops,
                        |x, y, _| {
                            if y & 0xFFFF_FFFF >= 64 { 0 } else { x << (y & 63) }
                        },
                    ),
                    BinOp::AddF32 => apply(warp, m, d, ops, |x, y, _| {
                        alu::f32_bits(f32::from_bits(x as u32) + f32::from_bits(y as u32))
                    }),
                    BinOp::SubF32 => apply(warp, m, d, ops, |x, y, _| alu::f32_bin(FOp::Sub, false, false, x, y)),
                    BinOp::MulF32 => apply(warp, m, d, ops, |x, y, _| {
                        alu::f32_bits(f32::from_bits(x as u32) * f32::from_bits(y as u32))
                    }),
                    BinOp::MulWide32 { signed: true } => apply(warp, m, d, ops, |x, y, _| {
                        ((x as i32 as i64).wrapping_mul(y as i32 as i64)) as u64
                    }),
                    BinOp::MulWide32 { signed: false } => {
                        apply(warp, m, d, ops, |x, y, _| (x as u32 as u64) * (y as u32 as u64))
                    }
                    BinOp::Int { op, bits, signed } => {
                        apply(warp, m, d, ops, |x, y, _| alu::int_bin(op, bits, signed, x, y))
                    }
                }
            }
            Quick::FmaF32 { d, a, b, c } => {
                let ops = [operand(warp, a), operand(warp, b), operand(warp, c)];
                apply(warp, m, d, ops, |x, y, z| alu::f32_fma(false, false, x, y, z));
            }
            Quick::MadLo { bits, d, a, b, c } => {
                let ops = [operand(warp, a), operand(warp, b), operand(warp, c)];
                let keep = alu::mask(bits);
                apply(warp, m, d, ops, |x, y, z| x.wrapping_mul(y).wrapping_add(z) & keep);
            }
            Quick::CvtInt { d, a, from, sext, keep } => {
                let ops = [operand(warp, a), Operand::Splat(0), Operand::Splat(0)];
                if sext {
                    apply(warp, m, d, ops, |x, _, _| (alu::sext(x, from) as u64) & keep);
                } else {
                    apply(warp, m, d, ops, |x, _, _| x & keep);
                }
            }
            Quick::Setp { cmp, ty, d, a, b } => {
                let bits = match (a, b) {
                    (Opd::Reg(a), Opd::Reg(b)) => {
                        let (a, b) = (reg_lanes(warp, a), reg_lanes(warp, b));
                        alu::compare_lanes(cmp, ty, |l| a[l], |l| b[l])
                    }
                    (Opd::Reg(a), Opd::Imm(b)) => {
                        let a = reg_lanes(warp, a);
                        alu::compare_lanes(cmp, ty, |l| a[l], |_| b)
                    }
                    (Opd::Imm(a), Opd::Reg(b)) => {
                        let b = reg_lanes(warp, b);
                        alu::compare_lanes(cmp, ty, |_| a, |l| b[l])
                    }
                    (Opd::Imm(a), Opd::Imm(b)) => alu::compare_lanes(cmp, ty, |_| a, |_| b),
                };
                warp.write_pred(d, m, bits);
            }
            Quick::Pred { d, op, a, b } => warp.set_pred(d, m, op, a, b),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Program;
    use crate::ir::{Alu, Kind, Quick, Work};

    const PTX: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
        .visible .entry k()\n{\n.reg .pred %p<3>;\n.reg .b32 %r<5>;\n.reg .f32 %f<3>;\n\
        mov.u32 %r1, %tid.x;\nadd.s32 %r2, %r1, 7;\nsetp.lt.s32 %p1, %r2, %r1;\n\
        bfe.u32 %r3, %r2, 4, 8;\nmov.u32 %r4, %r3;\ncvt.rn.f32.s32 %f1, %r4;\nret;\n}\n";

    #[test]
    fn quick_forms_replace_their_general_instruction_and_come_back_out() {
        let program = Program::from_ptx(PTX, "k").unwrap();
        let quick: Vec<bool> = program
            .insts
            .iter()
            .map(|i| matches!(i.kind, Kind::Quick { .. }))
            .collect();
        // A special register (`%tid.x`), `bfe` and a float `cvt` have none; `ret` is control flow.
        assert_eq!(quick, [false, true, true, false, true, false, false]);
        assert!(matches!(
            program.insts[1].kind,
            Kind::Quick {
                quick: Quick::Bin { .. },
                ..
            }
        ));

        let general = program.without_quick_forms();
        for (q, g) in program.insts.iter().zip(&general.insts) {
            match (&q.kind, &g.kind) {
                (Kind::Quick { general: alu, .. }, Kind::Work(Work::Alu(back))) => assert_eq!(**alu, *back),
                (Kind::Quick { .. }, other) => panic!("{other:?} is no general form"),
                (kind, back) => assert_eq!(kind, back),
            }
        }
        assert!(matches!(
            general.insts[1].kind,
            Kind::Work(Work::Alu(Alu::IntBin { .. }))
        ));
        assert_eq!(general.without_quick_forms().insts, general.insts);
    }
}
