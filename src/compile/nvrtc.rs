//! Compiling the learner's kernel with NVRTC (through cudarc) into PTX or a cubin.

use super::contract_probe::{PROBE_FILE, probe_source};
use super::diagnostics::{Diagnostic, Severity, parse_nvrtc_log};
use super::entry_check::check_entry;
use super::nvrtc_api::{self, NvrtcApi, SUCCESS, nvrtc};
use super::{CompileFailure, CompiledKernel, Target};
use crate::cudalibs::{CUDA_INCLUDE_ENV, CudaHeaders, CudaLib, cuda_headers, ensure_loaded};
use crate::lesson::Lesson;
use std::ffi::{CString, c_char, c_int};
use std::path::Path;

/// CUDA C++ with NVRTC: the learner's text, then the contract probe, in one program.
pub(super) fn compile_cuda(
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
    if output.ptx.is_none() && !has_error(false) && !has_error(true) {
        // No PTX and no error of the kernel's: NVRTC itself failed (its builtins library
        // missing, say). Not the learner's fault, so not a compile error of theirs.
        return Err(CompileFailure::Internal {
            message: format!("NVRTC made no PTX: {}", output.log.trim()),
        });
    }
    if let Some(line) = out_of_memory_line(&output.log) {
        // NVRTC could not get memory (a grading memory limit, or a run's own buffers being
        // drawn beside the compile): the learner's code is not at fault, so no compile error.
        return Err(CompileFailure::Internal {
            message: format!("NVRTC ran out of memory while compiling: {line}"),
        });
    }
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
        compiler: "NVRTC".into(),
        compiler_version: output.version,
        compiler_location: nvrtc,
        millis: started.elapsed().as_secs_f64() * 1e3,
    })
}

/// The log line where NVRTC says it ran out of memory, if it did. NVRTC reports that as an
/// error ("catastrophic error: out of memory") at whatever line of whatever header it had
/// reached; no diagnostic about a learner's code reads so.
fn out_of_memory_line(log: &str) -> Option<&str> {
    log.lines()
        .map(str::trim)
        .find(|line| line.contains("error: out of memory"))
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

/// Headers haloscope hands NVRTC in memory (the files are in include/): the C and C++
/// library names kernels often start with, which NVRTC has no files for. In-memory headers
/// take precedence over `-I` directories, so these names always resolve here, and only these.
/// The C++ ones are libcu++'s device versions under their standard names (docs/includes.md).
/// `(name, text)` of one file of include/.
macro_rules! shim {
    ($name:literal) => {
        ($name, include_str!(concat!("../../include/", $name)))
    };
}

const SHIMS: [(&str, &str); 27] = [
    shim!("cstdio"),
    shim!("stdio.h"),
    shim!("cstdint"),
    shim!("stdint.h"),
    shim!("cassert"),
    shim!("assert.h"),
    shim!("cmath"),
    shim!("math.h"),
    shim!("cstdlib"),
    shim!("stdlib.h"),
    shim!("cstring"),
    shim!("string.h"),
    shim!("climits"),
    shim!("limits.h"),
    shim!("cfloat"),
    shim!("float.h"),
    shim!("cstddef"),
    shim!("stddef.h"),
    shim!("limits"),
    shim!("type_traits"),
    shim!("utility"),
    shim!("array"),
    shim!("algorithm"),
    shim!("tuple"),
    shim!("functional"),
    shim!("numeric"),
    shim!("bit"),
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
fn nvrtc_options(target: Target, headers: Option<&CudaHeaders>) -> Vec<String> {
    let lines = match target {
        // Device debug: no optimisation, full line information.
        Target::Unoptimised { .. } => "-G",
        Target::Ptx { .. } | Target::Cubin { .. } => "-lineinfo",
    };
    let mut options = vec![lines.to_string(), "--std=c++17".to_string()];
    for dir in headers.map(|h| h.dirs.as_slice()).unwrap_or_default() {
        // NVRTC takes UTF-8 options; a directory it could not be told about is left out.
        if let Some(dir) = dir.to_str() {
            options.push(format!("-I{dir}"));
        }
    }
    options
}

/// A kernel including a header NVRTC cannot open gets a hint: what to use instead for the
/// host library headers nvcc accepts, else what can be included.
fn explain_missing_headers(diagnostics: &mut [Diagnostic], headers: Option<&CudaHeaders>) {
    let general = match headers {
        Some(_) => " (kernels are compiled by NVRTC, which has the CUDA headers and haloscope's device versions \
                    of the C and C++ library headers a kernel can use, but no host library; see docs/includes.md)"
            .to_string(),
        None => format!(
            " (no CUDA headers were found for NVRTC: run scripts/workstation/setup.sh, or set {CUDA_INCLUDE_ENV} \
             to a CUDA include directory; see docs/includes.md)"
        ),
    };
    for d in diagnostics
        .iter_mut()
        .filter(|d| d.severity == Severity::Error && d.message.contains("open source file"))
    {
        let header = d.message.split('"').nth(1).unwrap_or_default();
        match host_header_instead(header) {
            Some(instead) => {
                let hint = format!(
                    " (<{header}> is host C++: nvcc accepts it because it also compiles the host side, but a \
                     kernel cannot use it; {instead}; see docs/includes.md)"
                );
                d.message.push_str(&hint);
            }
            None => d.message.push_str(&general),
        }
    }
}

/// What a kernel uses in place of a host-only header nvcc lets a .cu file include.
fn host_header_instead(header: &str) -> Option<&'static str> {
    Some(match header {
        "iostream" | "ostream" | "istream" | "fstream" | "sstream" | "iomanip" => {
            "print from a kernel with printf (<cstdio>)"
        }
        "vector" | "list" | "deque" | "map" | "set" | "unordered_map" | "unordered_set" | "queue" | "stack" => {
            "size device storage at compile time: a fixed-size array, __shared__ memory, or a buffer the host \
             allocated (<array> gives std::array)"
        }
        "string" | "string_view" => "use const char* (or <cuda/std/string_view>)",
        "memory" => "use raw pointers; the harness owns every buffer",
        "thread" | "mutex" | "condition_variable" | "future" => {
            "threads of a kernel synchronise with __syncthreads(), atomics or <cuda/std/atomic>"
        }
        "random" => "derive per-thread values from the thread index, or use <curand_kernel.h>",
        "cuda.h" | "cuda_runtime_api.h" => "the driver and runtime API are host calls; haloscope launches the kernel",
        _ => return None,
    })
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
    let api = nvrtc()?;
    let src = CString::new(source).map_err(|_| "the source contains a NUL byte".to_string())?;
    let name = CString::new(source_name).map_err(|_| "the file name contains a NUL byte".to_string())?;
    let version = nvrtc_version();
    let program = create_program(api, &src, &name, &shim_headers(headers))?;
    let mut options = vec![target.arch_option()];
    options.extend(nvrtc_options(target, headers));
    let options: Vec<CString> = options
        .into_iter()
        .map(|o| CString::new(o).map_err(|_| "an NVRTC option contains a NUL byte".to_string()))
        .collect::<Result<_, _>>()?;
    let option_ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
    // SAFETY (all calls below): `program.0` is live until `program` drops; the option
    // pointers are NUL-terminated strings that outlive the call.
    let compiled = unsafe { (api.compile_program)(program.0, option_ptrs.len() as c_int, option_ptrs.as_ptr()) };
    let log = unsafe { program_bytes(api, program.0, api.get_program_log_size, api.get_program_log) }
        .map(|bytes| bytes_to_string(&bytes))
        .unwrap_or_default();
    let mut output = NvrtcOutput {
        ptx: None,
        cubin: None,
        log,
        version,
    };
    if compiled == SUCCESS {
        let ptx = unsafe { program_bytes(api, program.0, api.get_ptx_size, api.get_ptx) }
            .map_err(|e| format!("nvrtcGetPTX: {e}"))?;
        output.ptx = Some(bytes_to_string(&ptx));
        if let Target::Cubin { .. } = target {
            let cubin = unsafe { program_bytes(api, program.0, api.get_cubin_size, api.get_cubin) }
                .map_err(|e| format!("nvrtcGetCUBIN: {e}"))?;
            output.cubin = Some(cubin);
        }
    }
    Ok(output)
}

/// An NVRTC program, destroyed when dropped: every path out of `run_nvrtc`, early `?`s
/// included, frees it.
struct Program(nvrtc_api::Program, &'static NvrtcApi);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the program was created by `create_program` and is destroyed only here.
        let status = unsafe { (self.1.destroy_program)(&mut self.0) };
        if status != SUCCESS {
            eprintln!("haloscope: nvrtcDestroyProgram failed: {}", self.1.error_name(status));
        }
    }
}

/// nvrtcCreateProgram with in-memory headers.
fn create_program(
    api: &'static NvrtcApi,
    src: &CString,
    name: &CString,
    headers: &[(&str, &str)],
) -> Result<Program, String> {
    let to_c = |s: &str| CString::new(s).map_err(|_| "a shim header contains a NUL byte".to_string());
    let contents: Vec<CString> = headers.iter().map(|(_, text)| to_c(text)).collect::<Result<_, _>>()?;
    let names: Vec<CString> = headers.iter().map(|(name, _)| to_c(name)).collect::<Result<_, _>>()?;
    let content_ptrs: Vec<*const c_char> = contents.iter().map(|c| c.as_ptr()).collect();
    let name_ptrs: Vec<*const c_char> = names.iter().map(|c| c.as_ptr()).collect();
    let mut program: nvrtc_api::Program = std::ptr::null_mut();
    // SAFETY: every pointer is to a NUL-terminated string that outlives the call (NVRTC
    // copies them), and both arrays have `headers.len()` entries.
    let status = unsafe {
        (api.create_program)(
            &mut program,
            src.as_ptr(),
            name.as_ptr(),
            headers.len() as c_int,
            content_ptrs.as_ptr(),
            name_ptrs.as_ptr(),
        )
    };
    if status != SUCCESS {
        return Err(format!("nvrtcCreateProgram: {}", api.error_name(status)));
    }
    Ok(Program(program, api))
}

type SizeFn = unsafe extern "C" fn(nvrtc_api::Program, *mut usize) -> c_int;
type FillFn = unsafe extern "C" fn(nvrtc_api::Program, *mut c_char) -> c_int;

/// One of a program's outputs (log, PTX, cubin): its size, then its bytes.
///
/// # Safety
/// `program` must be a live NVRTC program, and `size`/`fill` a matching pair of NVRTC's getters.
unsafe fn program_bytes(
    api: &NvrtcApi,
    program: nvrtc_api::Program,
    size: SizeFn,
    fill: FillFn,
) -> Result<Vec<u8>, String> {
    let mut length = 0usize;
    let status = unsafe { size(program, &mut length) };
    if status != SUCCESS {
        return Err(api.error_name(status));
    }
    let mut bytes = vec![0u8; length];
    let status = unsafe { fill(program, bytes.as_mut_ptr().cast()) };
    if status != SUCCESS {
        return Err(api.error_name(status));
    }
    Ok(bytes)
}

/// `major.minor` of the loaded NVRTC.
pub fn nvrtc_version() -> String {
    nvrtc_version_numbers().map_or_else(|| "unknown".into(), |(major, minor)| format!("{major}.{minor}"))
}

/// `(major, minor)` of the loaded NVRTC.
fn nvrtc_version_numbers() -> Option<(u32, u32)> {
    let api = nvrtc().ok()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: plain out-parameters.
    let status = unsafe { (api.version)(&mut major, &mut minor) };
    (status == SUCCESS).then_some((major as u32, minor as u32))
}

/// A NUL-terminated C string NVRTC wrote, as text.
fn bytes_to_string(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::out_of_memory_line;

    #[test]
    fn nvrtc_out_of_memory_is_found_in_its_log() {
        let log = "__nv_nvrtc_builtin_header.h:5118:43: error: catastrophic error: out of memory\n\n1 catastrophic error detected";
        assert_eq!(
            out_of_memory_line(log),
            Some("__nv_nvrtc_builtin_header.h:5118:43: error: catastrophic error: out of memory")
        );
        assert_eq!(
            out_of_memory_line("x.cu(9): error: out of memory"),
            Some("x.cu(9): error: out of memory")
        );
        let learner = "kernel.cu(3): catastrophic error: cannot open source file \"foo.h\"";
        assert_eq!(out_of_memory_line(learner), None);
        let message = "kernel.cu(4): error: static assertion failed with \"out of memory\"";
        assert_eq!(out_of_memory_line(message), None);
        let directive = "kernel.cu(2): error: #error directive: out of memory";
        assert_eq!(out_of_memory_line(directive), None);
    }
}
