//! First-use set-up of what compiling kernels needs, for a haloscope installed without the
//! source tree (a package, `cargo install`): NVRTC of the major this machine takes, the CUDA
//! headers when that NVRTC does not carry its own, and nvdisasm for the machine-code check.
//! They come from PyPI as NVIDIA publishes them (the same wheels scripts/workstation/setup.sh installs
//! with pip), verified by their SHA-256, and are unpacked into `<data dir>/.deps/`, where
//! src/cudalibs.rs looks for them. No Python is needed.
//!
//! The CLI does this before a command that compiles; the app does it on a background job at
//! start, with progress in the status bar. `haloscope setup` does it on request.

pub mod background;
mod pypi;
mod wheel;

pub use pypi::{VersionRule, Wheel, index_url};

use crate::backend::CancelFlag;
use crate::cudalibs::{self, CudaLib, LibFit};
use std::path::{Path, PathBuf};

/// Where the downloads go: `.deps` in haloscope's data directory (or `HALOSCOPE_DATA`).
pub fn deps_root() -> PathBuf {
    crate::paths::data_dir().join(".deps")
}

/// One folder under `.deps/` and the packages unpacked into it together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// What it is for, in the progress line ("NVRTC 13", "CUDA 12 headers").
    pub what: String,
    /// The folder under `.deps/` (the names src/cudalibs.rs searches).
    pub folder: &'static str,
    pub packages: Vec<(String, VersionRule)>,
    /// Runs still work without it (nvdisasm): a failure is a warning, not an error.
    pub optional: bool,
}

/// What to fetch for NVRTC major `major`. NVRTC 13 carries the CUDA headers itself (13.3 and
/// newer write them out on request, src/cudalibs.rs), so only CUDA 12 needs the header wheels.
pub fn parts_for(major: u32) -> Vec<Part> {
    let suffix = if major >= 13 {
        String::new()
    } else {
        format!("-cu{major}")
    };
    let mut parts = vec![Part {
        what: format!("NVRTC {major}"),
        folder: if major >= 13 { ".deps/nvrtc" } else { ".deps/nvrtc-cu12" },
        packages: vec![(format!("nvidia-cuda-nvrtc{suffix}"), VersionRule::major(major))],
        optional: false,
    }];
    if major < 13 {
        // The runtime headers of NVRTC's own minor release and libcu++ (CCCL) no newer than
        // it: filled in once NVRTC's version is known (`headers_part`).
        parts.push(Part {
            what: format!("CUDA {major} headers"),
            folder: ".deps/cuda-headers-cu12",
            packages: Vec::new(),
            optional: true,
        });
    }
    parts.push(Part {
        what: "nvdisasm".into(),
        folder: ".deps/nvdisasm",
        // PyPI has nvdisasm of CUDA 13 only (13.2 and newer); it reads CUDA 12's cubins too.
        packages: vec![("nvidia-cuda-nvdisasm".into(), VersionRule::major(13))],
        optional: true,
    });
    parts
}

/// The CUDA 12 header wheels for NVRTC `version` (e.g. "12.9.86").
fn headers_packages(nvrtc_version: &str) -> Vec<(String, VersionRule)> {
    let numbers = pypi::parse_version(nvrtc_version).unwrap_or_default();
    let (major, minor) = (
        numbers.first().copied().unwrap_or(12),
        numbers.get(1).copied().unwrap_or(0),
    );
    vec![
        (
            format!("nvidia-cuda-runtime-cu{major}"),
            VersionRule::minor(major, minor),
        ),
        (
            format!("nvidia-cuda-cccl-cu{major}"),
            VersionRule {
                min: vec![major],
                below: vec![major, minor + 1],
            },
        ),
    ]
}

/// The NVRTC major to set up, or `None` when nothing is needed: an NVRTC this machine takes
/// is found already, the learner named one (`HALOSCOPE_NVRTC`), or set-up is turned off
/// (`HALOSCOPE_NO_SETUP=1`, for tests of the no-NVRTC messages).
pub fn needed() -> Option<u32> {
    if std::env::var_os("HALOSCOPE_NO_SETUP").is_some_and(|v| v == "1")
        || std::env::var_os(CudaLib::Nvrtc.env_var()).is_some()
    {
        return None;
    }
    let fit = LibFit::for_this_machine(CudaLib::Nvrtc);
    let found = cudalibs::candidates(CudaLib::Nvrtc, None)
        .iter()
        .any(|c| fit.accepts(cudalibs::major_of(&c.path)));
    (!found).then(|| fit.majors.first().copied().unwrap_or(13))
}

/// How far the set-up is, for a progress bar or a line.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// Asking the index which release to fetch.
    Resolving {
        what: String,
    },
    Downloading {
        what: String,
        file: String,
        done: u64,
        total: u64,
    },
    Unpacking {
        what: String,
    },
}

impl std::fmt::Display for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Progress::Resolving { what } => write!(f, "{what}: asking the package index which release fits"),
            Progress::Downloading { what, done, total, .. } => write!(
                f,
                "{what}: downloading {:.1} of {:.1} MB",
                *done as f64 / 1e6,
                *total as f64 / 1e6
            ),
            Progress::Unpacking { what } => write!(f, "{what}: unpacking"),
        }
    }
}

/// What a set-up did.
#[derive(Debug, Clone, Default)]
pub struct Installed {
    /// Wheels unpacked, with their versions.
    pub wheels: Vec<String>,
    /// Optional parts that failed (the runs work without them).
    pub warnings: Vec<String>,
    pub root: PathBuf,
}

/// Fetches and unpacks every part for NVRTC `major` into `root` (normally [`deps_root`]'s
/// parent). A part is written to a staging folder and renamed into place when complete, so
/// an interrupted set-up leaves nothing half-unpacked behind for the next start to trust.
pub fn install(
    major: u32,
    root: &Path,
    index: &str,
    progress: &mut dyn FnMut(Progress),
    cancel: &CancelFlag,
) -> Result<Installed, String> {
    let agent = wheel::agent();
    let downloads = root.join(".deps/.downloads");
    std::fs::create_dir_all(&downloads).map_err(|e| format!("cannot create {}: {e}", downloads.display()))?;
    let mut installed = Installed {
        root: root.to_path_buf(),
        ..Default::default()
    };
    let mut nvrtc_version: Option<String> = None;
    for mut part in parts_for(major) {
        if part.packages.is_empty() {
            match &nvrtc_version {
                Some(v) => part.packages = headers_packages(v),
                None => continue,
            }
        }
        let result = install_part(&agent, index, &part, root, &downloads, progress, cancel);
        match result {
            Ok(wheels) => {
                if part.folder.contains("nvrtc") {
                    nvrtc_version = wheels.first().map(|w| w.version.clone());
                }
                installed
                    .wheels
                    .extend(wheels.iter().map(|w| format!("{} {}", w.package, w.version)));
            }
            Err(e) if part.optional && !cancel.is_cancelled() => installed.warnings.push(format!("{}: {e}", part.what)),
            Err(e) => return Err(offline_help(index, &part, major, &e)),
        }
    }
    let _ = std::fs::remove_dir_all(&downloads);
    Ok(installed)
}

fn install_part(
    agent: &ureq::Agent,
    index: &str,
    part: &Part,
    root: &Path,
    downloads: &Path,
    progress: &mut dyn FnMut(Progress),
    cancel: &CancelFlag,
) -> Result<Vec<Wheel>, String> {
    let what = part.what.clone();
    progress(Progress::Resolving { what: what.clone() });
    let mut wheels = Vec::new();
    for (package, rule) in &part.packages {
        let json_url = format!("{index}/pypi/{package}/json");
        let json = wheel::get_text(agent, &json_url)?;
        wheels.push(pypi::choose_wheel(package, &json, &json_url, rule)?);
    }
    let total: u64 = wheels.iter().map(|w| w.size).sum();
    let staging = root.join(format!("{}.partial", part.folder));
    let _ = std::fs::remove_dir_all(&staging);
    let mut before = 0;
    for w in &wheels {
        let file = downloads.join(&w.filename);
        wheel::download(
            agent,
            w,
            &file,
            &mut |done| {
                progress(Progress::Downloading {
                    what: what.clone(),
                    file: w.filename.clone(),
                    done: before + done,
                    total,
                })
            },
            &|| cancel.is_cancelled(),
        )?;
        before += w.size;
        progress(Progress::Unpacking { what: what.clone() });
        wheel::unpack(&file, &staging)?;
        let _ = std::fs::remove_file(&file);
    }
    let target = root.join(part.folder);
    let _ = std::fs::remove_dir_all(&target);
    std::fs::rename(&staging, &target).map_err(|e| format!("cannot move {} into place: {e}", target.display()))?;
    Ok(wheels)
}

/// The error of a required part, with what to do when this machine cannot reach the index.
fn offline_help(index: &str, part: &Part, major: u32, error: &str) -> String {
    let package = part
        .packages
        .first()
        .map(|(p, _)| p.as_str())
        .unwrap_or("nvidia-cuda-nvrtc");
    let target = deps_root().join(part.folder.trim_start_matches(".deps/"));
    format!(
        "could not set up {} from {index}: {error}.\nKernels cannot be compiled until it is there. \
         Connect this machine to the internet and start haloscope again (or run `haloscope setup`), \
         or install it yourself: `python3 -m pip install --target {} '{package}=={major}.*'`, \
         or point HALOSCOPE_NVRTC at a libnvrtc.so.{major} (a CUDA toolkit has one in lib64). \
         A mirror of PyPI can be named with HALOSCOPE_PYPI.",
        part.what,
        target.display()
    )
}

/// The CLI's set-up before a command that compiles: nothing when NVRTC is found, else the
/// download with one progress line on stderr. Errors are returned for the command to print.
pub fn ensure_for_cli() -> Result<(), String> {
    let Some(major) = needed() else {
        return Ok(());
    };
    eprintln!(
        "haloscope: no NVRTC {major} found; setting it up once in {} (about 60 MB)",
        deps_root().display()
    );
    run_with_terminal_progress(major).map(|_| ())
}

/// `install` into the data directory with a progress bar on stderr (indicatif).
pub fn run_with_terminal_progress(major: u32) -> Result<Installed, String> {
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let mut last_what = String::new();
    let root = crate::paths::data_dir();
    let result = install(
        major,
        &root,
        &index_url(),
        &mut |p| match &p {
            Progress::Downloading { what, done, total, .. } => {
                if *what != last_what {
                    last_what = what.clone();
                    bar.set_message(what.clone());
                }
                bar.set_length(*total);
                bar.set_position(*done);
            }
            other => bar.set_message(other.to_string()),
        },
        &CancelFlag::default(),
    );
    bar.finish_and_clear();
    if let Ok(done) = &result {
        eprintln!("haloscope: installed {}", done.wheels.join(", "));
        for w in &done.warnings {
            eprintln!("haloscope: warning: {w} (runs work without it)");
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvrtc_12_brings_its_headers_and_13_does_not() {
        let twelve = parts_for(12);
        assert_eq!(twelve[0].packages[0].0, "nvidia-cuda-nvrtc-cu12");
        assert!(twelve.iter().any(|p| p.folder == ".deps/cuda-headers-cu12"));
        let thirteen = parts_for(13);
        assert_eq!(thirteen[0].folder, ".deps/nvrtc");
        assert!(!thirteen.iter().any(|p| p.folder.contains("headers")));
        let headers = headers_packages("12.9.86");
        assert!(headers[0].1.allows(&[12, 9, 79]) && !headers[0].1.allows(&[12, 8, 90]));
        assert!(headers[1].1.allows(&[12, 9, 27]) && headers[1].1.allows(&[12, 4]) && !headers[1].1.allows(&[12, 10]));
    }

    #[test]
    fn an_unreachable_index_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let err = install(
            13,
            dir.path(),
            "http://127.0.0.1:9",
            &mut |_| {},
            &CancelFlag::default(),
        )
        .unwrap_err();
        assert!(
            err.contains("could not set up NVRTC 13 from http://127.0.0.1:9"),
            "{err}"
        );
        assert!(
            err.contains("pip install --target") && err.contains("HALOSCOPE_NVRTC"),
            "{err}"
        );
        assert!(
            !dir.path().join(".deps/nvrtc").exists(),
            "nothing half-installed is left"
        );
    }
}
