//! The figures while the learner types: the kernel compiled and launched once on the emulator
//! at the lesson's profile size, checks off, and counted exactly as a full Run counts it
//! (the same machine-code check, the same `sector_profile`, the same gate). No other size is
//! run and nothing is verified, so it is a preview of the sectors, never a verdict: the app
//! marks it live until a Run verifies every size.

use crate::backend::CancelFlag;
use crate::backend::emu::{EmulatorBackend, EmulatorOptions};
use crate::compile::{CompileFailure, RunRequest, Target, compile_kernel, machine_code};
use crate::lesson::Lesson;
use crate::report::{GateResult, SectorProfile};

/// What a live count found.
#[derive(Debug, Clone)]
pub struct LiveFigures {
    /// Per line, the total, loads and stores: the figures a full Run's profile gives.
    pub profile: SectorProfile,
    pub gate: GateResult,
}

/// Why a live count has no figures.
#[derive(Debug, Clone)]
pub enum LiveFailure {
    /// The source does not compile (or breaks the contract): the diagnostics say where.
    Compile(CompileFailure),
    /// It compiled but the launch at the profile size did not finish (a fault, a hang past
    /// the step budget, an instruction the emulator cannot run), in the learner's words.
    Launch(String),
    Cancelled,
}

/// Counts `request`'s sectors at the lesson's profile size; `cancel` ends it early (a new
/// keystroke).
pub fn live_count(lesson: &Lesson, request: &RunRequest, cancel: &CancelFlag) -> Result<LiveFigures, LiveFailure> {
    let kernel = compile_kernel(
        &request.source,
        &request.source_name,
        lesson,
        Target::EMULATOR,
        request.nvrtc_path.as_deref(),
    )
    .map_err(LiveFailure::Compile)?;
    if cancel.is_cancelled() {
        return Err(LiveFailure::Cancelled);
    }
    // What ptxas did to the global accesses moves and removes sectors in the Run's figures:
    // the same check here (cached per PTX and cubin, so a Run after it pays nothing), run by
    // nvdisasm alongside the launch and joined when the counts are turned into figures.
    // The emulator backend's own profile step (one launch at the profile size, counted), with
    // the checks off. The seed does not change the sectors (addresses do not depend on values).
    let mut emulator = EmulatorBackend::new(EmulatorOptions {
        unchecked: true,
        ..EmulatorOptions::default()
    });
    let seed = request.seed.unwrap_or(1);
    let profile = std::thread::scope(|scope| {
        let machine = match (kernel.target, kernel.cubin.as_deref()) {
            (Target::Cubin { sm }, Some(cubin)) => {
                let ptx = &kernel.ptx;
                Some(scope.spawn(move || machine_code::check(ptx, cubin, sm).ok()))
            }
            _ => None,
        };
        let joined = || machine.and_then(|check| check.join().ok().flatten());
        emulator.profile_then(&lesson.contract, &kernel, joined, seed, cancel)
    })
    .map_err(|fault| {
        if cancel.is_cancelled() {
            LiveFailure::Cancelled
        } else {
            LiveFailure::Launch(fault.message())
        }
    })?;
    let gate = GateResult {
        metric: lesson.gate.metric.clone(),
        below: lesson.gate.below,
        value: profile.sectors,
        passed: profile.sectors < lesson.gate.below,
    };
    Ok(LiveFigures { profile, gate })
}
