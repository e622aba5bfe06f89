//! What device-side library calls do on the emulator: `printf` (vprintf) appends the
//! formatted text to the launch's output in thread order, `assert` failing and `trap` stop
//! the launch as a crash does on the GPU, and calls the emulator cannot run stop it with
//! the function's name.

use super::block::BlockRunner;
use super::block_memory::{Resolved, resolve};
use super::fault::{EmuFault, EmuFaultKind};
use super::ir::*;
use super::memory::GlobalMemory;
use super::printf::{ArgSource, format};
use super::warp::Warp;

/// A format string or `%s` argument longer than this is cut.
const MAX_STRING: usize = 4096;

/// One lane's view of memory for printf's arguments: its local memory or global memory.
struct LaneArgs<'a> {
    base: u64,
    local: &'a [u8],
    mem: &'a GlobalMemory,
}

impl ArgSource for LaneArgs<'_> {
    fn read(&self, offset: u64, bytes: u32) -> Option<u64> {
        let at = self.base.checked_add(offset)?;
        match resolve(MemSpace::Generic, at) {
            Resolved::Local(o) => {
                let o = o as usize;
                let mut v = [0u8; 8];
                v[..bytes as usize].copy_from_slice(self.local.get(o..o + bytes as usize)?);
                Some(u64::from_le_bytes(v))
            }
            Resolved::Global => {
                let buffer = self.mem.find(at, bytes).ok()?;
                Some(self.mem.load(buffer, at, bytes))
            }
            Resolved::Shared(_) | Resolved::Peer { .. } => None,
        }
    }

    fn string(&self, address: u64) -> Option<String> {
        self.mem.read_c_string(address, MAX_STRING)
    }
}

impl BlockRunner<'_> {
    // Out of line: keeps the hot ALU dispatch in `execute` small (its stack frame, too).
    #[inline(never)]
    pub(super) fn device_call(&mut self, warp: &mut Warp, pc: usize, call: CallKind, m: u32) -> Result<(), EmuFault> {
        match call {
            CallKind::Printf { format: f, args, ret } => {
                let (f, args) = (self.read(warp, f), self.read(warp, args));
                let local_bytes = self.prog.local_bytes as usize;
                let mut used = [0u64; 32];
                for l in 0..32usize {
                    if (m >> l) & 1 == 0 {
                        continue;
                    }
                    let Some(fmt) = self.mem.read_c_string(f[l], MAX_STRING) else {
                        return Err(self.fault(
                            EmuFaultKind::Trap {
                                message: format!("printf with a format string at {:#x}, outside global memory", f[l]),
                            },
                            Some(pc as u32),
                            Some((warp, l as u32)),
                        ));
                    };
                    let source = LaneArgs {
                        base: args[l],
                        local: &warp.local[l * local_bytes..(l + 1) * local_bytes],
                        mem: self.mem,
                    };
                    let (text, count) = format(&fmt, &source);
                    used[l] = count as u64;
                    self.stats.printed.push(self.block_index, text);
                }
                if let Some(r) = ret {
                    warp.write_lanes(r, m, |l| used[l]);
                }
                Ok(())
            }
            CallKind::AssertFail { message, file, line } => {
                let l = m.trailing_zeros() as usize;
                let (message, file, line) = (self.read(warp, message), self.read(warp, file), self.read(warp, line));
                let text = self.mem.read_c_string(message[l], MAX_STRING).unwrap_or_default();
                let file = self.mem.read_c_string(file[l], MAX_STRING).unwrap_or_default();
                Err(self.fault(
                    EmuFaultKind::Trap {
                        message: format!(
                            "assertion `{text}` failed ({}:{})",
                            file.rsplit('/').next().unwrap_or(&file),
                            line[l] as u32
                        ),
                    },
                    Some(pc as u32),
                    Some((warp, l as u32)),
                ))
            }
            CallKind::Trap { what, unsupported } => {
                let kind = if unsupported {
                    EmuFaultKind::Unsupported { what }
                } else {
                    EmuFaultKind::Trap {
                        message: format!("the kernel executed {what}"),
                    }
                };
                Err(self.fault(kind, Some(pc as u32), Some((warp, m.trailing_zeros()))))
            }
        }
    }
}
