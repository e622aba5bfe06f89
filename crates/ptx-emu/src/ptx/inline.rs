//! Flattens calls to non-inlined `__device__` functions into the kernel, so the emulator runs
//! one body with no call stack.
//!
//! Why inline rather than emulate `call`: a PTX call passes its arguments through `.param`
//! slots that the hardware ABI maps to registers or the local stack, neither of which is
//! global memory, so inlining changes no sector count; and a flat body keeps the SIMT
//! reconvergence analysis (one function, one post-dominator tree) exact. Each call site gets
//! its own copy of the callee with renamed registers, labels and locals; `.param` slots
//! become `.local` variables, so `st.param` / `ld.param` on them become local accesses.
//!
//! Recursion is unrolled up to [`MAX_CALL_DEPTH`] nested calls; a call deeper than that is
//! replaced by an instruction that stops the run with a clear message, only if it is reached.
//! `vprintf` (device printf) and `__assertfail` (device assert) become emulator pseudo-ops:
//! `haloscope.printf` and `haloscope.assertfail`; any other external call becomes
//! `haloscope.unsupported`, which faults when executed, naming the function.

use super::ast::Module;
use super::ast::{Function, Instruction, Operand, RegDecl, Space, Statement, Variable};
use super::parser::PtxError;
use std::collections::{HashMap, HashSet};

/// Nested calls unrolled at most (a recursion deeper than this stops the run when it gets
/// there). A recursion that calls itself more than once per level is unrolled less deep, so
/// that the flattened kernel stays under [`MAX_INSTRUCTIONS`].
pub const MAX_CALL_DEPTH: usize = 12;
/// Instructions the flattened kernel may have.
pub const MAX_INSTRUCTIONS: usize = 10_000;

/// Opcode of the pseudo-instruction that faults with its operand's text when executed.
pub const UNSUPPORTED_OP: &str = "haloscope.unsupported";
pub const PRINTF_OP: &str = "haloscope.printf";
pub const ASSERT_OP: &str = "haloscope.assertfail";

/// `entry` with every call to a function of `module` replaced by the callee's body.
pub fn inline_calls(module: &Module, entry: &Function) -> Result<Function, PtxError> {
    let has_call = entry
        .body
        .iter()
        .any(|s| matches!(s, Statement::Instruction(i) if i.opcode[0] == "call") || matches!(s, Statement::Param(_)));
    if !has_call {
        return Ok(entry.clone());
    }
    // The deepest unrolling that fits: every call site is unrolled to the same depth, so no
    // shallow call is cut off because a deep chain used the instruction budget first.
    let mut depth = MAX_CALL_DEPTH;
    loop {
        let mut inliner = Inliner {
            module,
            out: Function {
                body: Vec::new(),
                ..entry.clone()
            },
            next_instance: 0,
            slot_names: HashSet::new(),
            shared_seen: entry.vars.iter().map(|v| v.name.clone()).collect(),
            max_depth: depth,
            too_large: false,
        };
        let mut names = Names::default();
        inliner.emit_body(entry, &mut names, 0)?;
        if !inliner.too_large || depth == 1 {
            return Ok(inliner.out);
        }
        depth -= 1;
    }
}

struct Inliner<'m> {
    module: &'m Module,
    out: Function,
    next_instance: u32,
    /// Names of the `.local` variables that stand for `.param` slots.
    slot_names: HashSet<String>,
    /// `.shared` variables already declared (a function-scope shared array is one per block).
    shared_seen: HashSet<String>,
    /// Calls nested deeper than this are not unrolled.
    max_depth: usize,
    /// The flattened body passed [`MAX_INSTRUCTIONS`] (try a shallower unrolling).
    too_large: bool,
}

/// How the names of one inlined body map to the flattened kernel's names.
#[derive(Default)]
struct Names {
    suffix: String,
    /// Registers, labels and locals of this body: renamed with the suffix.
    own: HashSet<String>,
    /// The callee's parameters and return values: the caller's slots.
    bound: HashMap<String, String>,
    /// `.param` slots declared in this body so far (the latest declaration of a name wins:
    /// each call sequence re-declares `param0` in a scope of its own).
    slots: HashMap<String, String>,
    /// `.loc` of the outermost call this body was inlined for. A callee from another file
    /// (a CUDA header's function, which an unoptimised `-G` build calls instead of inlining)
    /// takes it, so its accesses are on the line the learner wrote, as `inlined_at` puts them
    /// in an optimised build.
    call_site: Option<(u32, u32, u32)>,
}

impl Names {
    fn name(&self, n: &str) -> String {
        if let Some(b) = self.slots.get(n).or_else(|| self.bound.get(n)) {
            return b.clone();
        }
        if self.own.contains(n) {
            return format!("{n}{}", self.suffix);
        }
        n.to_string()
    }

    fn operand(&self, op: &Operand) -> Operand {
        op.map_names(|n| self.name(n))
    }
}

/// An instruction made by the inliner, placed where the call was.
fn made(at: &Instruction, guard: Option<(String, bool)>, opcode: &str, operands: Vec<Operand>) -> Statement {
    Statement::Instruction(Instruction {
        guard,
        opcode: opcode.split('.').map(str::to_string).collect(),
        operands,
        ptx_line: at.ptx_line,
        loc: at.loc,
    })
}

impl Inliner<'_> {
    fn instructions(&self) -> usize {
        self.out.body.len()
    }

    fn declare_reg(&mut self, ty: &str, name: String) {
        self.out.regs.push(RegDecl {
            ty: ty.to_string(),
            names: vec![name],
        });
    }

    fn emit_body(&mut self, f: &Function, names: &mut Names, depth: usize) -> Result<(), PtxError> {
        for statement in &f.body {
            match statement {
                Statement::Label(l) => self.out.body.push(Statement::Label(names.name(l))),
                Statement::Param(var) => {
                    let slot = format!("{}$s{}", var.name, self.slot_names.len());
                    self.slot_names.insert(slot.clone());
                    names.slots.insert(var.name.clone(), slot.clone());
                    self.out.vars.push(Variable {
                        space: Space::Local,
                        name: slot,
                        ..var.clone()
                    });
                }
                Statement::Instruction(i) if i.opcode[0] == "call" => self.call(i, names, depth)?,
                Statement::Instruction(i) => {
                    let mut inst = Instruction {
                        guard: i.guard.as_ref().map(|(g, neg)| (names.name(g), *neg)),
                        operands: i.operands.iter().map(|o| names.operand(o)).collect(),
                        ..i.clone()
                    };
                    // Accesses to a slot are local accesses now.
                    let on_slot = inst
                        .operands
                        .iter()
                        .any(|o| matches!(o, Operand::Address { base: Some(b), .. } if self.slot_names.contains(b)));
                    if on_slot && let Some(space) = inst.opcode.iter_mut().find(|m| *m == "param") {
                        *space = "local".to_string();
                    }
                    if let Some(site) = names.call_site.filter(|site| site.0 != inst.loc.0 || inst.loc.1 == 0) {
                        inst.loc = site;
                    }
                    self.out.body.push(Statement::Instruction(inst));
                }
            }
        }
        Ok(())
    }

    fn call(&mut self, call: &Instruction, names: &Names, depth: usize) -> Result<(), PtxError> {
        if self.too_large {
            return Ok(()); // this attempt is abandoned for a shallower one
        }
        let ops = &call.operands;
        let (returns, callee, args) = match ops.first() {
            Some(Operand::List(r)) => (r.clone(), ops.get(1), ops.get(2)),
            _ => (Vec::new(), ops.first(), ops.get(1)),
        };
        let returns: Vec<String> = returns.iter().map(|r| names.name(r)).collect();
        let args: Vec<String> = match args {
            Some(Operand::List(a)) => a.iter().map(|a| names.name(a)).collect(),
            _ => Vec::new(),
        };
        let guard = call.guard.as_ref().map(|(g, neg)| (names.name(g), *neg));
        let Some(Operand::Name(callee)) = callee else {
            return Err(PtxError {
                line: call.ptx_line,
                message: "`call` without a function name".into(),
            });
        };
        let instance = self.next_instance;
        self.next_instance += 1;
        let unsupported = |what: String| made(call, guard.clone(), UNSUPPORTED_OP, vec![Operand::Name(what)]);
        if callee.starts_with('%') {
            self.out
                .body
                .push(unsupported("an indirect call through a function pointer".into()));
            return Ok(());
        }
        match callee.as_str() {
            "vprintf" | "__assertfail" => {
                self.builtin(call, callee, &returns, &args, guard, instance);
                return Ok(());
            }
            _ => {}
        }
        let Some(body) = self
            .module
            .functions
            .iter()
            .find(|f| !f.is_entry && f.name == *callee && !f.body.is_empty())
        else {
            self.out.body.push(unsupported(format!(
                "a call to `{callee}`, a function defined outside this kernel's PTX"
            )));
            return Ok(());
        };
        if depth >= self.max_depth {
            self.out.body.push(unsupported(format!(
                "a call to `{callee}` nested more than {} deep (the emulator unrolls recursion to that depth)",
                self.max_depth
            )));
            return Ok(());
        }
        if self.instructions() + body.body.len() > MAX_INSTRUCTIONS {
            self.too_large = true;
            self.out.body.push(unsupported(format!(
                "a call to `{callee}`: the kernel with its calls inlined would pass {MAX_INSTRUCTIONS} instructions"
            )));
            return Ok(());
        }
        let suffix = format!("$i{instance}");
        let end = format!("$Lret{suffix}");
        let mut inner = Names {
            suffix: suffix.clone(),
            call_site: names.call_site.or(Some(call.loc)),
            ..Names::default()
        };
        for decl in &body.regs {
            for n in &decl.names {
                inner.own.insert(n.clone());
                self.declare_reg(&decl.ty, format!("{n}{suffix}"));
            }
        }
        for statement in &body.body {
            if let Statement::Label(l) = statement {
                inner.own.insert(l.clone());
            }
        }
        for var in &body.vars {
            if var.space == Space::Shared {
                if self.shared_seen.insert(var.name.clone()) {
                    self.out.vars.push(var.clone());
                }
                continue;
            }
            inner.own.insert(var.name.clone());
            self.out.vars.push(Variable {
                name: format!("{}{suffix}", var.name),
                ..var.clone()
            });
        }
        for (p, a) in body.params.iter().zip(&args) {
            inner.bound.insert(p.name.clone(), a.clone());
        }
        for (p, r) in body.returns.iter().zip(&returns) {
            inner.bound.insert(p.name.clone(), r.clone());
        }
        // Parameters the caller did not pass (it may ignore a return value) get slots of
        // their own so the callee's accesses still land somewhere declared.
        for p in body
            .params
            .iter()
            .skip(args.len())
            .chain(body.returns.iter().skip(returns.len()))
        {
            let slot = format!("{}{suffix}", p.name);
            self.slot_names.insert(slot.clone());
            inner.bound.insert(p.name.clone(), slot.clone());
            self.out.vars.push(Variable {
                space: Space::Local,
                name: slot,
                align: p.align,
                elem: "b8".into(),
                bytes: p.bytes as u64,
                is_extern: false,
                init: None,
                ptx_line: call.ptx_line,
            });
        }
        if let Some((g, neg)) = &guard {
            self.out.body.push(made(
                call,
                Some((g.clone(), !neg)),
                "bra.uni",
                vec![Operand::Name(end.clone())],
            ));
        }
        let start = self.out.body.len();
        self.emit_body(body, &mut inner, depth + 1)?;
        // `ret` of the callee: go to the end of its copy.
        for statement in &mut self.out.body[start..] {
            if let Statement::Instruction(i) = statement
                && i.opcode[0] == "ret"
            {
                i.opcode = vec!["bra".into(), "uni".into()];
                i.operands = vec![Operand::Name(end.clone())];
            }
        }
        self.out.body.push(Statement::Label(end));
        Ok(())
    }

    /// `vprintf(format, args)` and `__assertfail(message, file, line, function, size)`: the
    /// pointer arguments are loaded from their slots into fresh registers for the pseudo-op.
    fn builtin(
        &mut self,
        call: &Instruction,
        callee: &str,
        returns: &[String],
        args: &[String],
        guard: Option<(String, bool)>,
        instance: u32,
    ) {
        let load = |this: &mut Self, ty: &str, slot: &str, k: usize| -> Operand {
            let reg = format!("%hs{k}$b{instance}");
            this.declare_reg(if ty == "u32" { "b32" } else { "b64" }, reg.clone());
            this.out.body.push(made(
                call,
                guard.clone(),
                &format!("ld.local.{ty}"),
                vec![
                    Operand::Name(reg.clone()),
                    Operand::Address {
                        base: Some(slot.to_string()),
                        offset: 0,
                    },
                ],
            ));
            Operand::Name(reg)
        };
        if callee == "vprintf" {
            let format = args.first().map(|a| load(self, "u64", a, 0));
            let values = args.get(1).map(|a| load(self, "u64", a, 1));
            let ret = format!("%hs2$b{instance}");
            self.declare_reg("b32", ret.clone());
            let mut operands = vec![Operand::Name(ret.clone())];
            operands.extend(format);
            operands.extend(values);
            self.out.body.push(made(call, guard.clone(), PRINTF_OP, operands));
            if let Some(r) = returns.first() {
                self.out.body.push(made(
                    call,
                    guard,
                    "st.local.b32",
                    vec![
                        Operand::Address {
                            base: Some(r.clone()),
                            offset: 0,
                        },
                        Operand::Name(ret),
                    ],
                ));
            }
        } else {
            let message = args.first().map(|a| load(self, "u64", a, 0));
            let file = args.get(1).map(|a| load(self, "u64", a, 1));
            let line = args.get(2).map(|a| load(self, "u32", a, 2));
            let operands = [message, file, line].into_iter().flatten().collect();
            self.out.body.push(made(call, guard, ASSERT_OP, operands));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::parse_module;

    const CALLS: &str = r#"
.version 9.0
.target sm_90
.address_size 64
.func (.param .b32 func_retval0) twice(.param .b32 twice_param_0)
{
	.reg .b32 %r<3>;
	ld.param.u32 %r1, [twice_param_0];
	add.s32 %r2, %r1, %r1;
	st.param.b32 [func_retval0], %r2;
	ret;
}
.visible .entry k(.param .u64 k_param_0)
{
	.reg .b32 %r<3>;
	mov.u32 %r1, 5;
	{
	.param .b32 param0;
	st.param.b32 [param0], %r1;
	.param .b32 retval0;
	call.uni (retval0), twice, (param0);
	ld.param.b32 %r2, [retval0];
	}
	ret;
}
"#;

    #[test]
    fn a_call_becomes_the_callee_body_on_local_slots() {
        let module = parse_module(CALLS).unwrap();
        let flat = inline_calls(&module, module.entry("k").unwrap()).unwrap();
        let text: Vec<String> = flat
            .body
            .iter()
            .filter_map(|s| match s {
                Statement::Instruction(i) => Some(i.opcode_text()),
                _ => None,
            })
            .collect();
        assert_eq!(
            text,
            [
                "mov.u32",
                "st.local.b32",
                "ld.local.u32",
                "add.s32",
                "st.local.b32",
                "bra.uni",
                "ld.local.b32",
                "ret"
            ]
        );
        assert!(flat.regs.iter().any(|r| r.names == ["%r1$i0"]));
        assert_eq!(flat.vars.iter().filter(|v| v.space == Space::Local).count(), 2);
    }
}
