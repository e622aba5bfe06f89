//! A light scan of a PTX module for its `.entry` kernels and their parameter types, used by
//! the contract check before any backend runs.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntrySignature {
    pub name: String,
    /// PTX parameter types in order, e.g. `u64`, `u32`.
    pub param_types: Vec<String>,
}

pub fn entry_signatures(ptx: &str) -> Vec<EntrySignature> {
    let mut entries = Vec::new();
    let mut rest = ptx;
    while let Some(at) = rest.find(".entry ") {
        rest = &rest[at + ".entry ".len()..];
        let name_end = rest.find(|c: char| c == '(' || c.is_whitespace()).unwrap_or(rest.len());
        let name = rest[..name_end].trim().to_string();
        let mut param_types = Vec::new();
        if let Some(open) = rest.find('(')
            && let Some(close) = rest[open..].find(')')
        {
            for decl in rest[open + 1..open + close].split(',') {
                // `.param .u64 name`, `.param .align 8 .b8 name[16]` or (LLVM)
                // `.param .u64 .ptr .align 1 name`: the type is the token naming a size.
                let ty = decl
                    .split_whitespace()
                    .filter_map(|t| t.strip_prefix('.'))
                    .find(|t| super::type_bytes(t).is_some());
                if let Some(ty) = ty {
                    param_types.push(ty.to_string());
                }
            }
        }
        entries.push(EntrySignature { name, param_types });
    }
    entries
}
