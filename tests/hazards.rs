//! The emulator's hazard checks (issue 28): no false fault on correct kernels whose threads
//! share words or synchronise within a warp, the right pair named in a race, and every
//! access outside the buffers reported. The kernels in tests/hazards/ were written for these
//! tests; the generated corpus (scripts/hazards/) is checked against compute-sanitizer's
//! verdicts recorded on the GPU (tests/hazards/expected.tsv).

mod common;

use haloscope::hazard_check::{CheckOutcome, HazardCheck, check};
use haloscope::pipeline::RunRequest;
use haloscope::report::Verdict;
use haloscope::report::hazard::HazardClass;

fn check_file(path: &std::path::Path, lesson: &str) -> HazardCheck {
    let request = RunRequest::from_file(path, Some(3), None).unwrap();
    check(&common::lesson(lesson), &request, &[])
}

/// `tests/hazards/<name>`, run at the lesson's small sizes; the lesson is named on its first
/// line (`// lesson: stencil-2d`).
fn checked(name: &str) -> HazardCheck {
    let path = common::root().join("tests/hazards").join(name);
    let first = std::fs::read_to_string(&path).unwrap();
    let lesson = first
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("// lesson: "))
        .unwrap()
        .trim()
        .to_string();
    check_file(&path, &lesson)
}

/// The (x, y, z) coordinates in a message, in order of appearance.
fn threads_named(message: &str) -> Vec<[u32; 3]> {
    message
        .match_indices("thread (")
        .map(|(i, m)| {
            let rest = &message[i + m.len()..];
            let inner = &rest[..rest.find(')').unwrap()];
            let v: Vec<u32> = inner.split(',').map(|s| s.trim().parse().unwrap()).collect();
            [v[0], v[1], v[2]]
        })
        .collect()
}

#[test]
fn a_half_precision_plane_is_no_race_and_gives_the_gpus_verdict() {
    let found = checked("half_plane_3d_registers.cu");
    assert!(found.classes.is_empty(), "{found:?}");
    // Half precision is too coarse for the verifier's tolerance: on the GPU and here alike.
    assert_eq!(found.outcome, CheckOutcome::Failed(Verdict::WrongResults), "{found:?}");
}

#[test]
fn threads_writing_different_bytes_of_one_word_do_not_race() {
    let found = checked("char_planes_1d.cu");
    assert_eq!(
        (found.outcome.as_str(), found.classes.len()),
        ("correct", 0),
        "{found:?}"
    );
}

#[test]
fn a_syncwarp_in_place_of_syncthreads_is_a_race_between_two_warps() {
    let found = checked("syncwarp_tile_2d.cu");
    assert_eq!(found.classes, vec![HazardClass::Racecheck], "{found:?}");
    let first = &found.findings[0];
    let pair = threads_named(first);
    assert_eq!(pair.len(), 2, "{first}");
    // A block is 32 x 8: a warp is one row (one y). The pair is in two rows, one of them
    // reading what the other wrote, and the message says so.
    assert_ne!(pair[0][1], pair[1][1], "{first}");
    assert!(
        first.contains("another warp") && first.contains("__syncthreads()"),
        "{first}"
    );
    assert!(first.contains("reads") || first.contains("writes"), "{first}");
    // Both lines are named: the read of a neighbour (line 22) and the write of a cell (11).
    assert!(first.starts_with("line 22:") && first.contains("at line 11"), "{first}");
}

#[test]
fn a_warp_barrier_of_cooperative_groups_orders_its_lanes() {
    let found = checked("warp_tiles_cg_1d.cu");
    assert_eq!(
        (found.outcome.as_str(), found.classes.len()),
        ("correct", 0),
        "{found:?}"
    );
}

#[test]
fn a_read_one_before_the_input_is_out_of_bounds_with_thread_and_line() {
    let found = checked("left_neighbour_first_1d.cu");
    assert_eq!(found.classes, vec![HazardClass::Memcheck], "{found:?}");
    let fault = found.fault.unwrap();
    for part in [
        "out-of-bounds global read of 4 bytes",
        "4 bytes before the start of `in`",
        "in[-1]",
        "block (0,0,0) thread (0,0,0), line 8",
    ] {
        assert!(fault.contains(part), "{part:?} not in {fault}");
    }
}

#[test]
fn two_blocks_writing_one_output_race_unless_they_write_the_same_bits() {
    let found = checked("blocks_share_an_output_1d.cu");
    assert_eq!(found.classes, vec![HazardClass::GlobalRace], "{found:?}");
    let first = &found.findings[0];
    assert!(
        first.contains("of `out` (element 256)") && first.contains("block (0,0,0)"),
        "{first}"
    );
    let found = checked("blocks_copy_the_same_output_1d.cu");
    assert_eq!(
        (found.outcome.as_str(), found.classes.len()),
        ("correct", 0),
        "{found:?}"
    );
}

/// Every `tests/hazards/outside_*.cu`: thread 5 of block 0 makes one access outside the
/// buffers, on the line after `// the bad access:`; the fault text expected is on the file's
/// `// fault:` line.
#[test]
fn every_access_outside_the_buffers_says_where_it_fell() {
    let dir = common::root().join("tests/hazards");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.starts_with("outside_") {
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap();
        let expect = source
            .lines()
            .find_map(|l| l.strip_prefix("// fault: "))
            .unwrap()
            .trim();
        let line = 2 + source.lines().position(|l| l.trim() == "// the bad access:").unwrap();
        let found = checked(&name);
        let fault = found.fault.clone().unwrap_or_default();
        assert_eq!(found.classes, vec![HazardClass::Memcheck], "{name}: {found:?}");
        assert!(fault.contains(expect), "{name}: {expect:?} not in {fault}");
        let place = format!("thread (5,0,0), line {line}");
        assert!(fault.contains(&place), "{name}: no {place:?} in {fault}");
        seen += 1;
    }
    assert_eq!(seen, 6, "the outside_*.cu kernels");
}
