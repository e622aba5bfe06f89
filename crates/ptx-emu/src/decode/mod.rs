//! PTX AST -> [`Program`]: gives each instruction its meaning. An instruction the emulator
//! cannot execute exactly is rejected here, naming its opcode and PTX line, so nothing is
//! ever executed wrongly in silence.

mod async_ops;
mod atomic;
mod numeric;
mod sync;

use super::cfg::reconvergence_points;
use super::ir::*;
use super::memory::{ALLOCATION_ALIGN, DEVICE_GLOBALS_BASE};
use super::quick::choose_quick_forms;
use crate::ptx::ast::{self, Operand, Space, Statement};
use crate::ptx::inline::{ASSERT_OP, PRINTF_OP, UNSUPPORTED_OP, inline_calls};
use crate::ptx::{PtxError, type_bytes};
use std::collections::HashMap;

/// Decodes entry `name` of `module`, with its calls inlined (see `ptx::inline`).
pub fn decode_entry(module: &ast::Module, name: &str) -> Result<Program, PtxError> {
    let entry = module.entry(name).ok_or_else(|| PtxError {
        line: 0,
        message: format!("the PTX has no .entry `{name}`"),
    })?;
    let function = inline_calls(module, entry)?;
    let mut decoder = Decoder::new(&function, module)?;
    decoder.decode_body(&function)?;
    let reconverge = reconvergence_points(&decoder.insts);
    let value_regs = decoder.value_regs.len();
    // The quick forms, chosen once here: each replaces its general instruction.
    choose_quick_forms(&mut decoder.insts, value_regs);
    Ok(Program {
        name: name.to_string(),
        insts: decoder.insts,
        value_regs,
        pred_regs: decoder.pred_regs.len(),
        shared_bytes: decoder.shared_bytes,
        dynamic_shared_offset: decoder.dynamic_shared_offset,
        local_bytes: decoder.local_bytes,
        params: decoder.param_layout,
        param_bytes: decoder.param_bytes,
        const_data: decoder.const_data,
        reconverge,
        reqntid: function.reqntid,
        cluster_dims: function.cluster_dims,
        files: module.files.clone(),
        globals: decoder.globals,
    })
}

struct Decoder {
    value_regs: HashMap<String, Reg>,
    pred_regs: HashMap<String, PReg>,
    /// Symbol -> (space, address in that space's window).
    symbols: HashMap<String, (MemSpace, u64)>,
    labels: HashMap<String, u32>,
    insts: Vec<Inst>,
    shared_bytes: u64,
    dynamic_shared_offset: Option<u64>,
    local_bytes: u64,
    param_layout: Vec<(u64, u32)>,
    param_bytes: u64,
    const_data: Vec<u8>,
    /// Branches whose label is resolved after the body is read: (pc, label, ptx line).
    pending: Vec<(usize, String, u32)>,
    /// Module-scope `.global` variables and where they live.
    globals: Vec<GlobalVar>,
}

fn align_up(value: u64, align: u64) -> u64 {
    value.div_ceil(align.max(1)) * align.max(1)
}

impl Decoder {
    fn new(function: &ast::Function, module: &ast::Module) -> Result<Decoder, PtxError> {
        let mut d = Decoder {
            value_regs: HashMap::new(),
            pred_regs: HashMap::new(),
            symbols: HashMap::new(),
            labels: HashMap::new(),
            insts: Vec::new(),
            shared_bytes: 0,
            dynamic_shared_offset: None,
            local_bytes: 0,
            param_layout: Vec::new(),
            param_bytes: 0,
            const_data: Vec::new(),
            pending: Vec::new(),
            globals: Vec::new(),
        };
        let mut global_end = DEVICE_GLOBALS_BASE;
        for decl in &function.regs {
            for name in &decl.names {
                // The parser gives a register declared again in a nested block a name of its
                // own, so a name declared twice here is a PTX error ptxas would reject too.
                let twice = if decl.ty == "pred" {
                    let id = d.pred_regs.len() as PReg;
                    d.pred_regs.insert(name.clone(), id).is_some()
                } else {
                    let id = d.value_regs.len() as Reg;
                    d.value_regs.insert(name.clone(), id).is_some()
                };
                if twice {
                    return Err(PtxError {
                        line: function.ptx_line,
                        message: format!("register `{name}` is declared twice in `{}`", function.name),
                    });
                }
            }
        }
        for p in &function.params {
            let offset = align_up(d.param_bytes, p.align as u64);
            d.symbols.insert(p.name.clone(), (MemSpace::Param, offset));
            d.param_layout.push((offset, p.bytes));
            d.param_bytes = offset + p.bytes as u64;
        }
        let mut dynamic = None;
        for v in module.vars.iter().chain(function.vars.iter()) {
            match v.space {
                Space::Shared if v.is_extern => dynamic = Some(v),
                Space::Shared => {
                    let offset = align_up(d.shared_bytes, v.align as u64);
                    d.symbols.insert(v.name.clone(), (MemSpace::Shared, offset));
                    d.shared_bytes = offset + v.bytes;
                }
                Space::Local => {
                    let offset = align_up(d.local_bytes, v.align as u64);
                    d.symbols.insert(v.name.clone(), (MemSpace::Local, offset));
                    d.local_bytes = offset + v.bytes;
                }
                Space::Const => {
                    let offset = align_up(d.const_data.len() as u64, v.align as u64);
                    d.const_data.resize(offset as usize, 0);
                    d.const_data
                        .extend(v.init.clone().unwrap_or_else(|| vec![0; v.bytes as usize]));
                    d.symbols.insert(v.name.clone(), (MemSpace::Const, offset));
                }
                Space::Global if !v.is_extern => {
                    let address = align_up(global_end, (v.align as u64).max(ALLOCATION_ALIGN));
                    global_end = address + v.bytes.max(1);
                    d.symbols.insert(v.name.clone(), (MemSpace::Global, address));
                    d.globals.push(GlobalVar {
                        name: v.name.clone(),
                        address,
                        bytes: v.bytes,
                        init: v.init.clone().unwrap_or_else(|| vec![0; v.bytes as usize]),
                    });
                }
                Space::Global | Space::Param => {
                    return Err(PtxError {
                        line: v.ptx_line,
                        message: format!("unsupported variable `{}`", v.name),
                    });
                }
            }
        }
        if let Some(v) = dynamic {
            let offset = align_up(d.shared_bytes, v.align.max(16) as u64);
            d.symbols.insert(v.name.clone(), (MemSpace::Shared, offset));
            d.dynamic_shared_offset = Some(offset);
        }
        Ok(d)
    }

    fn decode_body(&mut self, function: &ast::Function) -> Result<(), PtxError> {
        for statement in &function.body {
            match statement {
                Statement::Label(name) => {
                    self.labels.insert(name.clone(), self.insts.len() as u32);
                }
                Statement::Param(v) => {
                    return Err(PtxError {
                        line: v.ptx_line,
                        message: format!("`.param {}` outside a call sequence", v.name),
                    });
                }
                Statement::Instruction(i) => {
                    // The source line is not in the message: `ptx::source_of` finds it (the
                    // call site in the learner's file, for code inlined from a header).
                    let kind = self.kind(i).map_err(|message| PtxError {
                        line: i.ptx_line,
                        message: format!("`{}`: {message}", i.opcode_text()),
                    })?;
                    let guard = match &i.guard {
                        Some((name, negate)) => Some(PredSrc {
                            reg: self.pred(name).map_err(|m| PtxError {
                                line: i.ptx_line,
                                message: m,
                            })?,
                            negate: *negate,
                        }),
                        None => None,
                    };
                    self.insts.push(Inst {
                        kind,
                        guard,
                        line: i.loc.1,
                        file: i.loc.0,
                        ptx_line: i.ptx_line,
                        opcode: i.opcode_text(),
                    });
                }
            }
        }
        for (pc, label, line) in std::mem::take(&mut self.pending) {
            let target = *self.labels.get(&label).ok_or(PtxError {
                line,
                message: format!("branch to unknown label `{label}`"),
            })?;
            self.insts[pc].kind = Flow::Bra { target }.into();
        }
        Ok(())
    }

    fn reg(&self, name: &str) -> Result<Reg, String> {
        self.value_regs
            .get(name)
            .copied()
            .ok_or_else(|| format!("`{name}` is not a declared register"))
    }

    fn pred(&self, name: &str) -> Result<PReg, String> {
        self.pred_regs
            .get(name)
            .copied()
            .ok_or_else(|| format!("`{name}` is not a declared predicate"))
    }

    fn dst(&self, op: &Operand) -> Result<Reg, String> {
        match op {
            Operand::Name(name) => self.reg(name),
            other => Err(format!("destination {other:?} is not a register")),
        }
    }

    fn pred_src(&self, op: &Operand) -> Result<PredSrc, String> {
        match op {
            Operand::Name(name) => Ok(PredSrc {
                reg: self.pred(name)?,
                negate: false,
            }),
            Operand::NotPred(name) => Ok(PredSrc {
                reg: self.pred(name)?,
                negate: true,
            }),
            other => Err(format!("{other:?} is not a predicate")),
        }
    }

    /// A source operand of `bits` width (immediates are truncated to it).
    fn src(&self, op: &Operand, bits: u8, float: bool) -> Result<Src, String> {
        let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
        match op {
            Operand::Name(name) => {
                if let Some(&r) = self.value_regs.get(name) {
                    return Ok(Src::Reg(r));
                }
                if let Some(s) = special(name) {
                    return Ok(Src::Special(s));
                }
                if let Some(&(_, address)) = self.symbols.get(name) {
                    return Ok(Src::Imm(address));
                }
                Err(format!("unknown operand `{name}`"))
            }
            Operand::Int(v) => {
                if float {
                    return Err("an integer literal where a float is expected".into());
                }
                Ok(Src::Imm(*v as u64 & mask))
            }
            Operand::F32(bits32) => {
                if bits == 64 {
                    Ok(Src::Imm((f32::from_bits(*bits32) as f64).to_bits()))
                } else {
                    Ok(Src::Imm(*bits32 as u64))
                }
            }
            Operand::F64(bits64) => {
                if bits == 32 {
                    Ok(Src::Imm((f64::from_bits(*bits64) as f32).to_bits() as u64))
                } else {
                    Ok(Src::Imm(*bits64))
                }
            }
            other => Err(format!("unsupported source operand {other:?}")),
        }
    }

    fn addr(&self, op: &Operand) -> Result<(Addr, Option<MemSpace>), String> {
        let Operand::Address { base, offset } = op else {
            return Err(format!("{op:?} is not an address"));
        };
        match base {
            None => Ok((
                Addr {
                    base: None,
                    offset: *offset,
                },
                None,
            )),
            Some(name) => {
                if let Some(&r) = self.value_regs.get(name) {
                    return Ok((
                        Addr {
                            base: Some(r),
                            offset: *offset,
                        },
                        None,
                    ));
                }
                if let Some(&(space, address)) = self.symbols.get(name) {
                    return Ok((
                        Addr {
                            base: None,
                            offset: address as i64 + offset,
                        },
                        Some(space),
                    ));
                }
                Err(format!("unknown address base `{name}`"))
            }
        }
    }

    fn operands<'a>(&self, i: &'a ast::Instruction, count: usize) -> Result<&'a [Operand], String> {
        if i.operands.len() != count {
            return Err(format!("expected {count} operands, found {}", i.operands.len()));
        }
        Ok(&i.operands)
    }

    fn kind(&mut self, i: &ast::Instruction) -> Result<Kind, String> {
        let parts: Vec<&str> = i.opcode.iter().map(String::as_str).collect();
        let base = parts[0];
        let mods = &parts[1..];
        let has = |m: &str| mods.contains(&m);
        let types: Vec<&str> = mods.iter().copied().filter(|m| type_bytes(m).is_some()).collect();
        let ty = types.last().copied().unwrap_or("");
        let bits = type_bytes(ty).unwrap_or(0) as u8 * 8;
        let is_float = matches!(ty, "f32" | "f64");
        let signed = ty.starts_with('s');
        let double = ty == "f64";
        let ftz = has("ftz");
        let sat = has("sat");
        let unsupported_mods = |allowed: &[&str]| -> Result<(), String> {
            for m in mods {
                if type_bytes(m).is_none() && !allowed.contains(m) {
                    return Err(format!("modifier `.{m}` is not supported"));
                }
            }
            Ok(())
        };
        if base == "haloscope" {
            return self.pseudo(i);
        }
        if numeric::half_type(ty).is_some()
            && matches!(base, "add" | "sub" | "mul" | "fma" | "min" | "max" | "neg" | "abs")
        {
            return Ok(self.half(i, base, mods, ty)?.into());
        }
        // The families decoded in a file of their own, each to its own type.
        match base {
            "ex2" | "lg2" | "sin" | "cos" | "tanh" => return Ok(self.approx(i, base, mods, ty)?.into()),
            "rcp" | "sqrt" | "rsqrt" if has("approx") => return Ok(self.approx(i, base, mods, ty)?.into()),
            "div" if is_float && !double && (has("approx") || has("full")) => {
                return Ok(self.approx(i, base, mods, ty)?.into());
            }
            "prmt" | "shf" | "sad" | "mul24" | "lop3" | "dp4a" | "dp2a" | "testp" | "copysign" | "bfind" | "fns" => {
                return Ok(self.numeric(i, base, mods, ty)?.into());
            }
            "atom" | "red" => return Ok(self.atomic(i, base == "red", mods)?.into()),
            // `cp.async.bulk.prefetch`: a hint to fill L2, no data moves (a no-op, like `prefetch`).
            "cp" if has("prefetch") => return Ok(Work::Nop.into()),
            "cp" => return Ok(Work::Async(self.cp_async(i, mods)?).into()),
            "mbarrier" => return self.mbarrier(i, mods),
            "mapa" => return self.mapa(i, mods),
            "barrier" if has("cluster") => return self.cluster_barrier(i, mods),
            "bar" | "barrier" if !has("warp") => return Ok(self.barrier(i, mods)?.into()),
            "shfl" | "vote" | "match" | "activemask" | "redux" | "bar" | "barrier" => {
                return Ok(self.warp_level(i, base, mods)?.into());
            }
            "trap" => {
                return Ok(Kind::from(CallKind::Trap {
                    what: "trap (__trap() or asm(\"trap;\"))".into(),
                    unsupported: false,
                }));
            }
            "brkpt" => return Ok(Work::Nop.into()),
            "nanosleep" => return Ok(Flow::Yield.into()),
            _ => {}
        }
        match base {
            "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor" | "shl" | "shr" => {
                if ty == "pred" {
                    let o = self.operands(i, 3)?;
                    let op = match base {
                        "and" => BoolOp::And,
                        "or" => BoolOp::Or,
                        "xor" => BoolOp::Xor,
                        _ => return Err("not a predicate operation".into()),
                    };
                    return Ok(Kind::from(Alu::PredSet {
                        d: self.pred(name_of(&o[0])?)?,
                        op: Some(op),
                        a: self.pred_or_const(&o[1])?,
                        b: Some(self.pred_or_const(&o[2])?),
                    }));
                }
                let o = self.operands(i, 3)?;
                if is_float {
                    if let Some(op) = self.directed(base, mods, o)? {
                        return Ok(op.into());
                    }
                    unsupported_mods(&["rn", "ftz", "sat", "full", "approx"])?;
                    if has("approx") && base != "div" {
                        return Err("approximate float arithmetic is not supported".into());
                    }
                    let op = match base {
                        "add" => FOp::Add,
                        "sub" => FOp::Sub,
                        "mul" => FOp::Mul,
                        "div" => FOp::Div,
                        "min" => FOp::Min,
                        "max" => FOp::Max,
                        _ => return Err(format!("`{base}` has no float form")),
                    };
                    return Ok(Kind::from(Alu::FBin {
                        op,
                        double,
                        ftz,
                        sat,
                        d: self.dst(&o[0])?,
                        a: self.src(&o[1], bits, true)?,
                        b: self.src(&o[2], bits, true)?,
                    }));
                }
                if bits == 0 {
                    return Err("missing or unsupported type".into());
                }
                if base == "mul" && has("wide") {
                    return Ok(Kind::from(Alu::MulWide {
                        bits,
                        signed,
                        d: self.dst(&o[0])?,
                        a: self.src(&o[1], bits, false)?,
                        b: self.src(&o[2], bits, false)?,
                    }));
                }
                unsupported_mods(&["lo", "hi"])?;
                let op = match base {
                    "add" => IntOp::Add,
                    "sub" => IntOp::Sub,
                    "mul" if has("hi") => IntOp::MulHi,
                    "mul" => IntOp::MulLo,
                    "div" => IntOp::Div,
                    "rem" => IntOp::Rem,
                    "min" => IntOp::Min,
                    "max" => IntOp::Max,
                    "and" => IntOp::And,
                    "or" => IntOp::Or,
                    "xor" => IntOp::Xor,
                    "shl" => IntOp::Shl,
                    _ => IntOp::Shr,
                };
                // Shift amounts are always .u32.
                let b_bits = if matches!(op, IntOp::Shl | IntOp::Shr) {
                    32
                } else {
                    bits
                };
                Ok(Kind::from(Alu::IntBin {
                    op,
                    bits,
                    signed,
                    d: self.dst(&o[0])?,
                    a: self.src(&o[1], bits, false)?,
                    b: self.src(&o[2], b_bits, false)?,
                }))
            }
            "neg" | "abs" | "not" | "popc" | "clz" | "brev" | "cnot" | "rcp" | "sqrt" | "rsqrt" => {
                let o = self.operands(i, 2)?;
                if ty == "pred" && base == "not" {
                    let a = self.pred_or_const(&o[1])?;
                    let a = match a {
                        PredSrcOrConst::Pred(p) => PredSrcOrConst::Pred(PredSrc {
                            reg: p.reg,
                            negate: !p.negate,
                        }),
                        PredSrcOrConst::Const(c) => PredSrcOrConst::Const(!c),
                    };
                    return Ok(Kind::from(Alu::PredSet {
                        d: self.pred(name_of(&o[0])?)?,
                        op: None,
                        a,
                        b: None,
                    }));
                }
                if is_float {
                    unsupported_mods(&["rn", "ftz"])?;
                    let op = match base {
                        "neg" => FUnOp::Neg,
                        "abs" => FUnOp::Abs,
                        "rcp" if has("rn") => FUnOp::Rcp,
                        "sqrt" if has("rn") => FUnOp::Sqrt,
                        _ => {
                            return Err(format!(
                                "`{}` is an approximate or unsupported float operation",
                                i.opcode_text()
                            ));
                        }
                    };
                    return Ok(Kind::from(Alu::FUn {
                        op,
                        double,
                        ftz,
                        d: self.dst(&o[0])?,
                        a: self.src(&o[1], bits, true)?,
                    }));
                }
                if bits == 0 {
                    return Err("missing or unsupported type".into());
                }
                let op = match base {
                    "neg" => IntUnOp::Neg,
                    "abs" => IntUnOp::Abs,
                    "not" => IntUnOp::Not,
                    "popc" => IntUnOp::Popc,
                    "clz" => IntUnOp::Clz,
                    "brev" => IntUnOp::Brev,
                    "cnot" => IntUnOp::Cnot,
                    _ => return Err("no integer form".into()),
                };
                Ok(Kind::from(Alu::IntUn {
                    op,
                    bits,
                    d: self.dst(&o[0])?,
                    a: self.src(&o[1], bits, false)?,
                }))
            }
            "mad" | "fma" => {
                let o = self.operands(i, 4)?;
                if is_float {
                    if let Some(op) = self.directed(base, mods, o)? {
                        return Ok(op.into());
                    }
                    unsupported_mods(&["rn", "ftz", "sat"])?;
                    if !has("rn") {
                        return Err("float mad/fma without .rn is not supported".into());
                    }
                    return Ok(Kind::from(Alu::FFma {
                        double,
                        ftz,
                        sat,
                        d: self.dst(&o[0])?,
                        a: self.src(&o[1], bits, true)?,
                        b: self.src(&o[2], bits, true)?,
                        c: self.src(&o[3], bits, true)?,
                    }));
                }
                unsupported_mods(&["lo", "hi", "wide"])?;
                let part = if has("wide") {
                    MadPart::Wide
                } else if has("hi") {
                    MadPart::Hi
                } else {
                    MadPart::Lo
                };
                let c_bits = if part == MadPart::Wide { bits * 2 } else { bits };
                Ok(Kind::from(Alu::Mad {
                    part,
                    bits,
                    signed,
                    d: self.dst(&o[0])?,
                    a: self.src(&o[1], bits, false)?,
                    b: self.src(&o[2], bits, false)?,
                    c: self.src(&o[3], c_bits, false)?,
                }))
            }
            "bfe" => {
                let o = self.operands(i, 4)?;
                Ok(Kind::from(Alu::Bfe {
                    bits,
                    signed,
                    d: self.dst(&o[0])?,
                    a: self.src(&o[1], bits, false)?,
                    pos: self.src(&o[2], 32, false)?,
                    len: self.src(&o[3], 32, false)?,
                }))
            }
            "bfi" => {
                let o = self.operands(i, 5)?;
                Ok(Kind::from(Alu::Bfi {
                    bits,
                    d: self.dst(&o[0])?,
                    f: self.src(&o[1], bits, false)?,
                    b: self.src(&o[2], bits, false)?,
                    pos: self.src(&o[3], 32, false)?,
                    len: self.src(&o[4], 32, false)?,
                }))
            }
            "setp" => self.setp(i, mods, ty, bits),
            "selp" => {
                let o = self.operands(i, 4)?;
                Ok(Kind::from(Alu::Selp {
                    d: self.dst(&o[0])?,
                    a: self.src(&o[1], bits, is_float)?,
                    b: self.src(&o[2], bits, is_float)?,
                    p: self.pred_src(&o[3])?,
                }))
            }
            "cvt" => self.cvt(i, mods),
            "cvta" => {
                let o = self.operands(i, 2)?;
                let to = has("to");
                let space = if has("global") {
                    MemSpace::Global
                } else if has("shared") || has("shared::cta") || has("shared::cluster") {
                    // One window for both: a `.shared::cta` address is also the block's own
                    // `.shared::cluster` address.
                    MemSpace::Shared
                } else if has("local") {
                    MemSpace::Local
                } else if has("const") {
                    MemSpace::Const
                } else if has("param") {
                    MemSpace::Param
                } else {
                    return Err("cvta needs a state space".into());
                };
                Ok(Kind::from(Alu::Cvta {
                    to_generic: !to,
                    space,
                    d: self.dst(&o[0])?,
                    a: self.src(&o[1], bits, false)?,
                }))
            }
            "mov" => {
                let o = self.operands(i, 2)?;
                if ty == "pred" {
                    return Ok(Kind::from(Alu::PredSet {
                        d: self.pred(name_of(&o[0])?)?,
                        op: None,
                        a: self.pred_or_const(&o[1])?,
                        b: None,
                    }));
                }
                match (&o[0], &o[1]) {
                    (Operand::Vector(names), src) => {
                        let part_bits = bits / names.len() as u8;
                        let ds = names
                            .iter()
                            .map(|n| n.as_ref().map(|n| self.reg(n)).transpose())
                            .collect::<Result<_, _>>()?;
                        Ok(Kind::from(Alu::Unpack {
                            ds,
                            a: self.src(src, bits, false)?,
                            part_bits,
                        }))
                    }
                    (dst, Operand::Vector(names)) => {
                        let part_bits = bits / names.len() as u8;
                        let parts = names
                            .iter()
                            .map(|n| match n {
                                Some(n) => self.src(&Operand::Name(n.clone()), part_bits, false),
                                None => Err("`_` in a packing mov".to_string()),
                            })
                            .collect::<Result<_, _>>()?;
                        Ok(Kind::from(Alu::Pack {
                            d: self.dst(dst)?,
                            parts,
                            part_bits,
                        }))
                    }
                    (dst, src) => Ok(Kind::from(Alu::Mov {
                        d: self.dst(dst)?,
                        a: self.src(src, bits, is_float)?,
                    })),
                }
            }
            "ld" | "ldu" | "st" => Ok(self.memory(i, base == "st", mods, ty)?.into()),
            "bra" | "brx" => {
                if base == "brx" {
                    return Err("indirect branches are not supported".into());
                }
                let o = self.operands(i, 1)?;
                let label = name_of(&o[0])?.to_string();
                self.pending.push((self.insts.len(), label, i.ptx_line));
                Ok(Flow::Bra { target: 0 }.into())
            }
            "ret" | "exit" => Ok(Flow::Exit.into()),
            "membar" | "fence" | "prefetch" | "prefetchu" | "pmevent" => Ok(Work::Nop.into()),
            "call" => Err("a call the inliner left in place".into()),
            _ => Err("this instruction is not supported by the emulator".into()),
        }
    }

    /// The inliner's pseudo-instructions (see `ptx::inline`).
    fn pseudo(&self, i: &ast::Instruction) -> Result<Kind, String> {
        let text = i.opcode_text();
        if text == UNSUPPORTED_OP {
            let what = match i.operands.first() {
                Some(Operand::Name(w)) => w.clone(),
                _ => "an unsupported call".into(),
            };
            return Ok(Kind::from(CallKind::Trap {
                what,
                unsupported: true,
            }));
        }
        let reg = |k: usize| -> Result<Src, String> {
            match i.operands.get(k) {
                Some(op) => self.src(op, 64, false),
                None => Ok(Src::Imm(0)),
            }
        };
        if text == PRINTF_OP {
            return Ok(Kind::from(CallKind::Printf {
                ret: Some(self.dst(&i.operands[0])?),
                format: reg(1)?,
                args: reg(2)?,
            }));
        }
        if text == ASSERT_OP {
            return Ok(Kind::from(CallKind::AssertFail {
                message: reg(0)?,
                file: reg(1)?,
                line: reg(2)?,
            }));
        }
        Err(format!("unknown pseudo-instruction `{text}`"))
    }

    fn pred_or_const(&self, op: &Operand) -> Result<PredSrcOrConst, String> {
        match op {
            Operand::Int(v) => Ok(PredSrcOrConst::Const(*v != 0)),
            other => Ok(PredSrcOrConst::Pred(self.pred_src(other)?)),
        }
    }

    fn setp(&self, i: &ast::Instruction, mods: &[&str], ty: &str, bits: u8) -> Result<Kind, String> {
        let cmp_text = mods.first().copied().unwrap_or("");
        let half = numeric::half_type(ty);
        let is_float = matches!(ty, "f32" | "f64") || half.is_some();
        let unsigned_int = ty.starts_with('u') || ty.starts_with('b');
        let cmp = match cmp_text {
            "eq" => Cmp::Eq,
            "ne" => Cmp::Ne,
            "lt" | "lo" => Cmp::Lt,
            "le" | "ls" => Cmp::Le,
            "gt" | "hi" => Cmp::Gt,
            "ge" | "hs" => Cmp::Ge,
            "equ" if is_float => Cmp::Equ,
            "neu" if is_float => Cmp::Neu,
            "ltu" if is_float => Cmp::Ltu,
            "leu" if is_float => Cmp::Leu,
            "gtu" if is_float => Cmp::Gtu,
            "geu" if is_float => Cmp::Geu,
            "num" if is_float => Cmp::Num,
            "nan" if is_float => Cmp::Nan,
            other => return Err(format!("comparison `{other}` is not supported")),
        };
        if let Some((bf16, x2)) = half {
            let o = self.operands(i, 3)?;
            let (d, d2) = match &o[0] {
                Operand::PredPair(a, b) => (self.pred(a)?, Some(self.pred(b)?)),
                Operand::Name(a) => (self.pred(a)?, None),
                other => return Err(format!("setp destination {other:?} is not a predicate")),
            };
            let width = if x2 { 32 } else { 16 };
            return Ok(Kind::from(NumericKind::HalfSetp {
                cmp,
                bf16,
                x2,
                d,
                d2,
                a: self.src(&o[1], width, false)?,
                b: self.src(&o[2], width, false)?,
            }));
        }
        let num_ty = match ty {
            "f32" => NumTy::F32,
            "f64" => NumTy::F64,
            _ if bits > 0 => NumTy::Int {
                bits,
                signed: !unsigned_int,
            },
            _ => return Err("missing comparison type".into()),
        };
        let combine_op = mods.iter().find_map(|m| match *m {
            "and" => Some(BoolOp::And),
            "or" => Some(BoolOp::Or),
            "xor" => Some(BoolOp::Xor),
            _ => None,
        });
        // `.ftz` only changes subnormal inputs, which compare the same once flushed to zero
        // except against zero itself; the lessons' kernels never compare subnormals.
        let expected = if combine_op.is_some() { 4 } else { 3 };
        let o = self.operands(i, expected)?;
        let (d, d_not) = match &o[0] {
            Operand::PredPair(a, b) => (self.pred(a)?, Some(self.pred(b)?)),
            Operand::Name(a) => (self.pred(a)?, None),
            other => return Err(format!("setp destination {other:?} is not a predicate")),
        };
        let combine = match combine_op {
            Some(op) => Some((op, self.pred_src(&o[3])?)),
            None => None,
        };
        Ok(Kind::from(Alu::Setp {
            cmp,
            ty: num_ty,
            d,
            d_not,
            a: self.src(&o[1], bits, is_float)?,
            b: self.src(&o[2], bits, is_float)?,
            combine,
        }))
    }

    fn cvt(&self, i: &ast::Instruction, mods: &[&str]) -> Result<Kind, String> {
        let types: Vec<&str> = mods.iter().copied().filter(|m| type_bytes(m).is_some()).collect();
        if types.len() != 2 {
            return Err("cvt needs a destination and a source type".into());
        }
        if matches!(types[0], "f16x2" | "bf16x2") {
            // cvt.rn.f16x2.f32 d, a, b: two floats rounded into one packed register.
            if types[1] != "f32" || !mods.contains(&"rn") {
                return Err("only cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32 are supported for packed halves".into());
            }
            let o = self.operands(i, 3)?;
            return Ok(Kind::from(NumericKind::Half {
                op: HalfOp::CvtPack,
                bf16: types[0] == "bf16x2",
                x2: true,
                ftz: false,
                sat: mods.contains(&"sat"),
                d: self.dst(&o[0])?,
                a: self.src(&o[1], 32, true)?,
                b: self.src(&o[2], 32, true)?,
                c: Src::Imm(0),
            }));
        }
        let num = |t: &str| -> Result<NumTy, String> {
            Ok(match t {
                "f16" => NumTy::F16,
                "bf16" => NumTy::BF16,
                "f32" => NumTy::F32,
                "f64" => NumTy::F64,
                _ => NumTy::Int {
                    bits: type_bytes(t).unwrap() as u8 * 8,
                    signed: t.starts_with('s'),
                },
            })
        };
        let (to, from) = (num(types[0])?, num(types[1])?);
        let mut round = Round::Default;
        for m in mods {
            round = match *m {
                "rn" | "rni" => Round::Nearest,
                "rz" | "rzi" => Round::Zero,
                "rm" | "rmi" => Round::Down,
                "rp" | "rpi" => Round::Up,
                "ftz" | "sat" => round,
                t if type_bytes(t).is_some() => round,
                other => return Err(format!("cvt modifier `.{other}` is not supported")),
            };
        }
        let o = self.operands(i, 2)?;
        let from_bits = match from {
            NumTy::Int { bits, .. } => bits,
            NumTy::F16 | NumTy::BF16 => 16,
            NumTy::F32 => 32,
            NumTy::F64 => 64,
        };
        Ok(Kind::from(Alu::Cvt {
            to,
            from,
            round,
            ftz: mods.contains(&"ftz"),
            sat: mods.contains(&"sat"),
            d: self.dst(&o[0])?,
            a: self.src(&o[1], from_bits, false)?,
        }))
    }

    fn memory(&self, i: &ast::Instruction, store: bool, mods: &[&str], ty: &str) -> Result<Mem, String> {
        let mut space = MemSpace::Generic;
        let mut lanes = 1usize;
        for m in mods {
            match *m {
                "global" => space = MemSpace::Global,
                "shared" | "shared::cta" => space = MemSpace::Shared,
                "shared::cluster" => space = MemSpace::SharedCluster,
                "local" => space = MemSpace::Local,
                "param" => space = MemSpace::Param,
                "const" => space = MemSpace::Const,
                "v2" => lanes = 2,
                "v4" => lanes = 4,
                "nc" | "ca" | "cg" | "cs" | "lu" | "cv" | "wb" | "wt" | "weak" | "volatile" | "relaxed" | "acquire"
                | "release" | "cta" | "gpu" | "sys" | "cluster" => {}
                t if type_bytes(t).is_some() => {}
                other => return Err(format!("memory modifier `.{other}` is not supported")),
            }
        }
        let bytes = type_bytes(ty).ok_or("missing type")? as u8;
        if bytes > 8 {
            return Err("128-bit accesses are not supported".into());
        }
        let o = self.operands(i, 2)?;
        let (addr_op, value_op) = if store { (&o[0], &o[1]) } else { (&o[1], &o[0]) };
        let (addr, symbol_space) = self.addr(addr_op)?;
        if let Some(sym_space) = symbol_space {
            if space == MemSpace::Generic {
                return Err("a generic access to a named variable is not supported".into());
            }
            // A block's own shared variable is also its `.shared::cluster` address.
            let own_shared = sym_space == MemSpace::Shared && space == MemSpace::SharedCluster;
            if sym_space != space && !own_shared {
                return Err(format!("symbol is in {sym_space:?} space but accessed as {space:?}"));
            }
        }
        let names: Vec<Option<String>> = match value_op {
            Operand::Vector(names) => names.clone(),
            Operand::Name(n) => vec![Some(n.clone())],
            other if store => {
                let src = self.src(other, bytes * 8, false)?;
                return Ok(Mem::Store(Store {
                    space,
                    bytes,
                    srcs: vec![src],
                    addr,
                }));
            }
            other => return Err(format!("load destination {other:?} is not a register")),
        };
        if names.len() != lanes {
            return Err(format!("expected a vector of {lanes}, found {}", names.len()));
        }
        if store {
            let srcs = names
                .iter()
                .map(|n| match n {
                    Some(n) => self.src(&Operand::Name(n.clone()), bytes * 8, false),
                    None => Err("`_` in a store".to_string()),
                })
                .collect::<Result<_, _>>()?;
            Ok(Mem::Store(Store {
                space,
                bytes,
                srcs,
                addr,
            }))
        } else {
            let ds = names
                .iter()
                .map(|n| n.as_ref().map(|n| self.reg(n)).transpose())
                .collect::<Result<_, _>>()?;
            Ok(Mem::Load(Load {
                space,
                bytes,
                signed: ty.starts_with('s'),
                ds,
                addr,
            }))
        }
    }
}

fn name_of(op: &Operand) -> Result<&str, String> {
    match op {
        Operand::Name(n) => Ok(n),
        other => Err(format!("expected a name, found {other:?}")),
    }
}

fn special(name: &str) -> Option<Special> {
    let dim = |s: &str| match s {
        "x" => Some(0u8),
        "y" => Some(1),
        "z" => Some(2),
        _ => None,
    };
    let (reg, part) = name.split_once('.').unwrap_or((name, ""));
    Some(match reg {
        "%tid" => Special::Tid(dim(part)?),
        "%ntid" => Special::Ntid(dim(part)?),
        "%ctaid" => Special::Ctaid(dim(part)?),
        "%nctaid" => Special::Nctaid(dim(part)?),
        "%laneid" => Special::LaneId,
        "%warpid" => Special::WarpId,
        "%nwarpid" => Special::NWarpId,
        "%smid" => Special::SmId,
        "%clock" => Special::Clock,
        "%clock64" => Special::Clock64,
        "%globaltimer" => Special::GlobalTimer,
        "%globaltimer_lo" => Special::GlobalTimerLo,
        "%globaltimer_hi" => Special::GlobalTimerHi,
        "%lanemask_eq" => Special::LaneMaskEq,
        "%lanemask_lt" => Special::LaneMaskLt,
        "%lanemask_le" => Special::LaneMaskLe,
        "%lanemask_gt" => Special::LaneMaskGt,
        "%lanemask_ge" => Special::LaneMaskGe,
        "%dynamic_smem_size" => Special::DynamicSmemSize,
        "%cluster_ctaid" => Special::ClusterCtaid(dim(part)?),
        "%cluster_nctaid" => Special::ClusterNctaid(dim(part)?),
        "%cluster_ctarank" => Special::ClusterCtarank,
        "%cluster_nctarank" => Special::ClusterNctarank,
        "%clusterid" => Special::ClusterId(dim(part)?),
        "%nclusterid" => Special::NClusterId(dim(part)?),
        "%is_explicit_cluster" => Special::IsExplicitCluster,
        _ => return None,
    })
}

impl Program {
    /// Parses a PTX module and decodes its entry `entry` (here, not in ir.rs: the decoder
    /// depends on the IR, not the other way round).
    pub fn from_ptx(ptx: &str, entry: &str) -> Result<Program, crate::ptx::PtxError> {
        let module = crate::ptx::parse_module(ptx)?;
        decode_entry(&module, entry)
    }
}
