//! The timer registers a waiting loop reads: CUDA 13.0's libcu++ (the H100's toolkit) backs
//! off in `cuda::barrier` waits by reading `%globaltimer`, so a kernel built against those
//! headers reads it before the barrier completes. The emulator's timers only have to grow.

use ptx_emu::{BufferId, CancelFlag, Collect, GlobalMemory, LaunchConfig, Program, launch};

/// Each thread spins until `%globaltimer` has moved on by 100, counting its turns, and stores
/// how far the timer moved; `%globaltimer_lo` and `%clock` are read once on the way.
const SPIN: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.file 1 "spin.cu"

.visible .entry spin(
    .param .u64 spin_param_0
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<8>;

    .loc 1 3 0
    ld.param.u64 %rd1, [spin_param_0];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u64 %rd3, %globaltimer;
    mov.u32 %r4, %globaltimer_lo;
    mov.u32 %r5, %clock;
$L_wait:
    .loc 1 5 0
    mov.u64 %rd4, %globaltimer;
    sub.s64 %rd5, %rd4, %rd3;
    setp.lt.u64 %p1, %rd5, 100;
    @%p1 bra $L_wait;
    cvt.u32.u64 %r2, %rd5;
    mul.wide.u32 %rd6, %r1, 4;
    add.s64 %rd7, %rd2, %rd6;
    .loc 1 7 0
    st.global.u32 [%rd7], %r2;
    ret;
}
"#;

#[test]
fn a_loop_waiting_on_the_global_timer_ends() {
    let program = Program::from_ptx(SPIN, "spin").expect("the timer registers decode");
    let mut memory = GlobalMemory::default();
    let out = memory.alloc_words("out", vec![0; 64]);
    program.place_globals(&mut memory);
    let config = LaunchConfig {
        grid: [1, 1, 1],
        block: [64, 1, 1],
        params: program.parameter_buffer(&[out]),
        dynamic_shared: 0,
        check_hazards: true,
        watch: None,
        step_budget: 1 << 16,
        lanes_per_warp: 32,
        fetch_map: None,
        cluster: None,
        count_by_class: false,
    };
    let stats = launch(
        &program,
        &config,
        &memory,
        &mut Collect::default(),
        &CancelFlag::default(),
        1,
    )
    .expect("the loop ends within the step budget");
    assert_eq!(stats.blocks, 1);
    let moved = memory.take_f32(BufferId(0));
    assert!(
        moved.iter().all(|m| m.to_bits() >= 100),
        "every thread saw the timer move on by 100: {:?}",
        moved.iter().map(|m| m.to_bits()).collect::<Vec<_>>()
    );
}
