//! A kernel cut down to what its sector count depends on, for a launch that only counts (the
//! live figures while the learner types).
//!
//! The sectors an instruction issues depend on the addresses its active lanes touch, and which
//! lanes are active depends on predicates and branches. When no value read from memory reaches
//! an address, a predicate or a branch (the stencils: loaded values only reach arithmetic and
//! stores), every instruction outside that backward slice only computes values that end up
//! stored: the floating-point arithmetic, the shared-memory tile's stores and loads, and the
//! address arithmetic of the tile. Those are cut out here; the global loads and stores stay, so
//! every sector is counted on the instruction (line, PTX line) the full kernel counts it on,
//! though at another pc. The values the cut kernel stores are garbage: it is only ever launched
//! to count, never verified.
//!
//! Sound by construction and conservative: a kernel with any instruction outside the plain
//! families (atomics, warp operations, asynchronous copies, clusters, device calls, the
//! numeric family, a barrier reduction) or whose slice needs a value loaded from global,
//! shared or local memory is not cut (`None`).

use crate::ir::{Alu, EXIT, Flow, Inst, Kind, Mem, MemSpace, PReg, PredSrc, PredSrcOrConst, Program, Reg, Src, Work};

/// The registers an instruction reads and writes, for the slice.
#[derive(Default)]
struct Uses {
    regs: Vec<Reg>,
    preds: Vec<PReg>,
}

impl Uses {
    fn src(&mut self, s: &Src) {
        if let Src::Reg(r) = s {
            self.regs.push(*r);
        }
    }

    fn pred(&mut self, p: &PredSrc) {
        self.preds.push(p.reg);
    }

    fn pred_or_const(&mut self, p: &PredSrcOrConst) {
        if let PredSrcOrConst::Pred(p) = p {
            self.pred(p);
        }
    }
}

/// What an ALU instruction writes (value registers, predicates) and reads.
fn alu_defs_uses(alu: &Alu) -> (Vec<Reg>, Vec<PReg>, Uses) {
    let mut u = Uses::default();
    let (regs, preds) = match alu {
        Alu::IntBin { d, a, b, .. } | Alu::MulWide { d, a, b, .. } | Alu::FBin { d, a, b, .. } => {
            u.src(a);
            u.src(b);
            (vec![*d], vec![])
        }
        Alu::IntUn { d, a, .. } | Alu::FUn { d, a, .. } | Alu::Cvt { d, a, .. } | Alu::Mov { d, a } => {
            u.src(a);
            (vec![*d], vec![])
        }
        Alu::Cvta { d, a, .. } => {
            u.src(a);
            (vec![*d], vec![])
        }
        Alu::Mad { d, a, b, c, .. } | Alu::FFma { d, a, b, c, .. } => {
            u.src(a);
            u.src(b);
            u.src(c);
            (vec![*d], vec![])
        }
        Alu::Bfe { d, a, pos, len, .. } => {
            u.src(a);
            u.src(pos);
            u.src(len);
            (vec![*d], vec![])
        }
        Alu::Bfi { d, f, b, pos, len, .. } => {
            u.src(f);
            u.src(b);
            u.src(pos);
            u.src(len);
            (vec![*d], vec![])
        }
        Alu::Setp {
            d,
            d_not,
            a,
            b,
            combine,
            ..
        } => {
            u.src(a);
            u.src(b);
            if let Some((_, p)) = combine {
                u.pred(p);
            }
            (vec![], std::iter::once(*d).chain(*d_not).collect())
        }
        Alu::Selp { d, a, b, p } => {
            u.src(a);
            u.src(b);
            u.pred(p);
            (vec![*d], vec![])
        }
        Alu::PredSet { d, a, b, .. } => {
            u.pred_or_const(a);
            if let Some(b) = b {
                u.pred_or_const(b);
            }
            (vec![], vec![*d])
        }
        Alu::Pack { d, parts, .. } => {
            parts.iter().for_each(|p| u.src(p));
            (vec![*d], vec![])
        }
        Alu::Unpack { ds, a, .. } => {
            u.src(a);
            (ds.iter().flatten().copied().collect(), vec![])
        }
    };
    (regs, preds, u)
}

/// One instruction's part in the slice.
enum Role {
    /// Kept whatever: global and generic memory instructions (they issue the sectors),
    /// branches, exits and barriers; `Uses` are what they need.
    Anchor(Uses),
    /// Kept only if the slice needs what it writes.
    Defines {
        regs: Vec<Reg>,
        preds: Vec<PReg>,
        uses: Uses,
    },
    /// Never kept: a shared or local load (its value must never be needed: `loaded_regs`), a
    /// shared or local store (no shared or local load is ever kept), a `Nop`.
    Dropped,
}

fn role(inst: &Inst) -> Option<Role> {
    let mem_addr = |u: &mut Uses, m: &Mem| {
        if let Some(base) = m.addr().base {
            u.regs.push(base);
        }
    };
    Some(match &inst.kind {
        Kind::Flow(Flow::Bra { .. } | Flow::Exit | Flow::Yield) => Role::Anchor(Uses::default()),
        Kind::Flow(Flow::Bar {
            id, count, red: None, ..
        }) => {
            let mut u = Uses::default();
            u.src(id);
            if let Some(c) = count {
                u.src(c);
            }
            Role::Anchor(u)
        }
        Kind::Quick { general, .. } => {
            let (regs, preds, uses) = alu_defs_uses(general);
            Role::Defines { regs, preds, uses }
        }
        Kind::Work(Work::Alu(alu)) => {
            let (regs, preds, uses) = alu_defs_uses(alu);
            Role::Defines { regs, preds, uses }
        }
        Kind::Work(Work::Nop) => Role::Dropped,
        Kind::Work(Work::Mem(m)) => match (m, m.space()) {
            // Parameters and constants are read-only: a value from there may feed addresses.
            (Mem::Load(l), MemSpace::Param | MemSpace::Const) => {
                let mut uses = Uses::default();
                mem_addr(&mut uses, m);
                Role::Defines {
                    regs: l.ds.iter().flatten().copied().collect(),
                    preds: vec![],
                    uses,
                }
            }
            // Kept for their sectors; a global load's value must not be needed (checked
            // after the fixpoint, `loaded_regs`).
            (_, MemSpace::Global | MemSpace::Generic) => {
                let mut uses = Uses::default();
                mem_addr(&mut uses, m);
                Role::Anchor(uses)
            }
            (Mem::Load(_) | Mem::Store(_), _) => Role::Dropped,
        },
        _ => return None,
    })
}

/// The registers a load writes, whatever its space: none of them may be needed by the slice.
fn loaded_regs(inst: &Inst) -> Vec<Reg> {
    match &inst.kind {
        Kind::Work(Work::Mem(Mem::Load(l))) if !matches!(l.space, MemSpace::Param | MemSpace::Const) => {
            l.ds.iter().flatten().copied().collect()
        }
        _ => Vec::new(),
    }
}

impl Program {
    /// This kernel without the instructions its sector count does not depend on (module
    /// docs), or `None` when it cannot be cut soundly. Every global memory instruction stays,
    /// with its line and PTX line: a launch of it counts the same sectors per instruction as
    /// the kernel's (pcs differ: map them through `instructions()` of this program).
    pub fn count_slice(&self) -> Option<Program> {
        let roles: Vec<Role> = self.insts.iter().map(role).collect::<Option<_>>()?;
        let mut need_reg = vec![false; self.value_regs];
        let mut need_pred = vec![false; self.pred_regs];
        let mut keep = vec![false; self.insts.len()];
        let mark = |uses: &Uses, guard: Option<PredSrc>, need_reg: &mut [bool], need_pred: &mut [bool]| {
            let mut grew = false;
            for r in &uses.regs {
                grew |= !std::mem::replace(&mut need_reg[*r as usize], true);
            }
            for p in uses.preds.iter().copied().chain(guard.map(|g| g.reg)) {
                grew |= !std::mem::replace(&mut need_pred[p as usize], true);
            }
            grew
        };
        // Flow-insensitive fixpoint: an instruction writing a needed register is kept, and
        // what it reads (and its guard) becomes needed.
        loop {
            let mut grew = false;
            for (pc, (inst, role)) in self.insts.iter().zip(&roles).enumerate() {
                let wanted = match role {
                    Role::Anchor(_) => true,
                    Role::Defines { regs, preds, .. } => {
                        regs.iter().any(|r| need_reg[*r as usize]) || preds.iter().any(|p| need_pred[*p as usize])
                    }
                    Role::Dropped => false,
                };
                if wanted && !keep[pc] {
                    keep[pc] = true;
                    grew = true;
                }
                if keep[pc] {
                    let uses = match role {
                        Role::Anchor(u) | Role::Defines { uses: u, .. } => u,
                        _ => unreachable!("only anchors and definitions are kept"),
                    };
                    grew |= mark(uses, inst.guard, &mut need_reg, &mut need_pred);
                }
            }
            if !grew {
                break;
            }
        }
        // A value read from data memory that reaches an address, a predicate or a branch:
        // the count depends on the data, so the kernel runs whole.
        let data_needed = self
            .insts
            .iter()
            .any(|inst| loaded_regs(inst).iter().any(|r| need_reg[*r as usize]));
        if data_needed {
            return None;
        }
        Some(self.keeping(&keep))
    }

    /// The program with only the instructions `keep` marks. A branch target or reconvergence
    /// point that was cut moves to the next kept instruction: what ran between was only
    /// `Nop`s for the count. Lines, PTX lines and opcodes travel with their instructions.
    fn keeping(&self, keep: &[bool]) -> Program {
        // new_pc[old]: the first kept instruction at or after `old` (the end when none).
        let mut new_pc = vec![0u32; self.insts.len() + 1];
        let mut next = keep.iter().filter(|k| **k).count() as u32;
        new_pc[self.insts.len()] = next;
        for old in (0..self.insts.len()).rev() {
            if keep[old] {
                next -= 1;
            }
            new_pc[old] = next;
        }
        let moved = |pc: u32| if pc == EXIT { EXIT } else { new_pc[pc as usize] };
        let mut cut = self.clone();
        cut.insts.clear();
        cut.reconverge.clear();
        for (old, inst) in self.insts.iter().enumerate().filter(|(old, _)| keep[*old]) {
            let mut inst = inst.clone();
            if let Kind::Flow(Flow::Bra { target }) = &mut inst.kind {
                *target = moved(*target);
            }
            cut.insts.push(inst);
            cut.reconverge.push(moved(self.reconverge[old]));
        }
        cut
    }
}
