//! The compiler's moves of the kernel's global memory accesses, as the report carries them
//! (worked out by `crate::trace::compiler_moves`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MoveKind {
    /// Two or more source lines' accesses made by one instruction.
    Merged,
    /// Accesses of several source instructions made by one wider (vector) instruction.
    Widened,
    /// Made by an instruction the compiler placed itself, with no source line of its own.
    Hoisted,
    /// The hardware counts the access on a line other than the one that wrote it.
    CountedElsewhere,
    /// One source access made by several instructions (one per path, or unrolled copies
    /// counted on other lines).
    Duplicated,
    /// A source access no instruction makes any more: the value was already in a register.
    Removed,
    /// ptxas moved a load out of the loop it was written in: it runs once, not per iteration.
    OutOfLoop,
    /// ptxas moved a load below a conditional exit: the threads that leave never make it.
    PastExit,
}

/// One thing the compiler did to the kernel's global memory accesses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccessMove {
    pub kind: MoveKind,
    pub store: bool,
    /// The kernel parameter the access goes through (`in`, `out`).
    pub buffer: String,
    /// The source lines whose reads (or writes) these are: what the learner wrote.
    pub source_lines: Vec<u32>,
    /// The lines the hardware counts the sectors on (none when no instruction is left).
    pub counted_on: Vec<u32>,
    /// The optimised PTX lines of the instructions involved.
    pub ptx_lines: Vec<u32>,
    /// The explanation, in a learner's words.
    pub text: String,
}

impl AccessMove {
    /// Every source line the move concerns: where it was written and where it is counted.
    pub fn lines(&self) -> impl Iterator<Item = u32> + '_ {
        self.source_lines.iter().chain(&self.counted_on).copied()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Moves {
    pub moves: Vec<AccessMove>,
}

impl Moves {
    /// The moves that concern source line `line`.
    pub fn on_line(&self, line: u32) -> impl Iterator<Item = &AccessMove> {
        self.moves.iter().filter(move |m| m.lines().any(|l| l == line))
    }

    pub fn is_empty(&self) -> bool {
        self.moves.is_empty()
    }

    /// The move an optimised PTX instruction is part of, if any.
    pub fn of_instruction(&self, ptx_line: u32) -> Option<&AccessMove> {
        self.moves.iter().find(|m| m.ptx_lines.contains(&ptx_line))
    }

    /// How the replay names the line of a step made by PTX instruction `ptx_line` whose
    /// `.loc` is `line`: never "line 0" when the hardware counts it on a line.
    pub fn step_line(&self, line: u32, ptx_line: u32) -> String {
        match (line, self.of_instruction(ptx_line)) {
            (0, Some(m)) if !m.counted_on.is_empty() => format!(
                "counted on {} (the compiler's own instruction, for {})",
                lines_name(&m.counted_on),
                lines_name(&m.source_lines)
            ),
            (0, _) => "no source line (an instruction the compiler made)".into(),
            (line, _) => format!("line {line}"),
        }
    }
}

/// "line 7", "lines 7 and 9", "lines 7, 9 and 12".
pub fn lines_name(lines: &[u32]) -> String {
    let names: Vec<String> = lines.iter().map(u32::to_string).collect();
    match names.as_slice() {
        [one] => format!("line {one}"),
        [rest @ .., last] => format!("lines {} and {last}", rest.join(", ")),
        [] => "no line".into(),
    }
}
