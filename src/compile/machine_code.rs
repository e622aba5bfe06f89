//! What ptxas did to the kernel's global memory instructions.
//!
//! The emulator runs the PTX; the GPU runs the machine code (SASS) that ptxas makes of it.
//! ptxas may drop a load whose value a register already holds (`__restrict__` lets it keep
//! `in[i + plane]` of one z step as `in[i]` of the next) or merge neighbouring loads into one
//! wider access, and then the GPU issues fewer sectors than the PTX asks for. To see this
//! without a GPU, the kernel is compiled for the reference architecture as a cubin by the same
//! NVRTC call that makes its PTX (so the PTX is exactly what ptxas assembled), and `nvdisasm
//! -gp` annotates every SASS instruction with the PTX line it came from. Counting, per PTX
//! line, the SASS global memory instructions gives:
//! - PTX global memory instructions with no SASS instruction left: removed by ptxas. They
//!   never reach the memory system, so the emulator executes them (for their values) but
//!   leaves their sectors out of its figure, which is then the GPU's (a merged access covers
//!   the same sectors as the one it kept: ptxas merges only aligned neighbours);
//! - source lines whose PTX and SASS counts differ, with what that means for the figure;
//! - PTX instructions that ptxas filed under another source line (`nvdisasm -g` gives the
//!   line table the GPU's profiler reads): a load the PTX hoists with no line of its own
//!   (`.loc 1 0 0`) is one of the line's loads on the GPU. The emulator books their sectors
//!   where the GPU does, so the per-line figures agree as well as the totals.

use crate::cudalibs::nvdisasm;
use ptx_emu::{Control, DecodedLine};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The architecture the lessons' figures are measured on (the H200).
pub const REFERENCE_SM: u32 = 90;

/// The check's result, carried by the compiled kernel and shown in the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineCode {
    /// `sm_90`.
    pub architecture: String,
    /// PTX lines (1-based) of global memory instructions ptxas left no machine instruction for.
    pub removed_ptx_lines: BTreeSet<u32>,
    /// Source lines where the PTX and the machine code have different global memory
    /// instruction counts.
    pub lines: Vec<MachineCodeLine>,
    /// PTX line -> the source line the machine code files its global memory instructions
    /// under, where that differs from the PTX's `.loc` (and all of them agree).
    #[serde(default)]
    pub moved_ptx_lines: BTreeMap<u32, u32>,
    /// Source lines of the kernel's file with at least one machine instruction. A line with
    /// PTX but none here is code ptxas deleted: an endless loop the emulator runs (it runs
    /// the PTX) may not exist on the GPU at all.
    #[serde(default)]
    pub source_lines_with_code: BTreeSet<u32>,
    /// Global loads ptxas moved out of the loop the PTX has them in (`out_of_loop`).
    #[serde(default)]
    pub out_of_loop: Vec<OutOfLoop>,
    /// Global loads ptxas moved below a conditional exit the PTX has after them (`sunk`).
    #[serde(default)]
    pub sunk_past_exit: Vec<SunkPastExit>,
    /// SASS offset -> the kernel's source line, for the global memory instructions of code
    /// inlined from a header (`__pipeline_memcpy_async`'s LDGSTS): the machine code's line
    /// table, and so CUPTI, files them under the header's line; the report files them where
    /// the learner called the header, as the emulator does.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inlined_global_lines: BTreeMap<u32, u32>,
}

/// A global load the PTX makes before a conditional exit and the machine code makes after it:
/// the threads that leave there (a stencil's border, say) no longer make it, so the GPU counts
/// fewer sectors on its line than the PTX asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SunkPastExit {
    pub ptx_line: u32,
    /// The source line of the load.
    pub line: u32,
    /// The source line of the exit.
    pub exit_line: u32,
}

/// A global load the PTX makes in every iteration of a loop and the machine code makes once,
/// before the loop: ptxas saw its value cannot change between iterations. The instruction
/// counts are the same, so only the code's shape shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutOfLoop {
    pub ptx_line: u32,
    /// The source line of the load (the PTX's `.loc`).
    pub line: u32,
    /// The first and last source line of the loop.
    pub loop_lines: (u32, u32),
}

impl MachineCode {
    /// Why the GPU finishes a kernel the emulator stopped as endless on `line`, when ptxas
    /// left no machine instruction for that line.
    pub fn deleted_loop_note(&self, line: u32) -> Option<String> {
        (!self.source_lines_with_code.is_empty() && !self.source_lines_with_code.contains(&line)).then(|| {
            format!(
                "ptxas left no machine instruction for line {line} ({}): a GPU running this machine code never \
                 executes that loop and finishes the kernel. The emulator runs the PTX, where the loop is endless; \
                 ptxas may delete a loop whose only effect is on a thread's own local variable, even a volatile one \
                 (NVRTC 13.0 does, 13.5 does not)",
                self.architecture
            )
        })
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineCodeLine {
    /// Source line (0: instructions the compiler made with no line of their own).
    pub line: u32,
    /// Global memory instructions in the PTX (what the emulator executes) ...
    pub ptx_instructions: u32,
    /// ... and in the machine code (what the GPU executes).
    pub machine_instructions: u32,
    /// PTX instructions of the line with no machine instruction left.
    pub removed: u32,
    /// Sectors the removed instructions issued in the emulator's profile launch(es), left
    /// out of its figure (filled in by the emulator; 0 on the GPU backend).
    #[serde(default)]
    pub sectors_not_issued: u64,
}

impl MachineCodeLine {
    /// What the difference means for the sector figure, in a learner's words.
    pub fn meaning(&self) -> String {
        if self.removed > 0 {
            format!(
                "ptxas removed {} of this line's {} global memory instruction(s) (the value was already in a register, \
                 or the access was merged into another): the GPU issues fewer sectors here than the PTX asks for, and \
                 the emulator leaves them out too. Where ptxas merged them into a load of the same address on another \
                 line that only some threads make, the GPU makes that load for all of them and counts more there than \
                 the emulator (docs/known-differences.md)",
                self.removed, self.ptx_instructions
            )
        } else {
            format!(
                "ptxas made {} machine instruction(s) of this line's {} (a loop unrolled, or an access split): each \
                 execution still issues one, so the figure is unchanged",
                self.machine_instructions, self.ptx_instructions
            )
        }
    }

    /// One line for the CLI and the gutter's hover text.
    pub fn summary(&self) -> String {
        format!(
            "PTX {} global memory instruction(s), machine code {}",
            self.ptx_instructions, self.machine_instructions
        )
    }
}

/// Compares `ptx` with the machine code ptxas made of it (`cubin`, for `sm`). Errors say
/// why the check could not run (no nvdisasm, or it failed); they are notes, not failures.
///
/// nvdisasm takes about 0.3 s whatever the kernel, often the longest step of a run after
/// the launches, so the answers for the last few kernels are kept in this process: the
/// app's Run of an unchanged kernel, its Compare view (the GPU's sm_90 cubin is the
/// emulator's) and a class whose submissions include the unchanged starter ask again.
pub fn check(ptx: &str, cubin: &[u8], sm: u32) -> Result<MachineCode, String> {
    const KEPT: usize = 16;
    let same = |(p, c, s): &(String, Vec<u8>, u32)| p == ptx && c == cubin && *s == sm;
    let known = recent_checks()
        .iter()
        .find(|(key, _)| same(key))
        .map(|(_, code)| code.clone());
    if let Some(code) = known {
        return Ok(code);
    }
    // Errors are not kept: a missing nvdisasm may be installed while the app runs.
    let code = check_uncached(ptx, cubin, sm)?;
    let mut kept = recent_checks();
    if kept.len() == KEPT {
        kept.remove(0);
    }
    kept.push(((ptx.to_string(), cubin.to_vec(), sm), code.clone()));
    Ok(code)
}

/// The last checks made in this process: (PTX, cubin, sm) and the answer.
type RecentChecks = Vec<((String, Vec<u8>, u32), MachineCode)>;

fn recent_checks() -> std::sync::MutexGuard<'static, RecentChecks> {
    static RECENT: std::sync::Mutex<RecentChecks> = std::sync::Mutex::new(Vec::new());
    RECENT.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn check_uncached(ptx: &str, cubin: &[u8], sm: u32) -> Result<MachineCode, String> {
    let sass = disassembled(cubin)?;
    let file = kernel_file(ptx);
    let kernel_lines = kernel_lines_of_ptx(ptx);
    let instructions = sass_global_instructions(&sass, &file, &kernel_lines);
    let mut code = compare(ptx, &per_ptx_line(&instructions), sm);
    code.moved_ptx_lines = moved_lines(ptx, &instructions);
    code.source_lines_with_code = sass_source_lines(&sass, &file, &kernel_lines);
    code.inlined_global_lines = inlined_global_lines(&sass, &file, &kernel_lines);
    code.out_of_loop = out_of_loop(ptx, &sass);
    code.sunk_past_exit = sunk_past_exit(ptx, &sass);
    Ok(code)
}

/// Global loads whose SASS instruction follows a predicated `EXIT` made from a predicated PTX
/// `bra`/`ret` that the load reaches in straight-line code (no label or branch between them):
/// in the PTX every thread that gets to the exit has made the load; in the machine code the
/// threads that exit never reach it.
fn sunk_past_exit(ptx: &str, sass: &str) -> Vec<SunkPastExit> {
    let locs = loc_per_ptx_line(ptx);
    let decoded = decoded(ptx);
    let targets = branch_targets(&decoded);
    // The load at PTX line `load` flows straight into the conditional exit at `exit`: no
    // branch leaves and none arrives (a branch target is a label's instruction) in between.
    let straight_into = |load: u32, exit: u32| {
        decoded.get(&exit).is_some_and(|d| d.guarded && d.control.is_some())
            && decoded.range(load + 1..exit).all(|(_, d)| d.control.is_none())
            && targets.range(load + 1..=exit).next().is_none()
    };
    let mut exits: Vec<u32> = Vec::new(); // PTX lines of the conditional exits met so far
    let mut found: Vec<SunkPastExit> = Vec::new();
    let mut by_offset: Vec<(u32, u32, &str)> = sass_instructions(sass, "", &NO_LINES)
        .map(|(ptx_line, _, offset, rest)| (offset, ptx_line, rest))
        .collect();
    by_offset.sort_by_key(|&(offset, _, _)| offset);
    for (_, ptx_line, text) in by_offset {
        let mut words = text.split_whitespace();
        let first = words.next().unwrap_or("");
        if first.starts_with('@') && words.next().is_some_and(|op| op == "EXIT") {
            exits.push(ptx_line);
            continue;
        }
        if !is_global_sass(text) || is_sass_store(text) || found.iter().any(|f| f.ptx_line == ptx_line) {
            continue;
        }
        let line = locs.get(&ptx_line).copied().unwrap_or(0);
        if let Some(&exit) = exits
            .iter()
            .filter(|&&e| e > ptx_line && straight_into(ptx_line, e))
            .min()
        {
            let exit_line = locs.get(&exit).copied().unwrap_or(0);
            if line > 0 && exit_line > 0 && exit_line != line {
                found.push(SunkPastExit {
                    ptx_line,
                    line,
                    exit_line,
                });
            }
        }
    }
    found
}

/// Backward branches as (target, branch) pairs of positions: a loop's extent.
fn backward_branches(labels: &BTreeMap<String, u32>, branches: &[(u32, String)]) -> Vec<(u32, u32)> {
    branches
        .iter()
        .filter_map(|(at, target)| labels.get(target).filter(|&&t| t <= *at).map(|&t| (t, *at)))
        .collect()
}

/// The PTX's loops, as ranges of PTX lines: from a branch's target (the loop's first
/// instruction) to the later branch back to it, as the decoder reads them.
fn ptx_loops(ptx: &str) -> Vec<(u32, u32)> {
    decoded(ptx)
        .into_iter()
        .filter_map(|(line, d)| match d.control {
            Some(Control::Branch { target_ptx_line }) if target_ptx_line <= line => Some((target_ptx_line, line)),
            _ => None,
        })
        .collect()
}

/// What the emulator's decoder makes of each PTX line's instruction: the one place that
/// decides what is a counted global access, a branch or an exit. Empty when the PTX does
/// not decode (an instruction the emulator does not know): the checks then find nothing.
pub(super) fn decoded(ptx: &str) -> BTreeMap<u32, DecodedLine> {
    ptx_emu::decoded_lines(ptx).unwrap_or_default()
}

/// The PTX lines branches go to.
fn branch_targets(decoded: &BTreeMap<u32, DecodedLine>) -> BTreeSet<u32> {
    decoded
        .values()
        .filter_map(|d| match d.control {
            Some(Control::Branch { target_ptx_line }) => Some(target_ptx_line),
            _ => None,
        })
        .collect()
}

/// A SASS instruction for the loop check: (offset, PTX line, is a global load).
type SassPlace = (u32, u32, bool);

/// The machine code's loops, as ranges of instruction offsets; and each instruction's place.
fn sass_loops(sass: &str) -> (Vec<(u32, u32)>, Vec<SassPlace>) {
    let mut labels = BTreeMap::new();
    let mut pending = Vec::new();
    let mut branches = Vec::new();
    for line in sass.lines() {
        let t = line.trim();
        if t.starts_with(".L_") && t.ends_with(':') {
            pending.push(t.trim_end_matches(':').to_string());
        } else if let Some((address, rest)) = t.strip_prefix("/*").and_then(|r| r.split_once("*/")) {
            let Ok(offset) = u32::from_str_radix(address.trim(), 16) else {
                continue;
            };
            for label in pending.drain(..) {
                labels.insert(label, offset);
            }
            if let Some(target) = rest.split("`(").nth(1).and_then(|r| r.split(')').next())
                && rest.contains("BRA")
            {
                branches.push((offset, target.to_string()));
            }
        }
    }
    let instructions = sass_instructions(sass, "", &NO_LINES)
        .map(|(ptx_line, _, offset, rest)| (offset, ptx_line, is_global_sass(rest) && !is_sass_store(rest)))
        .collect();
    (backward_branches(&labels, &branches), instructions)
}

fn is_sass_store(text: &str) -> bool {
    text.split_whitespace()
        .find(|w| !w.starts_with('@'))
        .is_some_and(|op| op.starts_with("ST") || op.starts_with("RED") || op.starts_with("ATOM"))
}

/// Global loads inside a PTX loop whose machine instruction is outside every machine-code
/// loop, while the loop itself is still there (other instructions of it are in one).
fn out_of_loop(ptx: &str, sass: &str) -> Vec<OutOfLoop> {
    let locs = loc_per_ptx_line(ptx);
    let (machine_loops, instructions) = sass_loops(sass);
    let in_machine_loop = |offset: u32| machine_loops.iter().any(|&(a, b)| a <= offset && offset <= b);
    let mut found = Vec::new();
    for (a, b) in ptx_loops(ptx) {
        let inside = |p: u32| a <= p && p < b;
        let loop_survives = instructions
            .iter()
            .any(|&(offset, p, _)| inside(p) && in_machine_loop(offset));
        if !loop_survives {
            continue;
        }
        let lines: Vec<u32> = (a..=b)
            .filter_map(|p| locs.get(&p).copied())
            .filter(|&l| l > 0)
            .collect();
        let loop_lines = (
            lines.iter().copied().min().unwrap_or(0),
            lines.iter().copied().max().unwrap_or(0),
        );
        for &(offset, p, load) in &instructions {
            if load && inside(p) && !in_machine_loop(offset) && !found.iter().any(|o: &OutOfLoop| o.ptx_line == p) {
                found.push(OutOfLoop {
                    ptx_line: p,
                    line: locs.get(&p).copied().unwrap_or(0),
                    loop_lines,
                });
            }
        }
    }
    found
}

/// The file the PTX's `.loc 1 ...` lines name (`.file 1 "name"`): the kernel's own source.
/// The path of the kernel's own source file in the PTX (`.file 1`).
pub fn kernel_file(ptx: &str) -> String {
    ptx.lines()
        .find_map(|l| l.trim().strip_prefix(".file").map(str::trim))
        .and_then(|rest| rest.strip_prefix('1'))
        .and_then(|rest| rest.split('"').nth(1))
        .unwrap_or_default()
        .to_string()
}

/// One global memory SASS instruction: the PTX line it came from and, when the line table
/// puts it in the kernel's own file, its source line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SassGlobal {
    pub ptx_line: u32,
    pub source_line: Option<u32>,
    /// Its offset in the function's code (CUPTI's `pcOffset`).
    pub offset: u32,
}

fn per_ptx_line(instructions: &[SassGlobal]) -> BTreeMap<u32, u32> {
    let mut counts = BTreeMap::new();
    for i in instructions {
        *counts.entry(i.ptx_line).or_insert(0) += 1;
    }
    counts
}

/// PTX lines whose machine instructions all sit on one source line other than the `.loc`.
fn moved_lines(ptx: &str, instructions: &[SassGlobal]) -> BTreeMap<u32, u32> {
    let locs = loc_per_ptx_line(ptx);
    let mut seen: BTreeMap<u32, Option<u32>> = BTreeMap::new();
    for i in instructions {
        let entry = seen.entry(i.ptx_line).or_insert(i.source_line);
        if *entry != i.source_line {
            *entry = None; // filed under two lines: keep the PTX's
        }
    }
    seen.into_iter()
        .filter_map(|(ptx_line, source)| {
            let source = source?;
            (locs.get(&ptx_line).copied().unwrap_or(0) != source).then_some((ptx_line, source))
        })
        .collect()
}

/// PTX line (1-based) -> the source line of the `.loc` in force there.
fn loc_per_ptx_line(ptx: &str) -> BTreeMap<u32, u32> {
    ptx_lines_with_loc(ptx)
        .map(|(ptx_line, line, _)| (ptx_line, line))
        .collect()
}

/// Every PTX line but the `.loc` directives, trimmed: (PTX line, 1-based; the source line of
/// the `.loc` in force there, 0 before the first; the text). An instruction's line is the
/// emulator's parser's (`ptx_emu::ptx::instruction_lines`): for code inlined from a header
/// (`__pipeline_memcpy_async`, cooperative groups), the learner's call, as the emulator
/// counts it, not the header's line.
pub(super) fn ptx_lines_with_loc(ptx: &str) -> impl Iterator<Item = (u32, u32, &str)> {
    let resolved = crate::ptx::instruction_lines(ptx).unwrap_or_default();
    let mut source_line = 0;
    ptx.lines().enumerate().filter_map(move |(index, text)| {
        let text = text.trim();
        if let Some(rest) = text.strip_prefix(".loc") {
            source_line = rest.split_whitespace().nth(1).and_then(|l| l.parse().ok()).unwrap_or(0);
            return None;
        }
        let ptx_line = index as u32 + 1;
        if let Some(&(_, line)) = resolved.get(&ptx_line) {
            source_line = line;
        }
        Some((ptx_line, source_line, text))
    })
}

/// PTX line -> the kernel's own source line, for the instructions whose (resolved) `.loc`
/// is in the kernel's file (`.file 1`).
pub(super) fn kernel_lines_of_ptx(ptx: &str) -> BTreeMap<u32, u32> {
    crate::ptx::instruction_lines(ptx)
        .unwrap_or_default()
        .into_iter()
        .filter(|&(_, (file, line))| file == 1 && line > 0)
        .map(|(ptx_line, (_, line))| (ptx_line, line))
        .collect()
}

/// The last few cubins' disassembly, for the machine-code view after a run's check.
type Disassemblies = Vec<(Vec<u8>, String)>;

fn recent_disassemblies() -> std::sync::MutexGuard<'static, Disassemblies> {
    static RECENT: std::sync::Mutex<Disassemblies> = std::sync::Mutex::new(Vec::new());
    RECENT.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn remember_disassembly(cubin: &[u8], sass: &str) {
    let mut kept = recent_disassemblies();
    if kept.len() == 8 {
        kept.remove(0);
    }
    kept.push((cubin.to_vec(), sass.to_string()));
}

/// `nvdisasm -g -gp` of `cubin`, kept for the last few cubins: the machine-code check and the
/// PTX & SASS view of the same kernel share one nvdisasm run.
pub(super) fn disassembled(cubin: &[u8]) -> Result<String, String> {
    let known = recent_disassemblies()
        .iter()
        .find(|(c, _)| c == cubin)
        .map(|(_, s)| s.clone());
    if let Some(sass) = known {
        return Ok(sass);
    }
    let tool = nvdisasm().ok_or_else(|| {
        "nvdisasm was not found (scripts/workstation/setup.sh installs it from PyPI: nvidia-cuda-nvdisasm; \
         or set $HALOSCOPE_NVDISASM)"
            .to_string()
    })?;
    let sass = disassemble(&tool, cubin)?;
    remember_disassembly(cubin, &sass);
    Ok(sass)
}

/// How many times this process has run nvdisasm (it also numbers the temporary files).
static DISASSEMBLED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// `nvdisasm -g -gp -c` of the cubin, through a temporary file (it reads only files).
fn disassemble(tool: &Path, cubin: &[u8]) -> Result<String, String> {
    let n = DISASSEMBLED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let file = std::env::temp_dir().join(format!("haloscope-{}-{n}.cubin", std::process::id()));
    std::fs::write(&file, cubin).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    let output = std::process::Command::new(tool)
        .arg("-g")
        .arg("-gp")
        .arg("-c")
        .arg(&file)
        .output();
    let _ = std::fs::remove_file(&file);
    let output = output.map_err(|e| format!("cannot run {}: {e}", tool.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} failed: {}",
            tool.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// SASS opcodes that access global memory (or may: generic LD/ST/ATOM), as the metric
/// `smsp__sass_sectors_mem_global` counts them.
const SASS_GLOBAL: &[&str] = &["LDG", "STG", "ATOMG", "RED", "REDG", "LD", "ST", "ATOM", "LDGSTS"];

/// Every SASS instruction of `nvdisasm -g -gp` text, in order, as (PTX line, source line,
/// offset, the text after its `/*0070*/` address): `//## File ".nv_debug_ptx_txt", line N`
/// starts the instructions of PTX line N, and `//## File "<source>", line M` those of source
/// line M (`kernel_file`'s lines only count). Code inlined from a header is filed under the
/// header's line there; `kernel_lines` (`kernel_lines_of_ptx`) gives it the kernel's line its
/// PTX instruction has, the call the learner wrote. Neither: `None`.
pub(super) fn sass_instructions<'a>(
    sass: &'a str,
    kernel_file: &'a str,
    kernel_lines: &'a BTreeMap<u32, u32>,
) -> impl Iterator<Item = (u32, Option<u32>, u32, &'a str)> {
    let (mut ptx_line, mut source_line, mut in_kernel_file) = (0, None, true);
    sass.lines().filter_map(move |line| {
        let text = line.trim();
        if let Some(rest) = text.strip_prefix("//##") {
            let file = rest.split('"').nth(1).unwrap_or_default();
            let number = rest.rsplit("line ").next().and_then(|n| n.trim().parse().ok());
            if file == ".nv_debug_ptx_txt" {
                ptx_line = number.unwrap_or(ptx_line);
            } else {
                in_kernel_file = !kernel_file.is_empty() && file == kernel_file;
                source_line = number.filter(|_| in_kernel_file);
            }
            return None;
        }
        // `/*0070*/  @!P0 LDG.E.CONSTANT R2, desc[UR4][R2.64] ;`
        let (address, rest) = text.strip_prefix("/*")?.split_once("*/")?;
        let offset = u32::from_str_radix(address.trim(), 16).ok()?;
        let line = if in_kernel_file {
            source_line
        } else {
            kernel_lines.get(&ptx_line).copied()
        };
        Some((ptx_line, line, offset, rest))
    })
}

/// The global memory SASS instructions of `nvdisasm -g -gp` text, in order.
pub fn sass_global_instructions(sass: &str, kernel_file: &str, kernel_lines: &BTreeMap<u32, u32>) -> Vec<SassGlobal> {
    sass_instructions(sass, kernel_file, kernel_lines)
        .filter(|(_, _, _, rest)| is_global_sass(rest))
        .map(|(ptx_line, source_line, offset, _)| SassGlobal {
            ptx_line,
            source_line,
            offset,
        })
        .collect()
}

/// Whether a SASS instruction's text (`@!P0 LDG.E R2, ...`) accesses global memory.
pub(super) fn is_global_sass(text: &str) -> bool {
    let mut words = text.split_whitespace();
    let op = match words.next() {
        Some(predicate) if predicate.starts_with('@') => words.next(),
        op => op,
    };
    op.is_some_and(|op| SASS_GLOBAL.contains(&op.split('.').next().unwrap_or(op)))
}

/// The source lines of `kernel_file` that at least one SASS instruction is filed under.
pub fn sass_source_lines(sass: &str, kernel_file: &str, kernel_lines: &BTreeMap<u32, u32>) -> BTreeSet<u32> {
    sass_instructions(sass, kernel_file, kernel_lines)
        .filter_map(|(_, source_line, _, _)| source_line)
        .collect()
}

/// PTX line -> global memory SASS instructions attributed to it.
pub fn sass_per_ptx_line(sass: &str) -> BTreeMap<u32, u32> {
    per_ptx_line(&sass_global_instructions(sass, "", &NO_LINES))
}

/// Per source line, PTX against SASS counts; PTX lines left with none are "removed".
pub fn compare(ptx: &str, sass: &BTreeMap<u32, u32>, sm: u32) -> MachineCode {
    let mut per_line: BTreeMap<u32, MachineCodeLine> = BTreeMap::new();
    let mut removed = BTreeSet::new();
    let mut loc_of_ptx_line = BTreeMap::new();
    let decoded = decoded(ptx);
    for (ptx_line, source_line, _) in ptx_lines_with_loc(ptx) {
        loc_of_ptx_line.insert(ptx_line, source_line);
        if decoded.get(&ptx_line).is_none_or(|d| !d.machine_global) {
            continue;
        }
        let entry = per_line.entry(source_line).or_insert_with(|| MachineCodeLine {
            line: source_line,
            ..MachineCodeLine::default()
        });
        entry.ptx_instructions += 1;
        if sass.get(&ptx_line).copied().unwrap_or(0) == 0 {
            entry.removed += 1;
            removed.insert(ptx_line);
        }
    }
    for (ptx_line, count) in sass {
        let line = loc_of_ptx_line.get(ptx_line).copied().unwrap_or(0);
        per_line
            .entry(line)
            .or_insert_with(|| MachineCodeLine {
                line,
                ..MachineCodeLine::default()
            })
            .machine_instructions += count;
    }
    MachineCode {
        architecture: format!("sm_{sm}"),
        removed_ptx_lines: removed,
        moved_ptx_lines: BTreeMap::new(),
        source_lines_with_code: BTreeSet::new(),
        out_of_loop: Vec::new(),
        sunk_past_exit: Vec::new(),
        inlined_global_lines: BTreeMap::new(),
        lines: per_line
            .into_values()
            .filter(|l| l.ptx_instructions != l.machine_instructions || l.removed > 0)
            .collect(),
    }
}

/// No kernel lines to resolve SASS with (callers that look at PTX lines only).
static NO_LINES: BTreeMap<u32, u32> = BTreeMap::new();

/// The global memory SASS instructions the line table files under another file than the
/// kernel's, with the kernel line their PTX instruction resolves to (`sass_instructions`).
fn inlined_global_lines(sass: &str, kernel_file: &str, kernel_lines: &BTreeMap<u32, u32>) -> BTreeMap<u32, u32> {
    let own = sass_global_instructions(sass, kernel_file, &BTreeMap::new());
    sass_global_instructions(sass, kernel_file, kernel_lines)
        .into_iter()
        .zip(own)
        .filter_map(|(resolved, own)| match (own.source_line, resolved.source_line) {
            (None, Some(line)) => Some((resolved.offset, line)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel around `body` (tab-indented PTX instructions) that the decoder takes.
    fn module(body: &str) -> String {
        format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.file 1 \"k.cu\"\n\
             .shared .align 4 .b8 s[64];\n.visible .entry k(\n\t.param .u64 k_param_0\n)\n{{\n\
             \t.local .align 4 .b8 l[16];\n\t.reg .pred %p<3>;\n\t.reg .b32 %r<4>;\n\
             \t.reg .f32 %f<6>;\n\t.reg .b64 %rd<4>;\n{body}\tret;\n}}\n"
        )
    }

    /// The PTX line (1-based) of the first line holding `needle`.
    fn line_of(ptx: &str, needle: &str) -> u32 {
        ptx.lines().position(|l| l.contains(needle)).expect(needle) as u32 + 1
    }

    fn ptx() -> String {
        module(
            "\t.loc\t1 5 3\n\tld.global.nc.f32 \t%f1, [%rd1];\n\tld.shared.f32 \t%f2, [%rd1];\n\
             \t.loc\t1 6 3\n\t@%p1 ld.global.nc.f32 \t%f3, [%rd2];\n\tst.global.f32 \t[%rd3], %f3;\n\
             \tatom.global.add.u32 \t%r2, [%rd3], 1;\n",
        )
    }

    #[test]
    fn a_kernel_checked_again_is_answered_without_nvdisasm() {
        use std::sync::atomic::Ordering::Relaxed;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let lesson = crate::lesson::load_lesson(&root.join("lessons/stencil-1d")).unwrap();
        let source = std::fs::read_to_string(root.join("kernels/stencil-1d/solution.cu")).unwrap();
        let kernel =
            crate::compile::compile_kernel(&source, "solution.cu", &lesson, crate::compile::Target::EMULATOR, None)
                .unwrap();
        let cubin = kernel.cubin.as_deref().unwrap();
        let before = DISASSEMBLED.load(Relaxed);
        let first = check(&kernel.ptx, cubin, REFERENCE_SM).unwrap();
        assert_eq!(DISASSEMBLED.load(Relaxed), before + 1);
        let again = check(&kernel.ptx, cubin, REFERENCE_SM).unwrap();
        assert_eq!(DISASSEMBLED.load(Relaxed), before + 1, "the second check ran nvdisasm");
        assert_eq!(first, again);
        // Another cubin is another kernel.
        let mut other = cubin.to_vec();
        *other.last_mut().unwrap() ^= 1;
        let _ = check(&kernel.ptx, &other, REFERENCE_SM);
        assert_eq!(DISASSEMBLED.load(Relaxed), before + 2);
    }

    #[test]
    fn sass_instructions_are_counted_per_ptx_line() {
        let ptx = ptx();
        let (load, guarded) = (line_of(&ptx, "%f1, [%rd1]"), line_of(&ptx, "@%p1 ld"));
        let (store, atomic) = (line_of(&ptx, "st.global"), line_of(&ptx, "atom.global"));
        let sass = format!(
            "\
        //## File \".nv_debug_ptx_txt\", line {load}
        /*0070*/                   LDG.E.CONSTANT R2, desc[UR4][R2.64] ;
        /*0080*/                   LDS R3, [R1] ;
        //## File \".nv_debug_ptx_txt\", line {store}
        /*00a0*/              @!P0 STG.E desc[UR4][R4.64], R3 ;
        /*00b0*/                   STG.E desc[UR4][R4.64+0x4], R3 ;
        //## File \".nv_debug_ptx_txt\", line {atomic}
        /*00c0*/                   ATOMG.E.ADD.STRONG.GPU PT, R0, desc[UR4][R4.64], R5 ;"
        );
        let counts = sass_per_ptx_line(&sass);
        assert_eq!(counts, BTreeMap::from([(load, 1), (store, 2), (atomic, 1)]));
        let check = compare(&ptx, &counts, 90);
        // The predicated load has no machine instruction: removed.
        assert_eq!(check.removed_ptx_lines, BTreeSet::from([guarded]));
        assert_eq!(
            check.lines,
            vec![MachineCodeLine {
                line: 6,
                ptx_instructions: 3,
                machine_instructions: 3,
                removed: 1,
                sectors_not_issued: 0,
            }]
        );
        assert!(check.lines[0].meaning().contains("removed 1 of this line's 3"));
    }

    #[test]
    fn instructions_ptxas_files_under_another_line_are_moved_there() {
        // The hoisted load of the 2D starter (PTX line 4, `.loc 1 0 0`): ptxas files it
        // under line 27, as NVRTC 13.5's cubin does; line 7's load stays where it was.
        let ptx = "\
.file 1 \"/k/starter.cu\"
.visible .entry k(
{
\tld.global.nc.f32 \t%f1, [%rd1];
\t.loc\t1 27 5
\tst.global.f32 \t[%rd3], %f3;
\tld.global.nc.f32 \t%f2, [%rd2];
}";
        let sass = "\
        //## File \"/k/starter.cu\", line 27
        //## File \".nv_debug_ptx_txt\", line 7
        /*0010*/                   LDG.E.CONSTANT R3, desc[UR4][R4.64] ;
        //## File \".nv_debug_ptx_txt\", line 4
        /*0020*/                   LDG.E.CONSTANT R2, desc[UR4][R2.64] ;
        //## File \"/usr/include/other.h\", line 3
        //## File \".nv_debug_ptx_txt\", line 6
        /*0030*/                   STG.E desc[UR4][R4.64], R3 ;";
        assert_eq!(kernel_file(ptx), "/k/starter.cu");
        let found = sass_global_instructions(sass, &kernel_file(ptx), &BTreeMap::new());
        assert_eq!(
            found[1],
            SassGlobal {
                ptx_line: 4,
                source_line: Some(27),
                offset: 0x20,
            }
        );
        assert_eq!(found[2].source_line, None, "a header's line is not the kernel's");
        assert_eq!(moved_lines(ptx, &found), BTreeMap::from([(4, 27)]));
        // With the kernel's lines of the PTX, the header's store takes its PTX instruction's
        // line (the call the learner wrote).
        let kernel_lines = BTreeMap::from([(6, 27)]);
        let resolved = sass_global_instructions(sass, &kernel_file(ptx), &kernel_lines);
        assert_eq!(resolved[2].source_line, Some(27));
        assert_eq!(
            inlined_global_lines(sass, &kernel_file(ptx), &kernel_lines),
            BTreeMap::from([(0x30, 27)])
        );
    }

    #[test]
    fn a_load_ptxas_moved_out_of_a_loop_is_found() {
        // PTX: the load is inside the loop $L__BB0_1 .. bra. SASS: the loop .L_x_1 (0x20 ..
        // 0x40) holds the add; the load at 0x10 is before it.
        let ptx = module(
            "\t.loc\t1 9 3\n\tmov.f32 \t%f2, 0f00000000;\n$L__BB0_1:\n\t.loc\t1 10 5\n\
             \tld.global.nc.f32 \t%f1, [%rd1];\n\tadd.f32 \t%f2, %f2, %f1;\n\t@%p1 bra \t$L__BB0_1;\n",
        );
        let (load, add, branch) = (
            line_of(&ptx, "ld.global"),
            line_of(&ptx, "add.f32"),
            line_of(&ptx, "bra"),
        );
        let sass = format!(
            "\
        //## File \".nv_debug_ptx_txt\", line {load}
        /*0010*/                   LDG.E.CONSTANT R2, desc[UR4][R2.64] ;
.L_x_1:
        //## File \".nv_debug_ptx_txt\", line {add}
        /*0020*/                   FADD R0, R0, R2 ;
        //## File \".nv_debug_ptx_txt\", line {branch}
        /*0040*/              @P0 BRA `(.L_x_1) ;"
        );
        // The loop runs from the branch's target (the load) to the branch.
        assert_eq!(ptx_loops(&ptx), vec![(load, branch)]);
        let found = out_of_loop(&ptx, &sass);
        assert_eq!(
            found,
            vec![OutOfLoop {
                ptx_line: load,
                line: 10,
                loop_lines: (10, 10)
            }]
        );
        // The same load inside the machine-code loop: nothing to say.
        let kept = sass.replace("/*0010*/                   LDG", "/*0030*/                   LDG");
        let kept = kept.replacen(".L_x_1:\n", "", 1).replacen(
            &format!("        //## File \".nv_debug_ptx_txt\", line {load}"),
            &format!(".L_x_1:\n        //## File \".nv_debug_ptx_txt\", line {load}"),
            1,
        );
        assert!(out_of_loop(&ptx, &kept).is_empty(), "{kept}");
    }

    #[test]
    fn a_load_ptxas_moved_below_an_exit_is_found() {
        // corpus k0114 under NVRTC 13.0: `c = __ldg(&in[i])` (line 19) comes before the border
        // test's exit (line 20) in the PTX, after it in the SASS.
        let ptx = module(
            "\t.loc\t1 19 3\n\tadd.s64 \t%rd2, %rd1, 4;\n\tld.global.nc.f32 \t%f1, [%rd2];\n\
             \t.loc\t1 20 3\n\t@%p1 bra \t$L__BB0_2;\n\tst.global.f32 \t[%rd1], %f1;\n$L__BB0_2:\n",
        );
        let (load, exit) = (line_of(&ptx, "ld.global"), line_of(&ptx, "bra"));
        let sass = format!(
            "\
        //## File \".nv_debug_ptx_txt\", line {exit}
        /*0010*/              @P0 EXIT ;
        //## File \".nv_debug_ptx_txt\", line {load}
        /*0020*/                   LDG.E.CONSTANT R2, desc[UR4][R2.64] ;"
        );
        assert_eq!(
            sunk_past_exit(&ptx, &sass),
            vec![SunkPastExit {
                ptx_line: load,
                line: 19,
                exit_line: 20
            }]
        );
        // The load before the exit, as in the PTX: nothing moved.
        let kept = sass.replace("/*0020*/", "/*0000*/");
        assert!(sunk_past_exit(&ptx, &kept).is_empty());
    }

    #[test]
    fn only_global_generic_and_copy_accesses_count_as_the_decoder_says() {
        let ptx = module(
            "\tld.shared.f32 \t%f1, [%rd1];\n\tst.local.u32 \t[%rd1], %r1;\n\tld.param.u64 \t%rd1, [k_param_0];\n\
             \tld.shared::cluster.f32 \t%f1, [%r1];\n\tld.f32 \t%f1, [%rd1];\n\
             \tld.global.v4.f32 \t{%f1, %f2, %f3, %f4}, [%rd1];\n\tred.global.add.f32 \t[%rd1], %f1;\n\
             \tcp.async.ca.shared.global \t[%rd2], [%rd1], 4;\n",
        );
        let decoded = decoded(&ptx);
        assert!(!decoded.is_empty(), "the test kernel decodes");
        let counted = |needle: &str| decoded[&line_of(&ptx, needle)].counted.is_some();
        for not in ["ld.shared.f32", "st.local", "ld.param", "ld.shared::cluster"] {
            assert!(!counted(not), "{not}");
        }
        // A cluster neighbour's shared memory is reached through a generic LD in SASS.
        assert!(decoded[&line_of(&ptx, "ld.shared::cluster")].machine_global);
        assert!(!decoded[&line_of(&ptx, "ld.shared.f32")].machine_global);
        for yes in ["ld.f32", "ld.global.v4", "red.global", "cp.async.ca"] {
            assert!(counted(yes), "{yes}");
        }
    }

    #[test]
    fn a_line_with_no_machine_instruction_explains_an_endless_loop() {
        // NVRTC 13.0.88's sm_90 code for `volatile int spin = 1; while (spin) {}` on line 9:
        // the loop is gone, the lines around it are there.
        let sass = "\
        //## File \"/tmp/ising.cu\", line 7
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        //## File \"/tmp/ising.cu\", line 11
        /*0010*/                   S2R R0, SR_TID.X ;
        //## File \"helper.h\", line 9
        /*0020*/                   S2UR UR4, SR_CTAID.X ;";
        let lines = sass_source_lines(sass, "/tmp/ising.cu", &BTreeMap::new());
        assert_eq!(lines, BTreeSet::from([7, 11]));
        let code = MachineCode {
            architecture: "sm_90".into(),
            source_lines_with_code: lines,
            ..MachineCode::default()
        };
        let note = code.deleted_loop_note(9).expect("line 9 has no machine code");
        assert!(
            note.contains("line 9") && note.contains("finishes the kernel"),
            "{note}"
        );
        assert_eq!(code.deleted_loop_note(11), None);
        // No line table: nothing is claimed.
        assert_eq!(MachineCode::default().deleted_loop_note(9), None);
    }
}
