//! Choosing a backend: `auto` takes the GPU when one is usable, else the emulator.

use super::{Backend, KernelFault};
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
    let unavailable = |what: &str| KernelFault::Infrastructure {
        message: format!("backend not available: the {what} backend is not built yet"),
    };
    match choice {
        BackendChoice::Emu | BackendChoice::Auto => Err(unavailable("emulator")),
        BackendChoice::Gpu => Err(unavailable("GPU")),
    }
}
