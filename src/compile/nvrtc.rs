//! Compiling the learner's kernel with NVRTC (through cudarc) into PTX or a cubin.

use super::contract_probe::{PROBE_FILE, probe_source};
use super::diagnostics::{Diagnostic, Severity, parse_nvrtc_log};
use crate::cudalibs::{CUDA_INCLUDE_ENV, CudaHeaders, CudaLib, LibLocation, cuda_headers, ensure_loaded};
use crate::lesson::Lesson;
use crate::ptx::entries::entry_signatures;
use cudarc::nvrtc::{result, sys};
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::path::Path;

/// What to ask NVRTC for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// Virtual-architecture PTX (`compute_XX`): what the emulator executes.
    Ptx { compute: u32 },
    /// Machine code for a real GPU (`sm_XX`), plus its PTX.
    Cubin { sm: u32 },
}

impl Target {
    /// For the emulator: machine code for sm_90, the Hopper generation the lessons are
    /// measured on. The emulator runs the PTX (the same text as for compute_90); the cubin
    /// is what the machine-code check compares it with (`machine_code`).
    pub const EMULATOR: Target = Target::Cubin {
        sm: super::machine_code::REFERENCE_SM,
    };

    fn arch_option(self) -> String {
        match self {
            Target::Ptx { compute } => format!("--gpu-architecture=compute_{compute}"),
            Target::Cubin { sm } => format!("--gpu-architecture=sm_{sm}"),
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
    pub nvrtc_version: String,
    pub nvrtc: LibLocation,
    pub millis: f64,
    /// What ptxas did to the global memory instructions (`machine_code::check`), once the
    /// pipeline has it: `Err` says why the check could not run.
    #[serde(skip)]
    pub machine_code: Option<Result<super::machine_code::MachineCode, String>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CompileFailure {
    /// NVRTC could not be found or opened: `help` says how to install it.
    CompilerUnavailable { help: String },
    /// The learner's code does not compile.
    Errors { diagnostics: Vec<Diagnostic>, log: String },
    /// The code compiles but does not match the lesson's contract.
    Contract {
        message: String,
        diagnostics: Vec<Diagnostic>,
    },
    /// NVRTC itself failed (not the learner's fault).
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
            CompileFailure::Internal { message } => format!("NVRTC failed: {message}"),
        }
    }
}

/// The language a kernel is written in, from its file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Cuda,
    Rust,
}

impl Language {
    pub fn of(source_name: &str) -> Language {
        if source_name.ends_with(".rs") {
            Language::Rust
        } else {
            Language::Cuda
        }
    }
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
        Language::Rust => super::rustc::compile_rust(source, source_name, lesson, target),
        Language::Cuda => compile_cuda(source, source_name, lesson, target, nvrtc_path),
    }
}

fn compile_cuda(
    source: &str,
    source_name: &str,
    lesson: &Lesson,
    target: Target,
    nvrtc_path: Option<&Path>,
) -> Result<CompiledKernel, CompileFailure> {
    let started = std::time::Instant::now();
    let nvrtc =
        ensure_loaded(CudaLib::Nvrtc, nvrtc_path).map_err(|help| CompileFailure::CompilerUnavailable { help })?;
    let headers = nvrtc_version_numbers().and_then(|version| cuda_headers(&nvrtc, version));
    // The learner's text comes first and unchanged, so NVRTC's line numbers are theirs; the
    // probe after it has a `#line` of its own.
    let full_source = format!("{source}\n{}", probe_source(lesson));
    let output = run_nvrtc(&full_source, source_name, target, headers.as_ref())
        .map_err(|message| CompileFailure::Internal { message })?;
    let mut diagnostics = parse_nvrtc_log(&output.log);
    explain_missing_headers(&mut diagnostics, headers.as_ref());
    let has_error = |in_probe: bool| {
        diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error && (d.file == PROBE_FILE) == in_probe)
    };
    if has_error(false) || (output.ptx.is_none() && !has_error(true)) {
        let learner: Vec<Diagnostic> = diagnostics.iter().filter(|d| d.file != PROBE_FILE).cloned().collect();
        return Err(CompileFailure::Errors {
            diagnostics: learner,
            log: output.log,
        });
    }
    if has_error(true) {
        return Err(CompileFailure::Contract {
            message: contract_message(lesson, &diagnostics),
            diagnostics: Vec::new(),
        });
    }
    let ptx = output.ptx.unwrap_or_default();
    check_entry(lesson, &ptx)?;
    Ok(CompiledKernel {
        ptx,
        cubin: output.cubin,
        target,
        entry: lesson.entry.clone(),
        diagnostics: diagnostics.into_iter().filter(|d| d.file != PROBE_FILE).collect(),
        nvrtc_version: output.version,
        nvrtc,
        millis: started.elapsed().as_secs_f64() * 1e3,
        machine_code: None,
    })
}

fn contract_message(lesson: &Lesson, diagnostics: &[Diagnostic]) -> String {
    let probe: Vec<&Diagnostic> = diagnostics.iter().filter(|d| d.file == PROBE_FILE).collect();
    let undefined = probe
        .iter()
        .any(|d| d.message.contains("undefined") || d.message.contains("not declared"));
    if undefined {
        format!(
            "no function named `{}`: the lesson launches `extern \"C\" __global__ void {}`",
            lesson.entry,
            lesson.signature()
        )
    } else if probe
        .iter()
        .any(|d| d.message.contains("overloaded") || d.message.contains("more than one"))
    {
        format!(
            "`{}` is overloaded; keep one kernel with the signature {}",
            lesson.entry,
            lesson.signature()
        )
    } else {
        format!(
            "the kernel's signature does not match the lesson: expected void {}",
            lesson.signature()
        )
    }
}

/// The entry must be a `.entry` in the PTX under its plain name, with parameters of the
/// sizes the harness passes.
pub(super) fn check_entry(lesson: &Lesson, ptx: &str) -> Result<(), CompileFailure> {
    let entries = entry_signatures(ptx);
    let contract = |message: String| CompileFailure::Contract {
        message,
        diagnostics: Vec::new(),
    };
    let Some(entry) = entries.iter().find(|e| e.name == lesson.entry) else {
        let mangled = entries
            .iter()
            .any(|e| e.name.starts_with("_Z") && e.name.contains(&lesson.entry));
        return Err(contract(if mangled {
            format!(
                "`{}` has C++ linkage; declare it `extern \"C\" __global__` so the harness can find it",
                lesson.entry
            )
        } else {
            format!(
                "`{}` is not a __global__ kernel in the compiled module; declare it `extern \"C\" __global__`",
                lesson.entry
            )
        }));
    };
    let sizes: Vec<u32> = entry
        .param_types
        .iter()
        .map(|t| t[1..].parse::<u32>().unwrap_or(0) / 8)
        .collect();
    let expected: Vec<u32> = lesson.params.iter().map(|p| p.kind.param_bytes()).collect();
    if sizes != expected {
        return Err(contract(format!(
            "`{}` takes parameters of {:?} bytes, the lesson passes {:?}: expected void {}",
            lesson.entry,
            sizes,
            expected,
            lesson.signature()
        )));
    }
    Ok(())
}

/// Headers haloscope hands NVRTC in memory (the files are in include/): the C and C++
/// library names kernels often start with, which NVRTC has no files for. In-memory headers
/// take precedence over `-I` directories, so these names always resolve here, and only these.
const SHIMS: [(&str, &str); 4] = [
    ("cstdio", include_str!("../../include/cstdio")),
    ("stdio.h", include_str!("../../include/stdio.h")),
    ("cstdint", include_str!("../../include/cstdint")),
    ("stdint.h", include_str!("../../include/stdint.h")),
];

/// Stands in for `<cuda_runtime.h>` only when the CUDA headers found lack the real one.
const CUDA_RUNTIME_SHIM: (&str, &str) = ("cuda_runtime.h", include_str!("../../include/cuda_runtime.h"));

/// The headers given to NVRTC in memory, as `(include name, contents)`.
fn shim_headers(headers: Option<&CudaHeaders>) -> Vec<(&'static str, &'static str)> {
    let mut shims = SHIMS.to_vec();
    if !headers.is_some_and(|h| h.has("cuda_runtime.h")) {
        shims.push(CUDA_RUNTIME_SHIM);
    }
    shims
}

/// The options a compile passes besides the architecture: line info, C++17 and the CUDA
/// include directories.
fn nvrtc_options(headers: Option<&CudaHeaders>) -> Vec<String> {
    let mut options = vec!["-lineinfo".to_string(), "--std=c++17".to_string()];
    for dir in headers.map(|h| h.dirs.as_slice()).unwrap_or_default() {
        // NVRTC takes UTF-8 options; a directory it could not be told about is left out.
        if let Some(dir) = dir.to_str() {
            options.push(format!("-I{dir}"));
        }
    }
    options
}

/// A kernel including a header NVRTC cannot open gets a hint about what can be included.
fn explain_missing_headers(diagnostics: &mut [Diagnostic], headers: Option<&CudaHeaders>) {
    let hint = match headers {
        Some(_) => " (kernels are compiled by NVRTC, which has the CUDA headers but no C or C++ standard \
                    library beyond <cstdio>, <stdio.h>, <cstdint> and <stdint.h>; see docs/includes.md)"
            .to_string(),
        None => format!(
            " (no CUDA headers were found for NVRTC: run scripts/setup.sh, or set {CUDA_INCLUDE_ENV} to a \
             CUDA include directory; see docs/includes.md)"
        ),
    };
    for d in diagnostics
        .iter_mut()
        .filter(|d| d.severity == Severity::Error && d.message.contains("open source file"))
    {
        d.message.push_str(&hint);
    }
}

struct NvrtcOutput {
    ptx: Option<String>,
    cubin: Option<Vec<u8>>,
    log: String,
    version: String,
}

fn run_nvrtc(
    source: &str,
    source_name: &str,
    target: Target,
    headers: Option<&CudaHeaders>,
) -> Result<NvrtcOutput, String> {
    let src = CString::new(source).map_err(|_| "the source contains a NUL byte".to_string())?;
    let name = CString::new(source_name).map_err(|_| "the file name contains a NUL byte".to_string())?;
    let version = nvrtc_version();
    let program = create_program(&src, &name, &shim_headers(headers))?;
    let mut options = vec![target.arch_option()];
    options.extend(nvrtc_options(headers));
    // SAFETY: `program` was just created and is destroyed below, once.
    let compiled = unsafe { result::compile_program(program, &options) };
    let log = unsafe { result::get_program_log(program) }
        .map(|chars| c_chars_to_string(&chars))
        .unwrap_or_default();
    let mut output = NvrtcOutput {
        ptx: None,
        cubin: None,
        log,
        version,
    };
    if compiled.is_ok() {
        let ptx = unsafe { result::get_ptx(program) }.map_err(|e| format!("nvrtcGetPTX: {e:?}"))?;
        output.ptx = Some(c_chars_to_string(&ptx));
        if let Target::Cubin { .. } = target {
            output.cubin = Some(unsafe { get_cubin(program) }?);
        }
    }
    unsafe { result::destroy_program(program) }.map_err(|e| format!("nvrtcDestroyProgram: {e:?}"))?;
    Ok(output)
}

/// nvrtcCreateProgram with in-memory headers (cudarc's wrapper passes none).
fn create_program(src: &CString, name: &CString, headers: &[(&str, &str)]) -> Result<sys::nvrtcProgram, String> {
    let to_c = |s: &str| CString::new(s).map_err(|_| "a shim header contains a NUL byte".to_string());
    let contents: Vec<CString> = headers.iter().map(|(_, text)| to_c(text)).collect::<Result<_, _>>()?;
    let names: Vec<CString> = headers.iter().map(|(name, _)| to_c(name)).collect::<Result<_, _>>()?;
    let content_ptrs: Vec<*const std::ffi::c_char> = contents.iter().map(|c| c.as_ptr()).collect();
    let name_ptrs: Vec<*const std::ffi::c_char> = names.iter().map(|c| c.as_ptr()).collect();
    let mut program = std::mem::MaybeUninit::uninit();
    // SAFETY: every pointer is to a NUL-terminated string that outlives the call (NVRTC
    // copies them), and both arrays have `headers.len()` entries.
    let status = unsafe {
        sys::nvrtcCreateProgram(
            program.as_mut_ptr(),
            src.as_ptr(),
            name.as_ptr(),
            headers.len() as std::ffi::c_int,
            content_ptrs.as_ptr(),
            name_ptrs.as_ptr(),
        )
    };
    if status != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(format!("nvrtcCreateProgram: {status:?}"));
    }
    // SAFETY: NVRTC_SUCCESS means the program was written.
    Ok(unsafe { program.assume_init() })
}

/// # Safety
/// `program` must be a live, compiled NVRTC program.
unsafe fn get_cubin(program: sys::nvrtcProgram) -> Result<Vec<u8>, String> {
    let mut size = 0usize;
    let status = unsafe { sys::nvrtcGetCUBINSize(program, &mut size) };
    if status != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(format!("nvrtcGetCUBINSize: {status:?}"));
    }
    let mut bytes = vec![0u8; size];
    let status = unsafe { sys::nvrtcGetCUBIN(program, bytes.as_mut_ptr().cast()) };
    if status != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(format!("nvrtcGetCUBIN: {status:?}"));
    }
    Ok(bytes)
}

/// `major.minor` of the loaded NVRTC.
pub fn nvrtc_version() -> String {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: plain out-parameters; called only after the library was loaded.
    let status = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    if status == sys::nvrtcResult::NVRTC_SUCCESS {
        format!("{major}.{minor}")
    } else {
        "unknown".into()
    }
}

/// `(major, minor)` of the loaded NVRTC.
fn nvrtc_version_numbers() -> Option<(u32, u32)> {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: plain out-parameters; called only after the library was loaded.
    let status = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    (status == sys::nvrtcResult::NVRTC_SUCCESS).then_some((major as u32, minor as u32))
}

fn c_chars_to_string(chars: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}
