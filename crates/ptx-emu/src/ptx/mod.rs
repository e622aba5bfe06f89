//! Reading the PTX that NVRTC produces: a lexer, a parser into [`ast::Module`], and a light
//! entry-signature scan used by the contract check.

pub mod ast;
pub mod entries;
pub mod inline;
pub mod lexer;
pub mod parser;

pub use parser::{PtxError, parse_module, type_bytes};

/// The source file and line of the instruction on PTX line `ptx_line`: for code inlined from
/// a header, the outermost call site (the line the learner wrote). None when the text does
/// not parse or no instruction is on that line.
pub fn source_of(ptx: &str, ptx_line: u32) -> Option<(String, u32)> {
    let module = parse_module(ptx).ok()?;
    let (file, line, _) = module
        .functions
        .iter()
        .flat_map(|f| f.body.iter())
        .find_map(|s| match s {
            ast::Statement::Instruction(i) if i.ptx_line == ptx_line => Some(i.loc),
            _ => None,
        })?;
    let path = module.files.iter().find(|(index, _)| *index == file)?.1.clone();
    (line > 0).then_some((path, line))
}

/// PTX line -> (file index, source line) of every instruction of the module, as the parser
/// resolves them (code inlined from a header on the line of the outermost call, the line the
/// learner wrote). None when the text does not parse.
pub fn instruction_lines(ptx: &str) -> Option<std::collections::BTreeMap<u32, (u32, u32)>> {
    let module = parse_module(ptx).ok()?;
    Some(
        module
            .functions
            .iter()
            .flat_map(|f| f.body.iter())
            .filter_map(|s| match s {
                ast::Statement::Instruction(i) => Some((i.ptx_line, (i.loc.0, i.loc.1))),
                _ => None,
            })
            .collect(),
    )
}
