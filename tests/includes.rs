//! Headers a learner puts at the top of a kernel compile under NVRTC with no CUDA toolkit:
//! the C library names through haloscope's shims (include/), the CUDA headers through the
//! include directory haloscope finds (.deps/cuda-headers from PyPI, a toolkit, or NVRTC's
//! bundled copy). Missing headers are reported on the learner's line. See docs/includes.md.

mod common;

use haloscope::compile::{CompileFailure, CompiledKernel, Severity, Target, compile_kernel, nvrtc_version};
use std::path::{Path, PathBuf};
use std::process::Command;

const HEADERS: [&str; 9] = [
    "cstdio",
    "stdio.h",
    "cuda_runtime.h",
    "cuda_fp16.h",
    "cuda_bf16.h",
    "cooperative_groups.h",
    "cstdint",
    "stdint.h",
    "cuda/std/cstdint",
];

fn starter() -> String {
    std::fs::read_to_string(common::root().join("kernels/stencil-2d/starter.cu")).unwrap()
}

/// The starter with cooperative groups used inside the kernel body.
fn starter_with_cooperative_groups() -> String {
    let starter = starter();
    let anchor = "    out[i] = 0.5f * centre";
    assert!(starter.contains(anchor), "the starter changed: update this test");
    starter.replacen(
        anchor,
        "    namespace cg = cooperative_groups;\n\
         \x20   cg::thread_block b = cg::this_thread_block();\n\
         \x20   b.sync();\n\
         \x20   auto t = cg::tiled_partition<32>(b);\n\
         \x20   float v = t.shfl_down(centre, 1);\n\
         \x20   (void)v;\n\
         \x20   out[i] = 0.5f * centre",
        1,
    )
}

/// The starter with `#include <header>` on its first line (and, for cooperative groups,
/// their use in the body).
fn with_header(header: &str) -> String {
    let body = if header == "cooperative_groups.h" {
        starter_with_cooperative_groups()
    } else {
        starter()
    };
    format!("#include <{header}>\n{body}")
}

fn compile(source: &str) -> Result<CompiledKernel, CompileFailure> {
    compile_kernel(
        source,
        "kernel.cu",
        &common::lesson("stencil-2d"),
        Target::EMULATOR,
        None,
    )
}

fn assert_compiles(source: &str, what: &str) -> CompiledKernel {
    let kernel = compile(source).unwrap_or_else(|e| panic!("{what}: {}", e.headline()));
    assert!(kernel.ptx.contains(".entry stencil2d"), "{what}: no entry in the PTX");
    assert!(
        kernel.diagnostics.iter().all(|d| d.severity != Severity::Error),
        "{what}: {:?}",
        kernel.diagnostics
    );
    kernel
}

#[test]
fn each_header_compiles_at_the_top_of_the_starter() {
    for header in HEADERS {
        assert_compiles(&with_header(header), header);
    }
}

#[test]
fn cooperative_groups_tiles_and_shuffles_reach_the_ptx() {
    let kernel = assert_compiles(&with_header("cooperative_groups.h"), "cooperative_groups.h");
    assert!(kernel.ptx.contains("bar.sync") || kernel.ptx.contains("barrier.sync"));
    assert!(kernel.ptx.contains("shfl.sync.down"), "no shuffle in the PTX");
}

#[test]
fn every_header_together_and_what_they_declare() {
    let mut source: String = HEADERS.iter().map(|h| format!("#include <{h}>\n")).collect();
    // The same headers again, in another order: all are include-guarded and agree.
    source.extend(HEADERS.iter().rev().map(|h| format!("#include <{h}>\n")));
    source.push_str(
        "__device__ uint32_t counter_a = UINT32_MAX;\n\
         __device__ std::uint64_t counter_b = UINT64_C(1) << 40;\n\
         __device__ int64_t counter_c = INT64_MIN;\n\
         __device__ cuda::std::int32_t counter_d;\n\
         static_assert(sizeof(std::intptr_t) == 8 && sizeof(uint8_t) == 1, \"stdint\");\n\
         __device__ void say(int x) { printf(\"%d\\n\", x); std::printf(\"%u\\n\", (unsigned)x); }\n\
         __device__ __half to_half(float f) { return __float2half(f); }\n\
         __device__ __nv_bfloat16 to_bf16(float f) { return __float2bfloat16(f); }\n",
    );
    source.push_str(&starter_with_cooperative_groups());
    assert_compiles(&source, "every header");
}

#[test]
fn a_kernel_with_includes_keeps_its_own_line_numbers() {
    let source = format!("#include <cstdio>\n#include <cuda_fp16.h>\n{}", starter());
    // Break the statement that computes `x` (line 9 of the starter, 11 here).
    let broken = source.replacen("int x = blockIdx.x", "int x = blockIdx.x +* ;", 1);
    let line = broken.lines().position(|l| l.contains("+* ;")).unwrap() as u32 + 1;
    assert_eq!(line, 11);
    let Err(CompileFailure::Errors { diagnostics, .. }) = compile(&broken) else {
        panic!("expected a compile error")
    };
    let error = diagnostics
        .iter()
        .find(|d| d.severity == Severity::Error)
        .expect("an error");
    assert_eq!((error.file.as_str(), error.line), ("kernel.cu", line), "{error}");
}

#[test]
fn a_missing_header_is_reported_on_the_learners_line() {
    let source = format!(
        "// my kernel\n#include <cstdio>\n#include <nonexistent.h>\n{}",
        starter()
    );
    let Err(CompileFailure::Errors { diagnostics, .. }) = compile(&source) else {
        panic!("expected a compile error")
    };
    let error = diagnostics
        .iter()
        .find(|d| d.severity == Severity::Error)
        .expect("an error");
    assert_eq!((error.file.as_str(), error.line), ("kernel.cu", 3), "{error}");
    assert!(error.message.contains("nonexistent.h"), "{error}");
    assert!(error.message.contains("docs/includes.md"), "{error}");
}

/// `haloscope compile` on `source` in a fresh process, with `$HALOSCOPE_CUDA_INCLUDE` set.
fn compile_with_include_env(value: &str, source: &str, name: &str) -> (i32, String) {
    let dir = scratch(name);
    let kernel = dir.join("kernel.cu");
    std::fs::write(&kernel, source).unwrap();
    let out = Command::new(common::binary())
        .args(["compile", "--lesson", "stencil-2d", "--kernel"])
        .arg(&kernel)
        .current_dir(common::root())
        .env("HALOSCOPE_CUDA_INCLUDE", value)
        // Where NVRTC's bundled headers are extracted: kept between runs.
        .env(
            "XDG_CACHE_HOME",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("includes-cache"),
        )
        .output()
        .expect("run haloscope");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("includes").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn with_no_cuda_headers_the_shims_still_compile() {
    for header in ["cstdio", "stdio.h", "cuda_runtime.h", "cstdint", "stdint.h"] {
        let (code, stderr) = compile_with_include_env("none", &with_header(header), "none");
        assert_eq!(code, 0, "{header}: {stderr}");
    }
    let (code, stderr) = compile_with_include_env("none", &with_header("cuda_fp16.h"), "none");
    assert_eq!(code, 12, "{stderr}");
    assert!(stderr.contains("kernel.cu:1"), "{stderr}");
    assert!(stderr.contains("no CUDA headers were found"), "{stderr}");
}

#[test]
fn shims_win_over_include_directories_for_the_c_library_names_only() {
    // An include directory with files of the C library names that must never be used, and
    // a cuda_runtime.h that must be (a real one is preferred to the shim).
    let decoy = scratch("decoy");
    for name in ["cstdio", "stdio.h", "cstdint", "stdint.h"] {
        std::fs::write(decoy.join(name), "#error \"the include directory's copy was used\"\n").unwrap();
    }
    std::fs::write(decoy.join("cuda_runtime.h"), "#define DECOY_CUDA_RUNTIME 1\n").unwrap();
    let source = format!(
        "#include <cstdio>\n#include <stdio.h>\n#include <cstdint>\n#include <stdint.h>\n\
         #include <cuda_runtime.h>\n#ifndef DECOY_CUDA_RUNTIME\n#error \"the shim was used\"\n#endif\n{}",
        starter()
    );
    let (code, stderr) = compile_with_include_env(decoy.to_str().unwrap(), &source, "decoy-kernel");
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn nvrtcs_bundled_headers_serve_every_header() {
    assert_compiles(&starter(), "starter");
    let version: Vec<u32> = nvrtc_version().split('.').filter_map(|v| v.parse().ok()).collect();
    if version < vec![13, 3] {
        eprintln!("NVRTC {} has no bundled headers (13.3+); skipped", nvrtc_version());
        return;
    }
    for header in HEADERS {
        let (code, stderr) = compile_with_include_env("bundled", &with_header(header), "bundled");
        assert_eq!(code, 0, "{header}: {stderr}");
    }
}

/// The C and C++ library headers a learner brings from elsewhere: haloscope's shims make them
/// libcu++'s device versions (docs/includes.md).
const STANDARD_HEADERS: [&str; 23] = [
    "cassert",
    "assert.h",
    "cmath",
    "math.h",
    "cstdlib",
    "stdlib.h",
    "cstring",
    "string.h",
    "climits",
    "limits.h",
    "cfloat",
    "float.h",
    "cstddef",
    "stddef.h",
    "type_traits",
    "utility",
    "limits",
    "array",
    "algorithm",
    "tuple",
    "functional",
    "numeric",
    "bit",
];

#[test]
fn the_standard_headers_learners_include_compile_and_declare_their_names() {
    for header in STANDARD_HEADERS {
        assert_compiles(&with_header(header), header);
    }
    let mut source: String = STANDARD_HEADERS.iter().map(|h| format!("#include <{h}>\n")).collect();
    source.extend(STANDARD_HEADERS.iter().rev().map(|h| format!("#include <{h}>\n")));
    source.push_str(
        "static_assert(std::is_same<float, float>::value && std::numeric_limits<int>::max() == INT_MAX, \"x\");\n\
         static_assert(FLT_MANT_DIG == 24 && CHAR_BIT == 8 && sizeof(std::size_t) == 8, \"x\");\n\
         __device__ float uses(float a, float b, int k) {\n\
             std::array<float, 2> pair{a, b};\n\
             std::swap(pair[0], pair[1]);\n\
             float m = std::min(pair[0], pair[1]) + std::max(a, b) + std::clamp(a, 0.0f, 1.0f);\n\
             assert(k >= 0);\n\
             return m + std::sqrt(std::fabs(a)) + sqrtf(b) + std::abs(k) + std::gcd(k, 6) + std::popcount(unsigned(k))\n\
                    + static_cast<float>(M_PI) + std::get<0>(std::make_tuple(a, b)) + std::plus<float>()(a, b);\n\
         }\n",
    );
    source.push_str(&starter());
    assert_compiles(&source, "every standard header");
}

#[test]
fn ndebug_turns_assert_off_as_in_the_standard() {
    let with = assert_compiles(
        &format!(
            "#include <cassert>\n{}",
            starter().replacen("{\n", "{\n    assert(n > 1);\n", 1)
        ),
        "assert",
    );
    assert!(with.ptx.contains("__assertfail"), "the assert is in the PTX");
    let without = assert_compiles(
        &format!(
            "#define NDEBUG\n#include <cassert>\n{}",
            starter().replacen("{\n", "{\n    assert(n > 1);\n", 1)
        ),
        "assert with NDEBUG",
    );
    assert!(!without.ptx.contains("__assertfail"), "NDEBUG removes the assert");
}

#[test]
fn with_no_cuda_headers_the_c_names_still_compile_and_the_cxx_ones_say_why_not() {
    for header in [
        "cassert", "assert.h", "cmath", "math.h", "climits", "limits.h", "cfloat", "float.h", "cstddef", "stddef.h",
    ] {
        let (code, stderr) = compile_with_include_env("none", &with_header(header), "none-std");
        assert_eq!(code, 0, "{header}: {stderr}");
    }
    let (code, stderr) = compile_with_include_env("none", &with_header("type_traits"), "none-std");
    assert_eq!(code, 12, "{stderr}");
    assert!(
        stderr.contains("<type_traits> comes from libcu++") && stderr.contains("make setup"),
        "{stderr}"
    );
}

#[test]
fn a_host_only_header_says_what_to_use_instead() {
    for (header, instead) in [
        ("vector", "fixed-size array"),
        ("iostream", "printf"),
        ("string", "const char*"),
    ] {
        let source = format!("#include <{header}>\n{}", starter());
        let Err(CompileFailure::Errors { diagnostics, .. }) = compile(&source) else {
            panic!("<{header}> compiled")
        };
        let error = diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error)
            .expect("an error");
        assert_eq!((error.file.as_str(), error.line), ("kernel.cu", 1), "{error}");
        assert!(
            error.message.contains(&format!("<{header}> is host C++")) && error.message.contains(instead),
            "{error}"
        );
    }
}
