//! The crate's API from the outside, on PTX written here (no NVRTC needed): decode once,
//! launch with an observer, read the counters and the events.

use ptx_emu::{
    AccessKind, BufferId, CancelFlag, Collect, EmuFaultKind, FindingKind, GlobalMemory, LaunchConfig, Observer,
    Program, TraceSpace, launch,
};
use std::sync::atomic::{AtomicU64, Ordering};

/// `out[i % wrap] = in[i]` for `i < n`: with `wrap >= n` a plain copy, with a smaller `wrap`
/// every block writes the same first `wrap` outputs (a race between blocks).
const COPY: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.file 1 "copy.cu"

.visible .entry copy(
    .param .u64 copy_param_0,
    .param .u64 copy_param_1,
    .param .u32 copy_param_2,
    .param .u32 copy_param_3
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .f32 %f<2>;
    .reg .b64 %rd<10>;

    .loc 1 3 0
    ld.param.u64 %rd1, [copy_param_0];
    ld.param.u64 %rd2, [copy_param_1];
    ld.param.u32 %r1, [copy_param_2];
    ld.param.u32 %r6, [copy_param_3];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.s32 %p1, %r5, %r1;
    @%p1 bra $L_end;
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mul.wide.s32 %rd5, %r5, 4;
    add.s64 %rd6, %rd3, %rd5;
    .loc 1 5 0
    ld.global.f32 %f1, [%rd6];
    rem.s32 %r7, %r5, %r6;
    mul.wide.s32 %rd8, %r7, 4;
    add.s64 %rd7, %rd4, %rd8;
    .loc 1 6 0
    st.global.f32 [%rd7], %f1;
$L_end:
    ret;
}
"#;

const N: u32 = 1024;
const BLOCK: u32 = 128;

struct Setup {
    program: Program,
    memory: GlobalMemory,
    config: LaunchConfig,
}

/// A launch of `COPY` over `N` elements whose output wraps at `wrap`; the buffers hold
/// `elements` floats each.
fn setup(wrap: u32, elements: usize) -> Setup {
    let program = Program::from_ptx(COPY, "copy").expect("the kernel decodes");
    let mut memory = GlobalMemory::default();
    memory.track_races = true;
    let input = memory.alloc_input("in", (0..elements).map(|i| i as f32).collect());
    let output = memory.alloc_words("out", vec![0xffff_ffff; elements]);
    program.place_globals(&mut memory);
    let config = LaunchConfig {
        grid: [N / BLOCK, 1, 1],
        block: [BLOCK, 1, 1],
        params: program.parameter_buffer(&[input, output, N as u64, wrap as u64]),
        dynamic_shared: 0,
        check_hazards: true,
        watch: Some([1, 0, 0]),
        step_budget: 1 << 20,
        lanes_per_warp: 32,
        fetch_map: None,
        cluster: None,
        count_by_class: false,
    };
    Setup {
        program,
        memory,
        config,
    }
}

fn pc_of(program: &Program, line: u32, access: AccessKind) -> u32 {
    program
        .instructions()
        .find(|i| i.line == line && i.global == Some(access))
        .unwrap_or_else(|| panic!("a global {access:?} on line {line}"))
        .pc
}

#[test]
fn a_coalesced_copy_counts_four_sectors_per_warp_and_traces_the_watched_block() {
    let s = setup(N, N as usize);
    let mut events = Collect::default();
    let stats = launch(&s.program, &s.config, &s.memory, &mut events, &CancelFlag::default(), 2).unwrap();

    let load = pc_of(&s.program, 5, AccessKind::Load);
    let store = pc_of(&s.program, 6, AccessKind::Store);
    let warps = (N / 32) as u64;
    // 32 lanes x 4 bytes = 128 contiguous bytes = 4 sectors per warp instruction.
    assert_eq!(stats.per_pc[load as usize].sectors, 4 * warps);
    assert_eq!(stats.per_pc[store as usize].sectors, 4 * warps);
    assert_eq!(stats.sectors(), 8 * warps);
    assert_eq!(stats.blocks, (N / BLOCK) as u64);
    assert!(events.findings.is_empty(), "{:?}", events.findings);

    // Block 1's 128 threads: one load and one store each, at its own elements.
    let loads: Vec<_> = events.trace.iter().filter(|a| !a.store).collect();
    let stores: Vec<_> = events.trace.iter().filter(|a| a.store).collect();
    assert_eq!((loads.len(), stores.len()), (BLOCK as usize, BLOCK as usize));
    for a in &loads {
        assert_eq!(a.space, TraceSpace::Global);
        assert_eq!(a.buffer, Some(BufferId(0)), "the input, allocated first");
        assert_eq!(a.offset, 4 * (BLOCK + a.thread[0]) as u64);
        assert_eq!(a.line, 5);
        assert_eq!(f32::from_bits(a.value as u32), (BLOCK + a.thread[0]) as f32);
    }
    assert!(stores.iter().all(|a| a.buffer == Some(BufferId(1)) && a.line == 6));
}

#[test]
fn blocks_writing_the_same_outputs_are_a_global_race() {
    let s = setup(BLOCK, N as usize);
    let mut events = Collect::default();
    launch(&s.program, &s.config, &s.memory, &mut events, &CancelFlag::default(), 1).unwrap();
    let race = events
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::GlobalRace)
        .unwrap_or_else(|| panic!("a global race: {:?}", events.findings));
    assert_eq!(race.buffer, Some(BufferId(1)));
    assert_eq!(race.pc, pc_of(&s.program, 6, AccessKind::Store));
    assert!(race.other_block.is_some_and(|b| b != race.block), "{race:?}");
}

#[test]
fn reading_past_the_input_stops_the_launch_with_the_place() {
    // Buffers of half the size the launch reads.
    let s = setup(N, N as usize / 2);
    let fault = launch(
        &s.program,
        &s.config,
        &s.memory,
        &mut Collect::default(),
        &CancelFlag::default(),
        2,
    )
    .expect_err("out of bounds");
    assert!(matches!(fault.kind, EmuFaultKind::OutOfBounds { .. }), "{fault:?}");
    assert_eq!(fault.pc, Some(pc_of(&s.program, 5, AccessKind::Load)));
    // The first block that reads past the end: elements 512.. are block 4's.
    assert_eq!(fault.block, [4, 0, 0]);
}

#[test]
fn a_cancelled_launch_ends_as_cancelled() {
    let s = setup(N, N as usize);
    let cancel = CancelFlag::default();
    cancel.cancel();
    let fault = launch(&s.program, &s.config, &s.memory, &mut Collect::default(), &cancel, 2).expect_err("cancelled");
    assert_eq!(fault.kind, EmuFaultKind::Cancelled);
}

/// Counts finished blocks as they are reported, from the launch's threads.
#[derive(Default)]
struct Progress(AtomicU64);

impl Observer for Progress {
    fn blocks_finished(&self, count: u64) {
        self.0.fetch_add(count, Ordering::Relaxed);
    }
}

#[test]
fn an_observer_sees_every_block_finish() {
    let s = setup(N, N as usize);
    let mut progress = Progress::default();
    launch(
        &s.program,
        &s.config,
        &s.memory,
        &mut progress,
        &CancelFlag::default(),
        3,
    )
    .unwrap();
    assert_eq!(progress.0.load(Ordering::Relaxed), (N / BLOCK) as u64);
}
