//! Choosing a backend: `auto` takes the GPU when one is usable, else the emulator.

use super::{Backend, KernelFault};
use crate::emu::{EmulatorBackend, EmulatorOptions};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, Default)]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    #[default]
    Auto,
    Emu,
    Gpu,
}

/// Opens the chosen backend, or says why it is not available.
pub fn open_backend(choice: BackendChoice) -> Result<Box<dyn Backend>, KernelFault> {
    match choice {
        BackendChoice::Emu | BackendChoice::Auto => Ok(Box::new(EmulatorBackend::new(EmulatorOptions::default()))),
        BackendChoice::Gpu => Err(KernelFault::Infrastructure {
            message: "backend not available: the GPU backend is not built yet".into(),
        }),
    }
}
