//! Fetching over HTTPS and unpacking a wheel: a wheel is a zip whose tree is what
//! `pip install --target` would leave, so unpacking it gives the layout src/cudalibs.rs
//! already searches.

use super::pypi::Wheel;
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

/// One HTTPS client for a whole set-up. Certificates are checked against the system's own
/// store (rustls-platform-verifier), so a school's or company's proxy CA that the machine
/// trusts is trusted here too; proxies come from the usual environment variables.
pub fn agent() -> ureq::Agent {
    use ureq::tls::{RootCerts, TlsConfig};
    ureq::Agent::config_builder()
        .tls_config(TlsConfig::builder().root_certs(RootCerts::PlatformVerifier).build())
        .timeout_connect(Some(Duration::from_secs(15)))
        .timeout_recv_body(Some(Duration::from_secs(30 * 60)))
        .user_agent(concat!("haloscope/", env!("CARGO_PKG_VERSION")))
        .build()
        .new_agent()
}

/// A small text answer (the index's JSON).
pub fn get_text(agent: &ureq::Agent, url: &str) -> Result<String, String> {
    let mut response = agent.get(url).call().map_err(|e| describe(url, &e))?;
    response
        .body_mut()
        .with_config()
        .limit(64 << 20)
        .read_to_string()
        .map_err(|e| describe(url, &e))
}

fn describe(url: &str, e: &ureq::Error) -> String {
    format!("{url}: {e}")
}

/// Downloads `wheel` to `file`, calling `progress(bytes so far)` as it goes and checking the
/// SHA-256 the index gave; `stop()` true abandons it.
pub fn download(
    agent: &ureq::Agent,
    wheel: &Wheel,
    file: &Path,
    progress: &mut dyn FnMut(u64),
    stop: &dyn Fn() -> bool,
) -> Result<(), String> {
    let response = agent.get(&wheel.url).call().map_err(|e| describe(&wheel.url, &e))?;
    let mut body = response.into_body().into_reader();
    let mut out = std::fs::File::create(file).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    let mut done = 0u64;
    loop {
        if stop() {
            return Err("cancelled".into());
        }
        let read = body.read(&mut buffer).map_err(|e| format!("{}: {e}", wheel.url))?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
        out.write_all(&buffer[..read])
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        done += read as u64;
        progress(done);
    }
    out.sync_all()
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    let sum = format!("{:x}", hasher.finalize());
    if sum != wheel.sha256 {
        return Err(format!(
            "{} arrived damaged: its SHA-256 is {sum}, the index says {}",
            wheel.filename, wheel.sha256
        ));
    }
    Ok(())
}

/// Unpacks a downloaded wheel into `dir` (file modes kept: nvdisasm must stay executable).
pub fn unpack(file: &Path, dir: &Path) -> Result<(), String> {
    let reader = std::fs::File::open(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let mut archive = zip::ZipArchive::new(reader).map_err(|e| format!("{} is not a wheel: {e}", file.display()))?;
    archive
        .extract(dir)
        .map_err(|e| format!("cannot unpack {} into {}: {e}", file.display(), dir.display()))
}
