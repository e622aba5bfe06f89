//! `haloscope compile --ptx/--sass [--lines A-B] [--sectors]`: the instructions the compiler
//! made of each source line, as the app's machine-code view shows them.

use super::run::lesson_and_kernel;
use crate::backend::{BackendChoice, CancelFlag};
use crate::compile::listing::{Listed, Listing};
use crate::compile::{Target, compile_kernel};
use crate::report::{InstructionSectors, Verdict, thousands};
use std::path::Path;

pub struct ListingArgs<'a> {
    pub ptx: bool,
    pub sass: bool,
    /// `23` or `17-27`.
    pub lines: Option<&'a str>,
    /// Run the kernel first (on `backend`) and put its sectors on each memory instruction.
    pub sectors: Option<BackendChoice>,
}

/// `17-27` or `23` as a range of source lines.
pub fn parse_lines(text: &str) -> Result<std::ops::RangeInclusive<u32>, String> {
    let bad = || format!("--lines takes a line or a range such as 17-27, not `{text}`");
    let (a, b) = text.split_once('-').unwrap_or((text, text));
    let (a, b) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    if a > b {
        return Err(bad());
    }
    Ok(a..=b)
}

pub fn listing(course_dir: &Path, lesson_id: &str, kernel: &Path, args: &ListingArgs) -> i32 {
    let infra = Verdict::InfraError.exit_code();
    let (lesson, request) = match lesson_and_kernel(course_dir, lesson_id, Some(kernel), None, None) {
        Ok(found) => found,
        Err(code) => return code,
    };
    let range = match args.lines.map(parse_lines).transpose() {
        Ok(range) => range.unwrap_or(0..=u32::MAX),
        Err(e) => {
            eprintln!("{e}");
            return infra;
        }
    };
    let target = Target::Cubin {
        sm: crate::compile::REFERENCE_SM,
    };
    let compiled = match compile_kernel(&request.source, &request.source_name, &lesson, target, None) {
        Ok(k) => k,
        Err(f) => {
            eprintln!("{}", f.headline());
            return Verdict::CompileError.exit_code();
        }
    };
    let (figures, moves, executed) = match args.sectors {
        Some(choice) => {
            let report =
                crate::backend_policy::run_lesson(&lesson, &request, choice, &mut |_| {}, &CancelFlag::default());
            eprintln!("{}  {}", report.verdict.label(), report.headline);
            let profile = report.profile.unwrap_or_default();
            (
                profile.per_instruction,
                profile.moves.unwrap_or_default(),
                profile.executed_cubin,
            )
        }
        None => (Vec::new(), Default::default(), None),
    };
    // A printf kernel's GPU figures are of the code the driver made of its gated PTX: list that.
    if executed.is_some() {
        eprintln!("SASS: the code the GPU ran (the kernel's PTX with its printf calls gated, compiled by the driver)");
    }
    let cubin = executed.as_deref().map(Vec::as_slice).or(compiled.cubin.as_deref());
    let listing = Listing::new(&compiled.ptx, cubin).place_unfiled(&figures);
    let source: Vec<&str> = request.source.lines().collect();
    let (show_ptx, show_sass) = match (args.ptx, args.sass) {
        (false, false) => (true, true),
        both => both,
    };
    if show_sass && let Some(why) = &listing.sass_unavailable {
        eprintln!("no SASS: {why}");
    }
    let last = (source.len() as u32).min(*range.end());
    for line in *range.start()..=last {
        let (ptx, sass) = listing.of_lines(line..=line);
        let notes: Vec<&str> = moves.on_line(line).map(|m| m.text.as_str()).collect();
        if line == 0 {
            if ptx.is_empty() && sass.is_empty() {
                continue;
            }
            println!("(no source line: code the compiler made)");
        } else {
            if range.end() - range.start() > 200 && ptx.is_empty() && sass.is_empty() && notes.is_empty() {
                continue; // whole file: only lines with code
            }
            println!("{line:>4} | {}", source.get(line as usize - 1).copied().unwrap_or(""));
        }
        if show_ptx {
            print_instructions("PTX ", &ptx, &listing, &figures);
        }
        if show_sass {
            print_instructions("SASS", &sass, &listing, &figures);
        }
        for note in notes {
            println!("       compiler: {note}");
        }
    }
    0
}

fn print_instructions(kind: &str, items: &[&Listed], listing: &Listing, figures: &[InstructionSectors]) {
    for item in items {
        let place = match item.at {
            crate::report::InstructionAt::PtxLine(p) => format!("{p:>5}"),
            crate::report::InstructionAt::SassOffset(o) => format!("{o:#06x} (PTX {})", item.ptx_line),
        };
        let sectors = listing
            .sectors(item, figures)
            .map(|s| format!("   {} sectors", thousands(s)))
            .unwrap_or_default();
        let mark = if item.global { "*" } else { " " };
        println!("       {kind} {place} {mark} {}{sectors}", item.text);
    }
}
