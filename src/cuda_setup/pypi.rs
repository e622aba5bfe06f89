//! Choosing a wheel from PyPI's JSON API (`<index>/pypi/<name>/json`): the newest release
//! that a version rule allows and that has a wheel for this machine's platform.

use serde::Deserialize;

/// The index haloscope downloads from: `$HALOSCOPE_PYPI` (a mirror, or an unreachable address
/// in the offline test), else PyPI itself.
pub fn index_url() -> String {
    std::env::var("HALOSCOPE_PYPI")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "https://pypi.org".into())
        .trim_end_matches('/')
        .to_string()
}

/// Which releases of a package are acceptable: `min <= version < below`, compared component
/// by component (so 13.10 is newer than 13.9).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRule {
    pub min: Vec<u32>,
    pub below: Vec<u32>,
}

impl VersionRule {
    /// Any release of one CUDA major.
    pub fn major(major: u32) -> VersionRule {
        VersionRule {
            min: vec![major],
            below: vec![major + 1],
        }
    }

    /// Releases `major.minor.*`.
    pub fn minor(major: u32, minor: u32) -> VersionRule {
        VersionRule {
            min: vec![major, minor],
            below: vec![major, minor + 1],
        }
    }

    pub fn allows(&self, version: &[u32]) -> bool {
        version >= self.min.as_slice() && version < self.below.as_slice()
    }
}

impl std::fmt::Display for VersionRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let join = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(".");
        write!(f, ">={},<{}", join(&self.min), join(&self.below))
    }
}

/// A release's numeric version, `None` for pre-releases and anything else that is not plain
/// dotted numbers (haloscope installs only final releases).
pub fn parse_version(text: &str) -> Option<Vec<u32>> {
    text.split('.').map(|part| part.parse().ok()).collect()
}

/// One wheel file to fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wheel {
    pub package: String,
    pub version: String,
    pub filename: String,
    pub url: String,
    pub sha256: String,
    pub size: u64,
}

#[derive(Deserialize)]
struct Project {
    releases: std::collections::BTreeMap<String, Vec<FileEntry>>,
}

#[derive(Deserialize)]
struct FileEntry {
    filename: String,
    url: String,
    #[serde(default)]
    size: u64,
    digests: Digests,
    #[serde(default)]
    packagetype: String,
    #[serde(default)]
    yanked: bool,
}

#[derive(Deserialize)]
struct Digests {
    sha256: String,
}

/// The platform tag a wheel must carry to run here (manylinux x86_64 or aarch64).
fn platform_tag() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        "aarch64"
    } else {
        "x86_64"
    }
}

/// The newest wheel of `package` in the index's JSON (`json`, fetched from `json_url`) that
/// `rule` allows, for Linux on this architecture.
pub fn choose_wheel(package: &str, json: &str, json_url: &str, rule: &VersionRule) -> Result<Wheel, String> {
    let project: Project = serde_json::from_str(json)
        .map_err(|e| format!("the index's answer for {package} is not its JSON API ({e})"))?;
    let best = project
        .releases
        .into_iter()
        .filter_map(|(version, files)| Some((parse_version(&version)?, version, files)))
        .filter(|(numbers, _, _)| rule.allows(numbers))
        .filter_map(|(numbers, version, files)| {
            let file = files.into_iter().find(|f| {
                f.packagetype == "bdist_wheel"
                    && !f.yanked
                    && f.filename.contains("manylinux")
                    && f.filename.contains(platform_tag())
            })?;
            Some((numbers, version, file))
        })
        .max_by(|a, b| a.0.cmp(&b.0))
        .ok_or_else(|| format!("the index has no Linux {} wheel of {package} {rule}", platform_tag()))?;
    let (_, version, file) = best;
    Ok(Wheel {
        package: package.to_string(),
        version,
        url: resolve(json_url, &file.url),
        filename: file.filename,
        sha256: file.digests.sha256.to_lowercase(),
        size: file.size,
    })
}

/// A file URL as the JSON gives it, made absolute: PyPI gives absolute ones, some mirrors
/// give them relative to the JSON's own address.
fn resolve(base: &str, url: &str) -> String {
    if url.contains("://") {
        return url.to_string();
    }
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    if let Some(path) = url.strip_prefix('/') {
        let host_end = base[scheme_end..].find('/').map_or(base.len(), |i| scheme_end + i);
        return format!("{}/{path}", &base[..host_end]);
    }
    // Relative: drop the base's last segment, then one more per `../`.
    let mut dir: Vec<&str> = base[scheme_end..].split('/').collect();
    dir.pop();
    let mut rest = url;
    loop {
        if let Some(r) = rest.strip_prefix("../") {
            if dir.len() > 1 {
                dir.pop();
            }
            rest = r;
        } else if let Some(r) = rest.strip_prefix("./") {
            rest = r;
        } else {
            break;
        }
    }
    format!("{}{}/{rest}", &base[..scheme_end], dir.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON: &str = r#"{"releases": {
        "13.0.88": [{"filename": "nvidia_cuda_nvrtc-13.0.88-py3-none-manylinux2010_x86_64.whl",
                     "url": "https://files.example/a.whl", "size": 10, "packagetype": "bdist_wheel",
                     "digests": {"sha256": "AA"}}],
        "13.10.1": [{"filename": "nvidia_cuda_nvrtc-13.10.1-py3-none-win_amd64.whl",
                     "url": "https://files.example/w.whl", "size": 10, "packagetype": "bdist_wheel",
                     "digests": {"sha256": "bb"}},
                    {"filename": "nvidia_cuda_nvrtc-13.10.1-py3-none-manylinux2014_aarch64.whl",
                     "url": "../../packages/arm.whl", "size": 11, "packagetype": "bdist_wheel",
                     "digests": {"sha256": "cc"}},
                    {"filename": "nvidia_cuda_nvrtc-13.10.1-py3-none-manylinux2010_x86_64.whl",
                     "url": "../../packages/x.whl", "size": 12, "packagetype": "bdist_wheel",
                     "digests": {"sha256": "dd"}}],
        "13.11.0rc1": [{"filename": "nvidia_cuda_nvrtc-13.11.0rc1-py3-none-manylinux2010_x86_64.whl",
                     "url": "https://files.example/rc.whl", "size": 10, "packagetype": "bdist_wheel",
                     "digests": {"sha256": "ee"}}],
        "14.0.1": [{"filename": "nvidia_cuda_nvrtc-14.0.1-py3-none-manylinux2010_x86_64.whl",
                     "url": "https://files.example/14.whl", "size": 10, "packagetype": "bdist_wheel",
                     "digests": {"sha256": "ff"}}]
    }}"#;

    #[test]
    fn the_newest_final_release_of_the_major_with_a_linux_wheel_is_chosen() {
        let wheel = choose_wheel(
            "nvidia-cuda-nvrtc",
            JSON,
            "https://pypi.org/pypi/nvidia-cuda-nvrtc/json",
            &VersionRule::major(13),
        )
        .unwrap();
        if cfg!(target_arch = "x86_64") {
            assert_eq!(wheel.version, "13.10.1");
            assert_eq!(wheel.url, "https://pypi.org/packages/x.whl");
            assert_eq!(wheel.sha256, "dd");
        }
        let old = choose_wheel("p", JSON, "https://pypi.org/pypi/p/json", &VersionRule::minor(13, 0)).unwrap();
        assert_eq!(old.url, "https://files.example/a.whl");
        assert_eq!(old.sha256, "aa", "digests are compared in lower case");
    }

    #[test]
    fn no_allowed_release_names_the_rule() {
        let err = choose_wheel("p", JSON, "https://x/pypi/p/json", &VersionRule::major(12)).unwrap_err();
        assert!(err.contains(">=12,<13"), "{err}");
        assert!(choose_wheel("p", "<html>", "https://x", &VersionRule::major(12)).is_err());
    }

    #[test]
    fn relative_urls_resolve_against_the_json_address() {
        assert_eq!(
            resolve("https://m.example/simple/pypi/p/json", "../../f.whl"),
            "https://m.example/simple/f.whl"
        );
        assert_eq!(
            resolve("https://m.example/pypi/p/json", "/packages/f.whl"),
            "https://m.example/packages/f.whl"
        );
        assert_eq!(
            resolve("https://m.example/pypi/p/json", "f.whl"),
            "https://m.example/pypi/p/f.whl"
        );
        assert_eq!(
            resolve("https://m.example/pypi/p/json", "http://o/f.whl"),
            "http://o/f.whl"
        );
    }

    #[test]
    fn versions_compare_by_number() {
        assert!(VersionRule::minor(12, 9).allows(&parse_version("12.9.86").unwrap()));
        assert!(!VersionRule::minor(12, 9).allows(&parse_version("12.10.0").unwrap()));
        assert!(VersionRule::major(13).allows(&parse_version("13.3.5.0.6").unwrap()));
        assert_eq!(parse_version("13.0.0rc1"), None);
    }
}
