//! Source to PTX/cubin: finding NVRTC, compiling with line info, and turning the log into
//! diagnostics. The lesson contract's signature is checked here too, by NVRTC itself.

mod contract_probe;
mod diagnostics;
pub mod machine_code;
mod nvrtc;
mod rustc;

pub use contract_probe::PROBE_FILE;
pub use diagnostics::{Diagnostic, Severity, parse_nvrtc_log};
pub use machine_code::{MachineCode, MachineCodeLine, REFERENCE_SM};
pub use nvrtc::{CompileFailure, CompiledKernel, Language, Target, compile_kernel, nvrtc_version};
pub use rustc::{PRELUDE, parse_rustc_json, rust_signature, rust_toolchain};
