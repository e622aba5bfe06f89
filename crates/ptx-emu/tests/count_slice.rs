//! `Program::count_slice`: the kernel cut to what its sector count depends on counts the same
//! sectors per line as the whole kernel, runs fewer instructions, and is refused where the
//! count depends on data.

use ptx_emu::{CancelFlag, GlobalMemory, Ignore, LaunchConfig, Program, launch};
use std::collections::BTreeMap;

/// A 1D three-point stencil through a shared tile, the shape of the lessons' kernels:
/// line 5 loads the centre into the tile, line 6 the halo (lane 0 only, guarded), line 8
/// reads three tile cells and line 9 stores their sum. `{branch}` is put after the load of
/// line 5 (empty, or a branch on the loaded value).
const TILE: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.file 1 "tile.cu"

.visible .entry tile(
    .param .u64 tile_param_0,
    .param .u64 tile_param_1,
    .param .u32 tile_param_2
)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .f32 %f<8>;
    .reg .b64 %rd<16>;
    .shared .align 4 .b8 sh[136];

    .loc 1 3 0
    ld.param.u64 %rd1, [tile_param_0];
    ld.param.u64 %rd2, [tile_param_1];
    ld.param.u32 %r1, [tile_param_2];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %tid.x;
    mad.lo.s32 %r4, %r2, 32, %r3;
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mul.wide.s32 %rd5, %r4, 4;
    add.s64 %rd6, %rd3, %rd5;
    mov.u32 %r5, sh;
    shl.b32 %r6, %r3, 2;
    add.s32 %r7, %r5, %r6;
    .loc 1 5 0
    ld.global.f32 %f1, [%rd6];
    {branch}
    st.shared.f32 [%r7+4], %f1;
    .loc 1 6 0
    setp.ne.s32 %p1, %r3, 0;
    setp.eq.s32 %p2, %r2, 0;
    or.pred %p3, %p1, %p2;
    @%p3 bra $L_halo_done;
    ld.global.f32 %f2, [%rd6+-4];
    st.shared.f32 [%r7], %f2;
$L_halo_done:
    .loc 1 7 0
    bar.sync 0;
    .loc 1 8 0
    ld.shared.f32 %f3, [%r7];
    ld.shared.f32 %f4, [%r7+4];
    add.f32 %f5, %f3, %f4;
    mul.f32 %f6, %f5, 0f3F000000;
    .loc 1 9 0
    add.s64 %rd7, %rd4, %rd5;
    st.global.f32 [%rd7], %f6;
$L_end:
    ret;
}
"#;

const N: u32 = 4096;

/// Sectors per source line, and warp instructions, of one launch of `program`.
fn count(program: &Program) -> (BTreeMap<u32, u64>, u64) {
    let mut memory = GlobalMemory::default();
    let input = memory.alloc_input("in", (0..N).map(|i| i as f32).collect());
    let output = memory.alloc_words("out", vec![0; N as usize]);
    program.place_globals(&mut memory);
    let config = LaunchConfig {
        grid: [N / 32, 1, 1],
        block: [32, 1, 1],
        params: program.parameter_buffer(&[input, output, N as u64]),
        dynamic_shared: 0,
        check_hazards: false,
        watch: None,
        step_budget: 1 << 20,
        lanes_per_warp: 32,
        fetch_map: None,
        cluster: None,
        count_by_class: false,
    };
    let stats = launch(program, &config, &memory, &mut Ignore, &CancelFlag::default(), 2).expect("the launch ends");
    let mut per_line = BTreeMap::new();
    for inst in program.instructions() {
        let sectors = stats.per_pc[inst.pc as usize].sectors;
        if sectors > 0 {
            *per_line.entry(inst.line).or_insert(0) += sectors;
        }
    }
    (per_line, stats.warp_insts())
}

#[test]
fn the_cut_kernel_counts_the_same_sectors_per_line_with_fewer_instructions() {
    let whole = Program::from_ptx(&TILE.replace("{branch}", ""), "tile").unwrap();
    let cut = whole
        .count_slice()
        .expect("no loaded value reaches an address or a branch");
    assert!(
        cut.instructions().count() < whole.instructions().count(),
        "the tile's stores, loads and arithmetic are cut"
    );
    assert!(
        cut.instructions()
            .all(|i| !i.opcode.contains("shared") && !i.opcode.starts_with("add.f32"))
    );
    let (whole_lines, whole_insts) = count(&whole);
    let (cut_lines, cut_insts) = count(&cut);
    assert_eq!(cut_lines, whole_lines);
    // Line 5: 4 sectors a warp; line 6: one lane per block but block 0 (1 sector); line 9: 4.
    let blocks = (N / 32) as u64;
    assert_eq!(
        whole_lines,
        BTreeMap::from([(5, 4 * blocks), (6, blocks - 1), (9, 4 * blocks)])
    );
    assert!(
        cut_insts < whole_insts,
        "{cut_insts} warp instructions, whole {whole_insts}"
    );
}

#[test]
fn a_kernel_whose_branch_depends_on_loaded_data_is_not_cut() {
    let branch = "setp.gt.f32 %p1, %f1, 0f00000000;\n    @%p1 bra $L_end;";
    let whole = Program::from_ptx(&TILE.replace("{branch}", branch), "tile").unwrap();
    assert!(whole.count_slice().is_none());
}

#[test]
fn a_kernel_whose_address_comes_from_shared_memory_is_not_cut() {
    // The store's address is read back from the tile: shared data reaches an address.
    let from_tile = "ld.shared.u32 %r8, [%r7+4];\n    cvt.s64.s32 %rd8, %r8;\n    add.s64 %rd6, %rd3, %rd8;";
    let kernel = TILE
        .replace("{branch}", "")
        .replace("    .loc 1 9 0\n", &format!("    {from_tile}\n    .loc 1 9 0\n"));
    let kernel = kernel.replace("add.s64 %rd7, %rd4, %rd5;", "add.s64 %rd7, %rd4, %rd8;");
    let whole = Program::from_ptx(&kernel, "tile").unwrap();
    assert!(whole.count_slice().is_none());
}

#[test]
fn a_kernel_with_an_atomic_is_not_cut() {
    let atomic = "atom.global.add.f32 %f7, [%rd6], %f1;";
    let whole = Program::from_ptx(&TILE.replace("{branch}", atomic), "tile").unwrap();
    assert!(whole.count_slice().is_none());
}
