//! Finding libnvrtc on a machine that may have no CUDA toolkit.
//!
//! cudarc opens NVRTC by library name. We first find a concrete file, open it by its full
//! path and keep it open: the dynamic loader then resolves cudarc's later open of
//! `libnvrtc.so.13` (or `.12`) to the already-loaded library through its soname, so
//! cudarc uses exactly the file we found, wherever it lives.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Environment variable naming a libnvrtc file, or a directory holding one.
pub const NVRTC_ENV: &str = "HALOSCOPE_NVRTC";

/// Where a candidate library came from, for `haloscope doctor` and error messages.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct NvrtcLocation {
    pub path: PathBuf,
    pub source: String,
}

/// How to get NVRTC, printed whenever it cannot be found.
pub fn nvrtc_install_help() -> String {
    format!(
        "NVRTC (libnvrtc) was not found. Install it from PyPI with\n  \
         python3 -m pip install --target .deps/nvrtc nvidia-cuda-nvrtc\n\
         (run from the haloscope checkout; `make setup` does this), or install the CUDA toolkit \
         (CUDA_PATH or /usr/local/cuda), or set {NVRTC_ENV}=/path/to/libnvrtc.so.13"
    )
}

/// All places searched, in order, each with the files found there.
pub fn candidates(configured: Option<&Path>) -> Vec<NvrtcLocation> {
    let mut found = Vec::new();
    fn push_dir(found: &mut Vec<NvrtcLocation>, dir: &Path, source: &str) {
        for file in nvrtc_files_in(dir) {
            found.push(NvrtcLocation {
                path: file,
                source: source.to_string(),
            });
        }
    }
    for (path, source) in configured
        .map(|p| (p.to_path_buf(), "configured path".to_string()))
        .into_iter()
        .chain(std::env::var_os(NVRTC_ENV).map(|p| (PathBuf::from(p), format!("${NVRTC_ENV}"))))
    {
        if path.is_file() {
            found.push(NvrtcLocation { path, source });
        } else {
            push_dir(&mut found, &path, &source);
        }
    }
    for root in project_roots() {
        for lib in pip_lib_dirs(&root.join(".deps/nvrtc")) {
            push_dir(&mut found, &lib, "haloscope .deps (pip)");
        }
    }
    for site in python_site_dirs() {
        for lib in pip_lib_dirs(&site) {
            push_dir(&mut found, &lib, "pip nvidia-cuda-nvrtc");
        }
    }
    for toolkit in toolkit_dirs() {
        push_dir(&mut found, &toolkit.join("lib64"), "CUDA toolkit");
        push_dir(&mut found, &toolkit.join("lib"), "CUDA toolkit");
    }
    let mut seen = std::collections::HashSet::new();
    found.retain(|c| seen.insert(c.path.canonicalize().unwrap_or_else(|_| c.path.clone())));
    found
}

/// The library in use for this process, opened once.
static LOADED: OnceLock<Result<NvrtcLocation, String>> = OnceLock::new();
static HANDLE: OnceLock<libloading::Library> = OnceLock::new();

/// Finds and opens NVRTC (once per process); the error text says how to install it.
pub fn ensure_nvrtc_loaded(configured: Option<&Path>) -> Result<NvrtcLocation, String> {
    LOADED
        .get_or_init(|| {
            let mut tried = Vec::new();
            for candidate in candidates(configured) {
                // SAFETY: loading NVRTC runs only its library initialisers.
                match unsafe { libloading::Library::new(&candidate.path) } {
                    Ok(lib) => {
                        let _ = HANDLE.set(lib);
                        return Ok(candidate);
                    }
                    Err(e) => tried.push(format!("{}: {e}", candidate.path.display())),
                }
            }
            // Last resort: whatever the system loader finds by name (LD_LIBRARY_PATH, ldconfig).
            // SAFETY: as above.
            if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
                return Ok(NvrtcLocation {
                    path: PathBuf::from("libnvrtc.so"),
                    source: "system library path".into(),
                });
            }
            let mut message = nvrtc_install_help();
            if !tried.is_empty() {
                message.push_str(&format!("\nFound but could not open: {}", tried.join("; ")));
            }
            Err(message)
        })
        .clone()
}

fn nvrtc_files_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with("libnvrtc.so.")
                    && !n.contains("builtins")
                    && n["libnvrtc.so.".len()..]
                        .split('.')
                        .next()
                        .is_some_and(|v| v.parse::<u32>().is_ok())
            })
        })
        .collect();
    // Newest major first.
    files.sort();
    files.reverse();
    files
}

/// `nvidia/cu13/lib` (CUDA 13 wheels) and `nvidia/cuda_nvrtc/lib` (CUDA 12 wheels) under a
/// pip install root or site-packages directory.
fn pip_lib_dirs(root: &Path) -> Vec<PathBuf> {
    let nvidia = root.join("nvidia");
    let Ok(entries) = std::fs::read_dir(&nvidia) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path().join("lib")))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.reverse();
    dirs
}

/// The checkout this binary was built from and the directories above the executable.
fn project_roots() -> Vec<PathBuf> {
    let mut roots = vec![PathBuf::from(env!("CARGO_MANIFEST_DIR"))];
    if let Ok(cwd) = std::env::current_dir() {
        roots.insert(0, cwd);
    }
    if let Ok(exe) = std::env::current_exe() {
        roots.extend(exe.ancestors().skip(1).take(4).map(Path::to_path_buf));
    }
    roots.dedup();
    roots
}

fn python_site_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut add_pythons = |base: PathBuf| {
        if let Ok(entries) = std::fs::read_dir(&base) {
            for e in entries.filter_map(Result::ok) {
                let name = e.file_name();
                if name.to_string_lossy().starts_with("python3") {
                    dirs.push(e.path().join("site-packages"));
                    dirs.push(e.path().join("dist-packages"));
                }
            }
        }
    };
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV") {
        add_pythons(PathBuf::from(venv).join("lib"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        add_pythons(PathBuf::from(&home).join(".local/lib"));
        if let Ok(versions) = std::fs::read_dir(PathBuf::from(&home).join(".pyenv/versions")) {
            for v in versions.filter_map(Result::ok) {
                add_pythons(v.path().join("lib"));
            }
        }
    }
    add_pythons(PathBuf::from("/usr/local/lib"));
    add_pythons(PathBuf::from("/usr/lib"));
    dirs
}

fn toolkit_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for var in ["CUDA_PATH", "CUDA_HOME", "CUDA_ROOT"] {
        if let Some(p) = std::env::var_os(var) {
            dirs.push(PathBuf::from(p));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda"));
    if let Ok(entries) = std::fs::read_dir("/usr/local") {
        let mut versioned: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("cuda-")))
            .collect();
        versioned.sort();
        versioned.reverse();
        dirs.extend(versioned);
    }
    dirs
}
