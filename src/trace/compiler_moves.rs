//! Where the compiler moved the kernel's global memory accesses, said on every source line
//! involved (issue 32).
//!
//! The hardware counts a memory instruction's sectors on the line its machine code is filed
//! under, and an optimising compiler files accesses where it put them, not where the learner
//! wrote them: NVRTC loads `in[i]` once for two lines that both read it and hoists the load
//! above a branch with no line of its own; ptxas files it under a third line. The sectors
//! stay where the hardware puts them (that is what Nsight Compute shows); this module adds
//! the explanation.
//!
//! How: the same source is compiled a second time with optimisation off (`-G`), where every
//! read and write the source makes is its own instruction under its own line. Both kernels
//! run on the emulator on the same input, tracing one block; each 4-byte word a thread reads
//! or writes is matched between the two. An optimised instruction then "serves" the source
//! lines whose unoptimised accesses touched the same words of the same threads, which is the
//! compiler's merging, hoisting and widening seen from what actually happened rather than
//! guessed from the text. ptxas's own moves out of loops (which the PTX cannot show) are
//! found from the machine code's structure in `compile::machine_code`.

pub use crate::report::moves::{AccessMove, MoveKind, Moves, lines_name};

use crate::backend::CancelFlag;
use crate::backend::emu::{
    BufferId, Program, RunOptions, TraceSpace, TracedAccess, buffer_name, load_program, run_lesson_kernel,
};
use crate::compile::{CompiledKernel, MachineCode};
use crate::harness::{poisoned_output, random_inputs};
use crate::lesson::Lesson;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// One thread's access to one 4-byte word of a buffer, in one epoch of that thread. The
/// buffer by name: the two builds number their `__device__` variables each in its own order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Word<'a> {
    thread: [u32; 3],
    store: bool,
    buffer: &'a str,
    word: u64,
    /// Barriers the block had passed plus global writes the thread had made before the
    /// access. Both builds make the same writes and barriers in the same order (for a kernel
    /// whose output is right), so the epoch lines up the same iteration of a loop in both:
    /// a value one iteration loads and the next reuses from a register is then a read the
    /// next iteration's instruction no longer makes, not a merge across iterations.
    epoch: u32,
}

/// One build's trace, and the name that build gives each of its buffers.
type NamedTrace<'a, 'n> = (&'a [TracedAccess], &'n dyn Fn(BufferId) -> &'n str);

/// The global accesses of a trace, each with its words.
fn global_words<'a, 'n>((trace, name): NamedTrace<'a, 'n>) -> Vec<(&'a TracedAccess, Vec<Word<'n>>)> {
    let mut barriers = 0;
    let mut writes: HashMap<[u32; 3], u32> = HashMap::new();
    let mut out = Vec::new();
    for access in trace {
        match access.space {
            TraceSpace::Barrier | TraceSpace::ClusterBarrier => barriers += 1,
            TraceSpace::Global => {
                let written = writes.entry(access.thread).or_default();
                let epoch = barriers + *written;
                if access.store {
                    *written += 1;
                }
                let first = access.offset / 4;
                let last = (access.offset + access.bytes.max(1) as u64 - 1) / 4;
                let buffer = access.buffer.map_or("", name);
                let words = (first..=last)
                    .map(|word| Word {
                        thread: access.thread,
                        store: access.store,
                        buffer,
                        word,
                        epoch,
                    })
                    .collect();
                out.push((access, words));
            }
            _ => {}
        }
    }
    out
}

/// What the two traced launches showed, before the machine code is known: run alongside
/// the verification (about a compile's time), finished by `explain`.
#[derive(Debug, Clone, Default)]
pub struct Traced {
    /// Per optimised PTX line with a global access: the instruction's facts and the source
    /// lines (of the unoptimised kernel) that touched the same words.
    optimised: BTreeMap<u32, Instruction>,
    /// Per (source line, store, buffer) of the unoptimised kernel: the optimised PTX lines
    /// that touched its words, and how many of its words none did.
    written: BTreeMap<(u32, bool, String), Written>,
}

#[derive(Debug, Clone, Default)]
struct Instruction {
    store: bool,
    buffer: String,
    /// `.loc` line of the optimised PTX (0: the compiler's own).
    loc_line: u32,
    /// Widest access in bytes.
    bytes: u32,
    /// Source lines served, and the unoptimised instructions (pcs) served.
    serves: BTreeSet<u32>,
    serves_pcs: BTreeSet<u32>,
}

#[derive(Debug, Clone, Default)]
struct Written {
    made_by: BTreeSet<u32>,
    words_not_made: u64,
}

/// Traces `kernel` and its unoptimised build `reference` (`compile::compile_unoptimised`) on
/// one block. Errors say why there is no explanation (a kernel the emulator cannot run
/// unoptimised).
pub fn trace(
    lesson: &Lesson,
    kernel: &CompiledKernel,
    reference: &CompiledKernel,
    cancel: &CancelFlag,
) -> Result<Traced, String> {
    let optimised = load_program(&kernel.ptx, &kernel.entry).map_err(|e| e.to_string())?;
    let unoptimised = load_program(&reference.ptx, &reference.entry)
        .map_err(|e| format!("the emulator cannot run the unoptimised kernel: {e}"))?;
    let n = *lesson.verify_sizes.iter().min().ok_or("the lesson has no sizes")?;
    let grid = lesson.grid_for(n);
    // The first block of the second row: it holds the x = 0 border and interior cells, so
    // both paths of a stencil's border branch run in it.
    let block = [0, 1.min(grid[1].saturating_sub(1)), 0];
    let run = |prog: &Program| -> Result<Vec<TracedAccess>, String> {
        let count = lesson.stencil.elements(n);
        let input = random_inputs(count, 0x5eed);
        let mut output = poisoned_output(count);
        let options = RunOptions {
            check_hazards: false,
            watch: Some(block),
            // Beside the run's own launches: one host thread, so it does not slow them.
            host_threads: 1,
            ..RunOptions::default()
        };
        run_lesson_kernel(prog, lesson, n, &input, &mut output, &options, cancel)
            .map(|(_, observed)| observed.trace)
            .map_err(|f| format!("{f:?}"))
    };
    let optimised_trace = run(&optimised)?;
    let unoptimised_trace = run(&unoptimised).map_err(|e| format!("the unoptimised kernel stopped: {e}"))?;
    let place = |pc: u32| optimised.instruction(pc).map(|i| (i.ptx_line, i.line));
    let optimised_name = |b| buffer_name(&optimised, b);
    let unoptimised_name = |b| buffer_name(&unoptimised, b);
    Ok(match_traces(
        place,
        (&optimised_trace, &optimised_name),
        (&unoptimised_trace, &unoptimised_name),
    ))
}

/// `place`: an optimised pc's (PTX line, `.loc` line).
fn match_traces<'n>(
    place: impl Fn(u32) -> Option<(u32, u32)>,
    optimised_trace: NamedTrace<'_, 'n>,
    unoptimised_trace: NamedTrace<'_, 'n>,
) -> Traced {
    // Which unoptimised (line, pc) touched each word.
    let unoptimised = global_words(unoptimised_trace);
    let mut source_of: HashMap<&Word, BTreeSet<(u32, u32)>> = HashMap::new();
    for (access, words) in &unoptimised {
        for word in words {
            source_of.entry(word).or_default().insert((access.line, access.pc));
        }
    }
    let mut traced = Traced::default();
    let optimised = global_words(optimised_trace);
    let mut made: HashMap<&Word, BTreeSet<u32>> = HashMap::new();
    for (access, words) in &optimised {
        let Some((ptx_line, loc_line)) = place(access.pc) else {
            continue;
        };
        let buffer = words.first().map_or("", |w| w.buffer);
        let entry = traced.optimised.entry(ptx_line).or_insert_with(|| Instruction {
            store: access.store,
            buffer: buffer.to_string(),
            loc_line,
            ..Instruction::default()
        });
        entry.bytes = entry.bytes.max(access.bytes);
        for word in words {
            if let Some(sources) = source_of.get(word) {
                entry.serves.extend(sources.iter().map(|&(line, _)| line));
                entry.serves_pcs.extend(sources.iter().map(|&(_, pc)| pc));
            }
            made.entry(word).or_default().insert(ptx_line);
        }
    }
    for (access, words) in &unoptimised {
        let key = (
            access.line,
            access.store,
            words.first().map_or("", |w| w.buffer).to_string(),
        );
        let written = traced.written.entry(key).or_default();
        for word in words {
            match made.get(word) {
                Some(ptx_lines) => written.made_by.extend(ptx_lines),
                None => written.words_not_made += 1,
            }
        }
    }
    traced
}

/// Instructions grouped into one move: (source lines, kind, store, buffer, hoisted).
type GroupKey = (Vec<u32>, MoveKind, bool, String, bool);
/// The group's PTX lines, the lines the hardware counts them on, the widest access in bytes.
type Group = (Vec<u32>, BTreeSet<u32>, u32);

/// The moves, with the lines the hardware counts each instruction on (`machine`).
pub fn explain(traced: &Traced, machine: Option<&MachineCode>) -> Moves {
    // The source line the hardware books a PTX instruction's sectors on; None: ptxas removed it.
    let counted_on = |ptx_line: u32, loc_line: u32| -> Option<u32> {
        match machine {
            Some(m) if m.removed_ptx_lines.contains(&ptx_line) => None,
            Some(m) => Some(m.moved_ptx_lines.get(&ptx_line).copied().unwrap_or(loc_line)),
            None => Some(loc_line),
        }
    };
    // Instructions that do the same thing for the same lines (a loop's unrolled copies) are
    // one move.
    let mut grouped: BTreeMap<GroupKey, Group> = BTreeMap::new();
    for (&ptx_line, inst) in &traced.optimised {
        let lines: Vec<u32> = inst.serves.iter().copied().filter(|&l| l > 0).collect();
        if lines.is_empty() {
            continue;
        }
        let counted = counted_on(ptx_line, inst.loc_line).filter(|&l| l > 0);
        let kind = match () {
            _ if inst.bytes > 4 && inst.serves_pcs.len() >= 2 => MoveKind::Widened,
            _ if lines.len() >= 2 => MoveKind::Merged,
            _ if inst.loc_line == 0 => MoveKind::Hoisted,
            _ if counted.is_some_and(|c| !lines.contains(&c)) => MoveKind::CountedElsewhere,
            _ => continue,
        };
        let hoisted = inst.loc_line == 0;
        let entry = grouped
            .entry((lines, kind, inst.store, inst.buffer.clone(), hoisted))
            .or_default();
        entry.0.push(ptx_line);
        entry.1.extend(counted);
        entry.2 = entry.2.max(inst.bytes);
    }
    let explained: BTreeSet<u32> = grouped.values().flat_map(|(ptx, _, _)| ptx.iter().copied()).collect();
    let mut moves: Vec<AccessMove> = grouped
        .into_iter()
        .map(|((lines, kind, store, buffer, hoisted), (ptx_lines, counted, bytes))| {
            let counted: Vec<u32> = counted.into_iter().collect();
            AccessMove {
                text: instruction_text(kind, store, &buffer, &lines, &counted, ptx_lines.len(), hoisted, bytes),
                kind,
                store,
                buffer,
                source_lines: lines,
                counted_on: counted,
                ptx_lines,
            }
        })
        .collect();
    for ((line, store, buffer), written) in &traced.written {
        if *line == 0 {
            continue;
        }
        let what = access_words(*store, buffer, 1);
        if written.words_not_made > 0 && written.made_by.is_empty() {
            moves.push(AccessMove {
                kind: MoveKind::Removed,
                store: *store,
                buffer: buffer.clone(),
                source_lines: vec![*line],
                counted_on: Vec::new(),
                ptx_lines: Vec::new(),
                text: if *store {
                    format!(
                        "The {what} on line {line} is never made: a later write of the same elements replaces it, so \
                         the compiler leaves it out and it costs no sectors."
                    )
                } else {
                    format!(
                        "The {what} on line {line} does not go to memory: the compiler already had those values in \
                         registers (from another load, or from what the kernel wrote there), so it costs no sectors."
                    )
                },
            });
            continue;
        }
        // Several instructions for one access, not already explained as moves of their own.
        let instructions: Vec<u32> = written.made_by.iter().copied().collect();
        if instructions.len() < 2 || instructions.iter().all(|p| explained.contains(p)) {
            continue;
        }
        let counted: BTreeSet<u32> = instructions
            .iter()
            .filter_map(|p| counted_on(*p, traced.optimised.get(p).map_or(0, |i| i.loc_line)))
            .filter(|&l| l > 0)
            .collect();
        if counted.iter().all(|c| c == line) {
            continue; // unrolled copies counted where they were written: nothing moved
        }
        let counted: Vec<u32> = counted.into_iter().collect();
        moves.push(AccessMove {
            kind: MoveKind::Duplicated,
            store: *store,
            buffer: buffer.clone(),
            source_lines: vec![*line],
            text: format!(
                "The {what} on line {line} is made by {} instructions, each for some of the threads or loop \
                 iterations; the hardware counts their sectors on {}.",
                instructions.len(),
                lines_name(&counted)
            ),
            counted_on: counted,
            ptx_lines: instructions,
        });
    }
    // ptxas's own moves, seen in the machine code: a load that stays on its line.
    let ptxas_move = |kind, ptx_line: u32, line: u32, text: String| AccessMove {
        kind,
        store: false,
        buffer: String::new(),
        source_lines: vec![line],
        counted_on: vec![line],
        ptx_lines: vec![ptx_line],
        text,
    };
    for o in machine.map(|m| m.out_of_loop.as_slice()).unwrap_or_default() {
        let (first, last) = o.loop_lines;
        let text = format!(
            "ptxas moved the load on line {} out of the loop on lines {first}-{last} (its value cannot change \
                 from one iteration to the next): the GPU makes it once per thread, not once per iteration. The \
             emulator runs the PTX, which loads it in every iteration, so it counts more sectors on this line \
             than the GPU (docs/known-differences.md).",
            o.line
        );
        moves.push(ptxas_move(MoveKind::OutOfLoop, o.ptx_line, o.line, text));
    }
    for m in machine.map(|m| m.sunk_past_exit.as_slice()).unwrap_or_default() {
        let text = format!(
            "ptxas moved the load on line {} below the exit on line {}: the threads that leave there no longer \
                 make it, so the GPU counts fewer sectors on this line than the PTX asks for. The emulator runs the \
             PTX, where every thread loads first, and counts them (docs/known-differences.md).",
            m.line, m.exit_line
        );
        moves.push(ptxas_move(MoveKind::PastExit, m.ptx_line, m.line, text));
    }
    moves.sort_by(|a, b| (&a.source_lines, a.kind).cmp(&(&b.source_lines, b.kind)));
    Moves { moves }
}

/// "read of `in`", "writes to `out`".
fn access_words(store: bool, buffer: &str, count: usize) -> String {
    let s = if count > 1 { "s" } else { "" };
    if store {
        format!("write{s} to `{buffer}`")
    } else {
        format!("read{s} of `{buffer}`")
    }
}

#[allow(clippy::too_many_arguments)]
fn instruction_text(
    kind: MoveKind,
    store: bool,
    buffer: &str,
    lines: &[u32],
    counted: &[u32],
    copies: usize,
    hoisted: bool,
    bytes: u32,
) -> String {
    let what = access_words(store, buffer, lines.len());
    let written = lines_name(lines);
    let one = if copies > 1 {
        format!("one instruction (in {copies} copies: the loop is unrolled or the code duplicated)")
    } else {
        "one instruction".to_string()
    };
    let placed = if hoisted {
        ", placed by the compiler ahead of them with no line of its own"
    } else {
        ""
    };
    let booked = if counted.is_empty() {
        "; ptxas then removed it, so it costs no sectors".to_string()
    } else if counted == lines {
        String::new()
    } else {
        format!("; the hardware counts its sectors on {}", lines_name(counted))
    };
    match kind {
        MoveKind::Widened => format!("The {what} on {written} are made by {one} of {bytes} bytes{placed}{booked}."),
        MoveKind::Merged if store => {
            format!(
                "The {what} on {written} go to the same elements: the compiler makes them with {one}{placed}{booked}."
            )
        }
        MoveKind::Merged => {
            format!(
                "The {what} on {written} are of the same elements: the compiler loads them once, with {one}{placed}{booked}."
            )
        }
        MoveKind::Hoisted => format!("The {what} on {written} is made by {one}{placed}{booked}."),
        _ => {
            format!("The {what} on {written} is counted elsewhere{booked}: ptxas filed its machine instruction there.")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(thread: u32, store: bool, pc: u32, line: u32, offset: u64, bytes: u32) -> TracedAccess {
        TracedAccess {
            thread: [thread, 0, 0],
            store,
            pc,
            line,
            ptx_line: pc,
            space: TraceSpace::Global,
            buffer: Some(if store {
                crate::backend::emu::OUTPUT
            } else {
                crate::backend::emu::INPUT
            }),
            offset,
            bytes,
            value: 0,
            peer: None,
        }
    }

    /// The names of a kernel with no `__device__` variables.
    fn lesson_names(b: BufferId) -> &'static str {
        if b == crate::backend::emu::INPUT { "in" } else { "out" }
    }

    #[test]
    fn line_lists_read_like_english() {
        assert_eq!(lines_name(&[7]), "line 7");
        assert_eq!(lines_name(&[7, 9]), "lines 7 and 9");
        assert_eq!(lines_name(&[7, 9, 12]), "lines 7, 9 and 12");
    }

    #[test]
    fn one_load_for_two_lines_is_merged_and_counted_where_ptxas_files_it() {
        // Unoptimised: lines 17 and 23 each read in[t]; optimised: one load at PTX line 63
        // with no line of its own (pc 0), which ptxas files under line 27.
        let unoptimised = vec![access(0, false, 5, 17, 0, 4), access(0, false, 9, 23, 0, 4)];
        let optimised = vec![access(0, false, 0, 0, 0, 4)];
        let traced = match_traces(
            |pc| (pc == 0).then_some((63, 0)),
            (&optimised, &lesson_names),
            (&unoptimised, &lesson_names),
        );
        let machine = MachineCode {
            moved_ptx_lines: BTreeMap::from([(63, 27)]),
            ..MachineCode::default()
        };
        let moves = explain(&traced, Some(&machine));
        assert_eq!(moves.moves.len(), 1);
        let m = &moves.moves[0];
        assert_eq!(m.kind, MoveKind::Merged);
        assert_eq!(m.source_lines, vec![17, 23]);
        assert_eq!(m.counted_on, vec![27]);
        for line in [17, 23, 27] {
            assert_eq!(moves.on_line(line).count(), 1, "line {line}");
        }
        assert!(
            m.text.contains("lines 17 and 23") && m.text.contains("on line 27"),
            "{}",
            m.text
        );
        assert!(m.text.contains("no line of its own"), "{}", m.text);
    }
}
