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
    /// `%globaltimer` (and its `_lo`/`_hi` halves): nanoseconds. libcu++'s barrier waits in
    /// CUDA 13's headers read it to back off; the emulator gives the warp's step count, which
    /// only has to grow.
    GlobalTimer,
    GlobalTimerLo,
    GlobalTimerHi,
    LaneMaskEq,
    LaneMaskLt,
    LaneMaskLe,
    LaneMaskGt,
    LaneMaskGe,
    /// `%dynamic_smem_size`: the launch's dynamic shared memory in bytes (the contract's).
    DynamicSmemSize,
    /// `%cluster_ctaid.{x,y,z}`: the block's position in its cluster.
    ClusterCtaid(u8),
    /// `%cluster_nctaid.{x,y,z}`: the cluster's shape in blocks.
    ClusterNctaid(u8),
    /// `%cluster_ctarank` / `%cluster_nctarank`: the block's rank in its cluster (x fastest)
    /// and the cluster's block count.
    ClusterCtarank,
    ClusterNctarank,
    /// `%clusterid.{x,y,z}` / `%nclusterid.{x,y,z}`: the cluster's position in the grid and
    /// the grid's shape in clusters.
    ClusterId(u8),
    NClusterId(u8),
    /// `%is_explicit_cluster`: whether the launch gave a cluster shape (1) or every block is a
    /// cluster of its own (0).
    IsExplicitCluster,
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
    /// `.shared::cluster`: the shared memory of any block of the cluster, the block's own
    /// (a `.shared::cta` address) or another's (an address `mapa` made; see
    /// `memory::CLUSTER_RANK_SHIFT`).
    SharedCluster,
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
    BF16,
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

/// A decoded instruction, grouped by the way `run_warp` (block.rs) runs it: each of its
/// routes is handed only the instructions it can run, as a type of their own matched
/// exhaustively there, so no route has to rule out another route's instructions.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// Instructions that move the warp's paths (its SIMT stack): `run_warp` ends its straight
    /// run and hands them to `steer`.
    Flow(Flow),
    /// Warp-level instructions (warp_ops.rs): a `.sync` one may have to wait for threads on
    /// another path, so `run_warp` ends its straight run here too and hands them to
    /// `warp_step`.
    Warp(WarpKind),
    /// A plain ALU instruction in its quick form (quick.rs), chosen when the program is built
    /// and run in place by `run_warp`, matched by reference (copying the form out cost as
    /// much as the match). `general` is the same instruction as `execute` runs it: what
    /// [`Program::without_quick_forms`] puts back, boxed so that it does not make every
    /// instruction larger.
    Quick { quick: Quick, general: Box<Alu> },
    /// Everything else: work on the active lanes that never changes the warp's paths, run by
    /// `execute` without leaving the straight run.
    Work(Work),
}

/// Control flow: each steered by `BlockRunner::steer` (block.rs).
#[derive(Debug, Clone, PartialEq)]
pub enum Flow {
    Bra {
        target: u32,
    },
    Exit,
    /// `bar.sync` / `barrier.sync` / `bar.arrive` / `bar.red`: a block barrier `id` (0..15)
    /// waited for by `count` threads (all non-exited threads of the block when absent).
    Bar {
        id: Src,
        count: Option<Src>,
        /// `bar.arrive`: count this arrival but do not wait.
        arrive: bool,
        red: Option<BarRed>,
    },
    /// `nanosleep`: the warp gives way to the block's other warps (a warp spinning on a flag
    /// that another warp sets sleeps in its loop; running it on alone would never end).
    Yield,
    /// `mbarrier.test_wait` / `mbarrier.try_wait` (mbarrier.rs): `d` says whether the phase
    /// named by `phase` has completed. A warp whose every lane finds it not completed waits
    /// until the mbarrier changes (the spin loop around it would otherwise never let the
    /// threads that complete it run).
    MbarWait {
        d: PReg,
        addr: Addr,
        phase: MbarPhase,
    },
    /// `barrier.cluster.arrive`: the lanes arrive at the cluster-wide barrier (cluster.rs).
    ClusterArrive,
    /// `barrier.cluster.wait`: the lanes wait until every thread of the cluster that has not
    /// exited has arrived.
    ClusterWait,
}

/// Which phase an mbarrier wait asks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbarPhase {
    /// The 64-bit state an `mbarrier.arrive` returned: the phase it arrived in.
    State(Src),
    /// `.parity`: the parity of the phase waited for.
    Parity(Src),
}

/// The instructions `BlockRunner::execute` runs (block.rs), by family: none of them steers
/// the warp.
#[derive(Debug, Clone, PartialEq)]
pub enum Work {
    /// The plain integer, float, compare, convert and move instructions, run by
    /// `BlockRunner::alu`: those with no quick form, and every one of them in
    /// [`Program::without_quick_forms`].
    Alu(Alu),
    /// Loads and stores: `BlockRunner::load_store` (fast_memory.rs, block_memory.rs).
    Mem(Mem),
    /// `atom` / `red` on global, shared or generic memory (atomic.rs).
    Atom(Atomic),
    /// Integer and float instructions beyond the plain ALU ones (numeric.rs).
    Numeric(NumericKind),
    /// Calls into the device runtime: printf, assert, trap (device_call.rs).
    Call(CallKind),
    /// Asynchronous copies into shared memory and the mbarriers that complete them
    /// (async_copy.rs, mbarrier.rs).
    Async(AsyncOp),
    /// `mapa`: an address in another block of the cluster (cluster.rs).
    Mapa { d: Reg, a: Src, rank: Src, generic: bool },
    /// `membar`, `fence`, `prefetch`, `pmevent`, `brkpt`: nothing for the emulator to do.
    Nop,
}

/// The plain ALU family: executed by `BlockRunner::alu` (block.rs, with the lane-wise
/// helpers of alu.rs); the common forms also have a quick form ([`Quick`], quick.rs).
#[derive(Debug, Clone, PartialEq)]
pub enum Alu {
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
    /// `cvta` between a window's address and a generic address.
    Cvta {
        to_generic: bool,
        space: MemSpace,
        d: Reg,
        a: Src,
    },
}

/// The memory family: executed by `BlockRunner::load_store` (a fast path in fast_memory.rs
/// for the common accesses, the general one in block_memory.rs).
#[derive(Debug, Clone, PartialEq)]
pub enum Mem {
    Load(Load),
    Store(Store),
}

/// `ld` / `ldu`: `ds.len()` elements per lane (a vector access when more than one) of
/// `bytes` each.
#[derive(Debug, Clone, PartialEq)]
pub struct Load {
    pub space: MemSpace,
    pub bytes: u8,
    pub signed: bool,
    /// None: `_` in a vector (the element is read, not kept).
    pub ds: Vec<Option<Reg>>,
    pub addr: Addr,
}

/// `st`: `srcs.len()` elements per lane (a vector access when more than one) of `bytes`
/// each.
#[derive(Debug, Clone, PartialEq)]
pub struct Store {
    pub space: MemSpace,
    pub bytes: u8,
    pub srcs: Vec<Src>,
    pub addr: Addr,
}

impl Mem {
    pub fn space(&self) -> MemSpace {
        match self {
            Mem::Load(l) => l.space,
            Mem::Store(s) => s.space,
        }
    }

    /// Bytes of each element.
    pub fn bytes(&self) -> u8 {
        match self {
            Mem::Load(l) => l.bytes,
            Mem::Store(s) => s.bytes,
        }
    }

    pub fn addr(&self) -> Addr {
        match self {
            Mem::Load(l) => l.addr,
            Mem::Store(s) => s.addr,
        }
    }

    /// Elements per lane (1, 2 or 4).
    pub fn elements(&self) -> usize {
        match self {
            Mem::Load(l) => l.ds.len(),
            Mem::Store(s) => s.srcs.len(),
        }
    }

    pub fn is_store(&self) -> bool {
        matches!(self, Mem::Store(_))
    }
}

// Each family into an instruction, as the decoder builds them.
impl From<Flow> for Kind {
    fn from(flow: Flow) -> Kind {
        Kind::Flow(flow)
    }
}

impl From<WarpKind> for Kind {
    fn from(op: WarpKind) -> Kind {
        Kind::Warp(op)
    }
}

impl From<Work> for Kind {
    fn from(work: Work) -> Kind {
        Kind::Work(work)
    }
}

impl From<Alu> for Kind {
    fn from(op: Alu) -> Kind {
        Kind::Work(Work::Alu(op))
    }
}

impl From<Mem> for Kind {
    fn from(access: Mem) -> Kind {
        Kind::Work(Work::Mem(access))
    }
}

impl From<Atomic> for Kind {
    fn from(atomic: Atomic) -> Kind {
        Kind::Work(Work::Atom(atomic))
    }
}

impl From<NumericKind> for Kind {
    fn from(op: NumericKind) -> Kind {
        Kind::Work(Work::Numeric(op))
    }
}

impl From<CallKind> for Kind {
    fn from(call: CallKind) -> Kind {
        Kind::Work(Work::Call(call))
    }
}

/// `atom` / `red`: executed by `BlockRunner::atomic` (atomic.rs).
#[derive(Debug, Clone, PartialEq)]
pub struct Atomic {
    pub space: MemSpace,
    pub op: AtomOp,
    pub ty: AtomTy,
    /// None for `red` (no value returned).
    pub d: Option<Reg>,
    pub addr: Addr,
    pub b: Src,
    /// The swap value of `cas`.
    pub c: Option<Src>,
}

/// The warp-level family: each executed by `BlockRunner::warp_op` (warp_ops.rs).
#[derive(Debug, Clone, PartialEq)]
pub enum WarpKind {
    /// `bar.warp.sync mask` (`__syncwarp`).
    WarpSync { mask: Src },
    /// `shfl.sync.mode.b32 d[|p], a, b, c, membermask`.
    Shfl {
        mode: ShflMode,
        d: Reg,
        p: Option<PReg>,
        a: Src,
        b: Src,
        c: Src,
        mask: Src,
    },
    /// `vote.sync.{all,any,uni}.pred` and `vote.sync.ballot.b32`.
    Vote {
        mode: VoteMode,
        d: VoteDst,
        a: PredSrc,
        mask: Src,
    },
    /// `match.sync.{any,all}.b32/.b64 d[|p], a, membermask`.
    Match {
        all: bool,
        d: Reg,
        p: Option<PReg>,
        a: Src,
        mask: Src,
        bits: u8,
    },
    /// `activemask.b32 d`.
    Activemask { d: Reg },
    /// `redux.sync.op.type d, a, membermask`.
    Redux {
        op: ReduxOp,
        signed: bool,
        d: Reg,
        a: Src,
        mask: Src,
    },
}

/// The asynchronous copy family: `cp.async` (Ampere's per-thread copies into shared memory,
/// completed by commit/wait groups or an mbarrier), `cp.async.bulk` (Hopper's bulk copies,
/// completed through an mbarrier's transaction count) and the mbarrier instructions that do
/// not wait. Executed by `BlockRunner::async_op` (async_copy.rs, mbarrier.rs).
#[derive(Debug, Clone, PartialEq)]
pub enum AsyncOp {
    /// `cp.async.{ca,cg}.shared.global [dst], [src], cp_size{, src_size}`: copy `bytes` (4, 8
    /// or 16); when `src_size` is given only that many bytes are read and the rest are zeros.
    Copy {
        dst: Addr,
        src: Addr,
        bytes: u8,
        src_size: Option<Src>,
    },
    /// `cp.async.commit_group`: the thread's copies issued since the last commit become a group.
    Commit,
    /// `cp.async.wait_group n` (`keep` = n) / `cp.async.wait_all` (`keep` 0, uncommitted copies
    /// too): the thread's groups but the newest `keep` complete.
    Wait { keep: u32, all: bool },
    /// `cp.async.mbarrier.arrive{.noinc}.shared{::cta}.b64 [mbar]`: the mbarrier tracks the
    /// thread's copies; with `.noinc` their completion counts as one of its arrivals.
    CopyArrive { mbar: Addr, noinc: bool },
    /// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size,
    /// [mbar]`: one thread copies `size` bytes (a multiple of 16, both addresses 16-byte
    /// aligned); the mbarrier's transaction count drops by `size` when they have landed.
    Bulk {
        dst: Addr,
        src: Addr,
        size: Src,
        mbar: Addr,
    },
    /// `mbarrier.init.shared{::cta}.b64 [addr], count`.
    MbarInit { addr: Addr, count: Src },
    /// `mbarrier.arrive{.expect_tx}{_drop}{.sem}{.scope}.shared{::cta,::cluster}.b64
    /// state, [addr]{, count|tx}`: `count` arrivals (1 when absent), after raising the
    /// transaction count by `tx`; `drop` also lowers the expected count for later phases;
    /// `state` (None for `_` or `.shared::cluster`) gets the phase arrived in.
    MbarArrive {
        state: Option<Reg>,
        addr: Addr,
        count: Option<Src>,
        tx: Option<Src>,
        drop: bool,
        space: MemSpace,
    },
    /// `mbarrier.expect_tx` / `mbarrier.complete_tx`: raise / lower the transaction count.
    MbarTx {
        addr: Addr,
        tx: Src,
        complete: bool,
        space: MemSpace,
    },
    /// `mbarrier.pending_count.b64 d, state`.
    MbarPending { d: Reg, state: Src },
    /// `mbarrier.inval.shared{::cta}.b64 [addr]`.
    MbarInval { addr: Addr },
}

/// The numeric family: each executed by `BlockRunner::numeric` (numeric.rs).
#[derive(Debug, Clone, PartialEq)]
pub enum NumericKind {
    /// `prmt.b32{.mode} d, a, b, c`.
    Prmt {
        mode: PrmtMode,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    /// `shf.{l,r}.{wrap,clamp}.b32 d, a, b, c`: funnel shift of the 64-bit `b:a` by `c`
    /// (a rotate when `a` and `b` are the same register).
    Shf {
        left: bool,
        clamp: bool,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    /// `add`, `sub`, `mul` or `fma` on `.f32` rounded toward zero, down or up (`.rz`, `.rm`,
    /// `.rp`: `__fmul_rz`, `__fadd_rd`, and inside libdevice's `fmodf`). `c` is unused but
    /// by `fma`.
    FDirected {
        op: DirectedOp,
        round: Round,
        ftz: bool,
        sat: bool,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    /// `mul24.{lo,hi}.{u32,s32} d, a, b`: the product of the operands' low 24 bits (sign-
    /// extended for `.s32`); `.lo` keeps bits 31..0 of the 48-bit product, `.hi` 47..16.
    Mul24 {
        hi: bool,
        signed: bool,
        d: Reg,
        a: Src,
        b: Src,
    },
    /// `lop3.b32 d, a, b, c, lut`: any three-input bitwise function, as its truth table.
    Lop3 { d: Reg, a: Src, b: Src, c: Src, lut: u8 },
    /// `sad.type d, a, b, c`: `c + |a - b|` (`__sad`, `__usad`).
    Sad {
        bits: u8,
        signed: bool,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    /// `dp4a` / `dp2a`: dot products of packed bytes / halves, plus c.
    Dp {
        four: bool,
        hi: bool,
        a_signed: bool,
        b_signed: bool,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    /// `testp.op.f32/.f64 p, a`.
    Testp { op: TestpOp, double: bool, d: PReg, a: Src },
    /// `copysign.f32/.f64 d, a, b`: |b| with the sign of a.
    Copysign { double: bool, d: Reg, a: Src, b: Src },
    /// `ex2/lg2/sin/cos/rsqrt/rcp/sqrt/tanh .approx`: the hardware's approximation, modelled
    /// as the exact value rounded to f32 (within the ISA's documented error bound).
    FApprox {
        op: ApproxOp,
        double: bool,
        ftz: bool,
        d: Reg,
        a: Src,
        /// The divisor of `div.approx` / `div.full`; unused otherwise.
        b: Src,
    },
    /// Half-precision arithmetic on `.f16`/`.bf16` (scalar) or `.f16x2`/`.bf16x2` (packed).
    Half {
        op: HalfOp,
        bf16: bool,
        x2: bool,
        ftz: bool,
        sat: bool,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    /// `setp` on f16/bf16 (x2 writes two predicates).
    HalfSetp {
        cmp: Cmp,
        bf16: bool,
        x2: bool,
        d: PReg,
        d2: Option<PReg>,
        a: Src,
        b: Src,
    },
    /// `fns.b32 d, mask, base, offset`: the position of the offset-th set bit of `mask`
    /// counting up (offset > 0) or down (offset < 0) from bit `base` (`cg::coalesced_group`).
    Fns { d: Reg, mask: Src, base: Src, offset: Src },
    /// `bfind{.shiftamt}.type d, a`: position of the most significant non-sign bit.
    Bfind {
        bits: u8,
        signed: bool,
        shiftamt: bool,
        d: Reg,
        a: Src,
    },
}

/// The device-call family: each executed by `BlockRunner::device_call` (device_call.rs).
#[derive(Debug, Clone, PartialEq)]
pub enum CallKind {
    /// `vprintf(format, args)` after inlining: both pointers in the call's local slots.
    Printf { format: Src, args: Src, ret: Option<Reg> },
    /// `__assertfail(message, file, line, function, charsize)`.
    AssertFail { message: Src, file: Src, line: Src },
    /// Reached only when the kernel does something the emulator cannot run (a recursion
    /// deeper than it unrolls, a call to an unknown external function).
    Trap {
        what: String,
        /// The emulator's limit rather than the kernel's own `trap`.
        unsupported: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarRed {
    pub op: BarRedOp,
    pub p: PredSrc,
    pub d: VoteDst,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarRedOp {
    Popc,
    And,
    Or,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoteDst {
    Pred(PReg),
    Reg(Reg),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    Inc,
    Dec,
    And,
    Or,
    Xor,
    Exch,
    Cas,
}

/// Operand type of an atomic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomTy {
    U32,
    S32,
    U64,
    S64,
    F32,
    F64,
    /// `.b32` / `.b64`: bitwise and exchange forms.
    B32,
    B64,
}

impl AtomTy {
    pub fn bytes(self) -> u32 {
        match self {
            AtomTy::U32 | AtomTy::S32 | AtomTy::F32 | AtomTy::B32 => 4,
            _ => 8,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrmtMode {
    Default,
    F4e,
    B4e,
    Rc8,
    Ecl,
    Ecr,
    Rc16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestpOp {
    Finite,
    Infinite,
    Number,
    NotANumber,
    Normal,
    Subnormal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApproxOp {
    Ex2,
    Lg2,
    Sin,
    Cos,
    Rsqrt,
    Rcp,
    Sqrt,
    Tanh,
    Div,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HalfOp {
    Add,
    Sub,
    Mul,
    Fma,
    Min,
    Max,
    Neg,
    Abs,
    /// `cvt.rn.f16x2.f32 d, a, b`: two f32 rounded and packed, `a` in the upper half.
    CvtPack,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirectedOp {
    Add,
    Sub,
    Mul,
    Fma,
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
    /// What this instruction does with memory, and in which space: loads, stores and
    /// atomics; None for every other instruction.
    pub fn access(&self) -> Option<(AccessKind, MemSpace)> {
        match &self.kind {
            Kind::Work(Work::Mem(Mem::Load(load))) => Some((AccessKind::Load, load.space)),
            Kind::Work(Work::Mem(Mem::Store(store))) => Some((AccessKind::Store, store.space)),
            Kind::Work(Work::Atom(atomic)) => {
                let kind = match atomic.d {
                    None => AccessKind::Reduction,
                    Some(_) => AccessKind::Atomic,
                };
                Some((kind, atomic.space))
            }
            // The asynchronous copies read global memory (and write shared memory, which
            // their own bookkeeping follows).
            Kind::Work(Work::Async(AsyncOp::Copy { .. } | AsyncOp::Bulk { .. })) => {
                Some((AccessKind::Load, MemSpace::Global))
            }
            _ => None,
        }
    }

    /// Whether this instruction can touch global memory (and so issue sectors): loads,
    /// stores and atomics in global or generic space, and the asynchronous copies.
    pub fn is_global_access(&self) -> bool {
        matches!(self.access(), Some((_, MemSpace::Global | MemSpace::Generic)))
    }

    /// Which asynchronous copy this instruction is, if it is one.
    pub fn copy(&self) -> Option<CopyKind> {
        match &self.kind {
            Kind::Work(Work::Async(AsyncOp::Copy { .. })) => Some(CopyKind::PerThread),
            Kind::Work(Work::Async(AsyncOp::Bulk { .. })) => Some(CopyKind::Bulk),
            _ => None,
        }
    }
}

/// The two kinds of asynchronous copy into shared memory: they differ in how the sector
/// metric sees them (docs/archive/measurements-log.md: measured on the H100).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CopyKind {
    /// `cp.async` (LDGSTS in SASS): each lane copies 4, 8 or 16 bytes; counted like a load.
    PerThread,
    /// `cp.async.bulk` (UBLKCP, the Tensor Memory Accelerator): one thread moves a whole run
    /// of bytes.
    Bulk,
}

/// A decoded kernel, ready to launch.
#[derive(Debug, Clone)]
pub struct Program {
    pub(crate) name: String,
    pub(crate) insts: Vec<Inst>,
    pub(crate) value_regs: usize,
    pub(crate) pred_regs: usize,
    /// Bytes of static shared memory.
    pub(crate) shared_bytes: u64,
    /// Offset where dynamic (extern) shared memory starts, if declared.
    pub(crate) dynamic_shared_offset: Option<u64>,
    pub(crate) local_bytes: u64,
    /// (offset, bytes) of each kernel parameter in the parameter buffer.
    pub(crate) params: Vec<(u64, u32)>,
    pub(crate) param_bytes: u64,
    /// Initial contents of `.const` space.
    pub(crate) const_data: Vec<u8>,
    /// Reconvergence point (immediate post-dominator) of each instruction's block; `EXIT`
    /// when the paths only meet at the kernel's end.
    pub(crate) reconverge: Vec<u32>,
    pub(crate) reqntid: Option<[u32; 3]>,
    /// `.reqnctapercluster` (`__cluster_dims__`): the cluster shape the kernel was compiled for.
    pub(crate) cluster_dims: Option<[u32; 3]>,
    /// `.file` index -> path.
    pub(crate) files: Vec<(u32, String)>,
    /// Module-scope `.global` variables (`__device__` variables, printf format strings):
    /// allocated in global memory at `address` for every launch.
    pub(crate) globals: Vec<GlobalVar>,
}

/// What an instruction does with memory, for callers that explain it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessKind {
    Load,
    Store,
    /// An atomic that returns the old value (a read-modify-write a learner reads as an update).
    Atomic,
    /// An atomic whose result is unused (`red`-like): counted as a store by the hardware.
    Reduction,
}

/// One decoded instruction, as callers outside the emulator see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstructionInfo<'a> {
    pub pc: u32,
    /// Source line from `.loc` (0 when the compiler gave none) and its `.file` index.
    pub line: u32,
    pub file: u32,
    /// The instruction's line in the PTX text.
    pub ptx_line: u32,
    /// The opcode as written (`ld.global.nc.f32`).
    pub opcode: &'a str,
    /// Loads, stores and atomics in global (or generic) space: the ones that issue sectors.
    pub global: Option<AccessKind>,
    /// Any load, store or atomic, in any space.
    pub access: Option<AccessKind>,
    /// An asynchronous copy into shared memory (its global reads are in `global`).
    pub copy: Option<CopyKind>,
}

impl InstructionInfo<'_> {
    /// A store or a reduction: what the sector metric counts as a write.
    pub fn is_store_like(&self) -> bool {
        matches!(self.access, Some(AccessKind::Store | AccessKind::Reduction))
    }
}

impl Program {
    /// The entry's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Instructions (one per pc).
    pub fn len(&self) -> usize {
        self.insts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.insts.is_empty()
    }

    /// The instruction at `pc`.
    pub fn instruction(&self, pc: u32) -> Option<InstructionInfo<'_>> {
        let inst = self.insts.get(pc as usize)?;
        let access = inst.access().map(|(kind, _)| kind);
        Some(InstructionInfo {
            pc,
            line: inst.line,
            file: inst.file,
            ptx_line: inst.ptx_line,
            opcode: &inst.opcode,
            global: access.filter(|_| inst.is_global_access()),
            access,
            copy: inst.copy(),
        })
    }

    /// Every instruction, in pc order.
    pub fn instructions(&self) -> impl Iterator<Item = InstructionInfo<'_>> {
        (0..self.insts.len() as u32).filter_map(|pc| self.instruction(pc))
    }

    /// The name of the `index`th module-scope `.global` variable, in the order
    /// [`Program::place_globals`] allocates them.
    pub fn global_name(&self, index: usize) -> Option<&str> {
        self.globals.get(index).map(|g| g.name.as_str())
    }

    /// `.file` index -> path, as the PTX declares them.
    pub fn files(&self) -> &[(u32, String)] {
        &self.files
    }

    /// The parameter buffer for `values`, one per kernel parameter in order (pointers are
    /// addresses from [`crate::GlobalMemory`], integers their value), each written in the
    /// parameter's own width at its offset.
    pub fn parameter_buffer(&self, values: &[u64]) -> Vec<u8> {
        let mut params = vec![0u8; self.param_bytes as usize];
        for (value, &(offset, bytes)) in values.iter().zip(&self.params) {
            let o = offset as usize;
            params[o..o + bytes as usize].copy_from_slice(&value.to_le_bytes()[..bytes as usize]);
        }
        params
    }

    /// Allocates the module's `.global` variables (`__device__` variables, printf formats)
    /// in `mem` at the addresses the program was decoded with.
    pub fn place_globals(&self, mem: &mut crate::GlobalMemory) {
        for g in &self.globals {
            mem.alloc_bytes_at(&g.name, g.address, g.bytes, &g.init);
        }
    }

    /// The decoded program without its source positions (`.loc` lines and files), as text:
    /// equal for two PTX texts that differ only in whitespace, comments or `.loc` lines.
    pub fn shape(&self) -> String {
        let insts: Vec<String> = self
            .insts
            .iter()
            .map(|i| format!("{:?} {:?} {}", i.kind, i.guard, i.opcode))
            .collect();
        format!(
            "{insts:#?}\nregs {} {} shared {} local {} params {:?} {} const {:?} reconverge {:?} reqntid {:?} cluster {:?}",
            self.value_regs,
            self.pred_regs,
            self.shared_bytes,
            self.local_bytes,
            self.params,
            self.param_bytes,
            self.const_data,
            self.reconverge,
            self.reqntid,
            self.cluster_dims
        )
    }

    /// A copy that claims no predicate registers, so that the first instruction using one
    /// panics inside the emulator: for testing that a caller survives the emulator's own
    /// bugs (the launch turns the panic into [`crate::EmuFaultKind::Internal`]).
    #[doc(hidden)]
    pub fn broken_for_tests(&self) -> Program {
        let mut broken = self.clone();
        broken.pred_regs = 0;
        broken
    }

    /// Bytes of static shared memory per block, and of local memory per thread.
    pub fn shared_bytes(&self) -> u64 {
        self.shared_bytes
    }

    pub fn local_bytes(&self) -> u64 {
        self.local_bytes
    }

    /// The cluster shape the kernel declares (`__cluster_dims__`), if any.
    pub fn cluster_dims(&self) -> Option<[u32; 3]> {
        self.cluster_dims
    }

    /// Whether any instruction needs a cluster of several blocks to mean anything (`mapa`,
    /// `.shared::cluster` accesses, the cluster barrier): a kernel that uses none runs the
    /// same in a cluster launch or without one.
    pub fn uses_cluster(&self) -> bool {
        self.insts.iter().any(|i| {
            matches!(
                &i.kind,
                Kind::Work(Work::Mapa { .. }) | Kind::Flow(Flow::ClusterArrive | Flow::ClusterWait)
            ) || matches!(i.access(), Some((_, MemSpace::SharedCluster)))
        })
    }

    /// Predicate registers the program uses.
    pub fn predicate_registers(&self) -> usize {
        self.pred_regs
    }

    /// This program with every instruction on `execute`'s general path (each quick form
    /// replaced by the general instruction it was made from): what the quick forms are
    /// tested against.
    pub fn without_quick_forms(&self) -> Program {
        let mut general = self.clone();
        for inst in &mut general.insts {
            if let Kind::Quick { general: alu, .. } = &inst.kind {
                inst.kind = Kind::Work(Work::Alu((**alu).clone()));
            }
        }
        general
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct GlobalVar {
    pub name: String,
    pub address: u64,
    pub bytes: u64,
    /// Initial contents (zeros when the PTX gives none).
    pub init: Vec<u8>,
}

/// Reconvergence sentinel: the end of the kernel.
pub const EXIT: u32 = u32::MAX;

impl Kind {
    /// The CUDA call a warp-level instruction comes from, for messages (`__syncwarp` for any
    /// other instruction: only warp-level instructions wait for the lanes of a warp).
    pub fn warp_call_name(&self) -> &'static str {
        match self {
            Kind::Warp(op) => op.call_name(),
            _ => "__syncwarp",
        }
    }
}

impl WarpKind {
    /// The member mask of a `.sync` instruction; None for `activemask`, which waits for no
    /// one.
    pub fn member_mask(&self) -> Option<Src> {
        match self {
            WarpKind::Shfl { mask, .. }
            | WarpKind::Vote { mask, .. }
            | WarpKind::Match { mask, .. }
            | WarpKind::Redux { mask, .. }
            | WarpKind::WarpSync { mask } => Some(*mask),
            WarpKind::Activemask { .. } => None,
        }
    }

    /// The CUDA call this instruction comes from, for messages.
    pub fn call_name(&self) -> &'static str {
        match self {
            WarpKind::Shfl { mode: ShflMode::Up, .. } => "__shfl_up_sync",
            WarpKind::Shfl {
                mode: ShflMode::Down, ..
            } => "__shfl_down_sync",
            WarpKind::Shfl {
                mode: ShflMode::Bfly, ..
            } => "__shfl_xor_sync",
            WarpKind::Shfl {
                mode: ShflMode::Idx, ..
            } => "__shfl_sync",
            WarpKind::Vote {
                mode: VoteMode::Ballot, ..
            } => "__ballot_sync",
            WarpKind::Vote {
                mode: VoteMode::All, ..
            } => "__all_sync",
            WarpKind::Vote {
                mode: VoteMode::Any, ..
            } => "__any_sync",
            WarpKind::Vote {
                mode: VoteMode::Uni, ..
            } => "__uni_sync",
            WarpKind::Match { all: true, .. } => "__match_all_sync",
            WarpKind::Match { all: false, .. } => "__match_any_sync",
            WarpKind::Redux { .. } => "__reduce_*_sync",
            WarpKind::WarpSync { .. } => "__syncwarp",
            WarpKind::Activemask { .. } => "__activemask",
        }
    }
}

// Quick forms: the plain ALU instructions with their operands resolved, made by
// `quick::quick_form` when the program is built (`Kind::Quick`) and run by `Quick::run`
// (quick.rs).

/// A source operand: a register (inside the file: checked when decoded) or an immediate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opd {
    Reg(Reg),
    Imm(u64),
}

/// A lane-wise operation of two operands, each one exactly what `alu` computes for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `int_bin` of an operation and width that has no loop of its own here.
    Int {
        op: IntOp,
        bits: u8,
        signed: bool,
    },
    Add32,
    Sub32,
    MulLo32,
    And32,
    Or32,
    Xor32,
    ShrU32,
    ShrS32,
    MinS32,
    MaxS32,
    Add64,
    Sub64,
    MulLo64,
    Shl32,
    Shl64,
    AddF32,
    MulF32,
    SubF32,
    /// `mul.wide.s32` / `mul.wide.u32`.
    MulWide32 {
        signed: bool,
    },
}

/// The quick form of a plain ALU instruction ([`Alu`]): `Kind::Quick` in place of the
/// general form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quick {
    Mov {
        d: Reg,
        a: Opd,
    },
    Bin {
        op: BinOp,
        d: Reg,
        a: Opd,
        b: Opd,
    },
    /// `fma.rn.f32` (no flush, no saturation).
    FmaF32 {
        d: Reg,
        a: Opd,
        b: Opd,
        c: Opd,
    },
    /// `mad.lo` of `bits`.
    MadLo {
        bits: u8,
        d: Reg,
        a: Opd,
        b: Opd,
        c: Opd,
    },
    /// Integer to integer `cvt` without saturation: sign-extend from `from` bits (when
    /// `sext`), then keep the low `keep` bits.
    CvtInt {
        d: Reg,
        a: Opd,
        from: u8,
        sext: bool,
        keep: u64,
    },
    /// `setp.cmp.type d, a, b` with no second destination and no combine.
    Setp {
        cmp: Cmp,
        ty: NumTy,
        d: PReg,
        a: Opd,
        b: Opd,
    },
    /// `d = a op b` on predicates (`b` absent: a move or a `not`).
    Pred {
        d: PReg,
        op: Option<BoolOp>,
        a: PredSrcOrConst,
        b: Option<PredSrcOrConst>,
    },
}
