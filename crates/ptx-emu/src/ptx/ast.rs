//! The parsed PTX module: directives kept as data, instructions kept close to the text
//! (opcode parts and operands); `emu::decode` gives them meaning.

#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A register (`%r3`), special register (`%tid.x`), symbol or label.
    Name(String),
    Int(i64),
    F32(u32),
    F64(u64),
    /// `[base+offset]`; `base` is a register or symbol, or absent for an absolute address.
    Address {
        base: Option<String>,
        offset: i64,
    },
    /// `{%f1, %f2, _, %f4}` for vector loads and stores, `_` as None.
    Vector(Vec<Option<String>>),
    /// `%p1|%p2`: setp's two predicate outputs.
    PredPair(String, String),
    /// `!%p1` in a source position.
    NotPred(String),
    /// `(param0, param1)`: the argument or return list of a `call`.
    List(Vec<String>),
}

impl Operand {
    /// The operand with every register or symbol name it holds replaced by `rename`'s.
    pub fn map_names(&self, rename: impl Fn(&str) -> String) -> Operand {
        match self {
            Operand::Name(n) => Operand::Name(rename(n)),
            Operand::Address { base, offset } => Operand::Address {
                base: base.as_deref().map(&rename),
                offset: *offset,
            },
            Operand::Vector(v) => Operand::Vector(v.iter().map(|n| n.as_deref().map(&rename)).collect()),
            Operand::PredPair(a, b) => Operand::PredPair(rename(a), rename(b)),
            Operand::NotPred(n) => Operand::NotPred(rename(n)),
            Operand::List(v) => Operand::List(v.iter().map(|n| rename(n)).collect()),
            other => other.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Instruction {
    /// `@%p` / `@!%p` guard.
    pub guard: Option<(String, bool)>,
    /// `ld.global.nc.f32` -> ["ld", "global", "nc", "f32"].
    pub opcode: Vec<String>,
    pub operands: Vec<Operand>,
    /// Line in the PTX text.
    pub ptx_line: u32,
    /// Source location from the last `.loc`: (file index, line, column); line 0 = none.
    pub loc: (u32, u32, u32),
}

impl Instruction {
    pub fn opcode_text(&self) -> String {
        self.opcode.join(".")
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    Label(String),
    Instruction(Instruction),
    /// `.param .b32 param0;` inside a body: an argument slot of the `call` that follows.
    Param(Variable),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    Global,
    Shared,
    Local,
    Const,
    Param,
}

/// `.shared .align 4 .b8 tile[2448];` and friends.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    pub space: Space,
    pub name: String,
    pub align: u32,
    /// Element type, e.g. `b8`, `f32`.
    pub elem: String,
    /// Total size in bytes; 0 for `.extern` unsized arrays (dynamic shared memory).
    pub bytes: u64,
    pub is_extern: bool,
    /// Initial bytes (for `.const`/`.global` with `= {...}`).
    pub init: Option<Vec<u8>>,
    pub ptx_line: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    /// `u64`, `u32`, `b8`, ...
    pub ty: String,
    pub align: u32,
    pub bytes: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RegDecl {
    /// Register type, e.g. `pred`, `f32`, `b64`.
    pub ty: String,
    pub names: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub name: String,
    pub is_entry: bool,
    pub params: Vec<Param>,
    /// `.func (.param .b32 func_retval0) name(...)`: the return parameters.
    pub returns: Vec<Param>,
    pub regs: Vec<RegDecl>,
    pub vars: Vec<Variable>,
    pub body: Vec<Statement>,
    /// `.reqntid` / `.maxntid`, when given.
    pub reqntid: Option<[u32; 3]>,
    pub maxntid: Option<[u32; 3]>,
    /// `.reqnctapercluster` (`__cluster_dims__`), when given.
    pub cluster_dims: Option<[u32; 3]>,
    pub ptx_line: u32,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Module {
    pub version: String,
    pub target: String,
    pub address_size: u32,
    pub functions: Vec<Function>,
    pub vars: Vec<Variable>,
    /// `.file` index -> path.
    pub files: Vec<(u32, String)>,
}

impl Module {
    pub fn entry(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.is_entry && f.name == name)
    }
}
