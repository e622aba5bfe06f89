//! PTX to machine code in the driver, with the line table kept.
//!
//! Most kernels reach the GPU as the cubin NVRTC made, which carries `-lineinfo`. A kernel
//! whose printf calls are gated (printf_gate.rs) reaches it as rewritten PTX, and
//! `cuModuleLoadData` compiles PTX without a line table: CUPTI then files every sector of
//! the kernel under line 0 (seen on the H200, 2026-12-04: printf_debug.cu, 1,362,688,000
//! sectors all on line 0). Linking the PTX with `CU_JIT_GENERATE_LINE_INFO` gives a cubin
//! with the table, which is then loaded like NVRTC's.

use cudarc::driver::sys;
use std::ffi::{c_uint, c_void};

/// The cubin the driver's JIT makes of `ptx` with a line table, or why it could not.
/// The context must be current on this thread.
pub fn cubin_with_line_info(ptx: &str) -> Result<Vec<u8>, String> {
    let mut source = ptx.as_bytes().to_vec();
    source.push(0);
    let mut options = [sys::CUjit_option::CU_JIT_GENERATE_LINE_INFO];
    // Option values are passed as pointer-sized integers.
    let mut values = [std::ptr::without_provenance_mut::<c_void>(1)];
    let mut state: sys::CUlinkState = std::ptr::null_mut();
    // SAFETY: the option arrays outlive the call and hold one option each.
    unsafe { sys::cuLinkCreate_v2(1, options.as_mut_ptr(), values.as_mut_ptr(), &mut state) }
        .result()
        .map_err(|e| format!("cuLinkCreate: {e:?}"))?;
    let linked = add_and_complete(state, &mut source);
    // SAFETY: `state` came from cuLinkCreate and is destroyed once, after its cubin was copied.
    let _ = unsafe { sys::cuLinkDestroy(state) };
    linked
}

fn add_and_complete(state: sys::CUlinkState, source: &mut [u8]) -> Result<Vec<u8>, String> {
    let name = c"kernel.ptx";
    // SAFETY: `source` is NUL-terminated PTX of `source.len()` bytes; no options.
    unsafe {
        sys::cuLinkAddData_v2(
            state,
            sys::CUjitInputType::CU_JIT_INPUT_PTX,
            source.as_mut_ptr() as *mut c_void,
            source.len(),
            name.as_ptr(),
            0 as c_uint,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    }
    .result()
    .map_err(|e| format!("cuLinkAddData: {e:?}"))?;
    let mut cubin: *mut c_void = std::ptr::null_mut();
    let mut size = 0usize;
    // SAFETY: out-pointers are valid; the image they name belongs to `state`, so it is
    // copied before the caller destroys `state`.
    unsafe { sys::cuLinkComplete(state, &mut cubin, &mut size) }
        .result()
        .map_err(|e| format!("cuLinkComplete: {e:?}"))?;
    if cubin.is_null() || size == 0 {
        return Err("cuLinkComplete returned an empty image".to_string());
    }
    // SAFETY: the driver says `cubin` holds `size` bytes, alive until cuLinkDestroy.
    Ok(unsafe { std::slice::from_raw_parts(cubin as *const u8, size) }.to_vec())
}
