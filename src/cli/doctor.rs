//! `haloscope doctor`: what was found on this machine and why anything is missing.

use crate::backends::gpu_present;
use crate::compile::nvrtc_version;
use crate::cudalibs::{CudaLib, candidates, ensure_loaded};
use crate::gpu::GpuBackend;

pub fn doctor() -> i32 {
    println!("haloscope {}", env!("CARGO_PKG_VERSION"));
    for lib in [CudaLib::Nvrtc, CudaLib::Cupti] {
        let name = if lib == CudaLib::Nvrtc { "NVRTC" } else { "CUPTI" };
        for c in candidates(lib, None) {
            println!("{name} candidate: {} ({})", c.path.display(), c.source);
        }
        match ensure_loaded(lib, None) {
            Ok(found) if lib == CudaLib::Nvrtc => {
                println!(
                    "{name}: {} from {} (version {})",
                    found.path.display(),
                    found.source,
                    nvrtc_version()
                )
            }
            Ok(found) => println!("{name}: {} from {}", found.path.display(), found.source),
            Err(help) => println!("{name}: missing\n{help}"),
        }
    }
    if !gpu_present() {
        println!("GPU: none (no NVIDIA driver or no device); runs use the emulator");
        return 0;
    }
    match GpuBackend::open() {
        Ok(gpu) => {
            let d = &gpu.device;
            println!(
                "GPU: {} (compute capability {}.{}), driver {}, {:.1} GiB, device copy {:.0} GB/s",
                d.name,
                d.compute_capability.0,
                d.compute_capability.1,
                d.driver_version,
                d.memory_bytes as f64 / (1u64 << 30) as f64,
                d.copy_gbps
            );
        }
        Err(fault) => println!("GPU: present but not usable: {}", fault.message()),
    }
    0
}
