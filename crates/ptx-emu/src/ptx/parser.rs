//! PTX tokens -> [`Module`]. Covers what NVRTC 12/13 emits for kernels like the lessons':
//! module directives, `.entry`/`.func`, `.reg`/`.shared`/`.local`/`.const`/`.global`
//! declarations, labels, guards, `.loc`/`.file`. Anything else is an error with its line,
//! never a panic.

use super::ast::*;
use super::lexer::{Tok, Token, tokenize};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxError {
    pub line: u32,
    pub message: String,
}

impl std::fmt::Display for PtxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PTX line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for PtxError {}

pub fn parse_module(text: &str) -> Result<Module, PtxError> {
    let tokens = tokenize(text).map_err(|e| PtxError {
        line: e.line,
        message: e.message,
    })?;
    let mut parser = Parser {
        tokens,
        pos: 0,
        loc: (0, 0, 0),
        call_sites: std::collections::HashMap::new(),
        last_plain: (0, 0, 0),
    };
    parser.module()
}

/// Size in bytes of a PTX scalar type name (`f32` -> 4).
pub fn type_bytes(ty: &str) -> Option<u32> {
    Some(match ty {
        "b8" | "u8" | "s8" | "pred" => 1,
        "b16" | "u16" | "s16" | "f16" | "bf16" => 2,
        "b32" | "u32" | "s32" | "f32" | "f16x2" | "bf16x2" => 4,
        "b64" | "u64" | "s64" | "f64" => 8,
        "b128" => 16,
        _ => return None,
    })
}

/// A `.loc` place: (file, line, column).
type Loc = (u32, u32, u32);

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    loc: Loc,
    /// The outermost call sites each inlined location has been seen with (see `.loc`), the
    /// one used last at the back.
    call_sites: std::collections::HashMap<Loc, Vec<Loc>>,
    /// The last `.loc` that named no `inlined_at`: the learner's own line the code is at.
    last_plain: Loc,
}

impl Parser {
    /// The outermost call site of location `own`, inlined at `site` (see `.loc`), remembered
    /// among `own`'s sites with the chosen one last.
    fn outermost(&mut self, own: Loc, site: Loc) -> Loc {
        let outers = self.call_sites.get(&site).cloned().unwrap_or_else(|| vec![site]);
        let plain = self.last_plain;
        let chosen = outers
            .iter()
            .rev()
            .find(|o| (o.0, o.1) == (plain.0, plain.1))
            .or(outers.last())
            .copied()
            .unwrap_or(site);
        let known = self.call_sites.entry(own).or_default();
        for o in outers.iter().chain(std::iter::once(&chosen)) {
            known.retain(|k| k != o);
            known.push(*o);
        }
        chosen
    }

    fn line(&self) -> u32 {
        self.tokens.get(self.pos).or(self.tokens.last()).map_or(0, |t| t.line)
    }

    fn error<T>(&self, message: impl Into<String>) -> Result<T, PtxError> {
        Err(PtxError {
            line: self.line(),
            message: message.into(),
        })
    }

    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos).map(|t| &t.tok)
    }

    fn peek_at(&self, ahead: usize) -> Option<&Tok> {
        self.tokens.get(self.pos + ahead).map(|t| &t.tok)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.tokens.get(self.pos).map(|t| t.tok.clone());
        self.pos += 1;
        t
    }

    fn is_punct(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Punct(c))
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if self.is_punct(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, c: char) -> Result<(), PtxError> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            self.error(format!("expected `{c}`, found {}", self.describe()))
        }
    }

    fn describe(&self) -> String {
        match self.peek() {
            None => "end of file".into(),
            Some(Tok::Word(w)) => format!("`{w}`"),
            Some(Tok::Punct(c)) => format!("`{c}`"),
            Some(other) => format!("{other:?}"),
        }
    }

    fn word(&mut self) -> Result<String, PtxError> {
        match self.next() {
            Some(Tok::Word(w)) => Ok(w),
            _ => {
                self.pos -= 1;
                self.error(format!("expected a name, found {}", self.describe()))
            }
        }
    }

    fn int(&mut self) -> Result<i64, PtxError> {
        let negative = self.eat_punct('-');
        match self.next() {
            Some(Tok::Int(v)) => Ok(if negative { -v } else { v }),
            _ => {
                self.pos -= 1;
                self.error(format!("expected an integer, found {}", self.describe()))
            }
        }
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(x)) if x == w)
    }

    fn module(&mut self) -> Result<Module, PtxError> {
        let mut module = Module::default();
        while let Some(tok) = self.peek().cloned() {
            let Tok::Word(word) = tok else {
                return self.error(format!("unexpected {} at module level", self.describe()));
            };
            match word.as_str() {
                ".version" => {
                    self.pos += 1;
                    module.version = match self.next() {
                        Some(Tok::Float(v)) => format!("{v}"),
                        Some(Tok::Int(v)) => v.to_string(),
                        _ => return self.error("bad .version"),
                    };
                }
                ".target" => {
                    self.pos += 1;
                    let mut targets = vec![self.word()?];
                    while self.eat_punct(',') {
                        targets.push(self.word()?);
                    }
                    module.target = targets.join(",");
                }
                ".address_size" => {
                    self.pos += 1;
                    module.address_size = self.int()? as u32;
                }
                ".file" => {
                    self.pos += 1;
                    let index = self.int()? as u32;
                    let Some(Tok::Str(path)) = self.next() else {
                        return self.error("bad .file");
                    };
                    while self.eat_punct(',') {
                        self.int()?;
                    }
                    module.files.push((index, path));
                }
                ".section" => self.skip_section()?,
                // Labels between debug sections (`$L__sec_end0:`) mark no code.
                _ if !word.starts_with('.') && self.peek_at(1) == Some(&Tok::Punct(':')) => self.pos += 2,
                ".visible" | ".weak" | ".extern" | ".entry" | ".func" | ".global" | ".const" | ".shared" => {
                    let start = self.pos;
                    let mut is_extern = false;
                    while self.is_word(".visible") || self.is_word(".weak") || self.is_word(".extern") {
                        is_extern |= self.is_word(".extern");
                        self.pos += 1;
                    }
                    if self.is_word(".entry") || self.is_word(".func") {
                        let function = self.function()?;
                        if !(is_extern && function.body.is_empty()) {
                            module.functions.push(function);
                        }
                    } else if self.is_word(".global") || self.is_word(".const") || self.is_word(".shared") {
                        let mut var = self.variable()?;
                        var.is_extern |= is_extern;
                        module.vars.push(var);
                    } else {
                        self.pos = start;
                        return self.error(format!("unsupported module directive {}", self.describe()));
                    }
                }
                _ => return self.error(format!("unsupported module directive `{word}`")),
            }
        }
        Ok(module)
    }

    fn skip_section(&mut self) -> Result<(), PtxError> {
        while !self.is_punct('{') {
            if self.next().is_none() {
                return self.error("unterminated .section");
            }
        }
        let mut depth = 0;
        loop {
            match self.next() {
                Some(Tok::Punct('{')) => depth += 1,
                Some(Tok::Punct('}')) => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                None => return self.error("unterminated .section"),
                _ => {}
            }
        }
    }

    fn function(&mut self) -> Result<Function, PtxError> {
        let ptx_line = self.line();
        let is_entry = self.word()? == ".entry";
        // A function's instructions before its first `.loc` have no source line: the last one
        // of the previous function does not carry over (a `-G` build's header functions have
        // none at all).
        self.loc = (0, 0, 0);
        // `.func (.param .b32 ret) name (...)`: the return parameter list comes first.
        let returns = if !is_entry && self.is_punct('(') {
            self.param_list()?
        } else {
            Vec::new()
        };
        let name = self.word()?;
        let params = if self.is_punct('(') {
            self.param_list()?
        } else {
            Vec::new()
        };
        let mut function = Function {
            name,
            is_entry,
            params,
            returns,
            regs: Vec::new(),
            vars: Vec::new(),
            body: Vec::new(),
            reqntid: None,
            maxntid: None,
            cluster_dims: None,
            ptx_line,
        };
        // Performance directives before the body.
        loop {
            match self.peek() {
                Some(Tok::Word(w)) if w == ".reqntid" || w == ".maxntid" || w == ".reqnctapercluster" => {
                    let which = w.clone();
                    self.pos += 1;
                    let mut dims = [1u32; 3];
                    dims[0] = self.int()? as u32;
                    for d in dims.iter_mut().skip(1) {
                        if self.eat_punct(',') {
                            *d = self.int()? as u32;
                        }
                    }
                    match which.as_str() {
                        ".reqntid" => function.reqntid = Some(dims),
                        ".maxntid" => function.maxntid = Some(dims),
                        _ => function.cluster_dims = Some(dims),
                    }
                }
                Some(Tok::Word(w)) if w.starts_with('.') && w != ".reg" => {
                    // .minnctapersm N, .maxnreg N, .noreturn, .pragma ... : no effect on semantics.
                    self.pos += 1;
                    while matches!(
                        self.peek(),
                        Some(Tok::Int(_)) | Some(Tok::Punct(',')) | Some(Tok::Str(_))
                    ) {
                        self.pos += 1;
                    }
                    self.eat_punct(';');
                }
                _ => break,
            }
        }
        if self.eat_punct(';') {
            return Ok(function); // a declaration without a body
        }
        self.expect_punct('{')?;
        self.body(&mut function)?;
        Ok(function)
    }

    fn param_list(&mut self) -> Result<Vec<Param>, PtxError> {
        self.expect_punct('(')?;
        let mut params = Vec::new();
        while !self.eat_punct(')') {
            let mut align = 0;
            let mut ty = String::new();
            if self.word()? != ".param" {
                return self.error("expected .param");
            }
            loop {
                match self.peek().cloned() {
                    Some(Tok::Word(w)) if w == ".align" => {
                        self.pos += 1;
                        align = self.int()? as u32;
                    }
                    Some(Tok::Word(w)) if w.starts_with('.') => {
                        self.pos += 1;
                        let bare = &w[1..];
                        if type_bytes(bare).is_some() {
                            ty = bare.to_string();
                        }
                    }
                    _ => break,
                }
            }
            let name = self.word()?;
            let elem = type_bytes(&ty).ok_or(PtxError {
                line: self.line(),
                message: format!("parameter `{name}` has no type"),
            })?;
            let mut bytes = elem;
            while self.eat_punct('[') {
                bytes *= self.int()? as u32;
                self.expect_punct(']')?;
            }
            params.push(Param {
                name,
                ty,
                align: align.max(elem),
                bytes,
            });
            if !self.eat_punct(',') {
                self.expect_punct(')')?;
                break;
            }
        }
        Ok(params)
    }

    fn variable(&mut self) -> Result<Variable, PtxError> {
        let ptx_line = self.line();
        let space = match self.word()?.as_str() {
            ".global" => Space::Global,
            ".const" => Space::Const,
            ".shared" => Space::Shared,
            ".local" => Space::Local,
            ".param" => Space::Param,
            other => return self.error(format!("unsupported state space `{other}`")),
        };
        let mut align = 0;
        let mut elem = String::new();
        loop {
            match self.peek().cloned() {
                Some(Tok::Word(w)) if w == ".align" => {
                    self.pos += 1;
                    align = self.int()? as u32;
                }
                Some(Tok::Word(w)) if w.starts_with('.') => {
                    self.pos += 1;
                    if type_bytes(&w[1..]).is_some() {
                        elem = w[1..].to_string();
                    } else if w != ".v2" && w != ".v4" {
                        return self.error(format!("unsupported variable attribute `{w}`"));
                    }
                }
                _ => break,
            }
        }
        let name = self.word()?;
        let elem_bytes = type_bytes(&elem).ok_or(PtxError {
            line: ptx_line,
            message: format!("variable `{name}` has no type"),
        })? as u64;
        let mut bytes = elem_bytes;
        let mut is_extern = false;
        while self.eat_punct('[') {
            if self.eat_punct(']') {
                is_extern = true;
                bytes = 0;
                continue;
            }
            bytes *= self.int()? as u64;
            self.expect_punct(']')?;
        }
        let mut init = None;
        if self.eat_punct('=') {
            let mut data = Vec::new();
            let braced = self.eat_punct('{');
            loop {
                let value = match self.next() {
                    Some(Tok::Int(v)) => v as u64,
                    Some(Tok::F32(b)) => b as u64,
                    Some(Tok::F64(b)) => b,
                    Some(Tok::Punct('-')) => match self.next() {
                        Some(Tok::Int(v)) => (-v) as u64,
                        _ => return self.error("bad initializer"),
                    },
                    _ => return self.error("unsupported initializer"),
                };
                data.extend_from_slice(&value.to_le_bytes()[..elem_bytes as usize]);
                if !braced || !self.eat_punct(',') {
                    break;
                }
            }
            if braced {
                self.expect_punct('}')?;
            }
            data.resize(bytes as usize, 0);
            init = Some(data);
        }
        self.expect_punct(';')?;
        Ok(Variable {
            space,
            name,
            align: align.max(elem_bytes as u32),
            elem,
            bytes,
            is_extern,
            init,
            ptx_line,
        })
    }

    fn body(&mut self, function: &mut Function) -> Result<(), PtxError> {
        let mut blocks = BlockScopes::default();
        loop {
            let line = self.line();
            let Some(tok) = self.peek().cloned() else {
                return self.error(format!("function `{}` is not closed", function.name));
            };
            match tok {
                Tok::Punct('{') => {
                    self.pos += 1;
                    blocks.enter();
                }
                Tok::Punct('}') => {
                    self.pos += 1;
                    if !blocks.leave() {
                        return Ok(()); // the function's own closing brace
                    }
                }
                Tok::Punct('@') => {
                    let instruction = self.instruction()?;
                    function.body.push(Statement::Instruction(blocks.apply(instruction)));
                }
                Tok::Word(w) if w == ".reg" => {
                    self.pos += 1;
                    let mut decl = self.reg_decl()?;
                    blocks.declare(&mut decl);
                    function.regs.push(decl);
                }
                Tok::Word(w) if w == ".shared" || w == ".local" || w == ".const" || w == ".global" => {
                    let var = self.variable()?;
                    function.vars.push(var);
                }
                Tok::Word(w) if w == ".param" => {
                    let var = self.variable()?;
                    function.body.push(Statement::Param(var));
                }
                Tok::Word(w) if w == ".loc" => {
                    self.pos += 1;
                    let mut loc = (self.int()? as u32, self.int()? as u32, self.int()? as u32);
                    // `, function_name $L__info_string0, inlined_at f l c` may follow on the same
                    // line: code inlined from a helper is attributed to the outermost call
                    // site, the line the learner wrote. The call site is itself a location
                    // the PTX gave earlier, maybe inlined too (a header calling a header:
                    // `__pipeline_memcpy_async` is four calls deep), so the outermost sites
                    // each location was seen with are remembered and followed. A location
                    // inlined at several calls (a loop NVRTC unrolled repeats only the
                    // innermost `.loc`) takes the one the code is at: the last plain `.loc`'s
                    // line when it is one of them, else the one used last.
                    let own = loc;
                    let mut inlined = false;
                    while self.tokens.get(self.pos).is_some_and(|t| t.line == line) {
                        if self.is_word("inlined_at") {
                            self.pos += 1;
                            if let (Some(Tok::Int(f)), Some(Tok::Int(l)), Some(Tok::Int(c))) =
                                (self.peek().cloned(), self.peek_at(1).cloned(), self.peek_at(2).cloned())
                            {
                                let site = (f as u32, l as u32, c as u32);
                                loc = self.outermost(own, site);
                                inlined = true;
                                self.pos += 3;
                                continue;
                            }
                        }
                        self.pos += 1;
                    }
                    if !inlined {
                        // A header's location again without its chain (NVRTC does this after
                        // a label): the call it was inlined at, as last seen.
                        if let Some(&outer) = self.call_sites.get(&own).and_then(|o| o.last()) {
                            loc = outer;
                        }
                        self.last_plain = loc;
                    }
                    self.loc = loc;
                }
                Tok::Word(w) if w == ".pragma" => {
                    while !self.eat_punct(';') {
                        if self.next().is_none() {
                            return self.error("unterminated .pragma");
                        }
                    }
                }
                Tok::Word(w) if w.starts_with('.') => {
                    return self.error(format!("unsupported directive `{w}` in a function body"));
                }
                Tok::Word(w) if self.peek_at(1) == Some(&Tok::Punct(':')) => {
                    self.pos += 2;
                    function.body.push(Statement::Label(w));
                }
                Tok::Word(_) => {
                    let instruction = self.instruction()?;
                    function.body.push(Statement::Instruction(blocks.apply(instruction)));
                }
                _ => return self.error(format!("unexpected {} in a function body", self.describe())),
            }
        }
    }

    fn reg_decl(&mut self) -> Result<RegDecl, PtxError> {
        let ty_word = self.word()?;
        let ty = ty_word.trim_start_matches('.').to_string();
        let (ty, vector) = match ty.as_str() {
            "v2" | "v4" => (self.word()?.trim_start_matches('.').to_string(), true),
            _ => (ty, false),
        };
        if vector {
            return self.error("vector registers are not supported");
        }
        let mut names = Vec::new();
        loop {
            let base = self.word()?;
            if self.eat_punct('<') {
                let count = self.int()?;
                self.expect_punct('>')?;
                names.extend((0..count).map(|i| format!("{base}{i}")));
            } else {
                names.push(base);
            }
            if !self.eat_punct(',') {
                break;
            }
        }
        self.expect_punct(';')?;
        Ok(RegDecl { ty, names })
    }

    fn instruction(&mut self) -> Result<Instruction, PtxError> {
        let ptx_line = self.line();
        let guard = if self.eat_punct('@') {
            let negated = self.eat_punct('!');
            Some((self.word()?, negated))
        } else {
            None
        };
        let opcode_word = self.word()?;
        let opcode: Vec<String> = opcode_word
            .split('.')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let mut operands = Vec::new();
        if !self.eat_punct(';') {
            loop {
                operands.push(self.operand()?);
                if self.eat_punct(';') {
                    break;
                }
                self.expect_punct(',')?;
            }
        }
        Ok(Instruction {
            guard,
            opcode,
            operands,
            ptx_line,
            loc: self.loc,
        })
    }

    fn operand(&mut self) -> Result<Operand, PtxError> {
        match self.next() {
            Some(Tok::Punct('[')) => {
                let mut base = None;
                let mut offset = 0i64;
                if let Some(Tok::Word(w)) = self.peek().cloned() {
                    self.pos += 1;
                    base = Some(w);
                }
                loop {
                    // `+4`, `+-4`, `-4`, or a bare number for an absolute address; `int()`
                    // takes a leading minus itself.
                    let more = self.eat_punct('+')
                        || self.is_punct('-')
                        || (base.is_none() && matches!(self.peek(), Some(Tok::Int(_))));
                    if !more {
                        break;
                    }
                    offset += self.int()?;
                }
                self.expect_punct(']')?;
                Ok(Operand::Address { base, offset })
            }
            Some(Tok::Punct('{')) => {
                let mut names = Vec::new();
                loop {
                    let w = self.word()?;
                    names.push(if w == "_" { None } else { Some(w) });
                    if self.eat_punct('}') {
                        break;
                    }
                    self.expect_punct(',')?;
                }
                Ok(Operand::Vector(names))
            }
            Some(Tok::Punct('!')) => Ok(Operand::NotPred(self.word()?)),
            Some(Tok::Punct('(')) => {
                let mut names = Vec::new();
                while !self.eat_punct(')') {
                    names.push(self.word()?);
                    if !self.eat_punct(',') {
                        self.expect_punct(')')?;
                        break;
                    }
                }
                Ok(Operand::List(names))
            }
            Some(Tok::Punct('-')) => {
                self.pos -= 1;
                match self.peek_at(1) {
                    Some(Tok::Int(_)) => Ok(Operand::Int(self.int()?)),
                    _ => self.error("unsupported negative operand"),
                }
            }
            Some(Tok::Word(w)) => {
                if self.eat_punct('|') {
                    let second = self.word()?;
                    return Ok(Operand::PredPair(w, second));
                }
                Ok(Operand::Name(w))
            }
            Some(Tok::Int(v)) => Ok(Operand::Int(v)),
            Some(Tok::F32(b)) => Ok(Operand::F32(b)),
            Some(Tok::F64(b)) => Ok(Operand::F64(b)),
            Some(Tok::Float(v)) => Ok(Operand::F64(v.to_bits())),
            _ => {
                self.pos -= 1;
                self.error(format!("unexpected operand {}", self.describe()))
            }
        }
    }
}

/// The `{ }` blocks open inside a function body. PTX scopes a register declared in a block to
/// that block, and NVRTC's expansions of `__syncthreads_or` and friends declare `%p1` and
/// `%p2` again inside one, as learners' inline `asm` blocks declare `p` or `t` each time:
/// each such register gets a name of its own, used for the block's extent.
#[derive(Default)]
struct BlockScopes {
    /// One map per open block, innermost last: declared name -> the name it is given.
    open: Vec<std::collections::HashMap<String, String>>,
    made: usize,
}

impl BlockScopes {
    fn enter(&mut self) {
        self.open.push(Default::default());
    }

    /// Closes the innermost block; false when none is open (the brace ends the function).
    fn leave(&mut self) -> bool {
        self.open.pop().is_some()
    }

    /// Renames the registers `decl` declares inside a block; at function scope they keep
    /// their names.
    fn declare(&mut self, decl: &mut RegDecl) {
        let Some(scope) = self.open.last_mut() else {
            return;
        };
        for name in &mut decl.names {
            self.made += 1;
            let own = format!("{name}$block{}", self.made);
            scope.insert(std::mem::replace(name, own.clone()), own);
        }
    }

    fn name(&self, name: &str) -> String {
        self.open
            .iter()
            .rev()
            .find_map(|scope| scope.get(name))
            .cloned()
            .unwrap_or_else(|| name.to_string())
    }

    /// `instruction` with the names the open blocks declared replaced by their own.
    fn apply(&self, instruction: Instruction) -> Instruction {
        if self.open.iter().all(|scope| scope.is_empty()) {
            return instruction;
        }
        Instruction {
            guard: instruction.guard.map(|(g, negated)| (self.name(&g), negated)),
            operands: instruction
                .operands
                .iter()
                .map(|o| o.map_names(|n| self.name(n)))
                .collect(),
            ..instruction
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"
.version 9.0
.target sm_90
.address_size 64
.visible .entry k(
	.param .u64 k_param_0,
	.param .u32 k_param_1
)
.reqntid 32, 8, 1
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<5>;
	.reg .b64 	%rd<4>;
	.shared .align 4 .b8 tile[2448];
	.loc	1 7 0
	ld.param.u64 	%rd1, [k_param_0];
	.loc	1 9 5
	@!%p1 bra 	$L__BB0_2;
	st.shared.v2.f32 	[%r1+-8], {%f1, %f2};
$L__BB0_2:
	ret;
}
	.file	1 "/tmp/k.cu"
"#;

    #[test]
    fn a_register_declared_again_in_a_block_is_its_own_for_the_block() {
        // NVRTC's `__syncthreads_or`: `%p1` and `%p2` declared again inside `{ }`; and two
        // inline-asm blocks that both declare `p`.
        let text = r#"
.version 9.0
.target sm_90
.address_size 64
.visible .entry k()
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<3>;
	setp.ne.s32 	%p1, %r1, 0;
	{
	.reg .pred 	%p1;
	.reg .pred 	%p2;
	setp.ne.u32 	%p1, %r2, 0;
	bar.red.or.pred 	%p2, 0, %p1;
	{ .reg .pred %p1; @%p1 bra $L; }
	selp.u32 	%r1, 1, 0, %p2;
	}
	selp.u32 	%r2, 1, 0, %p1;
	{ .reg .pred p; setp.eq.u32 p, %r1, 0; }
	{ .reg .pred p; setp.eq.u32 p, %r2, 0; }
$L:
	ret;
}
"#;
        let m = parse_module(text).unwrap();
        let f = m.entry("k").unwrap();
        let names: Vec<&str> = f.regs.iter().flat_map(|d| d.names.iter().map(String::as_str)).collect();
        let unique: std::collections::HashSet<&str> = names.iter().copied().collect();
        assert_eq!(
            names.len(),
            unique.len(),
            "every register has a name of its own: {names:?}"
        );
        let instrs: Vec<&Instruction> = f
            .body
            .iter()
            .filter_map(|s| match s {
                Statement::Instruction(i) => Some(i),
                _ => None,
            })
            .collect();
        let written = |i: usize| match &instrs[i].operands[0] {
            Operand::Name(n) => n.clone(),
            other => panic!("{other:?}"),
        };
        let read_last = |i: usize| match instrs[i].operands.last().unwrap() {
            Operand::Name(n) => n.clone(),
            other => panic!("{other:?}"),
        };
        let outer_p1 = written(0);
        assert_eq!(outer_p1, "%p1");
        let inner_p1 = written(1);
        assert_ne!(inner_p1, outer_p1);
        // bar.red reads the block's %p1 and writes its %p2.
        assert_eq!(read_last(2), inner_p1);
        let inner_p2 = written(2);
        assert_ne!(inner_p2, "%p2");
        // The innermost block's own %p1 guards its branch.
        let innermost = instrs[3].guard.as_ref().unwrap().0.clone();
        assert!(innermost != inner_p1 && innermost != outer_p1, "{innermost}");
        assert_eq!(read_last(4), inner_p2);
        // After the block, %p1 is the function's again.
        assert_eq!(read_last(5), "%p1");
        assert_ne!(written(6), written(7), "each asm block's `p` is its own");
    }

    #[test]
    fn parses_a_small_kernel() {
        let m = parse_module(SMALL).unwrap();
        assert_eq!(m.version, "9");
        assert_eq!(m.files, vec![(1, "/tmp/k.cu".to_string())]);
        let f = m.entry("k").unwrap();
        assert_eq!(f.params.len(), 2);
        assert_eq!(f.params[1].bytes, 4);
        assert_eq!(f.reqntid, Some([32, 8, 1]));
        assert_eq!(f.regs[1].names.len(), 5);
        assert_eq!(f.vars[0].bytes, 2448);
        let instrs: Vec<&Instruction> = f
            .body
            .iter()
            .filter_map(|s| {
                if let Statement::Instruction(i) = s {
                    Some(i)
                } else {
                    None
                }
            })
            .collect();
        assert_eq!(instrs[0].loc, (1, 7, 0));
        assert_eq!(instrs[1].guard, Some(("%p1".to_string(), true)));
        assert_eq!(
            instrs[2].operands[0],
            Operand::Address {
                base: Some("%r1".into()),
                offset: -8
            }
        );
        assert_eq!(
            instrs[2].operands[1],
            Operand::Vector(vec![Some("%f1".into()), Some("%f2".into())])
        );
        assert!(f.body.contains(&Statement::Label("$L__BB0_2".into())));
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse_module(".version 9.0\n.target sm_90\n.bogus 1\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains(".bogus"));
    }
}
