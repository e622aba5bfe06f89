//! Kernel parameters as the contract declares them (`"const float* in"`).

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamKind {
    /// `const float*`: an input buffer of the grid's size.
    ConstFloatPtr,
    /// `float*`: the output buffer.
    FloatPtr,
    /// `int`: the problem size n.
    Int,
}

impl ParamKind {
    pub fn c_type(self) -> &'static str {
        match self {
            ParamKind::ConstFloatPtr => "const float*",
            ParamKind::FloatPtr => "float*",
            ParamKind::Int => "int",
        }
    }

    /// Size in bytes of the kernel parameter (what the PTX `.param` holds).
    pub fn param_bytes(self) -> u32 {
        match self {
            ParamKind::ConstFloatPtr | ParamKind::FloatPtr => 8,
            ParamKind::Int => 4,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    pub kind: ParamKind,
    pub name: String,
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind.c_type(), self.name)
    }
}

impl Param {
    /// Parses one C declaration. Only the three kinds the harness can feed are accepted.
    pub fn parse(decl: &str) -> Result<Param, String> {
        let tokens: Vec<String> = decl
            .replace('*', " * ")
            .split_whitespace()
            .filter(|t| *t != "__restrict__")
            .map(str::to_string)
            .collect();
        let Some((name, type_tokens)) = tokens.split_last() else {
            return Err("empty parameter declaration".into());
        };
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || name == "*" {
            return Err(format!("`{decl}`: the declaration must end with a parameter name"));
        }
        let kind = match type_tokens.join(" ").as_str() {
            "const float *" | "float const *" => ParamKind::ConstFloatPtr,
            "float *" => ParamKind::FloatPtr,
            "int" => ParamKind::Int,
            other => {
                return Err(format!(
                    "`{decl}`: type `{other}` is not one the harness can pass \
                     (use `const float*`, `float*` or `int`)"
                ));
            }
        };
        Ok(Param {
            kind,
            name: name.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_kinds() {
        let p = Param::parse("const float* __restrict__ in").unwrap();
        assert_eq!((p.kind, p.name.as_str()), (ParamKind::ConstFloatPtr, "in"));
        assert_eq!(Param::parse("float *out").unwrap().kind, ParamKind::FloatPtr);
        assert_eq!(Param::parse("int n").unwrap().kind, ParamKind::Int);
        assert!(Param::parse("double* d").is_err());
        assert!(Param::parse("float*").is_err());
    }
}
