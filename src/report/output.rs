//! What a kernel printed with device `printf`, per launch, capped so that a printf in every
//! thread of a 4096^2 launch neither floods the app nor holds the run up.

use serde::{Deserialize, Serialize};

/// Lines kept per launch; the rest are counted, not stored.
pub const MAX_LINES: usize = ptx_emu::PRINTED_LINES_KEPT;
/// Bytes kept per launch.
pub const MAX_BYTES: usize = ptx_emu::PRINTED_BYTES_KEPT;

/// The printed output of one launch, in the order the threads printed it (the emulator runs
/// blocks in order, warps in order, lanes in order; the GPU's order is the driver's).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelOutput {
    /// Which launch: `verify n=33`, `profile n=4096`.
    pub launch: String,
    pub lines: Vec<String>,
    /// Lines printed beyond the cap.
    pub lines_not_shown: u64,
    /// Bytes printed beyond the cap.
    pub bytes_not_shown: u64,
    /// GPU only: printf calls the worker's gate skipped (past the first `MAX_LINES` calls of
    /// the launch; gpu/printf_gate.rs says why).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub calls_not_printed: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl KernelOutput {
    pub fn new(launch: impl Into<String>) -> KernelOutput {
        KernelOutput {
            launch: launch.into(),
            ..KernelOutput::default()
        }
    }

    /// Bytes kept so far.
    fn kept_bytes(&self) -> usize {
        self.lines.iter().map(|l| l.len() + 1).sum()
    }

    /// Appends printed text, split into lines (a trailing fragment without newline is a line
    /// of its own), honouring the caps.
    pub fn push_text(&mut self, text: &str) {
        let mut kept = self.kept_bytes();
        for line in text.split_inclusive('\n') {
            let line = line.strip_suffix('\n').unwrap_or(line);
            self.push_line_counted(line, &mut kept);
        }
    }

    /// Appends one line (without its newline).
    pub fn push_line(&mut self, line: &str) {
        let mut kept = self.kept_bytes();
        self.push_line_counted(line, &mut kept);
    }

    fn push_line_counted(&mut self, line: &str, kept: &mut usize) {
        if self.lines.len() >= MAX_LINES || *kept + line.len() + 1 > MAX_BYTES {
            self.lines_not_shown += 1;
            self.bytes_not_shown += line.len() as u64 + 1;
        } else {
            *kept += line.len() + 1;
            self.lines.push(line.to_string());
        }
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.lines_not_shown == 0 && self.calls_not_printed == 0
    }

    /// Records a gated GPU launch's printf call count: the calls past the cap did not print.
    pub fn note_printf_calls(&mut self, calls: u64, cap: u64) {
        self.calls_not_printed = calls.saturating_sub(cap);
    }

    /// Why a GPU launch printed fewer lines than its threads asked for, when it did.
    pub fn gate_note(&self) -> Option<String> {
        (self.calls_not_printed > 0).then(|| {
            format!(
                "printf was called {} times; on the GPU only the first {} calls print and the other {} were \
                 skipped (printing from millions of threads takes the GPU minutes). The emulator makes every \
                 call and keeps the first {} lines",
                crate::report::thousands(self.calls_not_printed + MAX_LINES as u64),
                MAX_LINES,
                crate::report::thousands(self.calls_not_printed),
                MAX_LINES,
            )
        })
    }

    /// Total lines the launch printed, shown or not.
    pub fn total_lines(&self) -> u64 {
        self.lines.len() as u64 + self.lines_not_shown
    }

    /// "N more lines not shown", when some were cut.
    pub fn cut_note(&self) -> Option<String> {
        (self.lines_not_shown > 0).then(|| {
            format!(
                "{} more lines ({} bytes) not shown: output is capped at {} lines or {} KiB per launch",
                self.lines_not_shown,
                self.bytes_not_shown,
                MAX_LINES,
                MAX_BYTES / 1024
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_lines_and_counts_the_rest() {
        let mut out = KernelOutput::new("verify n=33");
        for i in 0..MAX_LINES + 10 {
            out.push_line(&format!("thread {i}"));
        }
        assert_eq!(out.lines.len(), MAX_LINES);
        assert_eq!(out.lines_not_shown, 10);
        assert_eq!(out.total_lines(), MAX_LINES as u64 + 10);
        assert!(out.cut_note().unwrap().starts_with("10 more lines"));
    }

    #[test]
    fn says_how_many_printf_calls_the_gpu_skipped() {
        let mut out = KernelOutput::new("verify n=4096");
        out.note_printf_calls(100, MAX_LINES as u64);
        assert!(out.gate_note().is_none());
        out.note_printf_calls(16_777_216, MAX_LINES as u64);
        let note = out.gate_note().unwrap();
        assert!(note.starts_with("printf was called 16,777,216 times"), "{note}");
        assert!(note.contains("16,773,120 were skipped"), "{note}");
    }

    #[test]
    fn caps_bytes() {
        let mut out = KernelOutput::new("x");
        let long = "y".repeat(300 * 1024);
        for _ in 0..5 {
            out.push_line(&long);
        }
        assert_eq!(out.lines.len(), 3);
        assert_eq!(out.lines_not_shown, 2);
    }

    #[test]
    fn splits_text_into_lines() {
        let mut out = KernelOutput::new("x");
        out.push_text("a\nb\nc");
        assert_eq!(out.lines, ["a", "b", "c"]);
    }
}
