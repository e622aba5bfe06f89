//! Finding CUDA libraries (NVRTC, CUPTI) on machines that may have no CUDA toolkit, and the
//! CUDA headers NVRTC compiles kernels against.
//!
//! cudarc opens these libraries by name. We first find a concrete file, open it by its full
//! path and keep it open: the dynamic loader then resolves cudarc's later open of
//! `libnvrtc.so.13` (or `.12`) to the already-loaded library through its soname, so cudarc
//! uses exactly the file we found, wherever it lives.
//!
//! NVRTC has no include path of its own: the headers a kernel includes (`<cuda_fp16.h>`,
//! `<cooperative_groups.h>`, ...) come from a directory found here ([`cuda_headers`]) and
//! passed with `-I`. See docs/includes.md.

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

    /// The haloscope-local pip install directories under the checkout: scripts/workstation/setup.sh puts
    /// NVRTC 13 in the first and, on a machine that needs it, NVRTC 12 in the second.
    fn deps_dirs(self) -> &'static [&'static str] {
        match self {
            CudaLib::Nvrtc => &[".deps/nvrtc", ".deps/nvrtc-cu12"],
            CudaLib::Cupti => &[".deps/cupti", ".deps/cupti-cu12"],
        }
    }

    /// "NVRTC" or "CUPTI".
    pub fn display_name(self) -> &'static str {
        match self {
            CudaLib::Nvrtc => "NVRTC",
            CudaLib::Cupti => "CUPTI",
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
        let fetch = match self {
            CudaLib::Nvrtc => "`haloscope setup` fetches it (and the CUDA headers) from PyPI; or install it with\n  ",
            CudaLib::Cupti => "Install it from PyPI with\n  ",
        };
        format!(
            "{what} was not found. {fetch}\
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
    // What the user named stays first, whatever its version; the rest is sorted below.
    let named = found.len();
    for root in project_roots() {
        for deps in lib.deps_dirs() {
            for dir in pip_lib_dirs(&root.join(deps)) {
                push_dir(lib, &mut found, &dir, "haloscope .deps (pip)");
            }
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
    // The majors this machine takes, best first; within one major, the order above.
    let fit = LibFit::for_this_machine(lib);
    let mut discovered = found.split_off(named.min(found.len()));
    discovered.sort_by_key(|c| fit.rank(major_of(&c.path)));
    found.extend(discovered);
    found
}

/// The CUDA major version in a library's file name: 13 for `libnvrtc.so.13` or
/// `libcupti.so.13.0.85`. CUPTI of CUDA 13 names its file after the year
/// (`libcupti.so.2025.3.1`), which says nothing about the CUDA major: `None`.
pub fn major_of(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    let major: u32 = name.split_once(".so.")?.1.split('.').next()?.parse().ok()?;
    (major < 1000).then_some(major)
}

/// Which major versions of a CUDA library this machine's driver and GPU can use, best first,
/// and, when none of the usual ones can, why (one sentence with the fix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibFit {
    pub majors: Vec<u32>,
    pub problem: Option<String>,
}

impl LibFit {
    /// From the driver's CUDA version and the chosen GPU (`crate::machine`).
    pub fn for_this_machine(lib: CudaLib) -> LibFit {
        let machine = crate::machine::machine();
        let gpu = machine.chosen_gpu().ok().flatten();
        match lib {
            CudaLib::Nvrtc => nvrtc_fit(
                machine.driver_cuda,
                gpu.map(|g| (g.name.as_str(), g.compute_capability)),
            ),
            CudaLib::Cupti => cupti_fit(machine.driver_cuda),
        }
    }

    /// Sort key: the position of `major` in the preferred list; unknown or unfitting last.
    fn rank(&self, major: Option<u32>) -> usize {
        major
            .and_then(|m| self.majors.iter().position(|&w| w == m))
            .unwrap_or(self.majors.len())
    }

    /// Whether a library of this major suits the machine (true when it cannot be told).
    pub fn accepts(&self, major: Option<u32>) -> bool {
        major.is_none_or(|m| self.majors.contains(&m))
    }
}

/// The NVRTC majors the driver (`driver_cuda`, the newest CUDA it runs) and the GPU (name and
/// compute capability) accept, best first. A cubin loads on a driver of its own major or a
/// newer one, never an older one; NVRTC 13 compiles only for compute capability 7.5 and newer
/// (it dropped Maxwell, Pascal and Volta), NVRTC 12 for 5.0 and newer. Without a GPU either
/// does (the emulator runs PTX of both), 13 first.
pub fn nvrtc_fit(driver_cuda: Option<(u32, u32)>, gpu: Option<(&str, (u32, u32))>) -> LibFit {
    let any = LibFit {
        majors: vec![13, 12],
        problem: None,
    };
    let (Some((driver, _)), Some((name, cc))) = (driver_cuda, gpu) else {
        return any;
    };
    let needs_12 = if driver < 12 {
        return LibFit {
            majors: vec![13, 12],
            problem: Some(format!(
                "the NVIDIA driver runs CUDA {driver} at most and haloscope's GPU backend needs CUDA 12 \
                 or newer: install NVIDIA driver 525 or newer (580 or newer for CUDA 13); the emulator \
                 works meanwhile"
            )),
        };
    } else if cc < (5, 0) {
        return LibFit {
            majors: vec![13, 12],
            problem: Some(format!(
                "the {name} (compute capability {}.{}) is older than any card the NVRTC versions haloscope \
                 can use compile for (5.0 and newer); the emulator works on this machine",
                cc.0, cc.1
            )),
        };
    } else {
        driver < 13 || cc < (7, 5)
    };
    if needs_12 {
        // NVRTC 13 is kept as a last resort for the emulator.
        LibFit {
            majors: vec![12],
            problem: None,
        }
    } else {
        any
    }
}

/// The CUPTI major that the driver takes: the driver's own (CUPTI 13 needs a CUDA 13 driver).
pub fn cupti_fit(driver_cuda: Option<(u32, u32)>) -> LibFit {
    let majors = if driver_cuda.is_some_and(|(driver, _)| driver == 12) {
        vec![12]
    } else {
        vec![13, 12]
    };
    LibFit { majors, problem: None }
}

/// Whether the loaded library (`location`) suits this machine's GPU: `Err` is one sentence
/// saying which package or driver is needed. The GPU backend asks before it compiles for the
/// GPU; the emulator takes any NVRTC.
pub fn check_fits_gpu(lib: CudaLib, location: &LibLocation) -> Result<(), String> {
    let fit = LibFit::for_this_machine(lib);
    if let Some(problem) = fit.problem {
        return Err(problem);
    }
    let major = major_of(&location.path);
    if fit.accepts(major) {
        return Ok(());
    }
    let machine = crate::machine::machine();
    let gpu = machine
        .chosen_gpu()
        .ok()
        .flatten()
        .map(|g| {
            format!(
                "{} (compute capability {}.{})",
                g.name, g.compute_capability.0, g.compute_capability.1
            )
        })
        .unwrap_or_else(|| "GPU".into());
    let driver = machine
        .driver_cuda
        .map(|(a, b)| format!("CUDA {a}.{b}"))
        .unwrap_or_else(|| "CUDA ?".into());
    let wanted = fit.majors.first().copied().unwrap_or(12);
    Err(format!(
        "this {gpu} with a {driver} driver needs {} {wanted}, and the one found is {} {} ({}): run \
         `make setup`, which installs the one that fits, or `python3 -m pip install --target \
         .deps/{}-cu{wanted} {}-cu{wanted}`",
        lib.display_name(),
        lib.display_name(),
        major.map(|m| m.to_string()).unwrap_or_default(),
        location.path.display(),
        lib.display_name().to_lowercase(),
        lib.pip_package()
    ))
}

/// NVRTC opens `libnvrtc-builtins.so.M.m` by name when it compiles; a libnvrtc outside the
/// loader's path (a pip wheel named by `$HALOSCOPE_NVRTC`, say) then fails every compile with
/// "failed to open libnvrtc-builtins". Opening the builtins beside it first makes that name
/// resolve to the copy already loaded.
fn open_builtins(nvrtc: &Path) -> Option<libloading::Library> {
    let dir = nvrtc.parent()?;
    let file = std::fs::read_dir(dir).ok()?.flatten().map(|e| e.path()).find(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("libnvrtc-builtins.so.") && !n.contains(".alt."))
    })?;
    // SAFETY: as for NVRTC itself: loading runs only the library's initialisers.
    unsafe { libloading::Library::new(&file) }.ok()
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
    /// NVRTC's builtins library, opened from NVRTC's own folder first (see `open_builtins`).
    _builtins: Option<libloading::Library>,
}

static NVRTC: std::sync::Mutex<Option<Loaded>> = std::sync::Mutex::new(None);
static CUPTI: std::sync::Mutex<Option<Loaded>> = std::sync::Mutex::new(None);

/// Finds and opens the library; once one is open it stays the one for this process. A
/// failure is not kept: the app may set NVRTC up (crate::cuda_setup) after a Run found none,
/// and the next Run must find it. The error says how to install it.
pub fn ensure_loaded(lib: CudaLib, configured: Option<&Path>) -> Result<LibLocation, String> {
    let slot = match lib {
        CudaLib::Nvrtc => &NVRTC,
        CudaLib::Cupti => &CUPTI,
    };
    let mut slot = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(loaded) = slot.as_ref() {
        return loaded.result.clone();
    }
    let loaded = open_first(lib, configured);
    let result = loaded.result.clone();
    if result.is_ok() {
        *slot = Some(loaded);
    }
    result
}

fn open_first(lib: CudaLib, configured: Option<&Path>) -> Loaded {
    let mut tried = Vec::new();
    for candidate in candidates(lib, configured) {
        let builtins = match lib {
            CudaLib::Nvrtc => open_builtins(&candidate.path),
            CudaLib::Cupti => None,
        };
        // SAFETY: loading a CUDA library runs only its initialisers.
        match unsafe { libloading::Library::new(&candidate.path) } {
            Ok(handle) => {
                return Loaded {
                    result: Ok(candidate),
                    _handle: Some(handle),
                    _builtins: builtins,
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
            _builtins: None,
        };
    }
    let mut message = lib.install_help();
    if !tried.is_empty() {
        message.push_str(&format!("\nFound but could not open: {}", tried.join("; ")));
    }
    Loaded {
        result: Err(message),
        _handle: None,
        _builtins: None,
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
/// The `nvdisasm` executable (the machine-code check, `compile::machine_code`): from
/// `$HALOSCOPE_NVDISASM`, haloscope's `.deps/nvdisasm` (pip `nvidia-cuda-nvdisasm`, which
/// scripts/workstation/setup.sh installs), a CUDA toolkit, or `PATH`.
pub fn nvdisasm() -> Option<PathBuf> {
    let configured = std::env::var_os("HALOSCOPE_NVDISASM").map(PathBuf::from);
    let pip = project_roots()
        .into_iter()
        .flat_map(|root| pip_bin_dirs(&root.join(".deps/nvdisasm")));
    let toolkits = toolkit_dirs().into_iter().map(|t| t.join("bin"));
    let path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    configured
        .into_iter()
        .chain(pip.chain(toolkits).chain(path).map(|dir| dir.join("nvdisasm")))
        .find(|f| f.is_file())
}

/// `<root>/nvidia/<cuXX>/bin`, newest first (the layout of NVIDIA's wheels).
fn pip_bin_dirs(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root.join("nvidia")) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path().join("bin"))).collect();
    dirs.sort();
    dirs.reverse();
    dirs
}

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

/// The working directory, the checkout this binary was built from, the directories above the
/// executable, and haloscope's data directory.
fn project_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        roots.push(cwd);
    }
    roots.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    if let Ok(exe) = std::env::current_exe() {
        roots.extend(exe.ancestors().skip(1).take(4).map(Path::to_path_buf));
    }
    // Where an installed haloscope sets NVRTC up on first use (crate::cuda_setup).
    roots.push(crate::paths::data_dir());
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

/// Environment variable naming the CUDA headers: a `:`-separated list of include
/// directories (each one's `cccl` folder is added when present), `bundled` for the copy
/// inside NVRTC 13.3+, or `none` for no CUDA headers at all (haloscope's shims only).
pub const CUDA_INCLUDE_ENV: &str = "HALOSCOPE_CUDA_INCLUDE";

/// The haloscope-local pip install directory of the CUDA headers, under the checkout.
/// The first holds CUDA 13's, the second CUDA 12's (scripts/workstation/setup.sh installs the headers of
/// the NVRTC it installs).
const HEADERS_DEPS_DIRS: [&str; 2] = [".deps/cuda-headers", ".deps/cuda-headers-cu12"];

/// One set of CUDA include directories that belong together (one toolkit or pip install).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CudaHeaders {
    /// Passed to NVRTC as `-I`, in this order.
    pub dirs: Vec<PathBuf>,
    /// Where they were found, for `haloscope doctor` and messages.
    pub source: String,
    /// `(major, minor)` of the CUDA release they are from, when the headers say.
    pub version: Option<(u32, u32)>,
}

impl CudaHeaders {
    fn new(roots: &[PathBuf], source: &str) -> CudaHeaders {
        let mut dirs = Vec::new();
        for root in roots {
            dirs.push(root.clone());
            // CUDA 13 keeps libcu++ (CCCL) in include/cccl; CUDA 12 in include itself.
            let cccl = root.join("cccl");
            if cccl.join("cuda/std").is_dir() {
                dirs.push(cccl);
            }
        }
        let version = roots.iter().find_map(|r| headers_version(r));
        CudaHeaders {
            dirs,
            source: source.to_string(),
            version,
        }
    }

    /// Whether `header` (a path relative to an include directory) is in one of them.
    pub fn has(&self, header: &str) -> bool {
        self.dirs.iter().any(|d| d.join(header).is_file())
    }
}

/// Header sets found on disk, in the order they are tried: `$HALOSCOPE_CUDA_INCLUDE` when it
/// names directories, the toolkit or pip install that `nvrtc` itself lives in, haloscope's
/// `.deps/cuda-headers`, Python site-packages and the CUDA toolkits. A set counts only if it
/// has `cuda_fp16.h`, except the one named by the environment.
pub fn header_candidates(nvrtc: Option<&LibLocation>) -> Vec<CudaHeaders> {
    let mut found = Vec::new();
    if let Some(HeadersEnv::Dirs(dirs)) = headers_env() {
        found.push(CudaHeaders::new(&dirs, &format!("${CUDA_INCLUDE_ENV}")));
    }
    let push = |found: &mut Vec<CudaHeaders>, headers: CudaHeaders| {
        if headers.has("cuda_fp16.h") {
            found.push(headers);
        }
    };
    // `<root>/lib64/libnvrtc.so` (toolkit) or `nvidia/cu13/lib/libnvrtc.so` (pip): the
    // headers of the same release sit in `<root>/include`.
    if let Some(beside) = nvrtc.and_then(|n| n.path.parent()?.parent().map(|root| root.join("include"))) {
        push(&mut found, CudaHeaders::new(&[beside], "beside NVRTC"));
    }
    for root in project_roots() {
        for deps in HEADERS_DEPS_DIRS {
            for roots in pip_include_dirs(&root.join(deps)) {
                push(&mut found, CudaHeaders::new(&roots, "haloscope .deps (pip)"));
            }
        }
    }
    for site in python_site_dirs() {
        for roots in pip_include_dirs(&site) {
            push(&mut found, CudaHeaders::new(&roots, "pip nvidia-cuda-runtime"));
        }
    }
    for toolkit in toolkit_dirs() {
        push(&mut found, CudaHeaders::new(&[toolkit.join("include")], "CUDA toolkit"));
    }
    let mut seen = std::collections::HashSet::new();
    found.retain(|h| {
        let key: Vec<PathBuf> = h
            .dirs
            .iter()
            .map(|d| d.canonicalize().unwrap_or_else(|_| d.clone()))
            .collect();
        seen.insert(key)
    });
    found
}

/// The CUDA headers to compile against with the NVRTC at `nvrtc` (version `nvrtc_version`),
/// chosen once per process; `None` when there are none (kernels then get haloscope's shims
/// only). Headers of NVRTC's own release are preferred, then an older release of the same
/// major version, then the copy bundled inside NVRTC (13.3+, extracted to a cache
/// directory), then whatever was found. `$HALOSCOPE_CUDA_INCLUDE` overrides the choice.
pub fn cuda_headers(nvrtc: &LibLocation, nvrtc_version: (u32, u32)) -> Option<CudaHeaders> {
    static CHOSEN: OnceLock<Option<CudaHeaders>> = OnceLock::new();
    CHOSEN
        .get_or_init(|| match headers_env() {
            Some(HeadersEnv::None) => None,
            Some(HeadersEnv::Bundled) => bundled_headers(nvrtc, nvrtc_version),
            Some(HeadersEnv::Dirs(_)) => header_candidates(Some(nvrtc)).into_iter().next(),
            None => choose_headers(header_candidates(Some(nvrtc)), nvrtc_version, || {
                bundled_headers(nvrtc, nvrtc_version)
            }),
        })
        .clone()
}

fn choose_headers(
    candidates: Vec<CudaHeaders>,
    nvrtc: (u32, u32),
    bundled: impl FnOnce() -> Option<CudaHeaders>,
) -> Option<CudaHeaders> {
    if let Some(exact) = candidates.iter().find(|h| h.version == Some(nvrtc)) {
        return Some(exact.clone());
    }
    let older = |h: &&CudaHeaders| {
        h.version
            .is_some_and(|(major, minor)| major == nvrtc.0 && minor <= nvrtc.1)
    };
    if let Some(older) = candidates.iter().find(older) {
        return Some(older.clone());
    }
    bundled().or_else(|| candidates.into_iter().next())
}

enum HeadersEnv {
    None,
    Bundled,
    Dirs(Vec<PathBuf>),
}

fn headers_env() -> Option<HeadersEnv> {
    let value = std::env::var_os(CUDA_INCLUDE_ENV)?;
    match value.to_str().map(str::trim) {
        Some("") => None,
        Some("none") => Some(HeadersEnv::None),
        Some("bundled") => Some(HeadersEnv::Bundled),
        _ => Some(HeadersEnv::Dirs(
            std::env::split_paths(&value)
                .filter(|p| !p.as_os_str().is_empty())
                .collect(),
        )),
    }
}

/// The include directories of CUDA wheels under a pip root: `nvidia/cu13/include` (CUDA 13
/// wheels share one tree), newest first, then CUDA 12's `nvidia/cuda_runtime/include` with
/// `nvidia/cuda_cccl/include`. Each inner list is one set.
fn pip_include_dirs(root: &Path) -> Vec<Vec<PathBuf>> {
    let nvidia = root.join("nvidia");
    let Ok(entries) = std::fs::read_dir(&nvidia) else {
        return Vec::new();
    };
    let mut shared: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.strip_prefix("cu")
                .is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(|e| e.path().join("include"))
        .filter(|p| p.is_dir())
        .collect();
    shared.sort();
    shared.reverse();
    let mut sets: Vec<Vec<PathBuf>> = shared.into_iter().map(|p| vec![p]).collect();
    let split: Vec<PathBuf> = ["cuda_runtime", "cuda_cccl"]
        .iter()
        .map(|package| nvidia.join(package).join("include"))
        .filter(|p| p.is_dir())
        .collect();
    if !split.is_empty() {
        sets.push(split);
    }
    sets
}

/// The CUDA release headers come from: `CUDART_VERSION` in cuda_runtime_api.h,
/// `CUDA_VERSION` in cuda.h, or the marker NVRTC writes beside its bundled headers.
fn headers_version(dir: &Path) -> Option<(u32, u32)> {
    let define = |file: &str, name: &str| -> Option<(u32, u32)> {
        let text = std::fs::read_to_string(dir.join(file)).ok()?;
        text.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next()? == "#define" && words.next()? == name)
                .then(|| words.next()?.parse::<u32>().ok())
                .flatten()
                .map(|v| (v / 1000, v % 1000 / 10))
        })
    };
    define("cuda_runtime_api.h", "CUDART_VERSION")
        .or_else(|| define("cuda.h", "CUDA_VERSION"))
        .or_else(|| {
            let text = std::fs::read_to_string(dir.join(".nvrtc_headers_version")).ok()?;
            let field = |key: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(key)?.strip_prefix('=')?.trim().parse::<u32>().ok())
            };
            Some((field("cuda_major")?, field("cuda_minor")?))
        })
}

/// NVRTC 13.3+ carries the CUDA headers (and CCCL) inside libnvrtc-builtins and can write
/// them out: they go to `<cache>/haloscope/nvrtc-headers-<major>.<minor>`, once.
fn bundled_headers(nvrtc: &LibLocation, (major, minor): (u32, u32)) -> Option<CudaHeaders> {
    type Install = unsafe extern "C" fn(*const std::ffi::c_char, u32, *mut *const std::ffi::c_char) -> i32;
    // SAFETY: the library is already loaded (this only takes another reference to it), and
    // the symbol has the signature nvrtc.h gives nvrtcInstallBundledHeaders.
    let library = unsafe { libloading::Library::new(&nvrtc.path) }.ok()?;
    let install = unsafe { library.get::<Install>(b"nvrtcInstallBundledHeaders\0") }.ok()?;
    let dir = cache_dir().join(format!("nvrtc-headers-{major}.{minor}"));
    let path = std::ffi::CString::new(dir.to_str()?).ok()?;
    let mut error: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: a NUL-terminated path, flags 0 (keep an install of the same version), and an
    // out-pointer NVRTC may set to a static message.
    let status = unsafe { install(path.as_ptr(), 0, &mut error) };
    if status != 0 {
        return None;
    }
    let headers = CudaHeaders::new(&[dir], "NVRTC bundled headers");
    headers.has("cuda_fp16.h").then_some(headers)
}

/// `$XDG_CACHE_HOME/haloscope`, else `~/.cache/haloscope`, else one in the temp directory.
fn cache_dir() -> PathBuf {
    if let Some(xdg) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(xdg).join("haloscope");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home).join(".cache/haloscope");
    }
    std::env::temp_dir().join("haloscope-cache")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(version: Option<(u32, u32)>, source: &str) -> CudaHeaders {
        CudaHeaders {
            dirs: vec![PathBuf::from(source)],
            source: source.into(),
            version,
        }
    }

    #[test]
    fn headers_of_nvrtcs_release_win_then_older_then_bundled() {
        let newer = headers(Some((13, 5)), "newer");
        let exact = headers(Some((13, 0)), "exact");
        let older = headers(Some((12, 9)), "other major");
        let pick = |c: Vec<CudaHeaders>, v, bundled: bool| {
            choose_headers(c, v, || bundled.then(|| headers(Some(v), "bundled"))).map(|h| h.source)
        };
        let all = vec![newer.clone(), older.clone(), exact.clone()];
        assert_eq!(pick(all.clone(), (13, 0), true).as_deref(), Some("exact"));
        assert_eq!(pick(all.clone(), (13, 6), true).as_deref(), Some("newer"));
        assert_eq!(pick(vec![newer.clone()], (13, 4), true).as_deref(), Some("bundled"));
        assert_eq!(pick(vec![newer.clone()], (13, 4), false).as_deref(), Some("newer"));
        assert_eq!(pick(Vec::new(), (12, 4), false), None);
    }

    #[test]
    fn the_nvrtc_major_fits_the_driver_and_the_card() {
        let majors = |driver, cc| nvrtc_fit(Some(driver), Some(("card", cc))).majors;
        // Driver 580+ (CUDA 13) and Turing or newer: 13, with 12 as a second choice.
        assert_eq!(majors((13, 0), (9, 0)), vec![13, 12]);
        assert_eq!(majors((13, 0), (7, 5)), vec![13, 12]);
        // Pascal and Volta on a 580 driver: NVRTC 13 no longer compiles for them.
        assert_eq!(majors((13, 0), (6, 1)), vec![12]);
        assert_eq!(majors((13, 0), (7, 0)), vec![12]);
        // A CUDA 12 driver (525-575) takes no cubin of NVRTC 13.
        assert_eq!(majors((12, 8), (8, 9)), vec![12]);
        // No GPU: the emulator runs either.
        assert_eq!(nvrtc_fit(None, None).majors, vec![13, 12]);
        assert_eq!(nvrtc_fit(Some((12, 2)), None).majors, vec![13, 12]);
        let old_driver = nvrtc_fit(Some((11, 4)), Some(("card", (8, 6)))).problem.unwrap();
        assert!(old_driver.contains("driver 525 or newer"), "{old_driver}");
        let old_card = nvrtc_fit(Some((12, 4)), Some(("GTX 780", (3, 5)))).problem.unwrap();
        assert!(old_card.contains("GTX 780 (compute capability 3.5)"), "{old_card}");
        assert_eq!(cupti_fit(Some((12, 8))).majors, vec![12]);
    }

    #[test]
    fn candidates_sort_by_the_major_in_their_file_name() {
        assert_eq!(major_of(Path::new("/x/nvidia/cu13/lib/libnvrtc.so.13")), Some(13));
        assert_eq!(
            major_of(Path::new("/usr/local/cuda/lib64/libcupti.so.12.8.90")),
            Some(12)
        );
        assert_eq!(major_of(Path::new("libnvrtc.so")), None);
        // CUDA 13's CUPTI, as the lent H100 has it.
        assert_eq!(major_of(Path::new("/usr/local/cuda/lib64/libcupti.so.2025.3.1")), None);
        let fit = LibFit {
            majors: vec![12],
            problem: None,
        };
        assert_eq!(fit.rank(Some(12)), 0);
        assert_eq!(fit.rank(Some(13)), 1);
        assert!(fit.accepts(None) && fit.accepts(Some(12)) && !fit.accepts(Some(13)));
    }

    #[test]
    fn versions_are_read_from_the_headers() {
        let dir = std::env::temp_dir().join(format!("haloscope-headers-version-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("cuda_runtime_api.h"),
            "/* x */\n#define CUDART_VERSION  13050\n",
        )
        .unwrap();
        assert_eq!(headers_version(&dir), Some((13, 5)));
        std::fs::remove_file(dir.join("cuda_runtime_api.h")).unwrap();
        std::fs::write(
            dir.join(".nvrtc_headers_version"),
            "# m\nformat_version=1\ncuda_major=13\ncuda_minor=3\n",
        )
        .unwrap();
        assert_eq!(headers_version(&dir), Some((13, 3)));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
