//! The kernel's PTX and SASS, instruction by instruction, each with the source line it is
//! filed under: what the machine-code view and `haloscope compile --ptx/--sass` show beside
//! the source. PTX lines take their line from the `.loc` in force (NVRTC's), SASS instructions
//! from the cubin's line table (`nvdisasm -g`, the table the GPU's profiler reads), so the
//! SASS is listed under the line the hardware counts it on.

use super::machine_code::{
    decoded, disassembled, is_global_sass, kernel_file, kernel_lines_of_ptx, ptx_lines_with_loc, sass_instructions,
};
use serde::{Deserialize, Serialize};

/// Where a memory instruction is: a line of the PTX (what the emulator runs) or the offset
/// of a SASS instruction in the kernel's machine code (what the GPU runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InstructionAt {
    PtxLine(u32),
    SassOffset(u32),
}

/// One memory instruction's sectors over the profile run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstructionSectors {
    pub at: InstructionAt,
    /// The source line the sectors are counted on.
    pub line: u32,
    pub store: bool,
    pub sectors: u64,
    /// Warp-level executions.
    pub instructions: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listed {
    pub at: InstructionAt,
    /// The source line it is filed under (0: none of the kernel's own).
    pub line: u32,
    /// For SASS: the PTX line it was made from.
    pub ptx_line: u32,
    pub text: String,
    /// A global or generic memory instruction (counts sectors; a cluster neighbour's shared memory
    /// is reached through one too).
    pub global: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listing {
    pub ptx: Vec<Listed>,
    pub sass: Vec<Listed>,
    /// Why there is no SASS, when there is none.
    pub sass_unavailable: Option<String>,
}

impl Listing {
    /// The PTX, and the SASS when there is a cubin to disassemble.
    pub fn new(ptx: &str, cubin: Option<&[u8]>) -> Listing {
        let mut listing = Listing {
            ptx: ptx_instructions(ptx),
            ..Listing::default()
        };
        match cubin.map(disassembled) {
            Some(Ok(sass)) => {
                let file = kernel_file(ptx);
                let kernel_lines = kernel_lines_of_ptx(ptx);
                listing.sass = sass_instructions(&sass, &file, &kernel_lines)
                    // The padding after the kernel's end.
                    .filter(|(_, _, _, body)| body.trim().trim_end_matches(';').trim() != "NOP")
                    .map(|(ptx_line, line, offset, body)| Listed {
                        at: InstructionAt::SassOffset(offset),
                        line: line.unwrap_or(0),
                        ptx_line,
                        global: is_global_sass(body),
                        text: body.trim().trim_end_matches(';').trim().to_string(),
                    })
                    .collect();
            }
            Some(Err(why)) => listing.sass_unavailable = Some(why),
            None => listing.sass_unavailable = Some("no machine code (a Rust kernel is loaded as PTX)".into()),
        }
        listing
    }

    /// Files each SASS memory instruction the line table left without a line (0) under the
    /// line the GPU's profiler gave its sectors (`figures`, CUPTI's SASS-to-source
    /// correlation). The code the driver compiles from a printf kernel's gated PTX is listed
    /// with no line in `nvdisasm -g` (seen on the H100, 2026-12-07: every instruction of
    /// printf_debug.cu under "no source line") while CUPTI placed its sectors on the lines.
    pub fn place_unfiled(mut self, figures: &[InstructionSectors]) -> Listing {
        for item in self.sass.iter_mut().filter(|i| i.line == 0) {
            if let Some(f) = figures.iter().find(|f| f.at == item.at && f.line != 0) {
                item.line = f.line;
            }
        }
        self
    }

    /// The instructions of source lines `lines` (inclusive), PTX then SASS.
    pub fn of_lines<'a>(&'a self, lines: std::ops::RangeInclusive<u32>) -> (Vec<&'a Listed>, Vec<&'a Listed>) {
        let pick = |v: &'a [Listed]| -> Vec<&'a Listed> { v.iter().filter(|i| lines.contains(&i.line)).collect() };
        (pick(&self.ptx), pick(&self.sass))
    }

    /// The sectors the last run gave an instruction: the GPU's per SASS instruction; the
    /// emulator's per PTX instruction, and for SASS the PTX instruction's when ptxas made
    /// exactly one global SASS instruction of it (else None: it cannot be split).
    pub fn sectors(&self, item: &Listed, figures: &[InstructionSectors]) -> Option<u64> {
        if !item.global {
            return None;
        }
        let find = |at: InstructionAt| figures.iter().find(|f| f.at == at).map(|f| f.sectors);
        match item.at {
            InstructionAt::PtxLine(_) => find(item.at),
            InstructionAt::SassOffset(_) => find(item.at).or_else(|| {
                let copies = self
                    .sass
                    .iter()
                    .filter(|s| s.global && s.ptx_line == item.ptx_line)
                    .count();
                (copies == 1)
                    .then(|| find(InstructionAt::PtxLine(item.ptx_line)))
                    .flatten()
            }),
        }
    }
}

/// The PTX's instructions (not directives, labels or braces) with their `.loc` lines.
fn ptx_instructions(ptx: &str) -> Vec<Listed> {
    let mut in_body = false;
    let mut out = Vec::new();
    let decoded = decoded(ptx);
    for (ptx_line, line, t) in ptx_lines_with_loc(ptx) {
        if t == "{" {
            in_body = true;
            continue;
        }
        if !in_body || t.is_empty() || t == "}" || t.starts_with('.') || t.starts_with("//") || t.ends_with(':') {
            continue;
        }
        out.push(Listed {
            at: InstructionAt::PtxLine(ptx_line),
            line,
            ptx_line,
            global: decoded.get(&ptx_line).is_some_and(|d| d.machine_global),
            text: t.trim_end_matches(';').to_string(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_instructions_carry_their_loc_line() {
        let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.file 1 \"k.cu\"\n.visible .entry k(\n)\n{\n\
                   .reg .pred %p<2>;\n.reg .f32 %f<3>;\n.reg .b64 %rd<3>;\n\tld.global.nc.f32 \t%f1, [%rd1];\n\
                   \t.loc\t1 7 3\n$L__BB0_1:\n\t@%p1 st.global.f32 \t[%rd2], %f1;\n\tret;\n}";
        let listed = ptx_instructions(ptx);
        assert_eq!(listed.len(), 3);
        assert_eq!((listed[0].line, listed[0].global), (0, true));
        assert_eq!((listed[1].line, listed[1].global, listed[1].ptx_line), (7, true, 14));
        assert_eq!((listed[2].line, listed[2].global), (7, false));
    }

    #[test]
    fn sass_without_a_line_is_filed_where_the_profiler_counted_it() {
        let sass = |offset: u32, line: u32, text: &str| Listed {
            at: InstructionAt::SassOffset(offset),
            line,
            ptx_line: 0,
            text: text.into(),
            global: text.contains("LDG"),
        };
        let listing = Listing {
            ptx: Vec::new(),
            sass: vec![
                sass(0x10, 0, "LDG.E R2, desc[UR4][R2.64]"),
                sass(0x20, 0, "IADD3 R1, R2, R3, RZ"),
                sass(0x30, 9, "LDG.E R4, desc[UR4][R4.64]"),
            ],
            sass_unavailable: None,
        };
        let figure = |offset: u32, line: u32| InstructionSectors {
            at: InstructionAt::SassOffset(offset),
            line,
            store: false,
            sectors: 4,
            instructions: 1,
        };
        let placed = listing.place_unfiled(&[figure(0x10, 12), figure(0x30, 14)]);
        let lines: Vec<u32> = placed.sass.iter().map(|i| i.line).collect();
        // The unfiled load goes to the profiler's line; a line the table gave is kept.
        assert_eq!(lines, [12, 0, 9]);
        assert_eq!(placed.of_lines(12..=12).1.len(), 1);
    }
}
