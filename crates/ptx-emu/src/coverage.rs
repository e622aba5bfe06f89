//! Which PTX instructions the emulator runs: one sample of each instruction form, decoded by
//! the real decoder (so the list cannot drift from the code). `haloscope emulator-coverage`
//! prints it; docs/emulator.md explains it.

use super::decode_entry;
use crate::ptx::parse_module;

/// (group, instruction text). Registers: %r (b32), %rd (b64), %f (f32), %fd (f64), %h (b16),
/// %p (pred); `sh` is a shared array, `g` a global variable.
pub const SAMPLES: &[(&str, &str)] = &[
    ("integer", "add.s32 %r1, %r2, %r3;"),
    ("integer", "mul.wide.s32 %rd1, %r2, 4;"),
    ("integer", "mul.hi.u32 %r1, %r2, %r3;"),
    ("integer", "mad.lo.s32 %r1, %r2, %r3, %r4;"),
    ("integer", "mad.hi.u32 %r1, %r2, %r3, %r4;"),
    ("integer", "mad.wide.u32 %rd1, %r2, %r3, %rd2;"),
    ("integer", "div.s32 %r1, %r2, %r3;"),
    ("integer", "rem.u32 %r1, %r2, %r3;"),
    ("integer", "min.s32 %r1, %r2, %r3;"),
    ("integer", "shl.b32 %r1, %r2, 3;"),
    ("integer", "shr.s64 %rd1, %rd2, 3;"),
    ("integer", "bfe.u32 %r1, %r2, 4, 8;"),
    ("integer", "bfi.b32 %r1, %r2, %r3, 4, 8;"),
    ("integer", "popc.b32 %r1, %r2;"),
    ("integer", "clz.b32 %r1, %r2;"),
    ("integer", "brev.b32 %r1, %r2;"),
    ("integer", "bfind.u32 %r1, %r2;"),
    ("integer", "fns.b32 %r1, %r2, %r3, %r4;"),
    ("integer", "prmt.b32 %r1, %r2, %r3, %r4;"),
    ("integer", "prmt.b32.f4e %r1, %r2, %r3, %r4;"),
    ("integer", "dp4a.u32.s32 %r1, %r2, %r3, %r4;"),
    ("integer", "dp2a.lo.s32.s32 %r1, %r2, %r3, %r4;"),
    ("integer", "mul24.lo.s32 %r1, %r2, %r3;"),
    ("integer", "sad.u32 %r1, %r2, %r3, %r4;"),
    ("integer", "lop3.b32 %r1, %r2, %r3, %r4, 0x96;"),
    ("integer", "shf.l.wrap.b32 %r1, %r2, %r3, %r4;"),
    ("integer", "shf.r.clamp.b32 %r1, %r2, %r3, 7;"),
    ("float", "add.rn.f32 %f1, %f2, %f3;"),
    ("float", "fma.rz.f32 %f1, %f2, %f3, %f4;"),
    ("float", "mul.rp.ftz.f32 %f1, %f2, %f3;"),
    ("float", "cvt.rz.f32.s32 %f1, %r2;"),
    ("float", "fma.rn.ftz.f32 %f1, %f2, %f3, %f4;"),
    ("float", "div.rn.f32 %f1, %f2, %f3;"),
    ("float", "div.approx.f32 %f1, %f2, %f3;"),
    ("float", "div.full.f32 %f1, %f2, %f3;"),
    ("float", "div.rn.f64 %fd1, %fd2, %fd3;"),
    ("float", "sqrt.rn.f32 %f1, %f2;"),
    ("float", "rcp.rn.f64 %fd1, %fd2;"),
    ("float", "min.f32 %f1, %f2, %f3;"),
    ("float", "abs.f32 %f1, %f2;"),
    ("float", "copysign.f32 %f1, %f2, %f3;"),
    ("float", "testp.finite.f32 %p1, %f2;"),
    ("float", "setp.ltu.f32 %p1, %f2, %f3;"),
    ("approx", "ex2.approx.ftz.f32 %f1, %f2;"),
    ("approx", "lg2.approx.f32 %f1, %f2;"),
    ("approx", "sin.approx.f32 %f1, %f2;"),
    ("approx", "cos.approx.ftz.f32 %f1, %f2;"),
    ("approx", "tanh.approx.f32 %f1, %f2;"),
    ("approx", "rsqrt.approx.f32 %f1, %f2;"),
    ("approx", "rcp.approx.ftz.f64 %fd1, %fd2;"),
    ("approx", "sqrt.approx.f32 %f1, %f2;"),
    ("half", "add.f16 %h1, %h2, %h3;"),
    ("half", "fma.rn.f16 %h1, %h2, %h3, %h4;"),
    ("half", "mul.rn.bf16 %h1, %h2, %h3;"),
    ("half", "add.f16x2 %r1, %r2, %r3;"),
    ("half", "neg.f16 %h1, %h2;"),
    ("half", "setp.lt.f16 %p1, %h2, %h3;"),
    ("half", "cvt.rn.f16.f32 %h1, %f2;"),
    ("half", "cvt.f32.f16 %f1, %h2;"),
    ("half", "cvt.rn.bf16.f32 %h1, %f2;"),
    ("half", "cvt.f32.bf16 %f1, %h2;"),
    ("half", "cvt.rn.f16x2.f32 %r1, %f2, %f3;"),
    ("convert", "cvt.rn.f32.s32 %f1, %r2;"),
    ("convert", "cvt.rzi.s32.f32 %r1, %f2;"),
    ("convert", "cvt.u64.u32 %rd1, %r2;"),
    ("convert", "cvta.to.global.u64 %rd1, %rd2;"),
    ("memory", "ld.global.nc.f32 %f1, [%rd1];"),
    ("memory", "ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];"),
    ("memory", "st.shared.f32 [sh+4], %f1;"),
    ("memory", "ld.f32 %f1, [%rd1];"),
    ("memory", "ld.global.u32 %r1, [g];"),
    ("memory", "ld.global.v2.b64 {%rd1, %rd2}, [%rd3];"),
    ("memory", "ld.global.b128 %rd1, [%rd3];"),
    ("atomic", "atom.global.add.u32 %r1, [%rd1], %r2;"),
    ("atomic", "atom.global.add.f32 %f1, [%rd1], %f2;"),
    ("atomic", "atom.global.cas.b32 %r1, [%rd1], %r2, %r3;"),
    ("atomic", "atom.global.exch.b64 %rd1, [%rd2], %rd3;"),
    ("atomic", "atom.shared.inc.u32 %r1, [sh], %r2;"),
    ("atomic", "atom.global.max.s64 %rd1, [%rd2], %rd3;"),
    ("atomic", "red.global.add.f32 [%rd1], %f1;"),
    ("atomic", "red.shared.or.b32 [sh], %r1;"),
    ("atomic", "atom.global.add.f64 %fd1, [%rd1], %fd2;"),
    ("atomic", "atom.global.add.noftz.f16 %h1, [%rd1], %h2;"),
    ("warp", "shfl.sync.up.b32 %r1|%p1, %r2, 1, 0, -1;"),
    ("warp", "shfl.sync.down.b32 %r1, %r2, 1, 31, -1;"),
    ("warp", "shfl.sync.bfly.b32 %r1, %r2, 16, 31, -1;"),
    ("warp", "shfl.sync.idx.b32 %r1, %r2, 0, 31, -1;"),
    ("warp", "vote.sync.ballot.b32 %r1, %p1, -1;"),
    ("warp", "vote.sync.all.pred %p1, %p2, -1;"),
    ("warp", "vote.sync.any.pred %p1, !%p2, -1;"),
    ("warp", "vote.sync.uni.pred %p1, %p2, -1;"),
    ("warp", "match.any.sync.b32 %r1, %r2, -1;"),
    ("warp", "match.all.sync.b64 %r1|%p1, %rd2, -1;"),
    ("warp", "activemask.b32 %r1;"),
    ("warp", "redux.sync.add.s32 %r1, %r2, -1;"),
    ("warp", "redux.sync.max.u32 %r1, %r2, -1;"),
    ("warp", "bar.warp.sync -1;"),
    ("barrier", "bar.sync 0;"),
    ("barrier", "barrier.sync.aligned 0;"),
    ("barrier", "bar.sync 1, 64;"),
    ("barrier", "bar.arrive 1, 64;"),
    ("barrier", "bar.red.popc.u32 %r1, 0, %p1;"),
    ("barrier", "bar.red.or.pred %p1, 0, %p2;"),
    ("control", "bra.uni $L_end;"),
    ("control", "@%p1 bra $L_end;"),
    ("control", "ret;"),
    ("control", "exit;"),
    ("control", "trap;"),
    ("control", "membar.cta;"),
    ("control", "fence.acq_rel.gpu;"),
    ("control", "nanosleep.u32 100;"),
    ("control", "brx.idx %r1, $L_targets;"),
    ("special", "mov.u32 %r1, %laneid;"),
    ("special", "mov.u32 %r1, %lanemask_lt;"),
    ("special", "mov.u64 %rd1, %clock64;"),
    ("special", "mov.u64 %rd1, %globaltimer;"),
    ("special", "mov.u32 %r1, %globaltimer_lo;"),
    ("special", "mov.u32 %r1, %dynamic_smem_size;"),
    ("special", "mov.u32 %r1, %cluster_ctarank;"),
    ("special", "mov.u32 %r1, %cluster_ctaid.x;"),
    ("special", "mov.u32 %r1, %cluster_nctaid.y;"),
    ("special", "mov.u32 %r1, %clusterid.x;"),
    ("special", "mov.u32 %r1, %is_explicit_cluster;"),
    ("async copy", "cp.async.ca.shared.global [sh], [%rd1], 4;"),
    ("async copy", "cp.async.cg.shared.global [%r1], [%rd1], 16, %r2;"),
    ("async copy", "cp.async.commit_group;"),
    ("async copy", "cp.async.wait_group 1;"),
    ("async copy", "cp.async.wait_all;"),
    ("async copy", "cp.async.mbarrier.arrive.noinc.shared.b64 [sh];"),
    (
        "async copy",
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], %r2, [%r3];",
    ),
    ("async copy", "cp.async.bulk.prefetch.L2.global [%rd1], %r2;"),
    (
        "async copy",
        "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2}], [%r3];",
    ),
    ("mbarrier", "mbarrier.init.shared.b64 [sh], %r1;"),
    ("mbarrier", "mbarrier.arrive.shared::cta.b64 %rd1, [%r1], 1;"),
    (
        "mbarrier",
        "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %rd1, [%r1], %r2;",
    ),
    (
        "mbarrier",
        "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r1];",
    ),
    ("mbarrier", "mbarrier.arrive_drop.shared.b64 %rd1, [sh];"),
    ("mbarrier", "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r1], %r2;"),
    ("mbarrier", "mbarrier.try_wait.shared::cta.b64 %p1, [%r1], %rd1;"),
    (
        "mbarrier",
        "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p1, [%r1], %r2;",
    ),
    ("mbarrier", "mbarrier.test_wait.parity.shared.b64 %p1, [sh], 0;"),
    ("mbarrier", "mbarrier.pending_count.b64 %r1, %rd1;"),
    ("mbarrier", "mbarrier.inval.shared.b64 [sh];"),
    ("cluster", "mapa.shared::cluster.u32 %r1, %r2, %r3;"),
    ("cluster", "mapa.u64 %rd1, %rd2, %r3;"),
    ("cluster", "ld.shared::cluster.f32 %f1, [%r1+4];"),
    ("cluster", "st.shared::cluster.u32 [%r1], %r2;"),
    ("cluster", "barrier.cluster.arrive;"),
    ("cluster", "barrier.cluster.arrive.release.aligned;"),
    ("cluster", "barrier.cluster.wait.acquire;"),
    ("cluster", "atom.shared::cluster.add.u32 %r1, [%r2], 1;"),
    ("texture", "tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [t, {%f5, %f6}];"),
];

/// Whether each sample decodes: (group, text, None when supported, Some(why) when not).
pub fn coverage() -> Vec<(&'static str, &'static str, Option<String>)> {
    SAMPLES
        .iter()
        .map(|&(group, text)| (group, text, decode_sample(text).err()))
        .collect()
}

fn decode_sample(text: &str) -> Result<(), String> {
    let ptx = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.global .align 4 .b32 g;\n\
         .visible .entry k()\n{{\n.reg .pred %p<4>;\n.reg .b16 %h<5>;\n.reg .b32 %r<5>;\n\
         .reg .b64 %rd<4>;\n.reg .f32 %f<7>;\n.reg .f64 %fd<4>;\n.shared .align 4 .b8 sh[64];\n\
         {text}\n$L_end:\nret;\n}}\n"
    );
    let module = parse_module(&ptx).map_err(|e| e.message)?;
    decode_entry(&module, "k").map(|_| ()).map_err(|e| e.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_learner_instruction_forms_decode() {
        let unsupported: Vec<_> = coverage()
            .into_iter()
            .filter(|(g, _, why)| why.is_some() && !matches!(*g, "texture"))
            .map(|(_, t, why)| format!("{t}: {}", why.unwrap()))
            .collect();
        // What is still missing is listed in docs/emulator.md; this pins the list.
        let expected_missing = [
            "ld.global.b128",
            "atom.global.add.noftz.f16",
            "brx.idx",
            "cp.async.bulk.tensor",
            "atom.shared::cluster",
        ];
        assert_eq!(unsupported.len(), expected_missing.len(), "{unsupported:#?}");
        for (line, want) in unsupported.iter().zip(expected_missing) {
            assert!(line.contains(want), "{line} should be about {want}");
        }
    }
}
