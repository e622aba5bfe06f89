//! Source to PTX/cubin: CUDA C++ with NVRTC (nvrtc.rs), Rust with rustc (rustc.rs), each
//! checked against the lesson's contract (contract_probe.rs, entry_check.rs); what ptxas does
//! to the PTX (machine_code.rs). The types both compilers produce live here, so the two
//! compilers depend on this module and never on each other.

mod contract_probe;
mod diagnostics;
mod entry_check;
mod include_guard;
pub mod listing;
pub mod machine_code;
mod nvrtc;
mod nvrtc_api;
mod request;
mod rustc;

pub use contract_probe::PROBE_FILE;
pub use diagnostics::{Diagnostic, Severity, parse_nvrtc_log};
pub use machine_code::{MachineCode, MachineCodeLine, REFERENCE_SM, kernel_file};
pub use nvrtc::nvrtc_version;
pub use request::RunRequest;
pub use rustc::{PRELUDE, parse_rustc_json, rust_signature, rust_toolchain};

use crate::cudalibs::LibLocation;
use crate::lesson::{Language, Lesson};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What to ask NVRTC for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// Virtual-architecture PTX (`compute_XX`): what the emulator executes.
    Ptx { compute: u32 },
    /// Machine code for a real GPU (`sm_XX`), plus its PTX.
    Cubin { sm: u32 },
    /// PTX with optimisation off (`-G`): every read and write the source makes, in source
    /// order, each under its own line. Never run for figures; `moves` compares what the
    /// optimised kernel touches with it to say where the compiler merged or moved an access.
    Unoptimised { compute: u32 },
}

impl Target {
    /// For the emulator: machine code for sm_90, the Hopper generation the lessons are
    /// measured on. The emulator runs the PTX (the same text as for compute_90); the cubin
    /// is what the machine-code check compares it with (`machine_code`).
    pub const EMULATOR: Target = Target::Cubin {
        sm: machine_code::REFERENCE_SM,
    };

    fn arch_option(self) -> String {
        match self {
            Target::Ptx { compute } => format!("--gpu-architecture=compute_{compute}"),
            Target::Cubin { sm } => format!("--gpu-architecture=sm_{sm}"),
            Target::Unoptimised { compute } => format!("--gpu-architecture=compute_{compute}"),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompiledKernel {
    pub ptx: String,
    #[serde(skip)]
    pub cubin: Option<Vec<u8>>,
    pub target: Target,
    /// The PTX entry to launch (the contract's `entry`).
    pub entry: String,
    /// Warnings and notes; a successful compile has no errors.
    pub diagnostics: Vec<Diagnostic>,
    /// Which compiler made it (`NVRTC` or `rustc`), its version, and the file that ran.
    pub compiler: String,
    pub compiler_version: String,
    pub compiler_location: LibLocation,
    pub millis: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CompileFailure {
    /// The compiler (NVRTC, or rustc for Rust kernels) could not be found or opened: `help`
    /// says how to install it.
    CompilerUnavailable { help: String },
    /// The learner's code does not compile.
    Errors { diagnostics: Vec<Diagnostic>, log: String },
    /// The code compiles but does not match the lesson's contract.
    Contract {
        message: String,
        diagnostics: Vec<Diagnostic>,
    },
    /// The compiler itself failed (not the learner's fault).
    Internal { message: String },
}

impl CompileFailure {
    pub fn headline(&self) -> String {
        match self {
            CompileFailure::CompilerUnavailable { help } => help.clone(),
            CompileFailure::Errors { diagnostics, .. } => {
                let errors: Vec<String> = diagnostics
                    .iter()
                    .filter(|d| d.severity == Severity::Error)
                    .map(|d| d.to_string())
                    .collect();
                format!("compile error ({}):\n  {}", errors.len(), errors.join("\n  "))
            }
            CompileFailure::Contract { message, .. } => format!("contract: {message}"),
            CompileFailure::Internal { message } => format!("the compiler failed: {message}"),
        }
    }
}

/// The kernel's unoptimised build (NVRTC `-G`): every access the source makes is kept, in
/// source order. The compiler view's `moves` and the `unexecuted` check both start from it.
/// CUDA only: rustc has no `-G` (its debug build is another program, not this one with
/// every access kept).
pub fn compile_unoptimised(
    source: &str,
    source_name: &str,
    lesson: &Lesson,
    nvrtc_path: Option<&Path>,
) -> Result<CompiledKernel, String> {
    if Language::of(source_name) == Language::Rust {
        return Err("not worked out for Rust kernels yet".into());
    }
    compile_kernel(
        source,
        source_name,
        lesson,
        Target::Unoptimised { compute: 90 },
        nvrtc_path,
    )
    .map_err(|f| format!("the unoptimised compile failed: {}", f.headline()))
}

/// Compiles `source` (shown to the learner as `source_name`) for `lesson` and checks the
/// signature and entry point against its contract: CUDA C++ with NVRTC, Rust (`.rs`) with
/// rustc.
pub fn compile_kernel(
    source: &str,
    source_name: &str,
    lesson: &Lesson,
    target: Target,
    nvrtc_path: Option<&Path>,
) -> Result<CompiledKernel, CompileFailure> {
    match Language::of(source_name) {
        Language::Rust => rustc::compile_rust(source, source_name, lesson, target),
        Language::Cuda => {
            include_guard::check_includes(source, source_name)?;
            nvrtc::compile_cuda(source, source_name, lesson, target, nvrtc_path)
        }
    }
}
