//! Reading the PTX that NVRTC produces: a lexer, a parser into [`ast::Module`], and a light
//! entry-signature scan used by the contract check.

pub mod ast;
pub mod entries;
pub mod inline;
pub mod lexer;
pub mod parser;

pub use parser::{PtxError, parse_module, type_bytes};
