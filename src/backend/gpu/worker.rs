//! `haloscope worker`: the child process that owns the CUDA context. It answers requests
//! from stdin, one JSON line each, so that a kernel that crashes or hangs takes down only
//! this process. After a crash the context is unusable, so the worker reports it and exits.
//! Replies go to a duplicate of the original stdout: fd 1 itself is where the CUDA driver
//! writes device `printf` output, captured per request (see `capture`).

use super::capture::Capture;
use super::cupti::{CuptiReady, profile_with_cupti};
use super::device::{Device, buffers, driver_fault};
use super::printf_gate::VERIFY_CAP;
use super::protocol::{KernelImage, Request, Response};
use crate::backend::{KernelFault, KernelOutput, SizeRun};
use crate::harness::check_size;
use crate::lesson::Contract;
use crate::report::Timing;
use cudarc::driver::DriverError;
use std::io::{BufRead, Write};

/// Serves requests until stdin closes. `one_shot`: answer one request and exit (the
/// profiler child: CUPTI's SASS metrics can be collected once per process).
pub fn worker_main(one_shot: bool) -> i32 {
    let stdin = std::io::stdin();
    let (mut capture, mut out): (Option<Capture>, Box<dyn Write>) = match Capture::redirect_stdout() {
        Ok((capture, replies)) => (Some(capture), Box::new(std::io::BufWriter::new(replies))),
        Err(e) => {
            eprintln!("haloscope worker: device printf output is not captured ({e}) and may corrupt the replies");
            (None, Box::new(std::io::stdout()))
        }
    };
    // The profiler child is started before its request exists (GpuBackend::prepare): it
    // makes its CUDA context while the kernel compiles. A failure here is retried, and
    // reported, when the request comes.
    let mut device: Option<Device> = if one_shot { Device::open().ok() } else { None };
    let mut cupti_ready = device.as_ref().and_then(|d| super::cupti::get_ready(d).ok());
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let (response, fatal) = match serde_json::from_str::<Request>(&line) {
            Ok(request) => {
                let launch = launch_label(&request);
                let (mut response, fatal) = handle(&mut device, cupti_ready.take(), request);
                // Collected after every request (a failed one's text is dropped), so that
                // nothing printed is attributed to a later request.
                let mut printed = capture.as_mut().and_then(|c| c.collect(&launch));
                if let Some(calls) = device.as_mut().and_then(|d| d.printf_calls_made.take()) {
                    let output = printed.get_or_insert_with(|| KernelOutput::new(launch.clone()));
                    output.note_printf_calls(calls as u64, VERIFY_CAP as u64);
                }
                if printed.as_ref().is_some_and(|o| !o.is_empty()) {
                    attach_output(&mut response, printed);
                }
                (response, fatal)
            }
            Err(e) => (
                Response::Fault {
                    fault: KernelFault::Infrastructure {
                        message: format!("bad request: {e}"),
                    },
                },
                false,
            ),
        };
        let text = serde_json::to_string(&response).unwrap_or_else(|e| {
            format!("{{\"reply\":\"fault\",\"fault\":{{\"kind\":\"infrastructure\",\"message\":\"{e}\"}}}}")
        });
        if writeln!(out, "{text}").and_then(|_| out.flush()).is_err() {
            return 1;
        }
        if fatal {
            return 3;
        }
        if one_shot {
            return 0;
        }
    }
    0
}

/// How a request's printed output is labelled.
fn launch_label(request: &Request) -> String {
    match request {
        Request::Hello => "hello".into(),
        Request::Verify { n, .. } => format!("verify n={n}"),
        Request::Time { .. } => "time".into(),
        Request::Profile { n, .. } => format!("profile n={n}"),
    }
}

/// Puts what a request printed into its reply: verification and profile launches keep it,
/// timing launches' output is discarded.
fn attach_output(response: &mut Response, printed: Option<KernelOutput>) {
    match response {
        Response::Verified { run, .. } => run.output = printed,
        Response::Profiled { profile } => profile.output = printed,
        // A failed device assert: the driver prints which expression failed, in which file,
        // line, block and thread, to the stdout captured here. It belongs in the fault.
        Response::Fault {
            fault: KernelFault::Crashed { message },
        } => {
            let mut lines = printed.iter().flat_map(|o| o.lines.iter());
            if let Some(assertion) = lines.find(|l| l.contains("Assertion")) {
                message.push_str(&format!("; the GPU printed: {}", assertion.trim()));
            }
        }
        _ => {}
    }
}

fn device(slot: &mut Option<Device>) -> Result<&mut Device, KernelFault> {
    if slot.is_none() {
        *slot = Some(Device::open().map_err(|message| KernelFault::Infrastructure { message })?);
    }
    Ok(slot.as_mut().expect("device opened"))
}

/// Returns the response and whether the context is now unusable.
fn handle(slot: &mut Option<Device>, cupti_ready: Option<CuptiReady>, request: Request) -> (Response, bool) {
    let result = match request {
        Request::Hello => {
            return match device(slot) {
                Ok(d) => match d.info() {
                    Ok(info) => (
                        Response::Hello {
                            device: Some(info),
                            problem: None,
                        },
                        false,
                    ),
                    Err(e) => (
                        Response::Hello {
                            device: None,
                            problem: Some(format!("{e:?}")),
                        },
                        false,
                    ),
                },
                Err(fault) => (
                    Response::Hello {
                        device: None,
                        problem: Some(fault.message()),
                    },
                    false,
                ),
            };
        }
        Request::Verify {
            contract: lesson,
            kernel,
            n,
            seed,
        } => device(slot).and_then(|d| verify(d, &lesson, &kernel, n, seed)),
        Request::Time {
            contract: lesson,
            kernel,
            launches,
        } => device(slot)
            .and_then(|d| time(d, &lesson, &kernel, launches))
            .map(|timing| Response::Timed { timing }),
        Request::Profile {
            contract: lesson,
            kernel,
            n,
            launches,
            seed,
        } => device(slot)
            .and_then(|d| profile_with_cupti(d, cupti_ready, &lesson, &kernel, n, launches, seed))
            .map(|profile| Response::Profiled { profile }),
    };
    match result {
        Ok(response) => (response, false),
        Err(fault) => {
            let fatal = matches!(fault, KernelFault::Crashed { .. });
            (Response::Fault { fault }, fatal)
        }
    }
}

fn verify(d: &mut Device, lesson: &Contract, kernel: &KernelImage, n: u32, seed: u64) -> Result<Response, KernelFault> {
    let started = std::time::Instant::now();
    let f = d.function(kernel)?;
    let mut kept = None;
    let verification = check_size(lesson, n, seed, |input, output| {
        let d_in = d
            .stream
            .clone_htod(input)
            .map_err(|e| driver_fault("copying the input", e))?;
        // The output arrives poisoned: the device copy starts poisoned too.
        let mut d_out = d
            .stream
            .clone_htod(output)
            .map_err(|e| driver_fault("poisoning the output", e))?;
        // Verification launches print (up to the cap); measured launches never do.
        d.printf_cap = VERIFY_CAP;
        let launched = d.launch(&f, lesson, n, &d_in, &mut d_out);
        d.printf_cap = 0;
        launched.map_err(|e| driver_fault("the launch", e))?;
        d.stream.synchronize().map_err(|e| driver_fault("the kernel", e))?;
        d.printf_calls_made = d
            .printf_calls()
            .map_err(|e| driver_fault("reading the printf count", e))?;
        d.stream
            .memcpy_dtoh(&d_out, output)
            .map_err(|e| driver_fault("copying the output back", e))?;
        if n == lesson.profile_size {
            kept = Some((input.len(), d_in, d_out));
        }
        Ok::<(), KernelFault>(())
    })?;
    if kept.is_some() {
        d.profile_size_buffers = kept;
    }
    Ok(Response::Verified {
        run: SizeRun {
            verification,
            findings: Vec::new(),
            output: None,
            trace: None,
        },
        millis: started.elapsed().as_secs_f64() * 1e3,
    })
}

/// CUDA events around each launch, after a warm-up; no profiler attached.
fn time(d: &mut Device, lesson: &Contract, kernel: &KernelImage, launches: u32) -> Result<Timing, KernelFault> {
    use cudarc::driver::sys::CUevent_flags;
    let f = d.function(kernel)?;
    let n = lesson.profile_size;
    let count = lesson.stencil.elements(n);
    let (d_in, mut d_out) = match d.profile_size_buffers.take() {
        Some((elements, d_in, d_out)) if elements == count => (d_in, d_out),
        _ => buffers(d, count, 1)?,
    };
    for _ in 0..5 {
        d.launch(&f, lesson, n, &d_in, &mut d_out)
            .map_err(fault("a warm-up launch"))?;
    }
    d.stream.synchronize().map_err(fault("the warm-up"))?;
    let events = |d: &Device| {
        d.ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(fault("creating events"))
    };
    let mut pairs = Vec::new();
    for _ in 0..launches {
        let (start, end) = (events(d)?, events(d)?);
        start.record(&d.stream).map_err(fault("recording an event"))?;
        d.launch(&f, lesson, n, &d_in, &mut d_out)
            .map_err(fault("a timed launch"))?;
        end.record(&d.stream).map_err(fault("recording an event"))?;
        pairs.push((start, end));
    }
    d.stream.synchronize().map_err(fault("the timed launches"))?;
    let mut micros: Vec<f64> = pairs
        .iter()
        .map(|(s, e)| s.elapsed_ms(e).map(|ms| ms as f64 * 1e3))
        .collect::<Result<_, _>>()
        .map_err(fault("reading events"))?;
    micros.sort_by(f64::total_cmp);
    let median = micros[micros.len() / 2];
    let bytes = 2.0 * count as f64 * 4.0;
    Ok(Timing {
        launches,
        median_us: median,
        min_us: micros[0],
        max_us: *micros.last().unwrap_or(&median),
        effective_gbps: bytes / (median * 1e-6) / 1e9,
        copy_gbps: None,
    })
}

/// `map_err` helper: a driver error during `what`.
fn fault(what: &'static str) -> impl Fn(DriverError) -> KernelFault {
    move |e| driver_fault(what, e)
}

pub fn launch_each(
    lesson: &Contract,
    kernels: &[(&str, KernelImage)],
    n: u32,
    launches: u32,
    seed: u64,
    mut report: impl FnMut(&str, Result<(), KernelFault>),
) -> bool {
    let setup = Device::open()
        .map_err(|message| KernelFault::Infrastructure { message })
        .and_then(|d| buffers(&d, lesson.stencil.elements(n), seed).map(|b| (d, b)));
    let (mut d, (d_in, mut d_out)) = match setup {
        Ok(ready) => ready,
        Err(f) => {
            if let Some((label, _)) = kernels.first() {
                report(label, Err(f));
            }
            return true;
        }
    };
    for (label, kernel) in kernels {
        let result = d.function(kernel).and_then(|f| {
            for _ in 0..launches {
                d.launch(&f, lesson, n, &d_in, &mut d_out).map_err(fault("a launch"))?;
            }
            d.stream.synchronize().map_err(fault("the launches"))
        });
        let failed = result.is_err();
        report(label, result);
        if failed {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_asserts_printed_line_joins_the_fault() {
        let mut response = Response::Fault {
            fault: KernelFault::Crashed {
                message: "a device assert failed during verification at n=33".into(),
            },
        };
        let mut printed = KernelOutput::new("verify n=33");
        printed.push_line("before");
        printed.push_line(
            "kernel.cu:9: void stencil1d(const float *, float *, int): block: [0,0,0], thread: [32,0,0] Assertion `i + 1 < n` failed.",
        );
        attach_output(&mut response, Some(printed));
        let Response::Fault {
            fault: KernelFault::Crashed { message },
        } = response
        else {
            panic!("still a crash")
        };
        assert!(
            message.ends_with("; the GPU printed: kernel.cu:9: void stencil1d(const float *, float *, int): block: [0,0,0], thread: [32,0,0] Assertion `i + 1 < n` failed."),
            "{message}"
        );
    }
}
