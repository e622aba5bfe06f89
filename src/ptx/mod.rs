//! Reading the PTX that NVRTC produces.

pub mod entries;
