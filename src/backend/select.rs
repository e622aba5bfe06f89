//! Choosing a backend: `auto` takes the GPU when one is usable, else the emulator.

use super::{Backend, KernelFault};
use crate::emu::{EmulatorBackend, EmulatorOptions};
use crate::gpu::{GpuBackend, gpu_present};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, Default)]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    #[default]
    Auto,
    Emu,
    Gpu,
}

/// Opens the chosen backend, or says why it is not available. `auto` falls back to the
/// emulator when no GPU is found or the GPU worker cannot start.
pub fn open_backend(choice: BackendChoice) -> Result<Box<dyn Backend>, KernelFault> {
    let emulator = || Box::new(EmulatorBackend::new(EmulatorOptions::default())) as Box<dyn Backend>;
    match choice {
        BackendChoice::Emu => Ok(emulator()),
        BackendChoice::Gpu => Ok(Box::new(GpuBackend::open()?)),
        BackendChoice::Auto if gpu_present() => match GpuBackend::open() {
            Ok(gpu) => Ok(Box::new(gpu)),
            Err(fault) => {
                eprintln!(
                    "haloscope: a GPU was found but is not usable ({}); using the emulator",
                    fault.message()
                );
                Ok(emulator())
            }
        },
        BackendChoice::Auto => Ok(emulator()),
    }
}
