//! Includes that leave haloscope's headers are refused before NVRTC sees the source: an
//! absolute path (`#include "/etc/passwd"`) or one that climbs out (`"../../secret"`) would
//! otherwise be opened from the disk of the machine running the compile, and NVRTC's error
//! messages quote the lines of what it opened. Plain names (`<cstdio>`, `"helper.h"`) are
//! looked up only in the in-memory headers, the CUDA include directory and the compiling
//! process's working directory (a grading child runs in an empty one).

use super::{CompileFailure, Diagnostic, Severity};

/// The `#include` lines of `source` that name a path outside the headers, as diagnostics on
/// their lines; `Ok` when there are none.
pub fn check_includes(source: &str, source_name: &str) -> Result<(), CompileFailure> {
    let diagnostics: Vec<Diagnostic> = source
        .lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let target = include_target(line)?;
            let escapes = target.starts_with('/')
                || target.starts_with('\\')
                || target.starts_with('~')
                || target.contains(':')
                || target.split(['/', '\\']).any(|part| part == "..");
            escapes.then(|| Diagnostic {
                file: source_name.to_string(),
                line: i as u32 + 1,
                column: Some(line.find('#').map_or(1, |c| c as u32 + 1)),
                severity: Severity::Error,
                message: format!(
                    "#include of a path outside haloscope's headers is not allowed (`{target}`): a kernel may include <cstdio>, <cstdint>, <cuda_runtime.h> and the CUDA device headers by name; see docs/includes.md"
                ),
            })
        })
        .collect();
    if diagnostics.is_empty() {
        return Ok(());
    }
    let log = diagnostics.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n");
    Err(CompileFailure::Errors { diagnostics, log })
}

/// What an `#include` line names, between its quotes or angle brackets (macros expanding
/// to a path are left to NVRTC, which then searches only its include directories).
fn include_target(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("include")?.trim_start();
    let (open, close) = match rest.chars().next()? {
        '"' => ('"', '"'),
        '<' => ('<', '>'),
        _ => return None,
    };
    let inner = &rest[open.len_utf8()..];
    inner.find(close).map(|end| inner[..end].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_outside_the_headers_are_refused_on_their_line() {
        let source = "#include <cstdio>\n#include \"/etc/passwd\"\n  #  include \"../../secret\"\n#include <cuda_fp16.h>\n#include \"helper.h\"\n";
        let Err(CompileFailure::Errors { diagnostics, .. }) = check_includes(source, "k.cu") else {
            panic!("refused")
        };
        let lines: Vec<u32> = diagnostics.iter().map(|d| d.line).collect();
        assert_eq!(lines, vec![2, 3]);
        assert!(diagnostics[0].message.contains("/etc/passwd"));
        assert!(check_includes("#include <cstdint>\n#include <cuda/std/cmath>\n", "k.cu").is_ok());
    }
}
