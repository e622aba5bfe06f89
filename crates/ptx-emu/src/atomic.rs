//! `atom` and `red`: atomic read-modify-writes on global and shared memory.
//!
//! Order between lanes: within one warp instruction the active lanes apply their operation
//! one after another in ascending lane order (lane 0 first), each seeing the result of the
//! lanes before it; warps of a block run in the emulator's schedule (warp 0 first, each until
//! it waits at a barrier); blocks run concurrently on the host threads, so the order between
//! blocks is unspecified, as on the GPU (`HALOSCOPE_EMU_THREADS=1` runs blocks in order).
//! Sectors of global atomics are counted like those of a store: the distinct 32-byte sectors
//! the instruction's active lanes touch.

use super::block::BlockRunner;
use super::block_memory::{Resolved, distinct_sectors, resolve};
use super::fault::{EmuFault, EmuFaultKind};
use super::ir::*;
use super::warp::Warp;

/// `op` applied to the old value `old` with operands `b` (and `c` for cas).
pub fn apply(op: AtomOp, ty: AtomTy, old: u64, b: u64, c: u64) -> u64 {
    let bits = ty.bytes() * 8;
    let m = super::alu::mask(bits as u8);
    let (old, b, c) = (old & m, b & m, c & m);
    let signed = matches!(ty, AtomTy::S32 | AtomTy::S64);
    let sx = |v: u64| super::alu::sext(v, bits as u8);
    let r = match (op, ty) {
        (AtomOp::Add, AtomTy::F32) => {
            // atom.add.f32 rounds to nearest even and flushes subnormals to zero.
            let sum = super::alu::ftz32(
                super::alu::ftz32(f32::from_bits(old as u32)) + super::alu::ftz32(f32::from_bits(b as u32)),
            );
            super::alu::f32_bits(sum)
        }
        (AtomOp::Add, AtomTy::F64) => (f64::from_bits(old) + f64::from_bits(b)).to_bits(),
        (AtomOp::Add, _) => old.wrapping_add(b),
        (AtomOp::Min, _) if signed => sx(old).min(sx(b)) as u64,
        (AtomOp::Max, _) if signed => sx(old).max(sx(b)) as u64,
        (AtomOp::Min, _) => old.min(b),
        (AtomOp::Max, _) => old.max(b),
        (AtomOp::Inc, _) => {
            if old >= b {
                0
            } else {
                old + 1
            }
        }
        (AtomOp::Dec, _) => {
            if old == 0 || old > b {
                b
            } else {
                old - 1
            }
        }
        (AtomOp::And, _) => old & b,
        (AtomOp::Or, _) => old | b,
        (AtomOp::Xor, _) => old ^ b,
        (AtomOp::Exch, _) => b,
        (AtomOp::Cas, _) => {
            if old == b {
                c
            } else {
                old
            }
        }
    };
    r & m
}

impl BlockRunner<'_> {
    // Out of line: keeps the hot ALU dispatch in `execute` small (its stack frame, too).
    #[inline(never)]
    pub(super) fn atomic(&mut self, warp: &mut Warp, pc: usize, atomic: Atomic, m: u32) -> Result<(), EmuFault> {
        let Atomic {
            space,
            op,
            ty,
            d,
            addr,
            b,
            c,
        } = atomic;
        let addrs = self.addresses(warp, addr);
        let b = self.read(warp, b);
        let c = c.map(|c| self.read(warp, c)).unwrap_or([0; 32]);
        let bytes = ty.bytes();
        let mut old = [0u64; 32];
        let mut sectors = [0u64; 32];
        let mut global_lanes = 0usize;
        for l in 0..32usize {
            if (m >> l) & 1 == 0 {
                continue;
            }
            let address = addrs[l];
            match self.own_or_peer(resolve(space, address)) {
                Resolved::Global => {
                    let buffer = self.global_buffer(address, bytes, true, pc, warp, l)?;
                    if self.mem.track_races {
                        let atomic = super::global_races::Access::Atomic;
                        self.note_global_race(warp, l, pc, buffer, address, bytes, atomic);
                    }
                    old[l] = self
                        .mem
                        .read_modify_write(buffer, address, bytes, |v| apply(op, ty, v, b[l], c[l]));
                    sectors[global_lanes] = address >> 5;
                    global_lanes += 1;
                }
                Resolved::Shared(offset) => {
                    let size = self.shared.size();
                    if offset + bytes as u64 > size {
                        return Err(self.window_fault("shared", offset, bytes as u64, size, true, pc, warp, l));
                    }
                    if !super::memory::aligned(offset, bytes) {
                        return Err(self.misaligned("shared", offset, bytes, true, pc, warp, l));
                    }
                    old[l] = self.shared.load(offset, bytes);
                    self.shared.store(offset, bytes, apply(op, ty, old[l], b[l], c[l]));
                    if let Some(h) = self.shared.note_atomic(offset, bytes, Self::accessor(warp, l, pc)) {
                        self.note_hazard(warp, l, pc, h);
                    }
                }
                Resolved::Peer { .. } => {
                    return Err(self.fault(
                        EmuFaultKind::Unsupported {
                            what: "an atomic on another block's shared memory (distributed shared memory)".into(),
                        },
                        Some(pc as u32),
                        Some((warp, l as u32)),
                    ));
                }
                Resolved::Local(_) => {
                    return Err(self.fault(
                        EmuFaultKind::Unsupported {
                            what: "an atomic on local memory (a generic address of a local variable)".into(),
                        },
                        Some(pc as u32),
                        Some((warp, l as u32)),
                    ));
                }
            }
        }
        if global_lanes > 0 {
            let s = &mut self.stats.per_pc[pc];
            s.global_warp_insts += 1;
            s.global_lanes += global_lanes as u64;
            s.sectors += distinct_sectors(&mut sectors[..global_lanes]);
            s.ideal_sectors += (global_lanes as u64 * bytes as u64).div_ceil(32);
        }
        if let Some(d) = d {
            warp.write_lanes(d, m, |l| old[l]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_atomics_follow_the_isa() {
        assert_eq!(apply(AtomOp::Inc, AtomTy::U32, 5, 5, 0), 0);
        assert_eq!(apply(AtomOp::Inc, AtomTy::U32, 4, 5, 0), 5);
        assert_eq!(apply(AtomOp::Dec, AtomTy::U32, 0, 7, 0), 7);
        assert_eq!(apply(AtomOp::Dec, AtomTy::U32, 9, 7, 0), 7);
        assert_eq!(apply(AtomOp::Dec, AtomTy::U32, 3, 7, 0), 2);
        assert_eq!(
            apply(AtomOp::Min, AtomTy::S32, (-3i32) as u32 as u64, 2, 0),
            (-3i32) as u32 as u64
        );
        assert_eq!(apply(AtomOp::Min, AtomTy::U32, (-3i32) as u32 as u64, 2, 0), 2);
        assert_eq!(apply(AtomOp::Cas, AtomTy::B32, 1, 1, 9), 9);
        assert_eq!(apply(AtomOp::Cas, AtomTy::B32, 2, 1, 9), 2);
        assert_eq!(apply(AtomOp::Add, AtomTy::U32, 0xFFFF_FFFF, 1, 0), 0);
        assert_eq!(apply(AtomOp::Add, AtomTy::U64, 0xFFFF_FFFF, 1, 0), 0x1_0000_0000);
    }

    #[test]
    fn float_add_flushes_subnormals() {
        let tiny = f32::from_bits(1).to_bits() as u64;
        assert_eq!(apply(AtomOp::Add, AtomTy::F32, 0, tiny, 0), 0);
        let r = apply(
            AtomOp::Add,
            AtomTy::F32,
            1.5f32.to_bits() as u64,
            2.25f32.to_bits() as u64,
            0,
        );
        assert_eq!(f32::from_bits(r as u32), 3.75);
    }
}
