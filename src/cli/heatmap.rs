//! `haloscope heatmap`: the fetch counts behind the app's heat map, as a summary table or
//! JSON (one count per element of the window, x fastest).

use super::HeatmapArgs;
use super::run::lesson_and_kernel;
use crate::backend::CancelFlag;
use crate::report::Verdict;
use crate::trace::fetches::{fetch_map, summary, window_for};
use std::collections::BTreeMap;

pub fn heatmap(course_dir: &std::path::Path, args: &HeatmapArgs) -> i32 {
    let (lesson, request) = match lesson_and_kernel(course_dir, &args.lesson, args.kernel.as_deref(), Some(1), None) {
        Ok(found) => found,
        Err(code) => return code,
    };
    let n = args.n.unwrap_or_else(|| {
        let sizes = &lesson.verify_sizes;
        sizes
            .get(sizes.len().saturating_sub(2))
            .copied()
            .unwrap_or(lesson.profile_size)
    });
    let mut origin = [0u32; 3];
    for (slot, &v) in origin.iter_mut().zip(&args.origin) {
        *slot = v;
    }
    let window = window_for(&lesson, n, origin);
    let map = match fetch_map(&lesson, &request, window, &CancelFlag::default()) {
        Ok(map) => map,
        Err(message) => {
            eprintln!("{message}");
            return Verdict::KernelFault.exit_code();
        }
    };
    let s = summary(&map);
    if args.json {
        let value = serde_json::json!({
            "lesson": lesson.id,
            "kernel": request.kernel_file,
            "n": n,
            "origin": window.origin,
            "extent": window.extent,
            "summary": s,
            "lines": map.lines,
            "loads": map.loads,
            "sector_fetches": map.sector_fetches,
        });
        println!("{value}");
        return 0;
    }
    let [ex, ey, ez] = window.extent;
    let [ox, oy, oz] = window.origin;
    println!(
        "{} on {} at n={n}: window of {ex} x {ey} x {ez} elements from ({ox},{oy},{oz})",
        request.kernel_file, lesson.id
    );
    println!(
        "  {} loads of {} elements: {:.2} per element fetched, at most {}; the launch fetched {} input sectors",
        s.loads, s.elements_fetched, s.mean_loads, s.max_loads, s.input_sectors
    );
    let mut histogram = BTreeMap::new();
    for &c in &map.loads {
        *histogram.entry(c).or_insert(0u64) += 1;
    }
    for (count, elements) in histogram {
        println!("  fetched {count:>3} times: {elements:>9} elements");
    }
    0
}
