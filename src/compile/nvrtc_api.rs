//! NVRTC's C API, called through the very library file `cudalibs` chose.
//!
//! cudarc opens NVRTC by name (`libnvrtc.so`, then `.so.13`, then `.so.12`), so where the
//! loader's path holds another NVRTC, cudarc calls that one: on the lent H100 the CUDA 13
//! toolkit's `libnvrtc.so` answered every call meant for the NVRTC 12 that a CUDA 12 driver
//! or a pre-Turing card needs. Resolving the dozen functions haloscope uses from the chosen
//! file's own handle makes the choice stick.

use crate::cudalibs::{CudaLib, ensure_loaded};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::OnceLock;

/// `nvrtcProgram`.
pub type Program = *mut c_void;

/// The entry points, from one library handle (kept open for the process).
pub struct NvrtcApi {
    _library: libloading::Library,
    pub version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int,
    pub create_program: unsafe extern "C" fn(
        *mut Program,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> c_int,
    pub compile_program: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> c_int,
    pub get_program_log_size: unsafe extern "C" fn(Program, *mut usize) -> c_int,
    pub get_program_log: unsafe extern "C" fn(Program, *mut c_char) -> c_int,
    pub get_ptx_size: unsafe extern "C" fn(Program, *mut usize) -> c_int,
    pub get_ptx: unsafe extern "C" fn(Program, *mut c_char) -> c_int,
    pub get_cubin_size: unsafe extern "C" fn(Program, *mut usize) -> c_int,
    pub get_cubin: unsafe extern "C" fn(Program, *mut c_char) -> c_int,
    pub destroy_program: unsafe extern "C" fn(*mut Program) -> c_int,
    get_error_string: unsafe extern "C" fn(c_int) -> *const c_char,
}

/// `NVRTC_SUCCESS`.
pub const SUCCESS: c_int = 0;

impl NvrtcApi {
    /// NVRTC's name for a status (`NVRTC_ERROR_COMPILATION`).
    pub fn error_name(&self, status: c_int) -> String {
        // SAFETY: nvrtcGetErrorString returns a static string for any status.
        let text = unsafe { (self.get_error_string)(status) };
        if text.is_null() {
            return format!("NVRTC status {status}");
        }
        // SAFETY: non-null, NUL-terminated, static.
        unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
    }
}

/// The API of the NVRTC `cudalibs` loaded (once per process); `Err` says how to install one.
pub fn nvrtc() -> Result<&'static NvrtcApi, String> {
    static API: OnceLock<Result<NvrtcApi, String>> = OnceLock::new();
    API.get_or_init(|| {
        let location = ensure_loaded(CudaLib::Nvrtc, None)?;
        // SAFETY: the file is already loaded (this takes another reference to it); opening
        // runs only its initialisers.
        let library = unsafe { libloading::Library::new(&location.path) }
            .map_err(|e| format!("cannot open {}: {e}", location.path.display()))?;
        // Each symbol is copied out as a plain function pointer; `_library` keeps it valid.
        macro_rules! symbol {
            ($name:literal) => {
                // SAFETY: the types above are nvrtc.h's signatures for these names.
                *unsafe { library.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| format!("{} has no {}: {e}", location.path.display(), $name))?
            };
        }
        Ok(NvrtcApi {
            version: symbol!("nvrtcVersion"),
            create_program: symbol!("nvrtcCreateProgram"),
            compile_program: symbol!("nvrtcCompileProgram"),
            get_program_log_size: symbol!("nvrtcGetProgramLogSize"),
            get_program_log: symbol!("nvrtcGetProgramLog"),
            get_ptx_size: symbol!("nvrtcGetPTXSize"),
            get_ptx: symbol!("nvrtcGetPTX"),
            get_cubin_size: symbol!("nvrtcGetCUBINSize"),
            get_cubin: symbol!("nvrtcGetCUBIN"),
            destroy_program: symbol!("nvrtcDestroyProgram"),
            get_error_string: symbol!("nvrtcGetErrorString"),
            _library: library,
        })
    })
    .as_ref()
    .map_err(Clone::clone)
}
