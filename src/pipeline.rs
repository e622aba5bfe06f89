//! One run of a lesson on one backend: compile -> contract -> verify every size -> profile ->
//! time -> gate. Which backend runs it is decided once, for the CLI and the app alike, by
//! `crate::backend_policy` (the policy), which calls in here.

use crate::backend::{Backend, BackendInfo, CancelFlag, KernelFault, ProfileStart};
use crate::compile::{CompileFailure, CompiledKernel, MachineCode, Target, compile_kernel};
use crate::harness::{fresh_seed, size_seed};
use crate::lesson::{Language, Lesson};
pub use crate::progress::Progress;
use crate::report::{
    CompileSummary, GateResult, RunReport, SCHEMA_VERSION, SectorProfile, StageTime, Verdict, thousands,
};
use std::time::Instant;

/// What to run: the kernel source (it lives with the compile stage, which is what reads it
/// first, so that the models below the pipeline can name it too).
pub use crate::compile::RunRequest;

/// The run when no backend could be had: the kernel is still compiled and its contract
/// checked (a learner without a backend gets that much), then the run ends with `fault`.
pub fn run_without_backend(
    lesson: &Lesson,
    request: &RunRequest,
    fault: KernelFault,
    progress: &mut dyn FnMut(Progress),
) -> RunReport {
    run_without_backend_after(lesson, request, fault, None, progress)
}

/// `run_without_backend`, using the compile `early` began when it was for the same target.
pub(crate) fn run_without_backend_after(
    lesson: &Lesson,
    request: &RunRequest,
    fault: KernelFault,
    early: Option<EarlyCompile>,
    progress: &mut dyn FnMut(Progress),
) -> RunReport {
    let mut run = Run::new(lesson, request, None);
    if run.compile(Target::EMULATOR, early, progress).is_some() {
        run.finish_with_fault(fault);
    }
    run.report
}

/// The report of a run that haloscope itself failed (a panic, caught by the policy): an
/// infrastructure error that says so, with what the panic said.
pub(crate) fn report_for_internal_error(lesson: &Lesson, request: &RunRequest, panic: &str) -> RunReport {
    let mut run = Run::new(lesson, request, None);
    run.finish_with_fault(KernelFault::Infrastructure {
        message: format!(
            "haloscope failed while running this kernel ({panic}). This is haloscope's fault, not your kernel's; \
             your edits are kept. Please report it with the kernel"
        ),
    });
    run.report
}

/// A whole run on `backend`.
pub fn run_with_backend(
    lesson: &Lesson,
    request: &RunRequest,
    backend: &mut dyn Backend,
    progress: &mut dyn FnMut(Progress),
    cancel: &CancelFlag,
) -> RunReport {
    run_stages(lesson, request, backend, None, None, progress, cancel).report
}

/// What `run_stages` leaves: the report, the compiled kernel when it compiled, and the
/// watched block's trace from the last size a tracing backend ran.
pub(crate) struct Stages {
    pub report: RunReport,
    pub kernel: Option<CompiledKernel>,
    pub trace: Option<crate::backend::Trace>,
}

/// A whole run on `backend`, and the compiled kernel when it compiled (the policy emulates
/// one launch of it for the diagram after a GPU run, without compiling again). `early` is a
/// compile begun before the backend was ready; it is used when its target is the backend's.
/// `counter` counts the sectors when `backend` may not (a GPU whose counters this user may
/// not read): the run keeps the GPU's verdict and timing, and says whose figures they are.
pub(crate) fn run_stages(
    lesson: &Lesson,
    request: &RunRequest,
    backend: &mut dyn Backend,
    counter: Option<&mut dyn Backend>,
    early: Option<EarlyCompile>,
    progress: &mut dyn FnMut(Progress),
    cancel: &CancelFlag,
) -> Stages {
    let mut run = Run::new(lesson, request, Some(backend.info()));
    let mut trace = None;
    let stages = |report, kernel, trace| Stages { report, kernel, trace };
    backend.prepare(lesson, run.report.seed);
    // nvdisasm takes about 0.3 s: the machine-code check starts as soon as the
    // kernel has compiled and runs while the sizes are verified, and so does the GPU's
    // profile (its own process).
    let Some((kernel, machine_code)) = run.compile(backend.target(), early, progress) else {
        return stages(run.report, None, None);
    };
    let profile_seed = size_seed(run.report.seed, lesson.profile_size);
    let profiling_alongside = backend.start_profile(lesson, &kernel, profile_seed) == ProfileStart::Measuring;
    let moves = start_moves_trace(lesson, request, &kernel, run.report.seed, cancel);

    let sizes = &lesson.verify_sizes;
    for (index, &n) in sizes.iter().enumerate() {
        // Between steps as well as inside them: a backend step that ignores the flag (or
        // finished just before it was raised) must not start the next one.
        if cancel.is_cancelled() {
            backend.discard_profile();
            run.finish_with_fault(KernelFault::Cancelled);
            return stages(run.report, Some(kernel), trace);
        }
        progress(Progress::Verifying {
            n,
            index,
            of: sizes.len(),
        });
        let started = Instant::now();
        let result = backend.verify_size(lesson, &kernel, n, size_seed(run.report.seed, n), progress, cancel);
        run.stage(&format!("verify n={n}"), started);
        match result {
            Ok(size_run) => {
                trace = size_run.trace.or(trace);
                merge_findings(&mut run.report.findings, size_run.findings);
                run.report.output.extend(size_run.output);
                run.report.sizes.push(size_run.verification);
            }
            Err(fault) => {
                backend.discard_profile();
                merge_findings(&mut run.report.findings, backend.findings_before_fault());
                let fault = explain_endless_loop(fault, machine_code);
                run.finish_with_fault(fault);
                return stages(run.report, Some(kernel), trace);
            }
        }
    }

    progress(Progress::Profiling {
        n: lesson.profile_size,
        launches: lesson.profile_launches,
    });
    let started = Instant::now();
    let machine_code = machine_code.and_then(|check| check.join().ok());
    let checked = machine_code.as_ref().and_then(|c| c.as_ref().ok());
    let profile = match (backend.profile(lesson, &kernel, checked, profile_seed, cancel), counter) {
        (Err(KernelFault::ProfilingRestricted { message }), Some(counter)) => count_elsewhere(
            lesson,
            request,
            (&kernel, checked),
            counter,
            &message,
            profile_seed,
            cancel,
        ),
        (profile, _) => profile,
    };
    if profiling_alongside {
        // What the run waited for the figures after the last size; the measurement's own
        // steps (it began right after compiling) follow from the profile.
        run.stage("profile (wait after verifying)", started);
    } else {
        run.stage("profile", started);
    }
    match profile {
        Ok(mut profile) => {
            run.report.stages.append(&mut profile.stages);
            run.report.output.extend(profile.output.take());
            match &machine_code {
                Some(Ok(code)) if profile.machine_code.is_none() => profile.machine_code = Some(code.clone()),
                Some(Err(why)) => profile.machine_code_unavailable = Some(why.clone()),
                _ => {}
            }
            let unoptimised = moves.map(|m| {
                m.join()
                    .unwrap_or_else(|_| (Err("the trace panicked".into()), Vec::new()))
            });
            if let Some((traced, unexecuted)) = unoptimised {
                match traced {
                    Ok(traced) => {
                        profile.moves = Some(crate::trace::compiler_moves::explain(
                            &traced,
                            profile.machine_code.as_ref(),
                        ))
                    }
                    Err(why) => profile.moves_unavailable = Some(why),
                }
                // Beside a verdict the run reached, never one of its own: a run with a
                // finding or fault has its own story to tell first.
                if run.report.findings.is_empty() && run.report.fault.is_none() {
                    run.report.unexecuted = unexecuted;
                }
            }
            run.report.profile = Some(profile)
        }
        Err(fault) => {
            run.finish_with_fault(fault);
            return stages(run.report, Some(kernel), trace);
        }
    }

    if cancel.is_cancelled() {
        run.finish_with_fault(KernelFault::Cancelled);
        return stages(run.report, Some(kernel), trace);
    }
    progress(Progress::Timing);
    let started = Instant::now();
    match backend.time(lesson, &kernel, cancel) {
        Ok(timing) => run.report.timing = timing,
        Err(fault) => {
            run.finish_with_fault(fault);
            return stages(run.report, Some(kernel), trace);
        }
    }
    run.stage("timing", started);
    run.conclude();
    if run
        .report
        .profile
        .as_ref()
        .is_some_and(|p| p.counted_by_emulator_because.is_some())
    {
        run.report
            .headline
            .push_str(" (sectors counted by the emulator: this user may not read the GPU's counters)");
    }
    crate::timeline("run: report complete");
    progress(Progress::Done);
    stages(run.report, Some(kernel), trace)
}

/// The profile `counter` takes of the same kernel (compiled again when its target is not
/// the backend's), marked with why the backend's own figures are missing. `checked`: the
/// backend's kernel and what the machine-code check found in it.
fn count_elsewhere(
    lesson: &Lesson,
    request: &RunRequest,
    checked: (&CompiledKernel, Option<&MachineCode>),
    counter: &mut dyn Backend,
    why: &str,
    seed: u64,
    cancel: &CancelFlag,
) -> Result<SectorProfile, KernelFault> {
    let (kernel, machine_code) = checked;
    let recompiled;
    // The machine-code check is keyed by the checked PTX's lines: it applies only to that PTX.
    let (kernel, machine_code) = if kernel.target == counter.target() {
        (kernel, machine_code)
    } else {
        recompiled = Compiled::now(lesson, request, counter.target())
            .result
            .map_err(|failure| KernelFault::Infrastructure {
                message: format!("{why}; and the emulator could not compile the kernel: {failure:?}"),
            })?;
        (&recompiled, None)
    };
    let mut profile = counter.profile(lesson, kernel, machine_code, seed, cancel)?;
    profile.counted_by_emulator_because = Some(why.to_string());
    profile.source = format!("the emulator ({}), because {why}", profile.source);
    Ok(profile)
}

/// The machine-code check running beside the verification (`start_machine_code_check`).
type MachineCodeCheck = std::thread::JoinHandle<Result<crate::compile::MachineCode, String>>;

/// An endless loop the emulator stopped may be one ptxas deleted: the GPU then finishes
/// the kernel, and the fault says so on its line (the machine-code check knows).
fn explain_endless_loop(fault: KernelFault, machine_code: Option<MachineCodeCheck>) -> KernelFault {
    let KernelFault::Timeout {
        message,
        line: Some(line),
    } = &fault
    else {
        return fault;
    };
    let note = machine_code
        .and_then(|check| check.join().ok())
        .and_then(Result::ok)
        .and_then(|code| code.deleted_loop_note(*line));
    match note {
        Some(note) => KernelFault::Timeout {
            message: format!("{message} {note}"),
            line: Some(*line),
        },
        None => fault,
    }
}

/// A compile begun on a thread of its own before the backend is ready (`Backends::run`): the
/// GPU worker takes a few hundred milliseconds to make its CUDA context, and the kernel
/// compiles, and its machine-code check starts, meanwhile. It is begun for the reference
/// card's target, which is the emulator's and the H200's; a backend with another target
/// compiles again.
pub(crate) struct EarlyCompile<'scope> {
    target: Target,
    /// None when the compile panicked: caught on its thread, so that a compile nobody joins
    /// (the backend wanted another target) cannot panic the end of the run's scope.
    handle: std::thread::ScopedJoinHandle<'scope, Option<Compiled>>,
}

impl<'scope> EarlyCompile<'scope> {
    pub(crate) fn start<'env>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        lesson: &'env Lesson,
        request: &'env RunRequest,
    ) -> Option<EarlyCompile<'scope>> {
        let target = Target::EMULATOR;
        std::thread::Builder::new()
            .name("early compile".into())
            .spawn_scoped(scope, move || {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Compiled::now(lesson, request, target))).ok()
            })
            .ok()
            .map(|handle| EarlyCompile { target, handle })
    }

    /// Its result; None when its thread panicked (the run then compiles again on the run's
    /// own thread, where a panic is reported as any other).
    fn join(self) -> Option<Compiled> {
        self.handle.join().ok().flatten()
    }
}

/// A finished compile: the compiler's answer, how long it took, and the machine-code check
/// started on its cubin.
pub(crate) struct Compiled {
    result: Result<CompiledKernel, CompileFailure>,
    took: std::time::Duration,
    machine_code: Option<MachineCodeCheck>,
}

impl Compiled {
    fn now(lesson: &Lesson, request: &RunRequest, target: Target) -> Compiled {
        crate::timeline("run: compiling");
        let started = Instant::now();
        let result = compile_kernel(
            &request.source,
            &request.source_name,
            lesson,
            target,
            request.nvrtc_path.as_deref(),
        );
        let took = started.elapsed();
        crate::timeline("run: compiled");
        let machine_code = result.as_ref().ok().and_then(start_machine_code_check);
        Compiled {
            result,
            took,
            machine_code,
        }
    }
}

/// What the kernel's unoptimised build told, from its thread: the compiler's moves (or why
/// there are none), and the accesses only that build makes.
type Unoptimised = (
    Result<crate::trace::compiler_moves::Traced, String>,
    Vec<crate::report::UnexecutedAccess>,
);
type MovesTrace = std::thread::JoinHandle<Unoptimised>;

/// Builds the kernel without optimisation once, in a thread of its own while the sizes are
/// verified (about one more compile's time, on one host thread), and from that build traces
/// the compiler's moves (`moves`) and looks for accesses the optimised build never made
/// (`unexecuted`).
fn start_moves_trace(
    lesson: &Lesson,
    request: &RunRequest,
    kernel: &crate::compile::CompiledKernel,
    run_seed: u64,
    cancel: &CancelFlag,
) -> Option<MovesTrace> {
    let (lesson, kernel, cancel) = (lesson.clone(), kernel.clone(), cancel.clone());
    let (source, name, nvrtc) = (
        request.source.clone(),
        request.source_name.clone(),
        request.nvrtc_path.clone(),
    );
    std::thread::Builder::new()
        .name("moves trace".into())
        .spawn(move || {
            let reference = crate::compile::compile_unoptimised(&source, &name, &lesson, nvrtc.as_deref());
            let traced = reference
                .as_ref()
                .map_err(Clone::clone)
                .and_then(|reference| crate::trace::compiler_moves::trace(&lesson, &kernel, reference, &cancel));
            crate::timeline("moves trace done");
            let unexecuted = reference
                .map(|reference| crate::trace::unexecuted::find(&lesson, &reference, run_seed, &cancel))
                .unwrap_or_default();
            (traced, unexecuted)
        })
        .ok()
}

/// Compares the kernel's PTX with its machine code in a thread of its own, when there is
/// machine code (CUDA kernels; Rust kernels are loaded as PTX).
fn start_machine_code_check(kernel: &crate::compile::CompiledKernel) -> Option<MachineCodeCheck> {
    let Target::Cubin { sm } = kernel.target else {
        return None;
    };
    let cubin = kernel.cubin.clone()?;
    let ptx = kernel.ptx.clone();
    std::thread::Builder::new()
        .name("machine-code check".into())
        .spawn(move || {
            let code = crate::compile::machine_code::check(&ptx, &cubin, sm);
            crate::timeline("machine-code check done");
            code
        })
        .ok()
}

/// The report under construction.
struct Run<'a> {
    lesson: &'a Lesson,
    request: &'a RunRequest,
    report: RunReport,
}

impl<'a> Run<'a> {
    fn new(lesson: &'a Lesson, request: &'a RunRequest, backend: Option<BackendInfo>) -> Run<'a> {
        let report = RunReport {
            schema: SCHEMA_VERSION,
            haloscope_version: env!("CARGO_PKG_VERSION").to_string(),
            lesson: lesson.id.clone(),
            kernel_file: request.kernel_file.clone(),
            backend,
            seed: request.seed.unwrap_or_else(fresh_seed),
            verdict: Verdict::InfraError,
            exit_code: Verdict::InfraError.exit_code(),
            headline: String::new(),
            notice: None,
            compile: None,
            compile_failure: None,
            sizes: Vec::new(),
            findings: Vec::new(),
            fault: None,
            profile: None,
            timing: None,
            gate: None,
            stages: Vec::new(),
            output: Vec::new(),
            unexecuted: Vec::new(),
        };
        Run {
            lesson,
            request,
            report,
        }
    }

    fn stage(&mut self, stage: &str, started: Instant) {
        self.report.stages.push(StageTime {
            stage: stage.to_string(),
            millis: started.elapsed().as_secs_f64() * 1e3,
        });
    }

    fn set_verdict(&mut self, verdict: Verdict, headline: String) {
        self.report.verdict = verdict;
        self.report.exit_code = verdict.exit_code();
        self.report.headline = headline;
    }

    /// The kernel compiled for `target` (by `early` when it was for that target) and its
    /// machine-code check, or None with the compile failure in the report.
    fn compile(
        &mut self,
        target: Target,
        early: Option<EarlyCompile>,
        progress: &mut dyn FnMut(Progress),
    ) -> Option<(CompiledKernel, Option<MachineCodeCheck>)> {
        progress(Progress::Compiling {
            compiler: Language::of(&self.request.source_name).compiler(),
        });
        let compiled = match early {
            Some(early) if early.target == target => early.join(),
            _ => None,
        }
        .unwrap_or_else(|| Compiled::now(self.lesson, self.request, target));
        self.report.stages.push(StageTime {
            stage: "compile".into(),
            millis: compiled.took.as_secs_f64() * 1e3,
        });
        match compiled.result {
            Ok(kernel) => {
                self.report.compile = Some(CompileSummary {
                    millis: kernel.millis,
                    compiler: kernel.compiler.clone(),
                    compiler_version: kernel.compiler_version.clone(),
                    compiler_path: kernel.compiler_location.path.display().to_string(),
                    target: format!("{:?}", kernel.target),
                    warnings: kernel.diagnostics.clone(),
                });
                Some((kernel, compiled.machine_code))
            }
            Err(failure) => {
                let verdict = match &failure {
                    CompileFailure::Errors { .. } => Verdict::CompileError,
                    CompileFailure::Contract { .. } => Verdict::ContractError,
                    CompileFailure::CompilerUnavailable { .. } | CompileFailure::Internal { .. } => Verdict::InfraError,
                };
                self.set_verdict(verdict, failure.headline());
                self.report.compile_failure = Some(failure);
                None
            }
        }
    }

    fn finish_with_fault(&mut self, fault: KernelFault) {
        let verdict = match &fault {
            _ if fault.is_infrastructure() => Verdict::InfraError,
            KernelFault::Unsupported { .. } => Verdict::EmulatorLimit,
            KernelFault::LaunchRefused { .. } => Verdict::ContractError,
            _ => Verdict::KernelFault,
        };
        self.set_verdict(verdict, fault.message());
        self.report.fault = Some(fault);
    }

    /// Verdict from verification, findings and the gate, in that order of importance.
    fn conclude(&mut self) {
        let gate = &self.lesson.gate;
        if let Some(profile) = &self.report.profile {
            self.report.gate = Some(GateResult {
                metric: gate.metric.clone(),
                below: gate.below,
                value: profile.sectors,
                passed: profile.sectors < gate.below,
            });
        }
        // A race or a read of unwritten shared memory is the cause when results are also
        // wrong, so it is named first.
        if let Some(finding) = self.report.findings.first() {
            let headline = format!(
                "{} ({} finding(s) in all)",
                finding.located(),
                self.report.findings.len()
            );
            self.set_verdict(Verdict::KernelFault, headline);
            return;
        }
        if let Some(bad) = self.report.sizes.iter().find(|s| !s.passed()) {
            let mut headline = format!("wrong results: {}", bad.summary());
            if let Some(first) = bad.first_mismatches.first() {
                headline.push_str(&format!("; first {first}"));
            }
            self.set_verdict(Verdict::WrongResults, headline);
            return;
        }
        match &self.report.gate {
            Some(g) if g.passed => {
                let headline = format!(
                    "all sizes correct; {} sectors < gate {}",
                    thousands(g.value),
                    thousands(g.below)
                );
                self.set_verdict(Verdict::Pass, headline);
            }
            Some(g) => {
                let headline = format!(
                    "all sizes correct, but {} sectors is not under the gate of {}",
                    thousands(g.value),
                    thousands(g.below)
                );
                self.set_verdict(Verdict::GateFail, headline);
            }
            None => self.set_verdict(Verdict::InfraError, "no profile was taken".into()),
        }
    }
}

/// Adds one size's findings: the same problem on the same line found again at another size
/// is counted, not listed twice.
fn merge_findings(all: &mut Vec<crate::backend::Finding>, new: Vec<crate::backend::Finding>) {
    for f in new {
        match all
            .iter_mut()
            .find(|e| e.kind == f.kind && e.at.line == f.at.line && e.address == f.address)
        {
            Some(existing) => existing.count += f.count,
            None => all.push(f),
        }
    }
}

pub mod live_count;

#[cfg(test)]
mod profiling_restricted_tests;
