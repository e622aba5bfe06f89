//! Splits PTX text into tokens, each with its line number. Comments are dropped.

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// Identifiers, opcodes with their modifiers (`ld.global.nc.f32`), directives (`.reg`),
    /// registers (`%rd3`, `%tid.x`) and labels (`$L__BB0_2`).
    Word(String),
    /// Integer literal (decimal, `0x` hex, octal, binary), already as bits.
    Int(i64),
    /// `0fXXXXXXXX` / `0dXXXXXXXXXXXXXXXX` float literal as its bit pattern.
    F32(u32),
    F64(u64),
    /// Decimal float literal such as `1.5`.
    Float(f64),
    Str(String),
    Punct(char),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub line: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexError {
    pub line: u32,
    pub message: String,
}

fn is_word_start(c: char) -> bool {
    c.is_ascii_alphabetic() || matches!(c, '_' | '$' | '%' | '.')
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%' | '.')
}

pub fn tokenize(text: &str) -> Result<Vec<Token>, LexError> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut line = 1u32;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                if chars[i] == '\n' {
                    line += 1;
                }
                i += 1;
            }
            i += 2;
        } else if c == '"' {
            let start = i + 1;
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\n' {
                    return Err(LexError {
                        line,
                        message: "unterminated string".into(),
                    });
                }
                i += 1;
            }
            if i >= chars.len() {
                return Err(LexError {
                    line,
                    message: "unterminated string".into(),
                });
            }
            tokens.push(Token {
                tok: Tok::Str(chars[start..i].iter().collect()),
                line,
            });
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            let tok = number(&text).ok_or_else(|| LexError {
                line,
                message: format!("bad number `{text}`"),
            })?;
            tokens.push(Token { tok, line });
        } else if is_word_start(c) {
            let start = i;
            loop {
                while i < chars.len() && is_word_char(chars[i]) {
                    i += 1;
                }
                // A state space or qualifier with a scope inside an opcode, `ld.shared::cluster`,
                // `mbarrier::complete_tx::bytes`, `L2::128B`: the `::` belongs to the word.
                let scoped = chars.get(i) == Some(&':')
                    && chars.get(i + 1) == Some(&':')
                    && chars.get(i + 2).is_some_and(|c| c.is_ascii_alphanumeric());
                if !scoped {
                    break;
                }
                i += 2;
            }
            tokens.push(Token {
                tok: Tok::Word(chars[start..i].iter().collect()),
                line,
            });
        } else if "{}[]();:,+-@!<>=|".contains(c) {
            tokens.push(Token {
                tok: Tok::Punct(c),
                line,
            });
            i += 1;
        } else {
            return Err(LexError {
                line,
                message: format!("unexpected character `{c}`"),
            });
        }
    }
    Ok(tokens)
}

fn number(text: &str) -> Option<Tok> {
    let lower = text.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix("0f")
        && hex.len() == 8
    {
        return u32::from_str_radix(hex, 16).ok().map(Tok::F32);
    }
    if let Some(hex) = lower.strip_prefix("0d")
        && hex.len() == 16
    {
        return u64::from_str_radix(hex, 16).ok().map(Tok::F64);
    }
    let digits = lower.trim_end_matches('u');
    if let Some(hex) = digits.strip_prefix("0x") {
        return u64::from_str_radix(hex, 16).ok().map(|v| Tok::Int(v as i64));
    }
    if let Some(bin) = digits.strip_prefix("0b") {
        return u64::from_str_radix(bin, 2).ok().map(|v| Tok::Int(v as i64));
    }
    if digits.contains('.') || digits.contains('e') {
        return digits.parse::<f64>().ok().map(Tok::Float);
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return u64::from_str_radix(&digits[1..], 8).ok().map(|v| Tok::Int(v as i64));
    }
    digits.parse::<u64>().ok().map(|v| Tok::Int(v as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_of_an_instruction() {
        let t = tokenize("@!%p1 ld.global.nc.f32 %f1, [%rd3+-4]; // c\nmov.f32 %f2, 0f3F000000;").unwrap();
        let toks: Vec<Tok> = t.iter().map(|t| t.tok.clone()).collect();
        assert_eq!(toks[0], Tok::Punct('@'));
        assert_eq!(toks[1], Tok::Punct('!'));
        assert_eq!(toks[2], Tok::Word("%p1".into()));
        assert_eq!(toks[3], Tok::Word("ld.global.nc.f32".into()));
        assert!(toks.contains(&Tok::F32(0x3F00_0000)));
        assert_eq!(t.last().unwrap().line, 2);
    }
}
