//! Turns NVRTC's log into structured diagnostics the editor can place on lines.
//!
//! NVRTC writes `file(line): error: message`, then the source line indented by two spaces,
//! then a caret line under the column. Continuation lines (`detected during ...`) are folded
//! into the message.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Note,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub file: String,
    /// 1-based line in `file`.
    pub line: u32,
    /// 1-based column, when the compiler pointed at one.
    pub column: Option<u32>,
    pub severity: Severity,
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let severity = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        write!(f, "{}:{}", self.file, self.line)?;
        if let Some(column) = self.column {
            write!(f, ":{column}")?;
        }
        write!(f, ": {severity}: {}", self.message)
    }
}

/// Parses an NVRTC program log.
pub fn parse_nvrtc_log(log: &str) -> Vec<Diagnostic> {
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let lines: Vec<&str> = log.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let Some(mut diagnostic) = parse_header(lines[i]) else {
            i += 1;
            continue;
        };
        i += 1;
        // Optional echo of the source line, then the caret line.
        if i + 1 < lines.len() && is_caret_line(lines[i + 1]) {
            let caret = lines[i + 1].find('^').unwrap_or(0);
            diagnostic.column = Some(caret.saturating_sub(1) as u32);
            i += 2;
        }
        // Indented continuation text that is not a new header belongs to this message.
        while i < lines.len() && lines[i].starts_with("          ") && parse_header(lines[i]).is_none() {
            diagnostic.message.push(' ');
            diagnostic.message.push_str(lines[i].trim());
            i += 1;
        }
        diagnostics.push(diagnostic);
    }
    diagnostics
}

fn is_caret_line(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed == "^"
}

/// `file(12): error: message` or `file(12): warning #177-D: message`.
fn parse_header(line: &str) -> Option<Diagnostic> {
    let open = line.find("(")?;
    let close = open + line[open..].find("): ")?;
    let line_number: u32 = line[open + 1..close].parse().ok()?;
    let rest = &line[close + 3..];
    let (kind, message) = rest.split_once(": ")?;
    let severity = match kind.split_whitespace().next()? {
        "error" | "catastrophic" => Severity::Error,
        "warning" => Severity::Warning,
        "note" | "remark" => Severity::Note,
        _ => return None,
    };
    let message = if kind.starts_with("catastrophic") {
        format!("{kind}: {message}")
    } else {
        message.to_string()
    };
    Some(Diagnostic {
        file: line[..open].to_string(),
        line: line_number,
        column: None,
        severity,
        message: message.trim().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "kernel.cu(4): error: expected a \";\"\n      o[i] = foo;\n      ^\n\n\
kernel.cu(3): warning #177-D: variable \"i\" was declared but never referenced\n      int i = threadIdx.x\n          ^\n\n\
Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n\n\
haloscope-contract(1): error: static assertion failed with \"x\"\n  static_assert(0, \"x\");\n  ^\n\n\
2 errors detected in the compilation of \"kernel.cu\".\n";

    #[test]
    fn parses_errors_warnings_and_columns() {
        let d = parse_nvrtc_log(LOG);
        assert_eq!(d.len(), 3);
        assert_eq!(
            (d[0].file.as_str(), d[0].line, d[0].column, d[0].severity),
            ("kernel.cu", 4, Some(5), Severity::Error)
        );
        assert_eq!(d[0].message, "expected a \";\"");
        assert_eq!((d[1].line, d[1].column, d[1].severity), (3, Some(9), Severity::Warning));
        assert_eq!(
            (d[2].file.as_str(), d[2].line, d[2].column),
            ("haloscope-contract", 1, Some(1))
        );
    }
}
