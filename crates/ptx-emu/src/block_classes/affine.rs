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

use super::constraints::Constraints;
use crate::ir::{Alu, Cmp, Flow, Inst, IntOp, IntUnOp, Kind, MadPart, Mem, MemSpace, NumTy, Special, Src, Work};
use crate::memory::GlobalMemory;
use crate::warp::Warp;

/// How a value differs in the block `Δ` away: `c·Δ` (wrapping); None: unknown.
pub type Coef = Option<[i64; 3]>;

const SAME: Coef = Some([0; 3]);

/// The value's part of the tracked block's execution that the tracker reads: concrete
/// operand values, all 32 lanes, as the block runner reads them.
pub trait Operands {
    fn values(&self, src: Src) -> [u64; 32];
}

pub struct AffineTracker {
    value_regs: usize,
    warps_per_block: usize,
    /// The cluster's shape in blocks: `%ctaid` moves by it per cluster (1, 1, 1 without).
    cluster_dims: [u32; 3],
    /// Per warp of every block of the cluster (rank by rank): `regs[reg * 32 + lane]`.
    warps: Vec<Vec<Coef>>,
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
            constraints: Constraints::default(),
            refused: None,
        }
    }

    fn refuse(&mut self, why: impl Into<String>) {
        if self.refused.is_none() {
            self.refused = Some(why.into());
        }
    }

    fn file(&mut self, warp: usize) -> &mut Vec<Coef> {
        let size = self.value_regs * 32;
        let file = &mut self.warps[warp];
        if file.is_empty() {
            file.resize(size, None);
        }
        file
    }

    fn coef(&mut self, warp: usize, src: Src, lane: usize) -> Coef {
        match src {
            Src::Reg(r) => self.file(warp)[r as usize * 32 + lane],
            Src::Imm(_) => SAME,
            Src::Special(s) => match s {
                // The block's index moves by the cluster's extent per cluster.
                Special::Ctaid(d) => {
                    let mut c = [0; 3];
                    c[d as usize] = self.cluster_dims[d as usize] as i64;
                    Some(c)
                }
                Special::ClusterId(d) => {
                    let mut c = [0; 3];
                    c[d as usize] = 1;
                    Some(c)
                }
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
            },
        }
    }

    fn set(&mut self, warp: usize, d: u16, lane: usize, c: Coef) {
        self.file(warp)[d as usize * 32 + lane] = c;
    }

    /// A value that must mean the same integer in every block it is compared or widened in:
    /// it must not wrap in its type.
    fn stays_in_type(&mut self, c: [i64; 3], v: u64, bits: u8, signed: bool) {
        if is_zero(c, bits) {
            return;
        }
        let (min, max) = type_range(bits, signed);
        let v = as_int(v, bits, signed);
        self.constraints.within(coef_int(c, bits), min - v, max - v);
    }

    /// `a cmp b` must come out in every block as it did here (`a`, `b` integers of the type).
    #[allow(clippy::too_many_arguments)]
    fn same_outcome(&mut self, cmp: Cmp, bits: u8, signed: bool, ca: [i64; 3], va: u64, cb: [i64; 3], vb: u64) {
        self.stays_in_type(ca, va, bits, signed);
        self.stays_in_type(cb, vb, bits, signed);
        let (ka, kb) = (coef_int(ca, bits), coef_int(cb, bits));
        let k = [0, 1, 2].map(|i| ka[i] - kb[i]);
        // In the block Δ away, a - b = d + t with t = k·Δ.
        let d = as_int(va, bits, signed) - as_int(vb, bits, signed);
        let (min, max) = (i128::MIN, i128::MAX);
        let c = &mut self.constraints;
        match cmp {
            Cmp::Eq | Cmp::Ne if d == 0 => c.within(k, 0, 0),
            Cmp::Eq | Cmp::Ne => c.not_equal(k, -d),
            Cmp::Lt | Cmp::Ge if d < 0 => c.within(k, min, -d - 1),
            Cmp::Lt | Cmp::Ge => c.within(k, -d, max),
            Cmp::Le | Cmp::Gt if d <= 0 => c.within(k, min, -d),
            Cmp::Le | Cmp::Gt => c.within(k, -d + 1, max),
            _ => self.refuse("a float comparison of integers"),
        }
    }

    /// Notes what the instruction about to run for lanes `m` of `warp` does to the values'
    /// dependence on the block, reading its operands from `ops` (before it writes).
    /// `rank`: the block's place in its cluster (0 without clusters).
    pub fn step(&mut self, inst: &Inst, warp: &Warp, rank: u32, m: u32, ops: &dyn Operands, mem: &GlobalMemory) {
        if self.refused.is_some() {
            return;
        }
        let w = rank as usize * self.warps_per_block + warp.index as usize;
        match &inst.kind {
            Kind::Quick { general, .. } => self.alu(general, w, warp, m, ops),
            Kind::Work(Work::Alu(alu)) => self.alu(alu, w, warp, m, ops),
            Kind::Work(Work::Mem(access)) => self.memory(access, w, m, ops, mem),
            Kind::Work(Work::Nop)
            | Kind::Flow(Flow::Bra { .. } | Flow::Exit | Flow::Yield | Flow::ClusterArrive | Flow::ClusterWait) => {}
            // Another block's shared memory: the same address in every cluster when the
            // offset and the rank are.
            Kind::Work(Work::Mapa { d, a, rank, .. }) => {
                for l in lanes(m) {
                    if self.coef(w, *a, l) != SAME || self.coef(w, *rank, l) != SAME {
                        return self.refuse("a `mapa` whose address or rank differs between clusters");
                    }
                    self.set(w, *d, l, SAME);
                }
            }
            Kind::Flow(Flow::Bar {
                id, count, red: None, ..
            }) => {
                for src in std::iter::once(*id).chain(*count) {
                    if lanes(m).any(|l| self.coef(w, src, l) != SAME) {
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
                for l in lanes(m) {
                    let c = self.coef(w, a, l);
                    self.set(w, d, l, c);
                }
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
                for l in lanes(m) {
                    let c = match (op, self.coef(w, a, l)) {
                        (_, Some(c)) if is_zero(c, bits) => SAME,
                        // -x, and !x = -x - 1.
                        (IntUnOp::Neg | IntUnOp::Not, Some(c)) => Some(scale(c, -1)),
                        _ => None,
                    };
                    self.set(w, d, l, c);
                }
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
                    self.int_bin(IntOp::MulLo, bits, signed, d, a, b, w, m, ops);
                    for l in lanes(m) {
                        let sum = match (self.file(w)[d as usize * 32 + l], self.coef(w, c, l)) {
                            (Some(x), Some(y)) => Some(add(x, y)),
                            _ => None,
                        };
                        self.set(w, d, l, sum);
                    }
                }
                MadPart::Wide => self.mul_wide(bits, signed, d, a, b, Some(c), w, m, ops),
                MadPart::Hi => self.all_same_or_unknown(&[a, b, c], d, w, m),
            },
            Alu::Setp { cmp, ty, a, b, .. } => {
                let (va, vb) = (ops.values(a), ops.values(b));
                for l in lanes(m) {
                    let (ca, cb) = (self.coef(w, a, l), self.coef(w, b, l));
                    match (ty, ca, cb) {
                        (_, Some(x), Some(y)) if x == [0; 3] && y == [0; 3] => {}
                        (NumTy::Int { bits, signed }, Some(x), Some(y)) => {
                            self.same_outcome(cmp, bits, signed, x, va[l], y, vb[l])
                        }
                        _ => self.refuse("a comparison of values that differ between blocks in no known way"),
                    }
                }
            }
            Alu::Selp { d, a, b, p } => {
                let chosen = warp.pred(p);
                for l in lanes(m) {
                    let c = self.coef(w, if (chosen >> l) & 1 != 0 { a } else { b }, l);
                    self.set(w, d, l, c);
                }
            }
            Alu::Cvt { to, from, d, a, .. } => {
                let va = ops.values(a);
                for l in lanes(m) {
                    let c = match (to, from, self.coef(w, a, l)) {
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
                                self.stays_in_type(c, va[l], from_bits, signed);
                                Some(coef_int(c, from_bits).map(|v| v as i64))
                            } else {
                                Some(c) // narrowing keeps the relation mod 2^to_bits
                            }
                        }
                        _ => None,
                    };
                    self.set(w, d, l, c);
                }
            }
            Alu::PredSet { .. } => {}
            Alu::Bfe { d, a, pos, len, .. } => self.all_same_or_unknown(&[a, pos, len], d, w, m),
            Alu::Bfi { d, f, b, pos, len, .. } => self.all_same_or_unknown(&[f, b, pos, len], d, w, m),
            Alu::FBin { d, a, b, .. } => self.all_same_or_unknown(&[a, b], d, w, m),
            Alu::FFma { d, a, b, c, .. } => self.all_same_or_unknown(&[a, b, c], d, w, m),
            Alu::FUn { d, a, .. } => self.all_same_or_unknown(&[a], d, w, m),
            Alu::Pack { d, ref parts, .. } => self.all_same_or_unknown(parts, d, w, m),
            Alu::Unpack { ref ds, a, .. } => {
                for l in lanes(m) {
                    let c = if self.coef(w, a, l) == SAME { SAME } else { None };
                    for d in ds.iter().flatten() {
                        self.set(w, *d, l, c);
                    }
                }
            }
        }
    }

    /// The result is the same in every block when every operand is, else unknown.
    fn all_same_or_unknown(&mut self, srcs: &[Src], d: u16, w: usize, m: u32) {
        for l in lanes(m) {
            let same = srcs.iter().all(|s| self.coef(w, *s, l) == SAME);
            self.set(w, d, l, if same { SAME } else { None });
        }
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
        let (va, vb) = (ops.values(a), ops.values(b));
        for l in lanes(m) {
            let (ca, cb) = (self.coef(w, a, l), self.coef(w, b, l));
            let c = match (ca, cb) {
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
                    IntOp::Shr if is_zero(y, bits) => self.shift_right(x, va[l], vb[l] as u32, bits, signed),
                    // `x & (2^k - 1)` of a value that moves by multiples of 2^k.
                    IntOp::And if is_zero(y, bits) => low_bits(x, vb[l], bits),
                    IntOp::And if is_zero(x, bits) => low_bits(y, va[l], bits),
                    IntOp::Min | IntOp::Max => {
                        let less = as_int(va[l], bits, signed) < as_int(vb[l], bits, signed);
                        self.same_outcome(Cmp::Lt, bits, signed, x, va[l], y, vb[l]);
                        let take_a = less == (op == IntOp::Min);
                        Some(if take_a { x } else { y })
                    }
                    _ => None,
                },
                (None, _) | (_, None) if matches!(op, IntOp::Min | IntOp::Max) => {
                    self.refuse("a min or max of a value that differs between blocks in no known way");
                    None
                }
                _ => None,
            };
            self.set(w, d, l, c);
        }
    }

    /// `x >> shift` for a value that moves by multiples of 2^shift: exact while it does not
    /// wrap in its type.
    fn shift_right(&mut self, c: [i64; 3], v: u64, shift: u32, bits: u8, signed: bool) -> Coef {
        let k = coef_int(c, bits);
        let unit = 1i128 << shift.min(100);
        if shift >= bits as u32 || k.iter().any(|x| x % unit != 0) {
            return None;
        }
        self.stays_in_type(c, v, bits, signed);
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
        let (va, vb) = (ops.values(a), ops.values(b));
        for l in lanes(m) {
            let (ca, cb) = (self.coef(w, a, l), self.coef(w, b, l));
            let product = match (ca, cb) {
                (Some(x), Some(y)) if is_zero(x, bits) && is_zero(y, bits) => SAME,
                (Some(x), Some(y)) if is_zero(x, bits) => {
                    self.stays_in_type(y, vb[l], bits, signed);
                    Some(coef_int(y, bits).map(|v| (v as i64).wrapping_mul(as_int(va[l], bits, signed) as i64)))
                }
                (Some(x), Some(y)) if is_zero(y, bits) => {
                    self.stays_in_type(x, va[l], bits, signed);
                    Some(coef_int(x, bits).map(|v| (v as i64).wrapping_mul(as_int(vb[l], bits, signed) as i64)))
                }
                _ => None,
            };
            let sum = match (product, c.map(|c| self.coef(w, c, l))) {
                (p, None) => p,
                (Some(p), Some(Some(y))) => Some(add(p, y)),
                _ => None,
            };
            self.set(w, d, l, sum);
        }
    }

    fn memory(&mut self, access: &Mem, w: usize, m: u32, ops: &dyn Operands, mem: &GlobalMemory) {
        let addr = access.addr();
        let base = addr.base.map(|r| ops.values(Src::Reg(r)));
        let base_coef: Vec<(usize, Coef)> = lanes(m)
            .map(|l| (l, addr.base.map_or(SAME, |r| self.coef(w, Src::Reg(r), l))))
            .collect();
        let same_everywhere = base_coef.iter().all(|(_, c)| *c == SAME);
        let loaded = match access {
            Mem::Load(load) => load.ds.iter().flatten().copied().collect(),
            Mem::Store(_) => Vec::new(),
        };
        let loaded_coef = match access.space() {
            MemSpace::Param | MemSpace::Const => SAME,
            _ => None,
        };
        for l in lanes(m) {
            for d in &loaded {
                self.set(w, *d, l, loaded_coef);
            }
        }
        if same_everywhere {
            return;
        }
        if !matches!(access.space(), MemSpace::Global | MemSpace::Generic) {
            return self.refuse("a parameter, shared or local address that differs between blocks");
        }
        let Some(c) = base_coef[0].1.filter(|c| base_coef.iter().all(|(_, x)| *x == Some(*c))) else {
            return self.refuse("a global access whose lanes move differently between blocks");
        };
        self.constraints.whole_sectors(c);
        let size = access.bytes() as u64 * access.elements() as u64;
        let base = base.expect("an address that moves has a base register");
        for (l, _) in base_coef {
            let address = base[l].wrapping_add(addr.offset as u64);
            let Ok(buffer) = mem.find(address, size as u32) else {
                return self.refuse("a global access outside every buffer");
            };
            let buffer = &mem.buffers[buffer];
            let (lo, hi) = (buffer.base as i128, buffer.end() as i128 - size as i128);
            self.constraints
                .within(c.map(|v| v as i128), lo - address as i128, hi - address as i128);
        }
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
