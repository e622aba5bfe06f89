//! Rust kernels: compiled to PTX by the machine's own rustc for `nvptx64-nvidia-cuda`, as a
//! `#![no_core]` crate with haloscope's prelude (kernels/prelude/gpu.rs). Nightly features are
//! unlocked with RUSTC_BOOTSTRAP=1, so a stable toolchain does. The learner's file becomes a
//! module of a generated crate root, so its diagnostics keep their own line numbers; the root
//! also checks the kernel's signature against the lesson contract.

use super::diagnostics::{Diagnostic, Severity};
use super::entry_check::check_entry;
use super::{CompileFailure, CompiledKernel, Target};
use crate::cudalibs::LibLocation;
use crate::lesson::{Lesson, ParamKind};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The prelude, shipped inside the binary.
pub const PRELUDE: &str = include_str!("../../kernels/prelude/gpu.rs");
const TARGET: &str = "nvptx64-nvidia-cuda";
const ROOT_FILE: &str = "haloscope_root.rs";

/// `$HALOSCOPE_RUSTC`, else `rustc` on the PATH.
fn rustc() -> PathBuf {
    std::env::var_os("HALOSCOPE_RUSTC")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("rustc"))
}

/// Whether this machine's rustc can build Rust kernels, and if not, why and how to fix it.
pub fn rust_toolchain() -> Result<String, String> {
    static CHECK: OnceLock<Result<String, String>> = OnceLock::new();
    CHECK
        .get_or_init(|| {
            let version = Command::new(rustc()).arg("--version").output().map_err(|e| {
                format!("rustc was not found ({e}): install Rust from https://rustup.rs to write kernels in Rust, or set HALOSCOPE_RUSTC")
            })?;
            let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
            let targets = Command::new(rustc()).args(["--print", "target-list"]).output().map_err(|e| e.to_string())?;
            if !String::from_utf8_lossy(&targets.stdout).lines().any(|t| t == TARGET) {
                return Err(format!("{version} has no {TARGET} target; a rustc from rustup (1.80 or newer) has it"));
            }
            Ok(version)
        })
        .clone()
}

/// The crate root: attributes, the prelude module, the learner's module and the probe.
fn crate_root(lesson: &Lesson, source_name: &str) -> (String, u32) {
    let types: Vec<&str> = lesson.params.iter().map(|p| rust_type(p.kind)).collect();
    let mut root = String::from(
        "#![no_core]\n#![no_std]\n\
         #![feature(no_core, lang_items, abi_ptx, intrinsics, rustc_attrs, link_llvm_intrinsics, asm_experimental_arch, decl_macro, auto_traits)]\n\
         #![allow(internal_features, unused, dead_code)]\n\
         #[path = \"gpu.rs\"]\npub mod gpu;\n",
    );
    root.push_str(&format!("#[path = \"{source_name}\"]\nmod kernel;\n"));
    let probe_line = root.lines().count() as u32 + 1;
    root.push_str(&format!(
        "const _: unsafe extern \"ptx-kernel\" fn({}) = kernel::{};\n",
        types.join(", "),
        lesson.entry
    ));
    (root, probe_line)
}

pub fn compile_rust(
    source: &str,
    source_name: &str,
    lesson: &Lesson,
    target: Target,
) -> Result<CompiledKernel, CompileFailure> {
    let started = std::time::Instant::now();
    let version = rust_toolchain().map_err(|help| CompileFailure::CompilerUnavailable { help })?;
    let sm = match target {
        Target::Ptx { compute } | Target::Unoptimised { compute } => compute,
        Target::Cubin { sm } => sm,
    };
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "haloscope-rustc-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let internal = |e: std::io::Error| CompileFailure::Internal {
        message: format!("cannot prepare {}: {e}", dir.display()),
    };
    std::fs::create_dir_all(&dir).map_err(internal)?;
    let (root, probe_line) = crate_root(lesson, source_name);
    std::fs::write(dir.join(ROOT_FILE), root).map_err(internal)?;
    std::fs::write(dir.join("gpu.rs"), PRELUDE).map_err(internal)?;
    std::fs::write(dir.join(source_name), source).map_err(internal)?;
    let ptx_path = dir.join("kernel.ptx");
    let output = Command::new(rustc())
        .current_dir(&dir)
        .env("RUSTC_BOOTSTRAP", "1")
        .args([
            "--edition",
            "2024",
            "--target",
            TARGET,
            "--crate-type",
            "cdylib",
            "-O",
            "--error-format=json",
        ])
        .arg(format!("-Ctarget-cpu=sm_{sm}"))
        .args(["-C", "debuginfo=line-tables-only", "--emit", "asm", "-o"])
        .arg(&ptx_path)
        .arg(ROOT_FILE)
        .output()
        .map_err(|e| CompileFailure::Internal {
            message: format!("cannot run rustc: {e}"),
        })?;
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let diagnostics = parse_rustc_json(&stderr, source_name);
    let ptx = std::fs::read_to_string(&ptx_path).ok();
    let _ = std::fs::remove_dir_all(&dir);
    let errors = |file: &str| {
        diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error && d.file == file)
    };
    if !output.status.success() || ptx.is_none() {
        if errors(ROOT_FILE) && !errors(source_name) {
            let probe_failed = diagnostics.iter().any(|d| d.file == ROOT_FILE && d.line == probe_line);
            let message = if diagnostics.iter().any(|d| d.message.contains("cannot find")) {
                format!(
                    "no function named `{}`: the lesson launches `#[unsafe(no_mangle)] pub unsafe extern \"ptx-kernel\" fn {}`",
                    lesson.entry,
                    rust_signature(lesson)
                )
            } else if probe_failed {
                format!(
                    "the kernel's signature does not match the lesson: expected `pub unsafe extern \"ptx-kernel\" fn {}`",
                    rust_signature(lesson)
                )
            } else {
                diagnostics
                    .iter()
                    .filter(|d| d.severity == Severity::Error)
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            return Err(CompileFailure::Contract {
                message,
                diagnostics: Vec::new(),
            });
        }
        let learner: Vec<Diagnostic> = diagnostics.into_iter().filter(|d| d.file != ROOT_FILE).collect();
        return Err(CompileFailure::Errors {
            diagnostics: learner,
            log: stderr,
        });
    }
    let ptx = line_info_only(&ptx.unwrap_or_default());
    check_entry(lesson, &ptx)?;
    Ok(CompiledKernel {
        ptx,
        cubin: None,
        target: Target::Ptx { compute: sm },
        entry: lesson.entry.clone(),
        diagnostics: diagnostics.into_iter().filter(|d| d.file == source_name).collect(),
        compiler: "rustc".into(),
        compiler_version: version.clone(),
        compiler_location: LibLocation {
            path: rustc(),
            source: version,
        },
        millis: started.elapsed().as_secs_f64() * 1e3,
    })
}

/// Keeps `.file`/`.loc` line info but drops LLVM's DWARF sections, the labels it puts between
/// them, and the `debug` target flag: ptxas (CUDA 13.0) rejects the module-level label
/// `$L__sec_end0:` that LLVM 22 emits. The result has the shape of NVRTC's `-lineinfo` PTX.
pub fn line_info_only(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len());
    let mut depth = 0usize;
    let mut in_section = false;
    for line in ptx.lines() {
        let trimmed = line.trim();
        if depth == 0 && trimmed.starts_with(".section") {
            in_section = true;
        }
        if in_section {
            depth += trimmed.matches('{').count();
            depth = depth.saturating_sub(trimmed.matches('}').count());
            if depth == 0 && (trimmed.contains('}') || trimmed.ends_with("{\t}")) {
                in_section = false;
            }
            continue;
        }
        if depth == 0 && trimmed.starts_with("$L__sec_end") && trimmed.ends_with(':') {
            continue;
        }
        if trimmed.starts_with(".target") {
            out.push_str(&line.replace(", debug", ""));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// The Rust type of a contract parameter.
fn rust_type(kind: ParamKind) -> &'static str {
    match kind {
        ParamKind::ConstFloatPtr => "*const f32",
        ParamKind::FloatPtr => "*mut f32",
        ParamKind::Int => "i32",
    }
}

/// `stencil2d(input: *const f32, output: *mut f32, n: i32)`
pub fn rust_signature(lesson: &Lesson) -> String {
    let params: Vec<String> = lesson
        .params
        .iter()
        .map(|p| format!("{}: {}", p.name, rust_type(p.kind)))
        .collect();
    format!("{}({})", lesson.entry, params.join(", "))
}

/// rustc's `--error-format=json` lines, as diagnostics at their primary span. Spans inside
/// the learner's file keep its name; the prelude is `gpu.rs`.
pub fn parse_rustc_json(stderr: &str, source_name: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for line in stderr.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let severity = match v["level"].as_str() {
            Some("error") | Some("error: internal compiler error") => Severity::Error,
            Some("warning") => Severity::Warning,
            Some("note") | Some("help") => Severity::Note,
            _ => continue,
        };
        let message = v["message"].as_str().unwrap_or_default().to_string();
        if message.starts_with("aborting due to")
            || message.contains("warnings emitted")
            || message.contains("warning emitted")
        {
            continue;
        }
        let spans = v["spans"].as_array().cloned().unwrap_or_default();
        let primary = spans
            .iter()
            .find(|s| s["is_primary"].as_bool() == Some(true))
            .or(spans.first());
        let (file, line_no, column) = match primary {
            Some(s) => {
                let name = s["file_name"].as_str().unwrap_or_default();
                let file = Path::new(name)
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default();
                (
                    file,
                    s["line_start"].as_u64().unwrap_or(0) as u32,
                    s["column_start"].as_u64().map(|c| c as u32),
                )
            }
            None => (source_name.to_string(), 0, None),
        };
        let label = primary.and_then(|s| s["label"].as_str()).filter(|l| !l.is_empty());
        let message = match label {
            Some(l) => format!("{message} ({l})"),
            None => message,
        };
        out.push(Diagnostic {
            file,
            line: line_no,
            column,
            severity,
            message,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_sections_are_dropped_and_line_info_kept() {
        let ptx = ".version 7.8\n.target sm_90, debug\n.entry k()\n{\n\t.loc\t1 5 0\n\tret;\n}\n\t.file\t1 \"k.rs\"\n\t.section\t.debug_abbrev\n\t{\n.b8 1\n\t}\n$L__sec_end0:\n\t.section\t.debug_macinfo\t{\t}\n";
        let out = line_info_only(ptx);
        assert!(out.contains(".target sm_90\n") && out.contains(".loc") && out.contains(".file"));
        assert!(
            !out.contains(".section") && !out.contains("$L__sec_end0") && !out.contains(".b8"),
            "{out}"
        );
    }

    #[test]
    fn rustc_json_becomes_diagnostics() {
        let line = r#"{"$message_type":"diagnostic","message":"cannot find value `y` in this scope","code":null,"level":"error","spans":[{"file_name":"starter.rs","byte_start":1,"byte_end":2,"line_start":7,"line_end":7,"column_start":13,"column_end":14,"is_primary":true,"text":[],"label":"not found in this scope"}],"children":[],"rendered":"..."}"#;
        let d = parse_rustc_json(line, "starter.rs");
        assert_eq!(d.len(), 1);
        assert_eq!(
            (d[0].file.as_str(), d[0].line, d[0].column, d[0].severity),
            ("starter.rs", 7, Some(13), Severity::Error)
        );
        assert!(d[0].message.contains("not found in this scope"));
    }
}
