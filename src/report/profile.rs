//! Global-memory sectors over the profile run, per source line and in total, and the one
//! builder both backends fill (the emulator from its per-instruction counts, the GPU from
//! CUPTI's per-instruction records), so a line's sectors and lanes mean the same on both: a
//! line's instructions and lanes are its global memory instructions'. (The run's overall
//! average lanes differ in scope: the emulator averages every instruction it ran.)

use crate::compile::listing::{InstructionAt, InstructionSectors};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Sectors issued by the instructions of one source line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LineSectors {
    pub line: u32,
    pub sectors: u64,
    pub load_sectors: u64,
    pub store_sectors: u64,
    /// The fewest 32-byte sectors that could hold the bytes the active lanes asked for.
    pub ideal_sectors: u64,
    /// Warp-level global loads and stores executed on this line.
    pub global_instructions: u64,
    /// Warp-level global memory instructions executed on this line, and the sum of their
    /// active lanes: their ratio is the line's average active lanes per memory instruction
    /// (32 = every lane asked).
    pub warp_instructions: u64,
    pub active_lanes: u64,
}

impl LineSectors {
    pub fn ratio(&self) -> f64 {
        if self.ideal_sectors == 0 {
            0.0
        } else {
            self.sectors as f64 / self.ideal_sectors as f64
        }
    }
    pub fn average_active_lanes(&self) -> f64 {
        if self.warp_instructions == 0 {
            0.0
        } else {
            self.active_lanes as f64 / self.warp_instructions as f64
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SharedStats {
    /// Warp-level shared-memory instructions.
    pub requests: u64,
    /// Extra wavefronts caused by bank conflicts.
    pub bank_conflicts: u64,
}

/// Global-memory sectors over the profile run (the gate's metric).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SectorProfile {
    pub n: u32,
    /// Launches the figures stand for (the contract's count).
    pub launches: u32,
    /// Launches actually executed; fewer than `launches` when one was run and multiplied.
    pub launches_executed: u32,
    pub sectors: u64,
    pub load_sectors: u64,
    pub store_sectors: u64,
    pub ideal_sectors: u64,
    /// Per source line, summed over the launches.
    pub per_line: Vec<LineSectors>,
    pub shared: SharedStats,
    /// Average active lanes per executed warp instruction (32 = no divergence).
    pub average_active_lanes: f64,
    /// Where the figure came from, in words.
    pub source: String,
    /// Set on a GPU run whose sectors the emulator counted, and why: the GPU checked and
    /// timed the kernel, but this user may not read its counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_by_emulator_because: Option<String>,
    /// What the kernel printed during the profile launch(es).
    #[serde(default)]
    pub output: Option<super::KernelOutput>,
    /// Where ptxas changed the PTX's global memory instructions (the lines to mark), when
    /// the machine-code check ran.
    #[serde(default)]
    pub machine_code: Option<crate::compile::MachineCode>,
    /// Why the machine-code check did not run, when it did not.
    #[serde(default)]
    pub machine_code_unavailable: Option<String>,
    /// The measurement's own steps, where it ran in a process of its own (the GPU's
    /// profiler child): the pipeline moves them into the report's stages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<super::StageTime>,
    /// Sectors per memory instruction: per PTX instruction on the emulator (it runs the
    /// PTX), per SASS instruction on the GPU (CUPTI's records). The machine-code view.
    #[serde(default)]
    pub per_instruction: Vec<InstructionSectors>,
    /// The machine code the GPU ran when it is not the kernel's NVRTC cubin (a kernel that
    /// calls printf runs as PTX with its calls gated, compiled by the driver): the code
    /// `per_instruction`'s offsets refer to, for the PTX & SASS listing. Not in `--json`.
    #[serde(skip)]
    pub executed_cubin: Option<std::sync::Arc<Vec<u8>>>,
    /// Where the compiler merged, hoisted or removed accesses, said on the lines involved.
    #[serde(default)]
    pub moves: Option<super::moves::Moves>,
    /// Why there is no such explanation, when there is none.
    #[serde(default)]
    pub moves_unavailable: Option<String>,
    /// Global memory the kernel read by bulk copy, which `sectors` leaves out (the metric
    /// does); None when it made none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bulk_copies: Option<BulkCopies>,
}

/// Bytes Hopper's bulk copies (`cp.async.bulk`, the Tensor Memory Accelerator) moved from
/// global memory over the profile run. The sector metric does not count them: its sectors
/// are those of the SASS load and store instructions threads issue, and a bulk copy is done
/// by the copy engine (measured on the H100, 2026-12-07: a kernel moving 8,192 sectors by bulk
/// copy and storing 2,048 showed 2,048; docs/archive/measurements-log.md).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BulkCopies {
    pub bytes: u64,
    /// The distinct 32-byte sectors of global memory they read.
    pub sectors: u64,
    /// (source line, bytes, sectors).
    pub per_line: Vec<(u32, u64, u64)>,
    /// The sectors came from the GPU and these from the emulator, which ran the same kernel
    /// once at the profile size for them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub counted_by_emulator: bool,
}

impl BulkCopies {
    /// The sentence the run panel and the CLI show under the total.
    pub fn note(&self) -> String {
        format!(
            "not in the figure: {} sectors ({} bytes) moved by bulk copies (cp.async.bulk{}); \
             smsp__sass_sectors_mem_global counts only the loads and stores threads issue",
            crate::report::thousands(self.sectors),
            crate::report::thousands(self.bytes),
            if self.counted_by_emulator {
                ", counted on the emulator"
            } else {
                ""
            }
        )
    }
}

/// One source line's global memory instructions, as a backend counted them.
#[derive(Debug, Clone, Copy, Default)]
pub struct GlobalAccess {
    pub line: u32,
    pub store: bool,
    pub sectors: u64,
    pub ideal_sectors: u64,
    /// Warp-level global instructions executed.
    pub instructions: u64,
    /// Which instruction, when the backend knows (for the per-instruction figures).
    pub at: Option<InstructionAt>,
}

/// Sums counts per line into a `SectorProfile`.
pub struct ProfileBuilder {
    profile: SectorProfile,
    lines: BTreeMap<u32, LineSectors>,
    instructions: BTreeMap<InstructionAt, InstructionSectors>,
}

impl ProfileBuilder {
    pub fn new(n: u32, launches: u32, launches_executed: u32) -> ProfileBuilder {
        ProfileBuilder {
            profile: SectorProfile {
                n,
                launches,
                launches_executed,
                ..SectorProfile::default()
            },
            lines: BTreeMap::new(),
            instructions: BTreeMap::new(),
        }
    }

    fn line(&mut self, line: u32) -> &mut LineSectors {
        self.lines.entry(line).or_insert_with(|| LineSectors {
            line,
            ..LineSectors::default()
        })
    }

    /// Warp-level instructions on `line` and the sum of their active lanes (the emulator
    /// passes every instruction, the GPU its global memory instructions).
    pub fn add_instructions(&mut self, line: u32, warp_instructions: u64, active_lanes: u64) {
        let l = self.line(line);
        l.warp_instructions += warp_instructions;
        l.active_lanes += active_lanes;
    }

    pub fn add_global(&mut self, access: GlobalAccess) {
        if let Some(at) = access.at {
            let i = self.instructions.entry(at).or_insert(InstructionSectors {
                at,
                line: access.line,
                store: access.store,
                sectors: 0,
                instructions: 0,
            });
            i.sectors += access.sectors;
            i.instructions += access.instructions;
        }
        let l = self.line(access.line);
        l.sectors += access.sectors;
        l.ideal_sectors += access.ideal_sectors;
        l.global_instructions += access.instructions;
        if access.store {
            l.store_sectors += access.sectors;
            self.profile.store_sectors += access.sectors;
        } else {
            l.load_sectors += access.sectors;
            self.profile.load_sectors += access.sectors;
        }
        self.profile.sectors += access.sectors;
        self.profile.ideal_sectors += access.ideal_sectors;
    }

    /// The profile with the lines `keep` accepts; `average_active_lanes` is `Some` when the
    /// backend counted every instruction, `None` to average over the lines' instructions.
    pub fn finish(self, average_active_lanes: Option<f64>, keep: impl Fn(&LineSectors) -> bool) -> SectorProfile {
        let mut profile = self.profile;
        let (instructions, lanes) = self
            .lines
            .values()
            .fold((0, 0), |(i, l), x| (i + x.warp_instructions, l + x.active_lanes));
        profile.average_active_lanes = average_active_lanes.unwrap_or(if instructions == 0 {
            0.0
        } else {
            lanes as f64 / instructions as f64
        });
        profile.per_line = self.lines.into_values().filter(|l| keep(l)).collect();
        profile.per_instruction = self.instructions.into_values().collect();
        profile
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_totals_add_up() {
        let mut b = ProfileBuilder::new(33, 100, 1);
        b.add_instructions(7, 10, 320);
        b.add_global(GlobalAccess {
            line: 7,
            store: false,
            sectors: 40,
            ideal_sectors: 32,
            instructions: 10,
            at: None,
        });
        b.add_global(GlobalAccess {
            line: 9,
            store: true,
            sectors: 8,
            ideal_sectors: 8,
            instructions: 2,
            at: None,
        });
        b.add_instructions(9, 2, 64);
        let p = b.finish(None, |_| true);
        assert_eq!(
            (p.sectors, p.load_sectors, p.store_sectors, p.ideal_sectors),
            (48, 40, 8, 40)
        );
        assert_eq!(p.per_line.len(), 2);
        assert_eq!(p.per_line[0].load_sectors, 40);
        assert_eq!(p.per_line[1].store_sectors, 8);
        assert_eq!(p.average_active_lanes, 32.0);
    }
}
