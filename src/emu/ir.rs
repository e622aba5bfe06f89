//! The emulator's executable form of a PTX kernel: registers resolved to indices, symbols
//! to addresses, labels to instruction indices, each instruction decoded to one [`Kind`].

/// Index into a warp's value registers (each 32 lanes of u64).
pub type Reg = u16;
/// Index into a warp's predicate registers (each a 32-bit lane mask).
pub type PReg = u16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    LaneId,
    WarpId,
    NWarpId,
    SmId,
    Clock,
    Clock64,
    LaneMaskEq,
    LaneMaskLt,
    LaneMaskLe,
    LaneMaskGt,
    LaneMaskGe,
}

/// A source operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Src {
    Reg(Reg),
    /// Immediate bits, already sized for the instruction.
    Imm(u64),
    Special(Special),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemSpace {
    Global,
    Shared,
    Local,
    Param,
    Const,
    /// Generic addressing: resolved per lane by window.
    Generic,
}

/// `[base + offset]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addr {
    /// None: the address is `offset` alone (a symbol already folded in).
    pub base: Option<Reg>,
    pub offset: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntOp {
    Add,
    Sub,
    MulLo,
    MulHi,
    Div,
    Rem,
    Min,
    Max,
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntUnOp {
    Neg,
    Not,
    Abs,
    Popc,
    Clz,
    Brev,
    Cnot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FOp {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FUnOp {
    Neg,
    Abs,
    Rcp,
    Sqrt,
    Rsqrt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    // Unordered float variants: true when either side is NaN.
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

/// Numeric type of a value, for comparisons and conversions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumTy {
    Int { bits: u8, signed: bool },
    F16,
    F32,
    F64,
}

/// Rounding of cvt and float ops; only the modes the instruction allows are decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Round {
    /// No modifier: exact, or the instruction's default.
    Default,
    /// Round to nearest even (float result) / to nearest integer (`rni`).
    Nearest,
    /// Toward zero (`rz` / `rzi`).
    Zero,
    /// Toward minus infinity (`rm` / `rmi`).
    Down,
    /// Toward plus infinity (`rp` / `rpi`).
    Up,
}

/// A predicate operand, possibly negated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PredSrc {
    pub reg: PReg,
    pub negate: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    IntBin {
        op: IntOp,
        bits: u8,
        signed: bool,
        d: Reg,
        a: Src,
        b: Src,
    },
    IntUn {
        op: IntUnOp,
        bits: u8,
        d: Reg,
        a: Src,
    },
    /// `mul.wide`: `bits`-wide operands, 2*bits result.
    MulWide {
        bits: u8,
        signed: bool,
        d: Reg,
        a: Src,
        b: Src,
    },
    /// `mad.lo` / `mad.hi` / `mad.wide`: (a * b) part + c.
    Mad {
        part: MadPart,
        bits: u8,
        signed: bool,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    Bfe {
        bits: u8,
        signed: bool,
        d: Reg,
        a: Src,
        pos: Src,
        len: Src,
    },
    Bfi {
        bits: u8,
        d: Reg,
        f: Src,
        b: Src,
        pos: Src,
        len: Src,
    },
    FBin {
        op: FOp,
        double: bool,
        ftz: bool,
        sat: bool,
        d: Reg,
        a: Src,
        b: Src,
    },
    FFma {
        double: bool,
        ftz: bool,
        sat: bool,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    FUn {
        op: FUnOp,
        double: bool,
        ftz: bool,
        d: Reg,
        a: Src,
    },
    Setp {
        cmp: Cmp,
        ty: NumTy,
        d: PReg,
        d_not: Option<PReg>,
        a: Src,
        b: Src,
        combine: Option<(BoolOp, PredSrc)>,
    },
    Selp {
        d: Reg,
        a: Src,
        b: Src,
        p: PredSrc,
    },
    Cvt {
        to: NumTy,
        from: NumTy,
        round: Round,
        ftz: bool,
        sat: bool,
        d: Reg,
        a: Src,
    },
    Mov {
        d: Reg,
        a: Src,
    },
    /// Write a predicate from a boolean combination of predicates (or a constant).
    PredSet {
        d: PReg,
        op: Option<BoolOp>,
        a: PredSrcOrConst,
        b: Option<PredSrcOrConst>,
    },
    /// `selp`-like move of a predicate into a value register isn't PTX; but `set`-free code
    /// uses `selp`. Packing: `mov.b64 %rd, {%r1, %r2}`.
    Pack {
        d: Reg,
        parts: Vec<Src>,
        part_bits: u8,
    },
    Unpack {
        ds: Vec<Option<Reg>>,
        a: Src,
        part_bits: u8,
    },
    Ld {
        space: MemSpace,
        bytes: u8,
        signed: bool,
        ds: Vec<Option<Reg>>,
        addr: Addr,
    },
    St {
        space: MemSpace,
        bytes: u8,
        srcs: Vec<Src>,
        addr: Addr,
    },
    /// `cvta` between a window's address and a generic address.
    Cvta {
        to_generic: bool,
        space: MemSpace,
        d: Reg,
        a: Src,
    },
    Bra {
        target: u32,
    },
    Bar,
    Exit,
    Nop,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MadPart {
    Lo,
    Hi,
    Wide,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PredSrcOrConst {
    Pred(PredSrc),
    Const(bool),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Inst {
    pub kind: Kind,
    pub guard: Option<PredSrc>,
    /// Source line from `.loc` (0 when the compiler gave none).
    pub line: u32,
    /// `.file` index of that line.
    pub file: u32,
    pub ptx_line: u32,
    /// The opcode as written, for messages.
    pub opcode: String,
}

impl Inst {
    pub fn is_global_access(&self) -> bool {
        matches!(
            self.kind,
            Kind::Ld {
                space: MemSpace::Global,
                ..
            } | Kind::St {
                space: MemSpace::Global,
                ..
            }
        )
    }
}

/// A decoded kernel, ready to launch.
#[derive(Debug, Clone)]
pub struct Program {
    pub name: String,
    pub insts: Vec<Inst>,
    pub value_regs: usize,
    pub pred_regs: usize,
    /// Bytes of static shared memory.
    pub shared_bytes: u64,
    /// Offset where dynamic (extern) shared memory starts, if declared.
    pub dynamic_shared_offset: Option<u64>,
    pub local_bytes: u64,
    /// (offset, bytes) of each kernel parameter in the parameter buffer.
    pub params: Vec<(u64, u32)>,
    pub param_bytes: u64,
    /// Initial contents of `.const` space.
    pub const_data: Vec<u8>,
    /// Reconvergence point (immediate post-dominator) of each instruction's block; `EXIT`
    /// when the paths only meet at the kernel's end.
    pub reconverge: Vec<u32>,
    pub reqntid: Option<[u32; 3]>,
    /// `.file` index -> path.
    pub files: Vec<(u32, String)>,
}

/// Reconvergence sentinel: the end of the kernel.
pub const EXIT: u32 = u32::MAX;
