//! The compiled module against the lesson's contract: the entry is a `.entry` under its plain
//! name and takes parameters of the sizes the harness passes. Both compilers end here.

use super::CompileFailure;
use crate::lesson::Lesson;
use crate::ptx::entries::entry_signatures;

/// The entry must be a `.entry` in the PTX under its plain name, with parameters of the
/// sizes the harness passes.
pub(super) fn check_entry(lesson: &Lesson, ptx: &str) -> Result<(), CompileFailure> {
    let entries = entry_signatures(ptx);
    let contract = |message: String| CompileFailure::Contract {
        message,
        diagnostics: Vec::new(),
    };
    let Some(entry) = entries.iter().find(|e| e.name == lesson.entry) else {
        let mangled = entries
            .iter()
            .any(|e| e.name.starts_with("_Z") && e.name.contains(&lesson.entry));
        return Err(contract(if mangled {
            format!(
                "`{}` has C++ linkage; declare it `extern \"C\" __global__` so the harness can find it",
                lesson.entry
            )
        } else {
            format!(
                "`{}` is not a __global__ kernel in the compiled module; declare it `extern \"C\" __global__`",
                lesson.entry
            )
        }));
    };
    let sizes: Vec<u32> = entry
        .param_types
        .iter()
        .map(|t| t[1..].parse::<u32>().unwrap_or(0) / 8)
        .collect();
    let expected: Vec<u32> = lesson.params.iter().map(|p| p.kind.param_bytes()).collect();
    if sizes != expected {
        return Err(contract(format!(
            "`{}` takes parameters of {:?} bytes, the lesson passes {:?}: expected void {}",
            lesson.entry,
            sizes,
            expected,
            lesson.signature()
        )));
    }
    Ok(())
}
