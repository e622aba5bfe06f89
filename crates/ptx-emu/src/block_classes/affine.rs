//! Follows one block as it runs and says which other blocks would count exactly as it does.
//!
//! Beside every value register of every lane the tracker keeps how the value would differ in
//! another block: `c·Δ`, with `Δ` the distance in blocks (x, y, z) and `c` three integers
//! (mod 2^64, as the registers wrap), or "unknown". `%ctaid.x` has `c = (1, 0, 0)`; `%tid`,
//! parameters and immediates have `c = 0` (the same in every block); a value loaded from data
//! memory is unknown. Additions, subtractions, products with a value that is the same in every
//! block and shifts by one carry `c` exactly, because they are ring operations mod 2^w.
//!
//! Where a value decides something, the tracker writes the condition under which another
//! block decides it the same way ([`Constraints`]):
//! - a comparison (`setp`, `min`, `max`): the same outcome, and both operands inside their
//!   type's range, so that wrapping cannot change it;
//! - a widening (`cvt`, `mul.wide`): no wrap in the narrow type;
//! - a global address: every lane moves by the same whole number of sectors and stays in its
//!   buffer, so the access touches as many sectors and the same number of lanes.
//!
//! With the same predicates every path, every active mask and every sector count is the
//! same, so a block meeting the conditions counts exactly what the tracked one counted.
//! Anything the tracker cannot follow (an unknown value reaching an address or a comparison,
//! a warp or atomic or asynchronous instruction, a device call) refuses the whole idea for
//! the launch: the blocks are then run one by one as always.
//!
//! A value that depends on the block index nearly always depends on it alike in every lane
//! (`blockIdx.x * 32 + threadIdx.x`), so a register keeps one coefficient for all its lanes
//! until lanes differ, and an instruction whose operands are shared that way is followed once
//! for the warp, its conditions taken over the lanes' extremes: the tracker then costs a few
//! plain runs of the block rather than tens.

use super::constraints::Constraints;
use crate::ir::{Alu, Cmp, Flow, Inst, IntOp, IntUnOp, Kind, MadPart, Mem, MemSpace, NumTy, Special, Src, Work};
use crate::memory::GlobalMemory;
use crate::warp::Warp;

/// How a value differs in the block `Δ` away: `c·Δ` (wrapping); None: unknown.
pub type Coef = Option<[i64; 3]>;

const SAME: Coef = Some([0; 3]);
const ALL: u32 = u32::MAX;
/// A view that is never shared: passed with an instruction's operand views, it makes the
/// instruction followed lane by lane (its result takes each lane's concrete value).
const BY_LANE: View = View::Lanes([None; 32]);

/// The value's part of the tracked block's execution that the tracker reads: concrete
/// operand values, all 32 lanes, as the block runner reads them.
pub trait Operands {
    fn values(&self, src: Src) -> [u64; 32];
}

/// A register's coefficients: one shared by every lane, or lane by lane.
#[derive(Debug, Clone, PartialEq)]
enum RegCoef {
    Every(Coef),
    Lanes(Box<[Coef; 32]>),
}

/// An operand's coefficients over the lanes an instruction runs for. It lives on the stack
/// for one instruction: boxing the lanes would allocate per instruction followed.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq)]
enum View {
    Shared(Coef),
    Lanes([Coef; 32]),
}

impl View {
    fn lane(&self, l: usize) -> Coef {
        match self {
            View::Shared(c) => *c,
            View::Lanes(ls) => ls[l],
        }
    }

    fn shared(&self) -> Option<Coef> {
        match self {
            View::Shared(c) => Some(*c),
            View::Lanes(_) => None,
        }
    }
}

pub struct AffineTracker {
    value_regs: usize,
    warps_per_block: usize,
    /// The cluster's shape in blocks: `%ctaid` moves by it per cluster (1, 1, 1 without).
    cluster_dims: [u32; 3],
    /// Per warp of every block of the cluster (rank by rank), per register.
    warps: Vec<Vec<RegCoef>>,
    /// The lanes of the warp being followed that hold a thread: a write to all of them
    /// leaves the register shared.
    valid: u32,
    pub constraints: Constraints,
    /// Why the launch's blocks cannot be counted by class (the first reason met).
    pub refused: Option<String>,
}

/// `v` as an integer of `bits` bits (1 to 64), signed or not.
fn as_int(v: u64, bits: u8, signed: bool) -> i128 {
    let unused = 64 - bits.clamp(1, 64) as u32;
    if signed {
        (((v << unused) as i64) >> unused) as i128
    } else {
        ((v << unused) >> unused) as i128
    }
}

/// The smallest and largest integer of the type.
fn type_range(bits: u8, signed: bool) -> (i128, i128) {
    let bits = bits as u32;
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// A coefficient as the signed integer it stands for in a `bits`-wide value.
fn coef_int(c: [i64; 3], bits: u8) -> [i128; 3] {
    c.map(|v| as_int(v as u64, bits, true))
}

fn is_zero(c: [i64; 3], bits: u8) -> bool {
    coef_int(c, bits) == [0; 3]
}

fn add(a: [i64; 3], b: [i64; 3]) -> [i64; 3] {
    [0, 1, 2].map(|i| a[i].wrapping_add(b[i]))
}

fn scale(a: [i64; 3], k: i64) -> [i64; 3] {
    a.map(|v| v.wrapping_mul(k))
}

fn lanes(m: u32) -> impl Iterator<Item = usize> {
    (0..32).filter(move |l| (m >> l) & 1 != 0)
}

/// The lane groups of `m` that share their coefficients in every view: one group (all of
/// `m`) when every view is shared, else one lane each.
fn groups(m: u32, views: &[&View]) -> Vec<u32> {
    if views.iter().all(|v| v.shared().is_some()) {
        vec![m]
    } else {
        lanes(m).map(|l| 1u32 << l).collect()
    }
}

/// For a product (or a mask) of `a` and `b`: whether the operand that is the same in every
/// block (the factor the other's coefficient is multiplied by) has one concrete value in
/// every lane of `m`.
fn factor_shared(ca: View, va: &[u64; 32], cb: View, vb: &[u64; 32], m: u32) -> bool {
    let zero = |v: View| matches!(v, View::Shared(Some(c)) if c == [0; 3]);
    (zero(ca) && uniform(va, m)) || (zero(cb) && uniform(vb, m))
}

/// Whether the concrete `values` are the same in every lane of `m`.
fn uniform(values: &[u64; 32], m: u32) -> bool {
    let first = values[m.trailing_zeros() as usize & 31];
    lanes(m).all(|l| values[l] == first)
}

impl AffineTracker {
    /// A tracker for a unit of `blocks` blocks (a cluster of `cluster_dims`, or one block)
    /// of `warps_per_block` warps each. `Δ` counts units.
    pub fn new(value_regs: usize, warps_per_block: usize, cluster_dims: [u32; 3]) -> AffineTracker {
        let blocks = cluster_dims.iter().product::<u32>() as usize;
        AffineTracker {
            value_regs: value_regs.max(1),
            warps_per_block,
            cluster_dims,
            // Unknown until written: a register read before any write holds whatever the
            // last block left there.
            warps: vec![Vec::new(); warps_per_block * blocks],
            valid: ALL,
            constraints: Constraints::default(),
            refused: None,
        }
    }

    fn refuse(&mut self, why: impl Into<String>) {
        if self.refused.is_none() {
            self.refused = Some(why.into());
        }
    }

    fn file(&mut self, warp: usize) -> &mut Vec<RegCoef> {
        let size = self.value_regs;
        let file = &mut self.warps[warp];
        if file.is_empty() {
            file.resize(size, RegCoef::Every(None));
        }
        file
    }

    fn special(&self, s: Special) -> Coef {
        let unit = |d: u8, by: i64| {
            let mut c = [0; 3];
            c[d as usize] = by;
            Some(c)
        };
        match s {
            // The block's index moves by the cluster's extent per cluster.
            Special::Ctaid(d) => unit(d, self.cluster_dims[d as usize] as i64),
            Special::ClusterId(d) => unit(d, 1),
            Special::Tid(_)
            | Special::Ntid(_)
            | Special::Nctaid(_)
            | Special::LaneId
            | Special::WarpId
            | Special::NWarpId
            | Special::LaneMaskEq
            | Special::LaneMaskLt
            | Special::LaneMaskLe
            | Special::LaneMaskGt
            | Special::LaneMaskGe
            | Special::DynamicSmemSize
            | Special::ClusterCtaid(_)
            | Special::ClusterNctaid(_)
            | Special::ClusterCtarank
            | Special::ClusterNctarank
            | Special::NClusterId(_)
            | Special::IsExplicitCluster => SAME,
            // Clocks and timers differ from block to block in no known way.
            Special::SmId | Special::Clock | Special::Clock64 => None,
            Special::GlobalTimer | Special::GlobalTimerLo | Special::GlobalTimerHi => None,
        }
    }

    /// The coefficients of `src` over the lanes `m`.
    fn view(&mut self, warp: usize, src: Src, m: u32) -> View {
        match src {
            Src::Reg(r) => match &self.file(warp)[r as usize] {
                RegCoef::Every(c) => View::Shared(*c),
                RegCoef::Lanes(ls) => {
                    let first = ls[m.trailing_zeros() as usize & 31];
                    if lanes(m).all(|l| ls[l] == first) {
                        View::Shared(first)
                    } else {
                        View::Lanes(**ls)
                    }
                }
            },
            Src::Imm(_) => View::Shared(SAME),
            Src::Special(s) => View::Shared(self.special(s)),
        }
    }

    /// Writes `c` to the lanes of group `g` of register `d`.
    fn write(&mut self, warp: usize, d: u16, g: u32, c: Coef) {
        let whole = g | !self.valid == ALL;
        let reg = &mut self.file(warp)[d as usize];
        match reg {
            RegCoef::Every(old) if *old == c => {}
            _ if whole => *reg = RegCoef::Every(c),
            RegCoef::Every(old) => {
                let mut ls = Box::new([*old; 32]);
                lanes(g).for_each(|l| ls[l] = c);
                *reg = RegCoef::Lanes(ls);
            }
            RegCoef::Lanes(ls) => lanes(g).for_each(|l| ls[l] = c),
        }
    }

    /// Every lane of `g` (lanes of `values`) must keep its value inside the type when moved
    /// by `c·Δ`: the tightest lanes decide.
    fn stays_in_type(&mut self, c: [i64; 3], values: &[u64; 32], g: u32, bits: u8, signed: bool) {
        if is_zero(c, bits) {
            return;
        }
        let (min, max) = type_range(bits, signed);
        let ints = lanes(g).map(|l| as_int(values[l], bits, signed));
        let (low, high) = ints.fold((i128::MAX, i128::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
        self.constraints.within(coef_int(c, bits), min - low, max - high);
    }

    /// `a cmp b` must come out in every block as it did here, in every lane of `g`.
    #[allow(clippy::too_many_arguments)]
    fn same_outcome(
        &mut self,
        cmp: Cmp,
        bits: u8,
        signed: bool,
        (ca, va): ([i64; 3], &[u64; 32]),
        (cb, vb): ([i64; 3], &[u64; 32]),
        g: u32,
    ) {
        self.stays_in_type(ca, va, g, bits, signed);
        self.stays_in_type(cb, vb, g, bits, signed);
        let (ka, kb) = (coef_int(ca, bits), coef_int(cb, bits));
        let k = [0, 1, 2].map(|i| ka[i] - kb[i]);
        if k == [0; 3] {
            return; // the difference is the same in every block
        }
        // In the block Δ away, a - b = d + t with t = k·Δ: each lane bounds t.
        let (mut lo, mut hi) = (i128::MIN, i128::MAX);
        for l in lanes(g) {
            let d = as_int(va[l], bits, signed) - as_int(vb[l], bits, signed);
            match cmp {
                Cmp::Eq | Cmp::Ne if d == 0 => (lo, hi) = (lo.max(0), hi.min(0)),
                Cmp::Eq | Cmp::Ne => self.constraints.not_equal(k, -d),
                Cmp::Lt | Cmp::Ge if d < 0 => hi = hi.min(-d - 1),
                Cmp::Lt | Cmp::Ge => lo = lo.max(-d),
                Cmp::Le | Cmp::Gt if d <= 0 => hi = hi.min(-d),
                Cmp::Le | Cmp::Gt => lo = lo.max(-d + 1),
                _ => return self.refuse("a float comparison of integers"),
            }
        }
        self.constraints.within(k, lo, hi);
    }

    /// Notes what the instruction about to run for lanes `m` of `warp` does to the values'
    /// dependence on the block, reading its operands from `ops` (before it writes).
    /// `rank`: the block's place in its cluster (0 without clusters).
    pub fn step(&mut self, inst: &Inst, warp: &Warp, rank: u32, m: u32, ops: &dyn Operands, mem: &GlobalMemory) {
        if self.refused.is_some() {
            return;
        }
        let w = rank as usize * self.warps_per_block + warp.index as usize;
        self.valid = warp.valid;
        match &inst.kind {
            Kind::Quick { general, .. } => self.alu(general, w, warp, m, ops),
            Kind::Work(Work::Alu(alu)) => self.alu(alu, w, warp, m, ops),
            Kind::Work(Work::Mem(access)) => self.memory(access, w, m, ops, mem),
            Kind::Work(Work::Nop)
            | Kind::Flow(Flow::Bra { .. } | Flow::Exit | Flow::Yield | Flow::ClusterArrive | Flow::ClusterWait) => {}
            // Another block's shared memory: the same address in every cluster when the
            // offset and the rank are.
            Kind::Work(Work::Mapa { d, a, rank, .. }) => {
                if self.view(w, *a, m) != View::Shared(SAME) || self.view(w, *rank, m) != View::Shared(SAME) {
                    return self.refuse("a `mapa` whose address or rank differs between clusters");
                }
                self.write(w, *d, m, SAME);
            }
            Kind::Flow(Flow::Bar {
                id, count, red: None, ..
            }) => {
                for src in std::iter::once(*id).chain(*count) {
                    if self.view(w, src, m) != View::Shared(SAME) {
                        self.refuse("a barrier whose number or count differs between blocks");
                    }
                }
            }
            _ => self.refuse(format!("`{}` is not followed", inst.opcode)),
        }
    }

    fn alu(&mut self, alu: &Alu, w: usize, warp: &Warp, m: u32, ops: &dyn Operands) {
        match *alu {
            Alu::Mov { d, a } | Alu::Cvta { d, a, .. } => {
                let va = self.view(w, a, m);
                self.each(w, d, m, &[&va], |_, g| va.lane(g.trailing_zeros() as usize));
            }
            Alu::IntBin {
                op,
                bits,
                signed,
                d,
                a,
                b,
            } => self.int_bin(op, bits, signed, d, a, b, w, m, ops),
            Alu::IntUn { op, bits, d, a } => {
                let va = self.view(w, a, m);
                self.each(w, d, m, &[&va], |_, g| {
                    match (op, va.lane(g.trailing_zeros() as usize)) {
                        (_, Some(c)) if is_zero(c, bits) => SAME,
                        // -x, and !x = -x - 1.
                        (IntUnOp::Neg | IntUnOp::Not, Some(c)) => Some(scale(c, -1)),
                        _ => None,
                    }
                });
            }
            Alu::MulWide { bits, signed, d, a, b } => self.mul_wide(bits, signed, d, a, b, None, w, m, ops),
            Alu::Mad {
                part,
                bits,
                signed,
                d,
                a,
                b,
                c,
            } => match part {
                MadPart::Lo => {
                    let vc = self.view(w, c, m);
                    self.int_bin(IntOp::MulLo, bits, signed, d, a, b, w, m, ops);
                    let product = self.view(w, Src::Reg(d), m);
                    self.each(w, d, m, &[&product, &vc], |_, g| {
                        let l = g.trailing_zeros() as usize;
                        Some(add(product.lane(l)?, vc.lane(l)?))
                    });
                }
                MadPart::Wide => self.mul_wide(bits, signed, d, a, b, Some(c), w, m, ops),
                MadPart::Hi => self.all_same_or_unknown(&[a, b, c], d, w, m),
            },
            Alu::Setp { cmp, ty, a, b, .. } => {
                let (ca, cb) = (self.view(w, a, m), self.view(w, b, m));
                if ca == View::Shared(SAME) && cb == View::Shared(SAME) {
                    return;
                }
                let (va, vb) = (ops.values(a), ops.values(b));
                for g in groups(m, &[&ca, &cb]) {
                    let l = g.trailing_zeros() as usize;
                    match (ty, ca.lane(l), cb.lane(l)) {
                        (_, Some(x), Some(y)) if x == [0; 3] && y == [0; 3] => {}
                        (NumTy::Int { bits, signed }, Some(x), Some(y)) => {
                            self.same_outcome(cmp, bits, signed, (x, &va), (y, &vb), g)
                        }
                        _ => return self.refuse("a comparison of values that differ between blocks in no known way"),
                    }
                }
            }
            Alu::Selp { d, a, b, p } => {
                let chosen = warp.pred(p);
                let (ca, cb) = (self.view(w, a, m), self.view(w, b, m));
                // Lanes taking `a` and lanes taking `b` are written apart; each part is
                // shared when its operand is.
                for (part, view) in [(m & chosen, ca), (m & !chosen, cb)] {
                    if part != 0 {
                        self.each(w, d, part, &[&view], |_, g| view.lane(g.trailing_zeros() as usize));
                    }
                }
            }
            Alu::Cvt { to, from, d, a, .. } => {
                let ca = self.view(w, a, m);
                let va = ops.values(a);
                self.each(w, d, m, &[&ca], |me, g| {
                    match (to, from, ca.lane(g.trailing_zeros() as usize)) {
                        (_, _, Some(c)) if c == [0; 3] => SAME,
                        (
                            NumTy::Int { bits: to_bits, .. },
                            NumTy::Int {
                                bits: from_bits,
                                signed,
                            },
                            Some(c),
                        ) => {
                            if to_bits > from_bits {
                                // Widening: exact while the narrow value does not wrap.
                                me.stays_in_type(c, &va, g, from_bits, signed);
                                Some(coef_int(c, from_bits).map(|v| v as i64))
                            } else {
                                Some(c) // narrowing keeps the relation mod 2^to_bits
                            }
                        }
                        _ => None,
                    }
                });
            }
            Alu::PredSet { .. } => {}
            Alu::Bfe { d, a, pos, len, .. } => self.all_same_or_unknown(&[a, pos, len], d, w, m),
            Alu::Bfi { d, f, b, pos, len, .. } => self.all_same_or_unknown(&[f, b, pos, len], d, w, m),
            Alu::FBin { d, a, b, .. } => self.all_same_or_unknown(&[a, b], d, w, m),
            Alu::FFma { d, a, b, c, .. } => self.all_same_or_unknown(&[a, b, c], d, w, m),
            Alu::FUn { d, a, .. } => self.all_same_or_unknown(&[a], d, w, m),
            Alu::Pack { d, ref parts, .. } => self.all_same_or_unknown(parts, d, w, m),
            Alu::Unpack { ref ds, a, .. } => {
                let same = self.view(w, a, m) == View::Shared(SAME);
                for d in ds.iter().flatten() {
                    self.write(w, *d, m, if same { SAME } else { None });
                }
            }
        }
    }

    /// Writes `d` group by group: `f(tracker, group)` gives the group's coefficient; the
    /// groups are all of `m` at once when every view in `views` is shared.
    fn each(&mut self, w: usize, d: u16, m: u32, views: &[&View], mut f: impl FnMut(&mut Self, u32) -> Coef) {
        for g in groups(m, views) {
            let c = f(self, g);
            self.write(w, d, g, c);
        }
    }

    /// The result is the same in every block when every operand is, else unknown.
    fn all_same_or_unknown(&mut self, srcs: &[Src], d: u16, w: usize, m: u32) {
        let views: Vec<View> = srcs.iter().map(|s| self.view(w, *s, m)).collect();
        let refs: Vec<&View> = views.iter().collect();
        self.each(w, d, m, &refs, |_, g| {
            let l = g.trailing_zeros() as usize;
            views.iter().all(|v| v.lane(l) == SAME).then_some([0; 3])
        });
    }

    #[allow(clippy::too_many_arguments)]
    fn int_bin(
        &mut self,
        op: IntOp,
        bits: u8,
        signed: bool,
        d: u16,
        a: Src,
        b: Src,
        w: usize,
        m: u32,
        ops: &dyn Operands,
    ) {
        let (ca, cb) = (self.view(w, a, m), self.view(w, b, m));
        if ca == View::Shared(SAME) && cb == View::Shared(SAME) {
            return self.write(w, d, m, SAME);
        }
        let (va, vb) = (ops.values(a), ops.values(b));
        // The result takes a concrete value (a factor, a shift, a mask, a comparison's
        // outcome) lane by lane unless every lane has the same.
        let concrete_shared = match op {
            IntOp::MulLo | IntOp::And => factor_shared(ca, &va, cb, &vb, m),
            IntOp::Shl | IntOp::Shr => uniform(&vb, m),
            IntOp::Min | IntOp::Max => uniform(&va, m) && uniform(&vb, m),
            _ => true,
        };
        let lane_values = !concrete_shared;
        let views = [ca, cb, if lane_values { BY_LANE } else { View::Shared(None) }];
        let refs: Vec<&View> = views.iter().collect();
        self.each(w, d, m, &refs, |me, g| {
            let l = g.trailing_zeros() as usize;
            match (ca.lane(l), cb.lane(l)) {
                (Some(x), Some(y)) if is_zero(x, bits) && is_zero(y, bits) => SAME,
                (Some(x), Some(y)) => match op {
                    IntOp::Add => Some(add(x, y)),
                    IntOp::Sub => Some(add(x, scale(y, -1))),
                    IntOp::MulLo if is_zero(x, bits) => Some(scale(y, va[l] as i64)),
                    IntOp::MulLo if is_zero(y, bits) => Some(scale(x, vb[l] as i64)),
                    IntOp::Shl if is_zero(y, bits) => {
                        let shift = vb[l] as u32;
                        Some(if shift >= bits as u32 {
                            [0; 3]
                        } else {
                            x.map(|v| v.wrapping_shl(shift))
                        })
                    }
                    IntOp::Shr if is_zero(y, bits) => me.shift_right(x, &va, g, vb[l] as u32, bits, signed),
                    // `x & (2^k - 1)` of a value that moves by multiples of 2^k.
                    IntOp::And if is_zero(y, bits) => low_bits(x, vb[l], bits),
                    IntOp::And if is_zero(x, bits) => low_bits(y, va[l], bits),
                    IntOp::Min | IntOp::Max => {
                        let less = as_int(va[l], bits, signed) < as_int(vb[l], bits, signed);
                        // Within a group every lane must choose alike: one lane per group
                        // when the choice differs between lanes.
                        me.same_outcome(Cmp::Lt, bits, signed, (x, &va), (y, &vb), g);
                        let take_a = less == (op == IntOp::Min);
                        Some(if take_a { x } else { y })
                    }
                    _ => None,
                },
                (None, _) | (_, None) if matches!(op, IntOp::Min | IntOp::Max) => {
                    me.refuse("a min or max of a value that differs between blocks in no known way");
                    None
                }
                _ => None,
            }
        });
    }

    /// `x >> shift` for a value that moves by multiples of 2^shift: exact while it does not
    /// wrap in its type.
    #[allow(clippy::too_many_arguments)]
    fn shift_right(&mut self, c: [i64; 3], values: &[u64; 32], g: u32, shift: u32, bits: u8, signed: bool) -> Coef {
        let k = coef_int(c, bits);
        let unit = 1i128 << shift.min(100);
        if shift >= bits as u32 || k.iter().any(|x| x % unit != 0) {
            return None;
        }
        self.stays_in_type(c, values, g, bits, signed);
        Some(k.map(|x| (x / unit) as i64))
    }

    /// `mul.wide` / `mad.wide`: the operands are widened first, exact while they do not wrap.
    #[allow(clippy::too_many_arguments)]
    fn mul_wide(
        &mut self,
        bits: u8,
        signed: bool,
        d: u16,
        a: Src,
        b: Src,
        c: Option<Src>,
        w: usize,
        m: u32,
        ops: &dyn Operands,
    ) {
        let (ca, cb) = (self.view(w, a, m), self.view(w, b, m));
        let cc = c.map(|c| self.view(w, c, m));
        let (va, vb) = (ops.values(a), ops.values(b));
        // The product takes the concrete value of the operand that is the same in every
        // block lane by lane, unless every lane has the same.
        let lane_values = !factor_shared(ca, &va, cb, &vb, m);
        let views = [
            ca,
            cb,
            cc.unwrap_or(View::Shared(SAME)),
            if lane_values { BY_LANE } else { View::Shared(None) },
        ];
        let refs: Vec<&View> = views.iter().collect();
        self.each(w, d, m, &refs, |me, g| {
            let l = g.trailing_zeros() as usize;
            let product = match (ca.lane(l), cb.lane(l)) {
                (Some(x), Some(y)) if is_zero(x, bits) && is_zero(y, bits) => SAME,
                (Some(x), Some(y)) if is_zero(x, bits) => {
                    me.stays_in_type(y, &vb, g, bits, signed);
                    Some(coef_int(y, bits).map(|v| (v as i64).wrapping_mul(as_int(va[l], bits, signed) as i64)))
                }
                (Some(x), Some(y)) if is_zero(y, bits) => {
                    me.stays_in_type(x, &va, g, bits, signed);
                    Some(coef_int(x, bits).map(|v| (v as i64).wrapping_mul(as_int(vb[l], bits, signed) as i64)))
                }
                _ => None,
            };
            match (product, cc.map(|v| v.lane(l))) {
                (p, None) => p,
                (Some(p), Some(Some(y))) => Some(add(p, y)),
                _ => None,
            }
        });
    }

    fn memory(&mut self, access: &Mem, w: usize, m: u32, ops: &dyn Operands, mem: &GlobalMemory) {
        let addr = access.addr();
        let base = match addr.base {
            Some(r) => self.view(w, Src::Reg(r), m),
            None => View::Shared(SAME),
        };
        if let Mem::Load(load) = access {
            let loaded = match access.space() {
                MemSpace::Param | MemSpace::Const => SAME,
                _ => None,
            };
            for d in load.ds.iter().flatten() {
                self.write(w, *d, m, loaded);
            }
        }
        if base == View::Shared(SAME) {
            return;
        }
        if !matches!(access.space(), MemSpace::Global | MemSpace::Generic) {
            return self.refuse("a parameter, shared or local address that differs between blocks");
        }
        let Some(Some(c)) = base.shared() else {
            return self.refuse("a global access whose lanes move differently between blocks");
        };
        self.constraints.whole_sectors(c);
        let size = access.bytes() as u64 * access.elements() as u64;
        let values = ops.values(Src::Reg(addr.base.expect("an address that moves has a base register")));
        let (mut lo, mut hi) = (i128::MIN, i128::MAX);
        for l in lanes(m) {
            let address = values[l].wrapping_add(addr.offset as u64);
            let Ok(buffer) = mem.find(address, size as u32) else {
                return self.refuse("a global access outside every buffer");
            };
            let buffer = &mem.buffers[buffer];
            lo = lo.max(buffer.base as i128 - address as i128);
            hi = hi.min(buffer.end() as i128 - size as i128 - address as i128);
        }
        self.constraints.within(c.map(|v| v as i128), lo, hi);
    }
}

/// `x & mask` where `mask` keeps the low k bits and x moves by multiples of 2^k: the same in
/// every block.
fn low_bits(c: [i64; 3], mask: u64, bits: u8) -> Coef {
    let mask = as_int(mask, bits, false) as u128;
    let low_mask = mask != 0 && (mask + 1).is_power_of_two();
    let unit = (mask + 1) as i128;
    (low_mask && coef_int(c, bits).iter().all(|x| x % unit == 0)).then_some([0; 3])
}
