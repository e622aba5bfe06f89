//! The human-readable table `haloscope run` prints.

use crate::lesson::Lesson;
use crate::report::RunReport;
use crate::report::thousands;

pub fn print_report(lesson: &Lesson, report: &RunReport) {
    println!("lesson   {} — {}", lesson.id, lesson.title);
    println!("kernel   {}", report.kernel_file);
    if let Some(backend) = &report.backend {
        println!("backend  {:?}: {}", backend.kind, backend.device);
        if backend.display_watchdog {
            println!("         note: {}", crate::report::WATCHDOG_NOTE);
        }
    }
    println!("seed     {}", report.seed);
    if let Some(compile) = &report.compile {
        println!(
            "compile  ok in {:.0} ms ({} {}, {})",
            compile.millis, compile.compiler, compile.compiler_version, compile.target
        );
        for w in &compile.warnings {
            println!("         {w}");
        }
    }
    if let Some(failure) = &report.compile_failure {
        println!("compile  {}", failure.headline());
    }
    if !report.sizes.is_empty() {
        println!(
            "\n  {:>6}  {:>14}  {:>10}  {:>9}  {:>11}",
            "n", "grid", "elements", "wrong", "unwritten"
        );
        for s in &report.sizes {
            let grid = format!("{}x{}x{}", s.grid[0], s.grid[1], s.grid[2]);
            println!(
                "  {:>6}  {:>14}  {:>10}  {:>9}  {:>11}  {}",
                s.n,
                grid,
                s.elements,
                s.wrong,
                s.unwritten,
                if s.passed() { "ok" } else { "FAIL" }
            );
            for m in &s.first_mismatches {
                println!("          {m}");
            }
        }
    }
    for f in &report.findings {
        println!(
            "finding  {} (shared byte {}, seen {}x)",
            f.located(),
            f.address,
            f.count
        );
    }
    for u in &report.unexecuted {
        println!("warning  {}", u.located());
    }
    print_output(report);
    if let Some(profile) = &report.profile {
        println!(
            "\nsectors  {} over {} launches at n={} (loads {}, stores {}; ideal {})",
            thousands(profile.sectors),
            profile.launches,
            profile.n,
            thousands(profile.load_sectors),
            thousands(profile.store_sectors),
            thousands(profile.ideal_sectors)
        );
        println!("         {}", profile.source);
        if let Some(bulk) = &profile.bulk_copies {
            println!("         {}", bulk.note());
        }
        if profile.counted_by_emulator_because.is_some() {
            println!("         {}", crate::backend::gpu::permission::HOW_TO_ALLOW);
        }
        println!(
            "  {:>5}  {:>15}  {:>15}  {:>6}  {:>6}",
            "line", "sectors", "ideal", "ratio", "lanes"
        );
        // Line 0: code the compiler merged from several lines (for example one load shared by
        // both sides of a branch); NVRTC gives it no single line.
        for line in profile.per_line.iter().filter(|l| l.global_instructions > 0) {
            println!(
                "  {:>5}  {:>15}  {:>15}  {:>6.2}  {:>6.1}",
                line.line,
                thousands(line.sectors),
                thousands(line.ideal_sectors),
                line.ratio(),
                line.average_active_lanes()
            );
        }
        print_machine_code(profile);
    }
    if let Some(t) = &report.timing {
        println!(
            "time     median {:.1} us (min {:.1}, max {:.1}) over {} launches, {:.0} GB/s effective",
            t.median_us, t.min_us, t.max_us, t.launches, t.effective_gbps
        );
    }
    if let Some(g) = &report.gate {
        println!("gate     {}", g.sentence());
    }
    println!("\n{}  {}", report.verdict.label(), report.headline);
}

/// The lines where ptxas changed the PTX's global memory instructions, with what it means.
fn print_machine_code(profile: &crate::report::SectorProfile) {
    if let Some(code) = &profile.machine_code
        && !code.lines.is_empty()
    {
        println!(
            "\nmachine code ({}) differs from the PTX on {} line(s):",
            code.architecture,
            code.lines.len()
        );
        for line in &code.lines {
            let left_out = if line.sectors_not_issued > 0 {
                format!(
                    "; {} sectors left out of the figure",
                    thousands(line.sectors_not_issued)
                )
            } else {
                String::new()
            };
            println!("  line {:>4}: {}{left_out}", line.line, line.summary());
            println!("             {}", line.meaning());
        }
    }
    if let Some(why) = &profile.machine_code_unavailable {
        println!("\nmachine code not compared with the PTX: {why}");
    }
}

/// What the kernel printed, per launch: the first lines of each, then how many were cut.
fn print_output(report: &RunReport) {
    /// Lines of each launch shown in the terminal (`--json` has all that were kept).
    const SHOWN: usize = 20;
    for o in &report.output {
        let plural = if o.total_lines() == 1 { "" } else { "s" };
        println!("printed  {} ({} line{plural}):", o.launch, o.total_lines());
        for line in o.lines.iter().take(SHOWN) {
            println!("  | {line}");
        }
        let hidden = o.lines.len().saturating_sub(SHOWN) as u64 + o.lines_not_shown;
        if hidden > 0 {
            println!("  | ... {hidden} more lines not shown (all kept lines are in --json)");
        }
        if let Some(note) = o.gate_note() {
            println!("  | {note}");
        }
    }
}
