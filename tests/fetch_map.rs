//! The heat map's figures: the emulator's per-element fetch counts against counts made by
//! hand from what each kernel's source says it loads.

mod common;

use haloscope::backend::CancelFlag;
use haloscope::backend::emu::fetch_map::{FetchMap, FetchWindow};
use haloscope::pipeline::RunRequest;
use haloscope::trace::fetches::{fetch_map, summary, window_for};

fn map_of(lesson_id: &str, kernel: &str, window: FetchWindow) -> FetchMap {
    let lesson = common::lesson(lesson_id);
    let request = RunRequest::from_file(&common::root().join(kernel), Some(3), None).unwrap();
    fetch_map(&lesson, &request, window, &CancelFlag::default()).unwrap()
}

/// The line of `needle` in a kernel file (1-based).
fn line_of(kernel: &str, needle: &str) -> u32 {
    let source = std::fs::read_to_string(common::root().join(kernel)).unwrap();
    source
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle} in {kernel}")) as u32
        + 1
}

/// The 2D starter: every thread loads its own cell (border threads copy it, interior
/// threads use it as the centre), and each interior thread loads its four neighbours. So a
/// cell is fetched once, plus once per interior cell next to it.
#[test]
fn starter_2d_fetches_match_a_hand_count() {
    let n = 33;
    let kernel = "kernels/stencil-2d/starter.cu";
    let map = map_of("stencil-2d", kernel, FetchWindow::whole(n, 2));
    let interior = |x: i64, y: i64| x >= 1 && y >= 1 && x <= n as i64 - 2 && y <= n as i64 - 2;
    for y in 0..n as i64 {
        for x in 0..n as i64 {
            let neighbours = [(-1, 0), (1, 0), (0, -1), (0, 1)]
                .iter()
                .filter(|(dx, dy)| interior(x + dx, y + dy))
                .count() as u32;
            let cell = map.window.cell_of((y * n as i64 + x) as u64).unwrap();
            assert_eq!(map.loads[cell], 1 + neighbours, "element ({x},{y})");
        }
    }
    // The interior point (5,5) is read by its own centre load and by its four neighbours'
    // left/right/up/down loads. NVRTC shares one load of `in[i]` between the border copy
    // and the centre and files it under no source line (line 0), so the lines are the four
    // neighbour lines and that one.
    let cell = map.window.cell_of(5 * n as u64 + 5).unwrap();
    let lines = map.lines_of(cell);
    let mut want: Vec<u32> = ["in[i - 1]", "in[i + 1]", "in[i - n]", "in[i + n]"]
        .iter()
        .map(|needle| line_of(kernel, needle))
        .collect();
    want.insert(0, 0);
    assert_eq!(lines, want);
    let s = summary(&map);
    assert_eq!(s.max_loads, 5);
    assert_eq!(s.elements_fetched, (n * n) as u64);
}

/// The 2D solution stages a 34 x 10 patch per 32 x 8 block: a cell is fetched once by its
/// own block, and once more by each neighbouring block whose halo ring covers it (the
/// ring's corners are never loaded, and there is no halo past the grid's edge).
#[test]
fn solution_2d_fetches_match_a_hand_count() {
    let n = 257;
    let map = map_of("stencil-2d", "kernels/stencil-2d/solution.cu", FetchWindow::whole(n, 2));
    let (bw, bh) = (32i64, 8i64);
    let blocks_x = (n as i64 + bw - 1) / bw;
    let blocks_y = (n as i64 + bh - 1) / bh;
    for y in 0..n as i64 {
        for x in 0..n as i64 {
            // Blocks whose 34 x 10 patch (without corners) holds (x, y).
            let mut expected = 0;
            for by in 0..blocks_y {
                for bx in 0..blocks_x {
                    let (x0, y0) = (bx * bw, by * bh);
                    let in_x = x >= x0 && x < x0 + bw;
                    let in_y = y >= y0 && y < y0 + bh;
                    let ring_x = x == x0 - 1 || x == x0 + bw;
                    let ring_y = y == y0 - 1 || y == y0 + bh;
                    if (in_x && (in_y || ring_y)) || (ring_x && in_y) {
                        expected += 1;
                    }
                }
            }
            let cell = map.window.cell_of((y * n as i64 + x) as u64).unwrap();
            assert_eq!(map.loads[cell], expected, "element ({x},{y})");
        }
    }
}

/// A window of the profile size counts the same cells as the whole grid would there: the
/// starter's interior cells are fetched five times.
#[test]
fn a_window_of_the_profile_size_counts_its_cells() {
    let lesson = common::lesson("stencil-2d");
    let window = window_for(&lesson, lesson.profile_size, [1000, 1000, 0]);
    assert_eq!(window.extent, [512, 512, 1]);
    let map = map_of("stencil-2d", "kernels/stencil-2d/starter.cu", window);
    assert!(map.loads.iter().all(|&c| c == 5), "interior cells of the window");
    // Sectors: rows of 32 floats span 4 sectors; neighbours' rows fetch them again.
    assert!(map.sector_fetches.iter().all(|&c| c >= 3));
}
