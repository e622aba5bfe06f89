//! Compiling the learner's kernel with NVRTC (through cudarc) into PTX or a cubin.

use super::contract_probe::{PROBE_FILE, probe_source};
use super::diagnostics::{Diagnostic, Severity, parse_nvrtc_log};
use super::entry_check::check_entry;
use super::{CompileFailure, CompiledKernel, Target};
use crate::cudalibs::{CUDA_INCLUDE_ENV, CudaHeaders, CudaLib, LibLocation, cuda_headers, ensure_loaded, major_of};
use crate::lesson::Lesson;
use cudarc::nvrtc::{result, sys};
use std::ffi::CString;
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
    check_cudarc_uses(&nvrtc).map_err(|help| CompileFailure::CompilerUnavailable { help })?;
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
        machine_code: None,
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
    // SAFETY (all calls below): `program.0` is live until `program` drops.
    let compiled = unsafe { result::compile_program(program.0, &options) };
    let log = unsafe { result::get_program_log(program.0) }
        .map(|chars| c_chars_to_string(&chars))
        .unwrap_or_default();
    let mut output = NvrtcOutput {
        ptx: None,
        cubin: None,
        log,
        version,
    };
    if compiled.is_ok() {
        let ptx = unsafe { result::get_ptx(program.0) }.map_err(|e| format!("nvrtcGetPTX: {e:?}"))?;
        output.ptx = Some(c_chars_to_string(&ptx));
        if let Target::Cubin { .. } = target {
            output.cubin = Some(unsafe { get_cubin(program.0) }?);
        }
    }
    Ok(output)
}

/// An NVRTC program, destroyed when dropped: every path out of `run_nvrtc`, early `?`s
/// included, frees it. (cudarc's safe `compile_ptx` has its own guard but no way to pass the
/// in-memory headers, so the raw API is used.)
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the program was created by `create_program` and is destroyed only here.
        if let Err(e) = unsafe { result::destroy_program(self.0) } {
            eprintln!("haloscope: nvrtcDestroyProgram failed: {e:?}");
        }
    }
}

/// nvrtcCreateProgram with in-memory headers (cudarc's wrapper passes none).
fn create_program(src: &CString, name: &CString, headers: &[(&str, &str)]) -> Result<Program, String> {
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
    Ok(Program(unsafe { program.assume_init() }))
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

/// cudarc opens NVRTC by name (`libnvrtc.so`, then `.so.13`, then `.so.12`), so a library on
/// the loader's path can answer instead of the file `cudalibs` chose and opened: NVRTC 13
/// from LD_LIBRARY_PATH where this GPU needs 12, say. Checked by asking the answering one
/// its version.
fn check_cudarc_uses(chosen: &LibLocation) -> Result<(), String> {
    match (major_of(&chosen.path), nvrtc_version_numbers()) {
        (Some(chosen_major), Some((answering, minor))) if chosen_major != answering => Err(format!(
            "haloscope chose NVRTC {chosen_major} ({}) for this machine, but NVRTC {answering}.{minor} from              the library path answers instead: take that folder out of LD_LIBRARY_PATH, or set              HALOSCOPE_NVRTC to the NVRTC you want",
            chosen.path.display()
        )),
        _ => Ok(()),
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
