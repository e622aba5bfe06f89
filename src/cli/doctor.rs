//! `haloscope doctor`: what was found on this machine, what does not fit, and the fix for each.

use crate::backend::KernelFault;
use crate::backend::gpu::GpuBackend;
use crate::backend::gpu::permission::{HOW_TO_ALLOW, INJECT_ENV, admin_only_by_driver, may_profile_as_admin};
use crate::backend_policy::gpu_present;
use crate::compile::nvrtc_version;
use crate::cudalibs::{CudaLib, LibFit, candidates, check_fits_gpu, ensure_loaded, major_of};
use crate::machine::{DEVICE_ENV, machine};

pub fn doctor() -> i32 {
    println!("haloscope {}", env!("CARGO_PKG_VERSION"));
    // The binary got here, so the CPU has what the build needs (src/main.rs checks first).
    println!("CPU: has the x86-64-v3 features this build uses (AVX2, FMA, BMI)");
    let m = machine();
    match m.driver_cuda {
        Some((major, minor)) => println!("driver: runs CUDA {major}.{minor} at most"),
        None => println!(
            "driver: none{}",
            m.problem.as_ref().map(|p| format!(" ({p})")).unwrap_or_default()
        ),
    }
    for g in &m.gpus {
        println!(
            "GPU {}: {} (compute capability {}.{}){}",
            g.index,
            g.name,
            g.compute_capability.0,
            g.compute_capability.1,
            if g.watchdog {
                "; drives a display: the driver stops kernels that run longer than a few seconds"
            } else {
                ""
            }
        );
    }
    let chosen = match m.chosen_gpu() {
        Ok(chosen) => chosen,
        Err(why) => {
            println!("GPU choice: {why}");
            None
        }
    };
    if let Some(g) = chosen {
        let how = if std::env::var_os(DEVICE_ENV).is_some() {
            "named by --device / HALOSCOPE_DEVICE"
        } else if m.gpus.len() > 1 {
            "the first without a display; pick another with --device N"
        } else {
            "the only one"
        };
        println!("GPU runs use: GPU {} ({how})", g.index);
        if g.watchdog {
            println!("  note: {}", crate::report::WATCHDOG_NOTE);
        }
    }
    libraries();
    if !gpu_present() {
        println!("GPU: none usable (no NVIDIA driver, no device, or HALOSCOPE_NO_GPU); runs use the emulator");
        return 0;
    }
    match GpuBackend::open() {
        Ok(gpu) => {
            let d = &gpu.device;
            println!(
                "GPU backend: {} (compute capability {}.{}), driver {}, {:.1} GiB, device copy {:.0} GB/s",
                d.name,
                d.compute_capability.0,
                d.compute_capability.1,
                d.driver_version,
                d.memory_bytes as f64 / (1u64 << 30) as f64,
                d.copy_gbps
            );
        }
        Err(fault) => println!("GPU backend: not usable: {}; runs use the emulator", fault.message()),
    }
    profiling();
    0
}

/// NVRTC and CUPTI: every candidate, the one loaded, and whether it fits the GPU and driver.
fn libraries() {
    for lib in [CudaLib::Nvrtc, CudaLib::Cupti] {
        let name = lib.display_name();
        let fit = LibFit::for_this_machine(lib);
        let majors: Vec<String> = fit.majors.iter().map(u32::to_string).collect();
        println!("{name}: this machine takes major {} (best first)", majors.join(" or "));
        for c in candidates(lib, None) {
            println!("{name} candidate: {} ({})", c.path.display(), c.source);
        }
        match ensure_loaded(lib, None) {
            Ok(found) => {
                let version = if lib == CudaLib::Nvrtc {
                    format!(" (version {})", nvrtc_version())
                } else {
                    major_of(&found.path)
                        .map(|m| format!(" (major {m})"))
                        .unwrap_or_default()
                };
                println!("{name}: {} from {}{version}", found.path.display(), found.source);
                if let Err(why) = check_fits_gpu(lib, &found) {
                    println!("{name}: does not fit this GPU: {why}");
                }
            }
            Err(help) => println!("{name}: missing\n{help}"),
        }
    }
}

/// Whether this user may read the GPU's counters, asked of CUPTI itself, with the driver's
/// setting and the fix.
fn profiling() {
    let setting = match admin_only_by_driver() {
        Some(true) => "the driver allows profiling to administrators only (RmProfilingAdminOnly: 1)",
        Some(false) => "the driver allows profiling to every user (RmProfilingAdminOnly: 0)",
        None => "the driver's setting could not be read (/proc/driver/nvidia/params)",
    };
    let admin = if may_profile_as_admin() {
        "this process is an administrator (root or CAP_SYS_ADMIN)"
    } else {
        "this process is not an administrator"
    };
    println!("profiling: {setting}; {admin}");
    if std::env::var_os(INJECT_ENV).is_some() {
        println!("profiling: {INJECT_ENV} is set: CUPTI's answers below are the injected ones");
    }
    match crate::backend::gpu::profiling_check() {
        Ok(()) => println!("profiling: allowed: sector counts come from the GPU's own counters"),
        Err(fault @ KernelFault::ProfilingRestricted { .. }) => {
            println!(
                "profiling: refused: {}\n  Runs still check and time on the GPU; the emulator counts the sectors.\n  {HOW_TO_ALLOW}",
                fault.message()
            );
        }
        Err(fault) => println!("profiling: not available: {}", fault.message()),
    }
}
