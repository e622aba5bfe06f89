//! The kernel's global memory instructions read straight from its cubin, without nvdisasm.
//!
//! The live count (pipeline/live_count.rs) needs, of the machine-code check, only what moves
//! the figures: which PTX lines ptxas left no global memory instruction for, and which ones
//! it filed under another source line (`MachineCode::removed_ptx_lines`, `moved_ptx_lines`).
//! That needs, per SASS instruction, its PTX line, its source line and whether it touches
//! global memory. nvdisasm says all three, but it spends 0.25-0.35 s starting up whatever
//! the kernel, longer than the whole rest of a live count. The cubin holds the same facts:
//! - the instructions: the function's `.text.<name>` section, 16 bytes each on sm_90, with
//!   the opcode in the low 12 bits (`sass_opcodes.rs` says which ones touch global memory;
//!   an opcode it does not know makes the reader give up, and the caller asks nvdisasm);
//! - the line tables nvdisasm prints with `-g` and `-gp`: DWARF line programs in
//!   `.debug_line` (source lines) and `.nv_debug_line_sass` (lines of the PTX text), read
//!   with gimli after their relocations are applied with the addends object gives.
//!
//! tests/cubin_reader.rs holds the reader to nvdisasm's answer on every kernel of the course,
//! the learner kernels and a generated corpus.

use super::sass_opcodes::{SassClass, class_of};
use object::{Object, ObjectSection};
use std::collections::BTreeMap;

/// Bytes of one sm_90 instruction.
const INSTRUCTION_BYTES: usize = 16;

/// One global memory SASS instruction, as this reader and nvdisasm's listing
/// (`machine_code::sass_global_instructions`) both give it: the PTX line it came from and,
/// when the line table puts it in the kernel's own file, its source line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SassGlobal {
    pub ptx_line: u32,
    pub source_line: Option<u32>,
    /// Its offset in the function's code (CUPTI's `pcOffset`).
    pub offset: u32,
}

/// Rows of one line table: (first offset, file, line), in offset order; a row holds until
/// the next one.
type Rows = Vec<(u64, String, u32)>;

/// The global memory instructions of the cubin's one kernel, as the nvdisasm route gives
/// them: PTX line, source line (the kernel file's
/// own, else the kernel line of the PTX instruction: `kernel_lines`), offset. Err says why
/// the cubin was not read (several functions, an opcode not in the table, no line tables):
/// the caller falls back to nvdisasm.
pub fn global_instructions(
    cubin: &[u8],
    kernel_file: &str,
    kernel_lines: &BTreeMap<u32, u32>,
) -> Result<Vec<SassGlobal>, String> {
    let elf = object::File::parse(cubin).map_err(|e| format!("not an ELF file: {e}"))?;
    let mut texts = elf
        .sections()
        .filter(|s| s.name().is_ok_and(|n| n.starts_with(".text.")));
    let text = texts.next().ok_or("no code section")?;
    if texts.next().is_some() {
        // Offsets in the line tables are per function: with several, their relocations
        // would have to be told apart. Rare (a device function ptxas did not inline).
        return Err("more than one function".into());
    }
    let code = text.data().map_err(|e| e.to_string())?;
    let source_rows = line_rows(&elf, ".debug_line")?;
    let ptx_rows = line_rows(&elf, ".nv_debug_line_sass")?;
    let mut found = Vec::new();
    for (index, word) in code.chunks_exact(INSTRUCTION_BYTES).enumerate() {
        let offset = (index * INSTRUCTION_BYTES) as u64;
        let low = u64::from_le_bytes(word[..8].try_into().expect("8 bytes"));
        let opcode = (low & 0xfff) as u16;
        match class_of(opcode) {
            Some(SassClass::Global) => {}
            Some(SassClass::Other) => continue,
            None => return Err(format!("opcode {opcode:#05x} at {offset:#06x} is not in the table")),
        }
        let ptx_line = row_at(&ptx_rows, offset).map_or(0, |(_, line)| line);
        let source_line = match row_at(&source_rows, offset) {
            Some((file, line)) if !kernel_file.is_empty() && file == kernel_file => Some(line),
            Some(_) => kernel_lines.get(&ptx_line).copied(),
            None => None,
        };
        found.push(SassGlobal {
            ptx_line,
            source_line,
            offset: offset as u32,
        });
    }
    Ok(found)
}

/// The row in force at `offset`: the last one at or before it.
fn row_at(rows: &Rows, offset: u64) -> Option<(&str, u32)> {
    let after = rows.partition_point(|(start, _, _)| *start <= offset);
    let (_, file, line) = rows.get(after.checked_sub(1)?)?;
    Some((file.as_str(), *line))
}

/// The line program of section `name`, its relocations applied, as rows.
fn line_rows(elf: &object::File, name: &str) -> Result<Rows, String> {
    let section = elf.section_by_name(name).ok_or_else(|| format!("no {name} section"))?;
    let mut data = section.data().map_err(|e| e.to_string())?.to_vec();
    // DW_LNE_set_address holds the function's address: the relocation against its section
    // symbol says it is the section's start (0 here) plus the addend.
    for (at, relocation) in section.relocations() {
        let at = at as usize;
        let bytes = relocation.addend().to_le_bytes();
        if let Some(target) = data.get_mut(at..at + 8) {
            target.copy_from_slice(&bytes);
        }
    }
    let debug_line = gimli::DebugLine::new(&data, gimli::LittleEndian);
    let program = debug_line
        .program(gimli::DebugLineOffset(0), 8, None, None)
        .map_err(|e| format!("{name}: {e}"))?;
    let mut rows = program.rows();
    let mut out: Rows = Vec::new();
    while let Some((header, row)) = rows.next_row().map_err(|e| format!("{name}: {e}"))? {
        // A row of line 0 (code with no line of its own) is not one nvdisasm prints: the
        // line before it stays in force, as in its listing.
        let line = row.line().map_or(0, |l| l.get() as u32);
        if row.end_sequence() || line == 0 {
            continue;
        }
        // The file as nvdisasm names it: its directory joined to its name.
        let text = |value: gimli::AttributeValue<gimli::EndianSlice<gimli::LittleEndian>>| match value {
            gimli::AttributeValue::String(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        };
        let file = header
            .file(row.file_index())
            .map(|f| {
                let name = text(f.path_name()).unwrap_or_default();
                match f.directory(header).and_then(text) {
                    Some(dir) if !dir.is_empty() && !name.starts_with('/') => format!("{dir}/{name}"),
                    _ => name,
                }
            })
            .unwrap_or_default();
        out.push((row.address(), file, line));
    }
    out.sort_by_key(|(address, _, _)| *address);
    Ok(out)
}
