//! Global-memory sectors from CUPTI's SASS Metrics API, per SASS instruction, mapped to
//! source lines through CUPTI's SASS-to-source correlation on the cubin we loaded.
//!
//! Runs only in the one-shot profiler child: CUPTI collects SASS metrics once per process
//! (after the first flush nothing more is recorded), and only for the first function
//! launched after Enable, so this child launches one kernel, its N launches, one flush.
//! The module is loaded before Enable (the worker runs with CUDA_MODULE_LOADING=EAGER and
//! lazy patching off, since lazy loading can deadlock SASS patching).

use super::device::{Device, driver_fault};
use super::protocol::{GpuProfile, KernelImage, PcRecord};
use crate::backend::KernelFault;
use crate::cudalibs::{CudaLib, ensure_loaded};
use crate::lesson::Contract;
use cudarc::cupti::sys;
use cudarc::driver::sys::{CUcontext, CUdevice};
use std::ffi::{CStr, CString, c_char, c_void};
use std::ptr::null_mut;

const SECTORS: &str = "smsp__sass_sectors_mem_global";
const LOADS: &str = "smsp__sass_inst_executed_op_global_ld";
const STORES: &str = "smsp__sass_inst_executed_op_global_st";
/// The fewest sectors the requested bytes could occupy.
const IDEAL: &str = "smsp__sass_sectors_mem_global_ideal";
/// Threads (lanes) that executed global memory instructions with their predicate on.
const LANES: &str = "smsp__sass_thread_inst_executed_op_global_pred_on";

unsafe extern "C" {
    fn free(ptr: *mut c_void);
}

/// A CUPTI status as a fault, through cudarc's `CuptiError` (which carries CUPTI's own text).
/// A refusal for want of privileges is a fault of its own kind: the run goes on without the
/// GPU's counters (see `permission`). `HALOSCOPE_INJECT_CUPTI_STATUS` replaces the status
/// of one call here (tests of that path on a card where profiling is open to everybody).
fn check(what: &str, result: sys::CUptiResult) -> Result<(), KernelFault> {
    status_fault(what, super::permission::injected_status(what).unwrap_or(result))
}

/// `check` after the injection: the status of CUPTI call `what` as the run's fault.
pub(super) fn status_fault(what: &str, result: sys::CUptiResult) -> Result<(), KernelFault> {
    result.result().map_err(|error| {
        // CUPTI's own text when CUPTI is here (asking a missing library would panic in cudarc).
        // SAFETY: only probes for the library.
        let text = unsafe { sys::is_culib_present() }
            .then(|| error.error_string().ok())
            .flatten()
            .map(|t| t.to_string_lossy().into_owned())
            .unwrap_or_else(|| format!("{result:?}"));
        if super::permission::is_privilege_refusal(result) {
            return KernelFault::ProfilingRestricted {
                message: super::permission::restricted_message(what, &text),
            };
        }
        KernelFault::Infrastructure {
            message: format!("CUPTI {what} failed: {text}"),
        }
    })
}

/// CUPTI made ready for a profile on `d`: everything that does not depend on the kernel
/// (about 0.1 s), done by the profiler child while it waits for its request.
pub struct CuptiReady {
    chip: *const c_char,
    configs: Vec<sys::CUpti_SassMetrics_Config>,
}

const METRICS: [&str; 5] = [SECTORS, LOADS, STORES, IDEAL, LANES];

pub fn get_ready(d: &Device) -> Result<CuptiReady, KernelFault> {
    ensure_loaded(CudaLib::Cupti, None).map_err(|message| KernelFault::Infrastructure { message })?;
    // SAFETY: CUPTI was loaded above; device 0 is the one the context was made on.
    unsafe {
        initialize_profiler()?;
        check_sass_metrics_supported(d.ctx.cu_device() as _)?;
        let chip = chip_name()?;
        let configs = metric_configs(chip, &METRICS)?;
        Ok(CuptiReady { chip, configs })
    }
}

/// At most this many of the profile run's launches are measured under CUPTI. A patched
/// launch of the 2D starter at n=4096 takes about 9.5 ms on the H200 (100 took 947 ms, most
/// of a GPU run), and every launch of a kernel on the same input issues the same sectors:
/// over the whole corpus (320 kernels, docs/device-runs/2026-12-04-corpus.md) CUPTI's sum
/// over 100 launches was exactly 100 times ncu's one launch wherever the figures agreed.
/// So a tenth of the launches is measured and scaled, as the emulator scales its one.
pub const MEASURED_LAUNCHES_AT_MOST: u32 = 10;

/// The launches measured for a profile run of `launches`: the largest divisor of `launches`
/// not above [`MEASURED_LAUNCHES_AT_MOST`], so the scale is a whole number.
pub fn measured_launches(launches: u32) -> u32 {
    (1..=MEASURED_LAUNCHES_AT_MOST.min(launches).max(1))
        .rev()
        .find(|m| launches.is_multiple_of(*m))
        .unwrap_or(1)
}

pub fn profile_with_cupti(
    d: &mut Device,
    ready: Option<CuptiReady>,
    lesson: &Contract,
    kernel: &KernelImage,
    n: u32,
    launches: u32,
    seed: u64,
) -> Result<GpuProfile, KernelFault> {
    let started = std::time::Instant::now();
    let mut phases = Phases::start();
    let ready = match ready {
        Some(ready) => ready,
        None => get_ready(d)?,
    };
    phases.end("CUPTI ready");
    // Everything that is not the measured kernel happens before Enable.
    let f = d.function(kernel)?;
    phases.end("module");
    let (d_in, mut d_out) = super::device::buffers(d, lesson.stencil.elements(n), seed)?;
    d.stream.synchronize().map_err(|e| driver_fault("setup", e))?;
    phases.end("inputs");
    let ctx: CUcontext = d.ctx.cu_ctx() as _;
    let CuptiReady { chip, mut configs } = ready;
    let ids: Vec<u64> = configs.iter().map(|c| c.metricId).collect();
    // SAFETY: `ctx` is the worker's live context and stays current for the whole profile;
    // `configs` (from `get_ready`) outlives the call that reads it.
    unsafe { enable_sass_metrics(ctx, &mut configs)? };
    phases.end("CUPTI enable");

    let measured = measured_launches(launches);
    for _ in 0..measured {
        d.launch(&f, lesson, n, &d_in, &mut d_out)
            .map_err(|e| driver_fault("a profiled launch", e))?;
    }
    d.stream
        .synchronize()
        .map_err(|e| driver_fault("the profiled launches", e))?;
    phases.end("patched launches");

    // SAFETY: metrics were enabled on `ctx` above and the launches have completed.
    let flushed = unsafe { flush_records(ctx)? };
    // SAFETY: as above; disabling ends this process's one collection.
    let dropped = unsafe { disable_sass_metrics(ctx)? };
    if let Some(path) = std::env::var_os("HALOSCOPE_CUPTI_DEBUG") {
        // SAFETY: `chip` is CUPTI's static chip name string.
        unsafe { write_debug(&path, chip, &METRICS, &ids, &flushed) };
    }
    // SAFETY: the records come straight from `flush_records`, each name freed once.
    let records = unsafe { gather_records(kernel, d.loaded_cubin.as_deref().map(Vec::as_slice), &ids, flushed) };
    // SAFETY: the configuration set in `enable_sass_metrics` on device 0.
    unsafe { unset_config() };
    phases.end("records and lines");
    Ok(GpuProfile {
        phases: phases.done,
        launches,
        measured_launches: measured,
        records,
        source: format!(
            "CUPTI SASS metrics ({SECTORS}) over {measured} launches at n={n}, x{} for {launches} (every launch on the same input issues the same sectors), dropped records: {dropped}",
            launches / measured
        ),
        millis: started.elapsed().as_secs_f64() * 1e3,
        output: None, // filled by the worker once the launches' printf text is read
        jit_cubin_base64: match (kernel.printf_gated, &d.loaded_cubin) {
            (true, Some(cubin)) => Some(super::protocol::machine_code_text(cubin)),
            _ => None,
        },
    })
}

/// # Safety
/// CUPTI must be loaded (`ensure_loaded(CudaLib::Cupti)`).
unsafe fn initialize_profiler() -> Result<(), KernelFault> {
    let mut init = sys::CUpti_Profiler_Initialize_Params {
        structSize: sys::Profiler_Initialize_Params_STRUCT_SIZE as usize,
        pPriv: null_mut(),
    };
    check("cuptiProfilerInitialize", unsafe {
        sys::cuptiProfilerInitialize(&mut init)
    })
}

/// Whether `device` supports the SASS metrics API; the error says why not.
///
/// # Safety
/// The profiler must be initialised (`initialize_profiler`).
unsafe fn check_sass_metrics_supported(device: CUdevice) -> Result<(), KernelFault> {
    // SAFETY: a plain C struct; zero is a valid value of every field.
    let mut supported: sys::CUpti_Profiler_DeviceSupported_Params = unsafe { std::mem::zeroed() };
    supported.structSize = sys::Profiler_DeviceSupported_Params_STRUCT_SIZE as usize;
    supported.cuDevice = device;
    supported.api = sys::CUpti_Profiler_API::CUPTI_PROFILER_SASS_METRICS;
    check("cuptiProfilerDeviceSupported", unsafe {
        sys::cuptiProfilerDeviceSupported(&mut supported)
    })?;
    if supported.isSupported != sys::CUpti_Profiler_Support_Level::CUPTI_PROFILER_CONFIGURATION_SUPPORTED {
        return Err(KernelFault::Infrastructure {
            message: format!(
                "CUPTI SASS metrics are not supported on this device (architecture {:?}, vGPU {:?}, confidential compute {:?})",
                supported.architecture, supported.vGpu, supported.confidentialCompute
            ),
        });
    }
    Ok(())
}

/// The chip name of device 0, a static string owned by CUPTI.
///
/// # Safety
/// The profiler must be initialised.
unsafe fn chip_name() -> Result<*const c_char, KernelFault> {
    let mut chip = sys::CUpti_Device_GetChipName_Params {
        structSize: sys::Device_GetChipName_Params_STRUCT_SIZE as usize,
        pPriv: null_mut(),
        deviceIndex: 0,
        pChipName: std::ptr::null(),
    };
    check("cuptiDeviceGetChipName", unsafe {
        sys::cuptiDeviceGetChipName(&mut chip)
    })?;
    Ok(chip.pChipName)
}

/// One configuration per metric name, per GPU (not per SM) granularity.
///
/// # Safety
/// `chip` must come from `chip_name`.
unsafe fn metric_configs(
    chip: *const c_char,
    names: &[&str],
) -> Result<Vec<sys::CUpti_SassMetrics_Config>, KernelFault> {
    let mut configs = Vec::new();
    for &name in names {
        let c_name = CString::new(name).expect("metric name");
        // SAFETY: a plain C struct; zero is a valid value of every field.
        let mut props: sys::CUpti_SassMetrics_GetProperties_Params = unsafe { std::mem::zeroed() };
        props.structSize = sys::SassMetrics_GetProperties_Params_STRUCT_SIZE as usize;
        props.pChipName = chip;
        props.pMetricName = c_name.as_ptr();
        check(&format!("cuptiSassMetricsGetProperties({name})"), unsafe {
            sys::cuptiSassMetricsGetProperties(&mut props)
        })?;
        configs.push(sys::CUpti_SassMetrics_Config {
            metricId: props.metric.metricId,
            outputGranularity: sys::CUpti_SassMetrics_OutputGranularity::CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU
                as u8,
        });
    }
    Ok(configs)
}

/// Sets the metrics on device 0 and enables collection on `ctx`, without lazy patching
/// (lazy patching can deadlock SASS patching; the module is already loaded).
///
/// # Safety
/// `ctx` must be a live context of device 0; `configs` from `metric_configs`.
unsafe fn enable_sass_metrics(
    ctx: CUcontext,
    configs: &mut [sys::CUpti_SassMetrics_Config],
) -> Result<(), KernelFault> {
    let mut set = sys::CUpti_SassMetricsSetConfig_Params {
        structSize: sys::SassMetricsSetConfig_Params_STRUCT_SIZE as usize,
        pPriv: null_mut(),
        numOfMetricConfig: configs.len(),
        pConfigs: configs.as_mut_ptr(),
        deviceIndex: 0,
    };
    check("cuptiSassMetricsSetConfig", unsafe {
        sys::cuptiSassMetricsSetConfig(&mut set)
    })?;
    let mut enable = sys::CUpti_SassMetricsEnable_Params {
        structSize: sys::SassMetricsEnable_Params_STRUCT_SIZE as usize,
        pPriv: null_mut(),
        ctx,
        enableLazyPatching: 0,
    };
    check("cuptiSassMetricsEnable", unsafe {
        sys::cuptiSassMetricsEnable(&mut enable)
    })
}

/// CUPTI's records, one per (patched instruction, metric), and the values they point into.
/// `data[i].pInstanceValues` points into `values[i]`'s heap buffer, which moving the vectors
/// does not move.
struct Flushed {
    data: Vec<sys::CUpti_SassMetrics_Data>,
    values: Vec<Vec<sys::CUpti_SassMetrics_InstanceValue>>,
}

/// # Safety
/// Metrics must be enabled on `ctx` and the measured launches complete.
unsafe fn flush_records(ctx: CUcontext) -> Result<Flushed, KernelFault> {
    let mut props = sys::CUpti_SassMetricsGetDataProperties_Params {
        structSize: sys::SassMetricsGetDataProperties_Params_STRUCT_SIZE as usize,
        pPriv: null_mut(),
        ctx,
        numOfPatchedInstructionRecords: 0,
        numOfInstances: 0,
    };
    check("cuptiSassMetricsGetDataProperties", unsafe {
        sys::cuptiSassMetricsGetDataProperties(&mut props)
    })?;
    let records = props.numOfPatchedInstructionRecords;
    let instances = props.numOfInstances;
    let mut values: Vec<Vec<sys::CUpti_SassMetrics_InstanceValue>> = (0..records)
        .map(|_| vec![sys::CUpti_SassMetrics_InstanceValue { metricId: 0, value: 0 }; instances])
        .collect();
    let mut data: Vec<sys::CUpti_SassMetrics_Data> = values
        .iter_mut()
        .map(|v| sys::CUpti_SassMetrics_Data {
            structSize: std::mem::size_of::<sys::CUpti_SassMetrics_Data>(),
            pPriv: null_mut(),
            cubinCrc: 0,
            functionIndex: 0,
            functionName: std::ptr::null(),
            pcOffset: 0,
            pInstanceValues: v.as_mut_ptr(),
        })
        .collect();
    if records > 0 && instances > 0 {
        let mut flush = sys::CUpti_SassMetricsFlushData_Params {
            structSize: sys::SassMetricsFlushData_Params_STRUCT_SIZE as usize,
            pPriv: null_mut(),
            ctx,
            numOfPatchedInstructionRecords: records,
            numOfInstances: instances,
            pMetricsData: data.as_mut_ptr(),
        };
        check("cuptiSassMetricsFlushData", unsafe {
            sys::cuptiSassMetricsFlushData(&mut flush)
        })?;
    }
    Ok(Flushed { data, values })
}

/// Ends collection on `ctx`; returns how many records CUPTI dropped.
///
/// # Safety
/// Metrics must be enabled on `ctx`.
unsafe fn disable_sass_metrics(ctx: CUcontext) -> Result<usize, KernelFault> {
    let mut disable = sys::CUpti_SassMetricsDisable_Params {
        structSize: sys::SassMetricsDisable_Params_STRUCT_SIZE as usize,
        pPriv: null_mut(),
        ctx,
        numOfDroppedRecords: 0,
    };
    check("cuptiSassMetricsDisable", unsafe {
        sys::cuptiSassMetricsDisable(&mut disable)
    })?;
    Ok(disable.numOfDroppedRecords as usize)
}

/// # Safety
/// A configuration must have been set on device 0.
unsafe fn unset_config() {
    let mut unset = sys::CUpti_SassMetricsUnsetConfig_Params {
        structSize: sys::SassMetricsUnsetConfig_Params_STRUCT_SIZE as usize,
        pPriv: null_mut(),
        deviceIndex: 0,
    };
    let _ = unsafe { sys::cuptiSassMetricsUnsetConfig(&mut unset) };
}

/// CUPTI's records gathered per instruction (one record per instruction and metric), with
/// the source line of each from the cubin. Frees the function names CUPTI allocated.
///
/// # Safety
/// `flushed` must come from `flush_records`: each `functionName` is null or a `malloc`ed
/// string owned by the caller, freed here exactly once.
unsafe fn gather_records(kernel: &KernelImage, cubin: Option<&[u8]>, ids: &[u64], flushed: Flushed) -> Vec<PcRecord> {
    let mut by_pc: std::collections::BTreeMap<(String, u32), PcRecord> = Default::default();
    for (record, vals) in flushed.data.iter().zip(&flushed.values) {
        let function = if record.functionName.is_null() {
            kernel.entry.clone()
        } else {
            // SAFETY: a NUL-terminated string from CUPTI (see the function's contract).
            unsafe { CStr::from_ptr(record.functionName) }
                .to_string_lossy()
                .into_owned()
        };
        let entry = by_pc.entry((function.clone(), record.pcOffset)).or_insert_with(|| {
            let (line, file) = match cubin {
                Some(c) => source_line(c, &function, record.pcOffset as u64),
                None => (0, String::new()),
            };
            PcRecord {
                pc_offset: record.pcOffset,
                line,
                file,
                ..PcRecord::default()
            }
        });
        for v in vals {
            let slot = match ids.iter().position(|&id| id == v.metricId) {
                Some(0) => &mut entry.sectors,
                Some(1) => &mut entry.global_loads,
                Some(2) => &mut entry.global_stores,
                Some(3) => &mut entry.ideal_sectors,
                Some(4) => &mut entry.active_lanes,
                _ => continue,
            };
            *slot += v.value;
        }
        if !record.functionName.is_null() {
            // SAFETY: CUPTI allocated it with malloc; freed once, here.
            unsafe { free(record.functionName as *mut c_void) };
        }
    }
    let mut out: Vec<PcRecord> = by_pc.into_values().collect();
    out.sort_by_key(|r| r.pc_offset);
    out
}

/// Source line of a SASS instruction (needs the cubin to have been built with -lineinfo).
fn source_line(cubin: &[u8], function: &str, pc_offset: u64) -> (u32, String) {
    let Ok(name) = CString::new(function) else {
        return (0, String::new());
    };
    let mut params = sys::CUpti_GetSassToSourceCorrelationParams {
        size: std::mem::size_of::<sys::CUpti_GetSassToSourceCorrelationParams>(),
        cubin: cubin.as_ptr() as *const c_void,
        functionName: name.as_ptr(),
        cubinSize: cubin.len(),
        lineNumber: 0,
        pcOffset: pc_offset,
        fileName: null_mut(),
        dirName: null_mut(),
    };
    // SAFETY: the cubin and name outlive the call; CUPTI allocates the strings with malloc.
    unsafe {
        if sys::cuptiGetSassToSourceCorrelation(&mut params) != sys::CUptiResult::CUPTI_SUCCESS {
            return (0, String::new());
        }
        let file = if params.fileName.is_null() {
            String::new()
        } else {
            CStr::from_ptr(params.fileName).to_string_lossy().into_owned()
        };
        if !params.fileName.is_null() {
            free(params.fileName as *mut c_void);
        }
        if !params.dirName.is_null() {
            free(params.dirName as *mut c_void);
        }
        (params.lineNumber, file)
    }
}

/// Developer aid: the raw CUPTI records and the chip's SASS metric list, to a file.
///
/// # Safety
/// `chip` must come from `chip_name`.
unsafe fn write_debug(path: &std::ffi::OsStr, chip: *const c_char, names: &[&str], ids: &[u64], flushed: &Flushed) {
    let (data, values) = (&flushed.data, &flushed.values);
    let records = data.len();
    let instances = values.first().map_or(0, Vec::len);
    use std::fmt::Write as _;
    let mut text = String::new();
    let _ = writeln!(
        text,
        "metrics {names:?} ids {ids:?}; records {records}, instances {instances}"
    );
    for (record, vals) in data.iter().zip(values).take(80) {
        let v: Vec<(u64, u64)> = vals.iter().map(|v| (v.metricId, v.value)).collect();
        let _ = writeln!(text, "pc {:#x} crc {} values {v:?}", record.pcOffset, record.cubinCrc);
    }
    // SAFETY: parameter structs as CUPTI's headers define them.
    unsafe {
        let mut count: sys::CUpti_SassMetrics_GetNumOfMetrics_Params = std::mem::zeroed();
        count.structSize = sys::SassMetrics_GetNumOfMetrics_Params_STRUCT_SIZE as usize;
        count.pChipName = chip;
        if sys::cuptiSassMetricsGetNumOfMetrics(&mut count) == sys::CUptiResult::CUPTI_SUCCESS {
            let mut list = vec![std::mem::zeroed::<sys::CUpti_SassMetrics_MetricDetails>(); count.numOfMetrics];
            let mut get: sys::CUpti_SassMetrics_GetMetrics_Params = std::mem::zeroed();
            get.structSize = sys::SassMetrics_GetMetrics_Params_STRUCT_SIZE as usize;
            get.pChipName = chip;
            get.numOfMetrics = list.len();
            get.pMetricsList = list.as_mut_ptr();
            if sys::cuptiSassMetricsGetMetrics(&mut get) == sys::CUptiResult::CUPTI_SUCCESS {
                for m in &list {
                    let name = if m.pMetricName.is_null() {
                        String::new()
                    } else {
                        CStr::from_ptr(m.pMetricName).to_string_lossy().into_owned()
                    };
                    let _ = writeln!(text, "available {} = {name}", m.metricId);
                }
            }
        }
    }
    let _ = std::fs::write(path, text);
}

/// How long each step of the profile took (milliseconds), for the run's stage list.
struct Phases {
    done: Vec<(String, f64)>,
    since: std::time::Instant,
}

impl Phases {
    fn start() -> Phases {
        Phases {
            done: Vec::new(),
            since: std::time::Instant::now(),
        }
    }

    /// Ends the step `what` (it began where the last one ended).
    fn end(&mut self, what: &str) {
        let now = std::time::Instant::now();
        self.done
            .push((what.to_string(), (now - self.since).as_secs_f64() * 1e3));
        self.since = now;
    }
}

#[cfg(test)]
mod tests {
    use super::measured_launches;

    #[test]
    fn the_measured_launches_divide_the_profile_run() {
        for (launches, measured) in [(100, 10), (30, 10), (12, 6), (7, 7), (13, 1), (1, 1)] {
            assert_eq!(measured_launches(launches), measured, "{launches} launches");
        }
    }
}
