//! What the parent and the GPU worker processes say to each other: one JSON object per
//! line on the child's stdin and stdout (the worker's fd 1 is redirected to capture device
//! `printf`; its replies go to a duplicate of the original stdout).

use crate::backend::{KernelFault, KernelOutput, SizeRun};
use crate::lesson::Contract;
use crate::report::Timing;
use base64::Engine;
use serde::{Deserialize, Serialize};

/// Machine code as it travels in the protocol's JSON: base64.
pub fn machine_code_text(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The bytes of `machine_code_text`'s text (none when there is none, or it is not base64).
fn machine_code_bytes(text: Option<&str>) -> Option<Vec<u8>> {
    text.and_then(|t| base64::engine::general_purpose::STANDARD.decode(t).ok())
}

/// A compiled kernel as it travels to a worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KernelImage {
    pub entry: String,
    /// Machine code for the device (base64), when NVRTC produced it.
    pub cubin_base64: Option<String>,
    /// PTX, loaded only when there is no cubin.
    pub ptx: String,
    /// The PTX's printf calls are gated per block (`printf_gate`): the worker sets the gate
    /// before every launch.
    #[serde(default)]
    pub printf_gated: bool,
}

impl KernelImage {
    pub fn new(entry: &str, cubin: Option<&[u8]>, ptx: &str) -> KernelImage {
        KernelImage {
            entry: entry.to_string(),
            cubin_base64: cubin.map(machine_code_text),
            ptx: ptx.to_string(),
            printf_gated: false,
        }
    }

    /// A kernel that calls printf travels as PTX with its calls gated (the driver compiles
    /// it); any other as NVRTC made it.
    pub fn for_gpu(entry: &str, cubin: Option<&[u8]>, ptx: &str) -> KernelImage {
        match super::printf_gate::gate_printf(ptx) {
            Some(gated) => KernelImage {
                printf_gated: true,
                ..KernelImage::new(entry, None, &gated)
            },
            None => KernelImage::new(entry, cubin, ptx),
        }
    }

    pub fn cubin(&self) -> Option<Vec<u8>> {
        machine_code_bytes(self.cubin_base64.as_deref())
    }

    /// Identifies the code, so a worker can keep a loaded module between requests.
    pub fn key(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.entry.hash(&mut h);
        self.cubin_base64.hash(&mut h);
        self.ptx.hash(&mut h);
        h.finish()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    Hello,
    Verify {
        contract: Box<Contract>,
        kernel: KernelImage,
        n: u32,
        seed: u64,
    },
    Time {
        contract: Box<Contract>,
        kernel: KernelImage,
        launches: u32,
    },
    /// Only for the one-shot profiler child.
    Profile {
        contract: Box<Contract>,
        kernel: KernelImage,
        n: u32,
        launches: u32,
        /// The input's seed (the verification seed of the profile size).
        seed: u64,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DeviceInfo {
    /// The CUDA ordinal the worker opened (`crate::machine`'s choice or `--device`).
    pub index: usize,
    pub name: String,
    /// The driver stops long kernels on it: it drives a display.
    pub watchdog: bool,
    pub compute_capability: (i32, i32),
    pub driver_version: String,
    pub memory_bytes: u64,
    /// Device-to-device copy bandwidth measured when the worker started (bytes read + written).
    pub copy_gbps: f64,
}

/// One SASS instruction's counters over the profiled launches.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct PcRecord {
    pub pc_offset: u32,
    pub line: u32,
    pub file: String,
    pub sectors: u64,
    /// Warp-level global loads / stores executed.
    pub global_loads: u64,
    pub global_stores: u64,
    pub ideal_sectors: u64,
    /// Lanes that executed this instruction with their predicate on.
    pub active_lanes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GpuProfile {
    /// The profile run's launches: the records are scaled to these.
    pub launches: u32,
    /// Of which were measured under CUPTI (see `cupti::measured_launches`); the records
    /// hold their sums.
    pub measured_launches: u32,
    pub records: Vec<PcRecord>,
    /// Where the figures came from, in words.
    pub source: String,
    pub millis: f64,
    /// Each step of the profile and its milliseconds (module, inputs, CUPTI setup, ...).
    #[serde(default)]
    pub phases: Vec<(String, f64)>,
    /// What the kernel printed during the profiled launches.
    #[serde(default)]
    pub output: Option<KernelOutput>,
    /// The cubin the driver made of the kernel's printf-gated PTX (jit.rs), when that is what
    /// ran: the records' SASS offsets are this code's, not NVRTC's cubin's.
    #[serde(default)]
    pub jit_cubin_base64: Option<String>,
}

impl GpuProfile {
    pub fn jit_cubin(&self) -> Option<Vec<u8>> {
        machine_code_bytes(self.jit_cubin_base64.as_deref())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Response {
    Hello {
        device: Option<DeviceInfo>,
        problem: Option<String>,
    },
    Verified {
        run: SizeRun,
        millis: f64,
    },
    Timed {
        timing: Timing,
    },
    Profiled {
        profile: GpuProfile,
    },
    Fault {
        fault: KernelFault,
    },
}
