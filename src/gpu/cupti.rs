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
use crate::lesson::Lesson;
use cudarc::cupti::sys;
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
fn check(what: &str, result: sys::CUptiResult) -> Result<(), KernelFault> {
    result.result().map_err(|error| {
        let text = error
            .error_string()
            .map(|t| t.to_string_lossy().into_owned())
            .unwrap_or_else(|_| format!("{result:?}"));
        KernelFault::Infrastructure {
            message: format!("CUPTI {what} failed: {text}"),
        }
    })
}

pub fn profile_with_cupti(
    d: &mut Device,
    lesson: &Lesson,
    kernel: &KernelImage,
    n: u32,
    launches: u32,
) -> Result<GpuProfile, KernelFault> {
    let started = std::time::Instant::now();
    ensure_loaded(CudaLib::Cupti, None).map_err(|message| KernelFault::Infrastructure { message })?;
    // Everything that is not the measured kernel happens before Enable.
    let f = d.function(kernel)?;
    let (d_in, mut d_out) = super::device::buffers(d, lesson.stencil.elements(n), 2)?;
    d.stream.synchronize().map_err(|e| driver_fault("setup", e))?;
    let ctx = d.ctx.cu_ctx() as _;

    // SAFETY (this block): CUPTI parameter structs are filled as its headers require, with
    // their struct sizes, and outlive the calls that use them.
    unsafe {
        let mut init = sys::CUpti_Profiler_Initialize_Params {
            structSize: sys::Profiler_Initialize_Params_STRUCT_SIZE as usize,
            pPriv: null_mut(),
        };
        check("cuptiProfilerInitialize", sys::cuptiProfilerInitialize(&mut init))?;

        let mut supported: sys::CUpti_Profiler_DeviceSupported_Params = std::mem::zeroed();
        supported.structSize = sys::Profiler_DeviceSupported_Params_STRUCT_SIZE as usize;
        supported.cuDevice = d.ctx.cu_device() as _;
        supported.api = sys::CUpti_Profiler_API::CUPTI_PROFILER_SASS_METRICS;
        check(
            "cuptiProfilerDeviceSupported",
            sys::cuptiProfilerDeviceSupported(&mut supported),
        )?;
        if supported.isSupported != sys::CUpti_Profiler_Support_Level::CUPTI_PROFILER_CONFIGURATION_SUPPORTED {
            return Err(KernelFault::Infrastructure {
                message: format!(
                    "CUPTI SASS metrics are not supported on this device (architecture {:?}, vGPU {:?}, confidential compute {:?})",
                    supported.architecture, supported.vGpu, supported.confidentialCompute
                ),
            });
        }

        let mut chip = sys::CUpti_Device_GetChipName_Params {
            structSize: sys::Device_GetChipName_Params_STRUCT_SIZE as usize,
            pPriv: null_mut(),
            deviceIndex: 0,
            pChipName: std::ptr::null(),
        };
        check("cuptiDeviceGetChipName", sys::cuptiDeviceGetChipName(&mut chip))?;

        let names = [SECTORS, LOADS, STORES, IDEAL, LANES];
        let mut configs = Vec::new();
        for name in names {
            let c_name = CString::new(name).expect("metric name");
            let mut props: sys::CUpti_SassMetrics_GetProperties_Params = std::mem::zeroed();
            props.structSize = sys::SassMetrics_GetProperties_Params_STRUCT_SIZE as usize;
            props.pChipName = chip.pChipName;
            props.pMetricName = c_name.as_ptr();
            check(
                &format!("cuptiSassMetricsGetProperties({name})"),
                sys::cuptiSassMetricsGetProperties(&mut props),
            )?;
            configs.push(sys::CUpti_SassMetrics_Config {
                metricId: props.metric.metricId,
                outputGranularity: sys::CUpti_SassMetrics_OutputGranularity::CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU
                    as u8,
            });
        }
        let ids: Vec<u64> = configs.iter().map(|c| c.metricId).collect();

        let mut set = sys::CUpti_SassMetricsSetConfig_Params {
            structSize: sys::SassMetricsSetConfig_Params_STRUCT_SIZE as usize,
            pPriv: null_mut(),
            numOfMetricConfig: configs.len(),
            pConfigs: configs.as_mut_ptr(),
            deviceIndex: 0,
        };
        check("cuptiSassMetricsSetConfig", sys::cuptiSassMetricsSetConfig(&mut set))?;
        let mut enable = sys::CUpti_SassMetricsEnable_Params {
            structSize: sys::SassMetricsEnable_Params_STRUCT_SIZE as usize,
            pPriv: null_mut(),
            ctx,
            enableLazyPatching: 0,
        };
        check("cuptiSassMetricsEnable", sys::cuptiSassMetricsEnable(&mut enable))?;

        for _ in 0..launches {
            d.launch(&f, lesson, n, &d_in, &mut d_out)
                .map_err(|e| driver_fault("a profiled launch", e))?;
        }
        d.stream
            .synchronize()
            .map_err(|e| driver_fault("the profiled launches", e))?;

        let mut props = sys::CUpti_SassMetricsGetDataProperties_Params {
            structSize: sys::SassMetricsGetDataProperties_Params_STRUCT_SIZE as usize,
            pPriv: null_mut(),
            ctx,
            numOfPatchedInstructionRecords: 0,
            numOfInstances: 0,
        };
        check(
            "cuptiSassMetricsGetDataProperties",
            sys::cuptiSassMetricsGetDataProperties(&mut props),
        )?;
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
            check("cuptiSassMetricsFlushData", sys::cuptiSassMetricsFlushData(&mut flush))?;
        }
        let mut disable = sys::CUpti_SassMetricsDisable_Params {
            structSize: sys::SassMetricsDisable_Params_STRUCT_SIZE as usize,
            pPriv: null_mut(),
            ctx,
            numOfDroppedRecords: 0,
        };
        check("cuptiSassMetricsDisable", sys::cuptiSassMetricsDisable(&mut disable))?;

        if let Some(path) = std::env::var_os("HALOSCOPE_CUPTI_DEBUG") {
            write_debug(&path, chip.pChipName, &names, &ids, records, instances, &data, &values);
        }
        // CUPTI returns one record per (instruction, metric): gather them per instruction.
        let cubin = kernel.cubin();
        let mut by_pc: std::collections::BTreeMap<(String, u32), PcRecord> = Default::default();
        for (record, vals) in data.iter().zip(&values) {
            let function = if record.functionName.is_null() {
                kernel.entry.clone()
            } else {
                CStr::from_ptr(record.functionName).to_string_lossy().into_owned()
            };
            let entry = by_pc.entry((function.clone(), record.pcOffset)).or_insert_with(|| {
                let (line, file) = match &cubin {
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
                free(record.functionName as *mut c_void);
            }
        }
        let mut out: Vec<PcRecord> = by_pc.into_values().collect();
        out.sort_by_key(|r| r.pc_offset);
        let mut unset = sys::CUpti_SassMetricsUnsetConfig_Params {
            structSize: sys::SassMetricsUnsetConfig_Params_STRUCT_SIZE as usize,
            pPriv: null_mut(),
            deviceIndex: 0,
        };
        let _ = sys::cuptiSassMetricsUnsetConfig(&mut unset);
        Ok(GpuProfile {
            launches,
            records: out,
            source: format!(
                "CUPTI SASS metrics ({SECTORS}) over {launches} launches at n={n}, dropped records: {}",
                disable.numOfDroppedRecords
            ),
            millis: started.elapsed().as_secs_f64() * 1e3,
            output: None, // filled by the worker once the launches' printf text is read
        })
    }
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
#[allow(clippy::too_many_arguments)]
unsafe fn write_debug(
    path: &std::ffi::OsStr,
    chip: *const c_char,
    names: &[&str],
    ids: &[u64],
    records: usize,
    instances: usize,
    data: &[sys::CUpti_SassMetrics_Data],
    values: &[Vec<sys::CUpti_SassMetrics_InstanceValue>],
) {
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
