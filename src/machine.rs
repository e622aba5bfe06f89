//! What this machine's NVIDIA driver offers: its CUDA version and each GPU's name, compute
//! capability and watchdog, read once per process without creating a CUDA context (cheap,
//! and safe to do in the GUI process). The NVRTC choice (`cudalibs`), the GPU the worker
//! opens (`gpu`), the run panel and `haloscope doctor` all read it from here.

use cudarc::driver::{result, sys};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// Names the GPU to use by its index in `haloscope doctor`'s list; `--device` sets it.
pub const DEVICE_ENV: &str = "HALOSCOPE_DEVICE";

/// One GPU as the driver lists it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct GpuListing {
    /// The CUDA device ordinal.
    pub index: usize,
    pub name: String,
    pub compute_capability: (u32, u32),
    /// The driver limits how long a kernel may run on it (`KERNEL_EXEC_TIMEOUT`): it drives
    /// a display, and a kernel that runs too long is killed (2 s on Windows; X's watchdog
    /// on Linux) with CUDA_ERROR_LAUNCH_TIMEOUT.
    pub watchdog: bool,
}

/// The driver and its GPUs.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Machine {
    /// The newest CUDA version the driver supports, `(major, minor)`: (12, 8) for a 570
    /// driver. `None` without a driver.
    pub driver_cuda: Option<(u32, u32)>,
    pub gpus: Vec<GpuListing>,
    /// Why the driver could not be asked, when it could not.
    pub problem: Option<String>,
}

impl Machine {
    /// The GPU runs use: the one `$HALOSCOPE_DEVICE` (`--device`) names, else the first
    /// without a watchdog (not driving a display), else the first. `Err` says why the named
    /// one cannot be used.
    pub fn chosen_gpu(&self) -> Result<Option<&GpuListing>, String> {
        let named = std::env::var(DEVICE_ENV).ok().filter(|v| !v.trim().is_empty());
        self.pick_gpu(named.as_deref())
    }

    fn pick_gpu(&self, named: Option<&str>) -> Result<Option<&GpuListing>, String> {
        if let Some(named) = named {
            let index: usize = named
                .trim()
                .parse()
                .map_err(|_| format!("--device / {DEVICE_ENV} takes a GPU's index (0, 1, ...), not {named:?}"))?;
            return self.gpus.get(index).map(Some).ok_or_else(|| {
                format!(
                    "--device {index}: this machine has {} GPU(s){}",
                    self.gpus.len(),
                    self.list_for_message()
                )
            });
        }
        Ok(self.gpus.iter().find(|g| !g.watchdog).or(self.gpus.first()))
    }

    fn list_for_message(&self) -> String {
        if self.gpus.is_empty() {
            return String::new();
        }
        let names: Vec<String> = self.gpus.iter().map(|g| format!("{} = {}", g.index, g.name)).collect();
        format!(" ({})", names.join(", "))
    }
}

/// The machine, probed on first use.
pub fn machine() -> &'static Machine {
    static MACHINE: OnceLock<Machine> = OnceLock::new();
    MACHINE.get_or_init(probe)
}

fn probe() -> Machine {
    // SAFETY: only probes for libcuda, so that cudarc does not panic on a missing library.
    if !unsafe { sys::is_culib_present() } {
        return Machine {
            problem: Some("no NVIDIA driver (libcuda) on this machine".into()),
            ..Machine::default()
        };
    }
    let mut version = 0;
    // SAFETY: plain out-parameter; cuDriverGetVersion needs no cuInit.
    let driver_cuda = (unsafe { sys::cuDriverGetVersion(&mut version) } == sys::CUresult::CUDA_SUCCESS)
        .then_some((version as u32 / 1000, (version as u32 % 1000) / 10));
    let gpus = result::init().and_then(|()| {
        (0..result::device::get_count()?)
            .map(|index| {
                let device = result::device::get(index)?;
                // SAFETY: a device handle the driver just gave, and attributes every driver knows.
                let attribute = |a| unsafe { result::device::get_attribute(device, a) };
                use sys::CUdevice_attribute as A;
                Ok(GpuListing {
                    index: index as usize,
                    name: result::device::get_name(device)?,
                    compute_capability: (
                        attribute(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)? as u32,
                        attribute(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)? as u32,
                    ),
                    watchdog: attribute(A::CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT)? != 0,
                })
            })
            .collect::<Result<Vec<_>, _>>()
    });
    match gpus {
        Ok(gpus) => Machine {
            driver_cuda,
            gpus,
            problem: None,
        },
        Err(e) => Machine {
            driver_cuda,
            gpus: Vec::new(),
            problem: Some(format!("the NVIDIA driver could not list its GPUs: {e:?}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(index: usize, name: &str, watchdog: bool) -> GpuListing {
        GpuListing {
            index,
            name: name.into(),
            compute_capability: (8, 6),
            watchdog,
        }
    }

    #[test]
    fn the_default_gpu_is_the_first_without_a_display() {
        let m = Machine {
            driver_cuda: Some((12, 8)),
            gpus: vec![gpu(0, "display card", true), gpu(1, "compute card", false)],
            problem: None,
        };
        assert_eq!(m.pick_gpu(None).unwrap().unwrap().index, 1);
        assert_eq!(m.pick_gpu(Some("0")).unwrap().unwrap().index, 0);
        let err = m.pick_gpu(Some("2")).unwrap_err();
        assert!(
            err.contains("has 2 GPU(s) (0 = display card, 1 = compute card)"),
            "{err}"
        );
        assert!(m.pick_gpu(Some("first")).unwrap_err().contains("index"));
        let one = Machine {
            gpus: vec![gpu(0, "only card", true)],
            ..m.clone()
        };
        assert_eq!(one.pick_gpu(None).unwrap().unwrap().name, "only card");
        assert_eq!(Machine::default().pick_gpu(None).unwrap(), None);
    }
}
