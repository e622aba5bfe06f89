//! The CUDA side of a worker: one context on device 0, the loaded kernel, buffers, and
//! launches exactly as the lesson contract says. Every call's result is checked.

use super::protocol::{DeviceInfo, KernelImage};
use crate::backend::KernelFault;
use crate::harness::random_inputs;
use crate::lesson::{Contract, ParamKind};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DriverError, LaunchConfig, PushKernelArg,
    sys,
};
use cudarc::nvrtc::Ptx;
use std::sync::Arc;

pub struct Device {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    loaded: Option<(u64, Arc<CudaModule>, CudaFunction)>,
    /// The cubin of the loaded module, NVRTC's or the driver's JIT's: CUPTI reads each
    /// instruction's source line from it.
    pub loaded_cubin: Option<Arc<Vec<u8>>>,
    /// The last verification's buffers at the profile size (elements, input, output): the
    /// timing launches reuse them instead of making and copying 2 x 64 MiB again.
    pub profile_size_buffers: Option<(usize, CudaSlice<f32>, CudaSlice<f32>)>,
    /// Whether the loaded image's printf calls are gated (`printf_gate`).
    printf_gated: bool,
    /// The printf cap the next launches run with (`printf_gate`): 0 for measured launches.
    pub printf_cap: u32,
    /// The printf calls of the last verification launch of a gated kernel, for its report.
    pub printf_calls_made: Option<u32>,
}

/// A CUDA error in the learner's terms: errors that leave the context unusable (illegal
/// address, launch failure) are crashes; the worker exits after reporting one. Matched on
/// the driver's `CUresult`, so a change in how cudarc prints errors changes no verdict.
pub fn driver_fault(what: &str, e: DriverError) -> KernelFault {
    use sys::cudaError_enum as R;
    let code = e.0;
    let crashed = matches!(
        code,
        R::CUDA_ERROR_ILLEGAL_ADDRESS
            | R::CUDA_ERROR_LAUNCH_FAILED
            | R::CUDA_ERROR_MISALIGNED_ADDRESS
            | R::CUDA_ERROR_ILLEGAL_INSTRUCTION
            | R::CUDA_ERROR_ASSERT
            | R::CUDA_ERROR_HARDWARE_STACK_ERROR
            | R::CUDA_ERROR_INVALID_ADDRESS_SPACE
            | R::CUDA_ERROR_INVALID_PC
            | R::CUDA_ERROR_LAUNCH_TIMEOUT
    );
    let description = e
        .error_string()
        .map(|t| t.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text = if description.is_empty() {
        format!("{code:?}")
    } else {
        format!("{code:?} ({description})")
    };
    // A watchdog timeout also leaves the context unusable, so it is a crash (the worker
    // restarts), told as what it is.
    if code == R::CUDA_ERROR_ASSERT {
        KernelFault::Crashed {
            message: format!("a device assert failed during {what}: {text}"),
        }
    } else if code == R::CUDA_ERROR_LAUNCH_TIMEOUT {
        KernelFault::Crashed {
            message: format!("the GPU's watchdog stopped the kernel during {what}: {text}; an endless loop?"),
        }
    } else if crashed {
        KernelFault::Crashed {
            message: format!(
                "the GPU reported {text} during {what}: the kernel accessed memory it must not (the emulator names the thread and line)"
            ),
        }
    } else {
        KernelFault::Infrastructure {
            message: format!("CUDA error during {what}: {text}"),
        }
    }
}

impl Device {
    pub fn open() -> Result<Device, String> {
        // SAFETY: checks for libcuda before cudarc would panic on a missing library.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err("no NVIDIA driver (libcuda) on this machine".into());
        }
        let count = CudaContext::device_count().map_err(|e| format!("cuInit/cuDeviceGetCount failed: {e:?}"))?;
        if count < 1 {
            return Err("the NVIDIA driver reports no GPU".into());
        }
        let index = crate::machine::machine().chosen_gpu()?.map_or(0, |g| g.index);
        let ctx = CudaContext::new(index).map_err(|e| format!("cannot create a CUDA context on GPU {index}: {e:?}"))?;
        // No implicit events around launches: timing and CUPTI see only the kernel.
        // SAFETY: this process uses one stream and synchronises explicitly.
        unsafe { ctx.disable_event_tracking() };
        // Room for device printf: the driver's 1 MiB FIFO drops what does not fit, silently.
        if let Err(e) = ctx.set_limit(
            sys::CUlimit::CU_LIMIT_PRINTF_FIFO_SIZE,
            super::capture::PRINTF_FIFO_BYTES,
        ) {
            eprintln!("haloscope worker: cannot enlarge the printf FIFO: {e:?}");
        }
        let stream = ctx.default_stream();
        Ok(Device {
            ctx,
            stream,
            loaded: None,
            loaded_cubin: None,
            profile_size_buffers: None,
            printf_gated: false,
            printf_cap: 0,
            printf_calls_made: None,
        })
    }

    pub fn info(&self) -> Result<DeviceInfo, DriverError> {
        let (major, minor) = self.ctx.compute_capability()?;
        let mut version = 0;
        // SAFETY: plain out-parameter.
        unsafe { sys::cuDriverGetVersion(&mut version) };
        use sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT as WATCHDOG;
        Ok(DeviceInfo {
            index: self.ctx.ordinal(),
            name: self.ctx.name()?,
            watchdog: self.ctx.attribute(WATCHDOG)? != 0,
            compute_capability: (major, minor),
            driver_version: format!("{}.{}", version / 1000, (version % 1000) / 10),
            memory_bytes: self.ctx.total_mem()? as u64,
            copy_gbps: self.copy_bandwidth()?,
        })
    }

    /// Device-to-device copy of 256 MiB, best of 5, counting bytes read and written.
    fn copy_bandwidth(&self) -> Result<f64, DriverError> {
        let count = 64 << 20; // floats
        let src: CudaSlice<f32> = self.stream.alloc_zeros(count)?;
        let mut dst: CudaSlice<f32> = self.stream.alloc_zeros(count)?;
        let start = self.ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?;
        let end = self.ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?;
        let mut best = f64::MAX;
        for _ in 0..5 {
            start.record(&self.stream)?;
            self.stream.memcpy_dtod(&src, &mut dst)?;
            end.record(&self.stream)?;
            end.synchronize()?;
            best = best.min(start.elapsed_ms(&end)? as f64);
        }
        Ok(2.0 * (count * 4) as f64 / (best * 1e-3) / 1e9)
    }

    /// The kernel's function, loading its module once per distinct image.
    pub fn function(&mut self, kernel: &KernelImage) -> Result<CudaFunction, KernelFault> {
        let key = kernel.key();
        if let Some((k, _, f)) = &self.loaded
            && *k == key
        {
            return Ok(f.clone());
        }
        let cubin = match kernel.cubin() {
            Some(cubin) => Some(cubin),
            // Rewritten PTX (printf gate): linked with a line table so that CUPTI can file
            // sectors per line (jit.rs); the plain load is the fallback, losing only that.
            None => match self
                .ctx
                .bind_to_thread()
                .map_err(|e| format!("{e:?}"))
                .and_then(|()| super::jit::cubin_with_line_info(&kernel.ptx))
            {
                Ok(cubin) => Some(cubin),
                Err(why) => {
                    eprintln!("haloscope worker: PTX linked without a line table ({why}); sectors go to line 0");
                    None
                }
            },
        };
        let image = match &cubin {
            Some(cubin) => Ptx::from_binary(cubin.clone()),
            None => Ptx::from_src(kernel.ptx.clone()),
        };
        let module = self
            .ctx
            .load_module(image)
            .map_err(|e| driver_fault("module load", e))?;
        let function = module
            .load_function(&kernel.entry)
            .map_err(|e| driver_fault("cuModuleGetFunction", e))?;
        self.loaded = Some((key, module, function.clone()));
        self.loaded_cubin = cubin.map(Arc::new);
        self.printf_gated = kernel.printf_gated;
        Ok(function)
    }

    /// Launches once as the contract says: pinned block, derived grid, dynamic shared bytes.
    pub fn launch(
        &self,
        f: &CudaFunction,
        lesson: &Contract,
        n: u32,
        input: &CudaSlice<f32>,
        output: &mut CudaSlice<f32>,
    ) -> Result<(), DriverError> {
        let (in_ptr, _in_sync) = input.device_ptr(&self.stream);
        let (out_ptr, _out_sync) = output.device_ptr(&self.stream);
        let n_arg = n as i32;
        let mut builder = self.stream.launch_builder(f);
        for p in &lesson.params {
            match p.kind {
                ParamKind::ConstFloatPtr => builder.arg(&in_ptr),
                ParamKind::FloatPtr => builder.arg(&out_ptr),
                ParamKind::Int => builder.arg(&n_arg),
            };
        }
        let grid = lesson.grid_for(n);
        if self.printf_gated {
            self.set_printf_gate(self.printf_cap)?;
        }
        if let Some(cluster) = lesson.cluster {
            let mut values: Vec<*mut std::ffi::c_void> = lesson
                .params
                .iter()
                .map(|p| match p.kind {
                    ParamKind::ConstFloatPtr => &in_ptr as *const sys::CUdeviceptr as *mut std::ffi::c_void,
                    ParamKind::FloatPtr => &out_ptr as *const sys::CUdeviceptr as *mut std::ffi::c_void,
                    ParamKind::Int => &n_arg as *const i32 as *mut std::ffi::c_void,
                })
                .collect();
            return self.launch_in_clusters(f, lesson, grid, cluster, &mut values);
        }
        let cfg = LaunchConfig {
            grid_dim: (grid[0], grid[1], grid[2]),
            block_dim: (lesson.block[0], lesson.block[1], lesson.block[2]),
            shared_mem_bytes: lesson.dynamic_shared_bytes,
        };
        // SAFETY: the arguments match the signature NVRTC checked against the contract.
        unsafe { builder.launch(cfg) }?;
        Ok(())
    }

    /// A launch in thread-block clusters of `cluster` blocks (sm_90 and later), which
    /// cudarc's launch builder does not make: `cuLaunchKernelEx` with the cluster-dimension
    /// attribute. `args` point at the kernel's argument values, in order.
    fn launch_in_clusters(
        &self,
        f: &CudaFunction,
        lesson: &Contract,
        grid: [u32; 3],
        cluster: [u32; 3],
        args: &mut [*mut std::ffi::c_void],
    ) -> Result<(), DriverError> {
        let mut attribute = sys::CUlaunchAttribute {
            id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
            pad: [0; 4],
            // SAFETY: an all-zero attribute value is valid; the cluster shape is set below.
            value: unsafe { std::mem::zeroed() },
        };
        attribute.value.clusterDim.x = cluster[0];
        attribute.value.clusterDim.y = cluster[1];
        attribute.value.clusterDim.z = cluster[2];
        let config = sys::CUlaunchConfig {
            gridDimX: grid[0],
            gridDimY: grid[1],
            gridDimZ: grid[2],
            blockDimX: lesson.block[0],
            blockDimY: lesson.block[1],
            blockDimZ: lesson.block[2],
            sharedMemBytes: lesson.dynamic_shared_bytes,
            hStream: self.stream.cu_stream(),
            attrs: &mut attribute,
            numAttrs: 1,
        };
        self.ctx.bind_to_thread()?;
        // SAFETY: the config and the argument values outlive the call, the arguments match
        // the signature NVRTC checked against the contract, and the function belongs to this
        // context.
        unsafe { sys::cuLaunchKernelEx(&config, f.cu_function(), args.as_mut_ptr(), std::ptr::null_mut()) }.result()
    }
}

impl Device {
    /// Sets the loaded module's printf cap and zeroes its call counter (stream ordered: the
    /// next launch sees both).
    fn set_printf_gate(&self, cap: u32) -> Result<(), DriverError> {
        let Some((_, module, _)) = &self.loaded else {
            return Ok(());
        };
        let mut cap_symbol = module.get_global(super::printf_gate::CAP_SYMBOL, &self.stream)?;
        self.stream.memcpy_htod(&cap.to_le_bytes(), &mut cap_symbol)?;
        let mut calls = module.get_global(super::printf_gate::CALLS_SYMBOL, &self.stream)?;
        self.stream.memcpy_htod(&0u32.to_le_bytes(), &mut calls)
    }

    /// The printf calls the last gated launch made (`None` for an ungated kernel); call after
    /// synchronising.
    pub fn printf_calls(&self) -> Result<Option<u32>, DriverError> {
        let Some((_, module, _)) = self.loaded.as_ref().filter(|_| self.printf_gated) else {
            return Ok(None);
        };
        let calls = module.get_global(super::printf_gate::CALLS_SYMBOL, &self.stream)?;
        let mut bytes = [0u8; 4];
        self.stream.memcpy_dtoh(&calls, &mut bytes)?;
        Ok(Some(u32::from_le_bytes(bytes)))
    }
}

/// An input of `count` random floats from `seed` and an output of as many, on the device.
pub fn buffers(d: &Device, count: usize, seed: u64) -> Result<(CudaSlice<f32>, CudaSlice<f32>), KernelFault> {
    let input = d
        .stream
        .clone_htod(&random_inputs(count, seed))
        .map_err(|e| driver_fault("copying the input", e))?;
    let output = d
        .stream
        .alloc_zeros::<f32>(count)
        .map_err(|e| driver_fault("allocating the output", e))?;
    Ok((input, output))
}
