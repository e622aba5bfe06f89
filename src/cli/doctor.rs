//! `haloscope doctor`: what was found on this machine and why anything is missing.

use crate::compile::{ensure_nvrtc_loaded, nvrtc_candidates, nvrtc_version};

pub fn doctor() -> i32 {
    println!("haloscope {}", env!("CARGO_PKG_VERSION"));
    let candidates = nvrtc_candidates(None);
    if candidates.is_empty() {
        println!("NVRTC candidates: none in the searched places");
    }
    for c in &candidates {
        println!("NVRTC candidate: {} ({})", c.path.display(), c.source);
    }
    match ensure_nvrtc_loaded(None) {
        Ok(found) => println!(
            "NVRTC: {} from {} (version {})",
            found.path.display(),
            found.source,
            nvrtc_version()
        ),
        Err(help) => println!("NVRTC: missing\n{help}"),
    }
    0
}
