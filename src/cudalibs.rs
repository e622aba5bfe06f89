//! Finding CUDA libraries (NVRTC, CUPTI) on machines that may have no CUDA toolkit.
//!
//! cudarc opens these libraries by name. We first find a concrete file, open it by its full
//! path and keep it open: the dynamic loader then resolves cudarc's later open of
//! `libnvrtc.so.13` (or `.12`) to the already-loaded library through its soname, so cudarc
//! uses exactly the file we found, wherever it lives.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CudaLib {
    Nvrtc,
    Cupti,
}

impl CudaLib {
    /// File names start with this and continue with `.so.<major>`.
    fn stem(self) -> &'static str {
        match self {
            CudaLib::Nvrtc => "libnvrtc",
            CudaLib::Cupti => "libcupti",
        }
    }

    /// Environment variable naming the library file, or a directory holding it.
    pub fn env_var(self) -> &'static str {
        match self {
            CudaLib::Nvrtc => "HALOSCOPE_NVRTC",
            CudaLib::Cupti => "HALOSCOPE_CUPTI",
        }
    }

    /// Where a toolkit keeps it, below the toolkit root.
    fn toolkit_subdirs(self) -> &'static [&'static str] {
        match self {
            CudaLib::Nvrtc => &["lib64", "lib"],
            CudaLib::Cupti => &["extras/CUPTI/lib64", "lib64", "lib"],
        }
    }

    /// The haloscope-local pip install directory under the checkout.
    fn deps_dir(self) -> &'static str {
        match self {
            CudaLib::Nvrtc => ".deps/nvrtc",
            CudaLib::Cupti => ".deps/cupti",
        }
    }

    fn pip_package(self) -> &'static str {
        match self {
            CudaLib::Nvrtc => "nvidia-cuda-nvrtc",
            CudaLib::Cupti => "nvidia-cuda-cupti",
        }
    }

    /// How to get the library, printed whenever it cannot be found.
    pub fn install_help(self) -> String {
        let (what, short) = match self {
            CudaLib::Nvrtc => ("NVRTC (libnvrtc)", "nvrtc"),
            CudaLib::Cupti => ("CUPTI (libcupti)", "cupti"),
        };
        format!(
            "{what} was not found. Install it from PyPI with\n  \
             python3 -m pip install --target .deps/{short} {}\n\
             (run from the haloscope checkout; `make setup` does this for NVRTC), or install the CUDA \
             toolkit (CUDA_PATH or /usr/local/cuda), or set {}=/path/to/{}.so.13",
            self.pip_package(),
            self.env_var(),
            self.stem()
        )
    }
}

/// Where a candidate library came from, for `haloscope doctor` and error messages.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct LibLocation {
    pub path: PathBuf,
    pub source: String,
}

/// All candidate files, in the order they are tried.
pub fn candidates(lib: CudaLib, configured: Option<&Path>) -> Vec<LibLocation> {
    let mut found = Vec::new();
    let explicit = configured
        .map(|p| (p.to_path_buf(), "configured path".to_string()))
        .into_iter()
        .chain(std::env::var_os(lib.env_var()).map(|p| (PathBuf::from(p), format!("${}", lib.env_var()))));
    for (path, source) in explicit {
        if path.is_file() {
            found.push(LibLocation { path, source });
        } else {
            push_dir(lib, &mut found, &path, &source);
        }
    }
    for root in project_roots() {
        for dir in pip_lib_dirs(&root.join(lib.deps_dir())) {
            push_dir(lib, &mut found, &dir, "haloscope .deps (pip)");
        }
    }
    for site in python_site_dirs() {
        for dir in pip_lib_dirs(&site) {
            push_dir(lib, &mut found, &dir, &format!("pip {}", lib.pip_package()));
        }
    }
    for toolkit in toolkit_dirs() {
        for sub in lib.toolkit_subdirs() {
            push_dir(lib, &mut found, &toolkit.join(sub), "CUDA toolkit");
        }
    }
    let mut seen = std::collections::HashSet::new();
    found.retain(|c| seen.insert(c.path.canonicalize().unwrap_or_else(|_| c.path.clone())));
    found
}

fn push_dir(lib: CudaLib, found: &mut Vec<LibLocation>, dir: &Path, source: &str) {
    for file in lib_files_in(lib, dir) {
        found.push(LibLocation {
            path: file,
            source: source.to_string(),
        });
    }
}

struct Loaded {
    result: Result<LibLocation, String>,
    _handle: Option<libloading::Library>,
}

static NVRTC: OnceLock<Loaded> = OnceLock::new();
static CUPTI: OnceLock<Loaded> = OnceLock::new();

/// Finds and opens the library once per process; the error says how to install it.
pub fn ensure_loaded(lib: CudaLib, configured: Option<&Path>) -> Result<LibLocation, String> {
    let slot = match lib {
        CudaLib::Nvrtc => &NVRTC,
        CudaLib::Cupti => &CUPTI,
    };
    slot.get_or_init(|| open_first(lib, configured)).result.clone()
}

fn open_first(lib: CudaLib, configured: Option<&Path>) -> Loaded {
    let mut tried = Vec::new();
    for candidate in candidates(lib, configured) {
        // SAFETY: loading a CUDA library runs only its initialisers.
        match unsafe { libloading::Library::new(&candidate.path) } {
            Ok(handle) => {
                return Loaded {
                    result: Ok(candidate),
                    _handle: Some(handle),
                };
            }
            Err(e) => tried.push(format!("{}: {e}", candidate.path.display())),
        }
    }
    // Last resort: whatever the system loader finds by name (LD_LIBRARY_PATH, ldconfig).
    // SAFETY: as above.
    let present = unsafe {
        match lib {
            CudaLib::Nvrtc => cudarc::nvrtc::sys::is_culib_present(),
            CudaLib::Cupti => cudarc::cupti::sys::is_culib_present(),
        }
    };
    if present {
        let path = PathBuf::from(format!("{}.so", lib.stem()));
        return Loaded {
            result: Ok(LibLocation {
                path,
                source: "system library path".into(),
            }),
            _handle: None,
        };
    }
    let mut message = lib.install_help();
    if !tried.is_empty() {
        message.push_str(&format!("\nFound but could not open: {}", tried.join("; ")));
    }
    Loaded {
        result: Err(message),
        _handle: None,
    }
}

fn lib_files_in(lib: CudaLib, dir: &Path) -> Vec<PathBuf> {
    let prefix = format!("{}.so.", lib.stem());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.strip_prefix(&prefix)
                    .and_then(|version| version.split('.').next())
                    .is_some_and(|major| major.parse::<u32>().is_ok())
            })
        })
        .collect();
    // Newest major first.
    files.sort_by(|a, b| b.cmp(a));
    files
}

/// `nvidia/cu13/lib` (CUDA 13 wheels) and `nvidia/<package>/lib` (CUDA 12 wheels) under a
/// pip install root or site-packages directory.
fn pip_lib_dirs(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root.join("nvidia")) else {
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

/// The working directory, the checkout this binary was built from, and the directories
/// above the executable.
fn project_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        roots.push(cwd);
    }
    roots.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    if let Ok(exe) = std::env::current_exe() {
        roots.extend(exe.ancestors().skip(1).take(4).map(Path::to_path_buf));
    }
    roots
}

fn python_site_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut add_pythons = |base: PathBuf| {
        if let Ok(entries) = std::fs::read_dir(&base) {
            for e in entries.filter_map(Result::ok) {
                if e.file_name().to_string_lossy().starts_with("python3") {
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
    let mut dirs: Vec<PathBuf> = ["CUDA_PATH", "CUDA_HOME", "CUDA_ROOT"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .collect();
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
