//! Where a run is, for progress bars: the pipeline's stages, and a backend's long launch
//! within one (both report through the same callback).

/// Stages of a run, for progress bars.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// NVRTC being set up on first use (crate::cuda_setup), before anything can compile.
    SettingUp {
        text: String,
    },
    /// With the compiler's name: NVRTC or rustc.
    Compiling {
        compiler: &'static str,
    },
    Verifying {
        n: u32,
        index: usize,
        of: usize,
    },
    /// A long launch of size `n` under way: `done` of its `blocks` finished.
    Launching {
        n: u32,
        done: u64,
        blocks: u64,
    },
    Profiling {
        n: u32,
        launches: u32,
    },
    Timing,
    Done,
}

impl Progress {
    /// Rough position of the stage in the whole run, 0..1.
    pub fn fraction(&self) -> f32 {
        match self {
            Progress::SettingUp { .. } => 0.0,
            Progress::Compiling { .. } => 0.02,
            Progress::Verifying { index, of, .. } => 0.1 + 0.4 * (*index as f32 / (*of).max(1) as f32),
            Progress::Launching { done, blocks, .. } => 0.1 + 0.4 * (*done as f32 / (*blocks).max(1) as f32),
            Progress::Profiling { .. } => 0.55,
            Progress::Timing => 0.9,
            Progress::Done => 1.0,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Progress::SettingUp { text } => format!("setting up {text}"),
            Progress::Compiling { compiler } => format!("compiling with {compiler}"),
            Progress::Verifying { n, index, of } => format!("verifying n={n} ({}/{of})", index + 1),
            Progress::Launching { n, done, blocks } => format!(
                "launch n={n}: {done} of {blocks} blocks ({:.0}%)",
                100.0 * *done as f64 / (*blocks).max(1) as f64
            ),
            Progress::Profiling { n, launches } => format!("profiling n={n} ({launches} launches)"),
            Progress::Timing => "timing".into(),
            Progress::Done => "done".into(),
        }
    }
}
