//! `haloscope check`: a kernel's hazards on the emulator at small sizes (src/hazard_check.rs).

use super::run::lesson_and_kernel;
use crate::hazard_check::check;
use std::path::Path;

pub fn run(course_dir: &Path, lesson_id: &str, kernel: &Path, sizes: &[u32], json: bool) -> i32 {
    let (lesson, request) = match lesson_and_kernel(course_dir, lesson_id, Some(kernel), None, None) {
        Ok(found) => found,
        Err(code) => return code,
    };
    let found = check(&lesson, &request, sizes);
    if json {
        println!("{}", serde_json::to_string_pretty(&found).unwrap_or_default());
    } else {
        let sizes: Vec<String> = found.sizes.iter().map(|n| n.to_string()).collect();
        println!("{} at n = {}: {}", found.kernel, sizes.join(", "), found.outcome);
        if let Some(fault) = &found.fault {
            println!("  fault: {fault}");
        }
        for f in &found.findings {
            println!("  finding: {f}");
        }
        if found.classes.is_empty() {
            println!("  no hazard found");
        }
    }
    // The exit codes of `run`: a hazard is a kernel fault; otherwise what the results were.
    found.outcome.exit_code()
}
