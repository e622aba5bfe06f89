// haloscope shim: <cuda_runtime.h>, used only when no CUDA toolkit headers were found.
//
// In a .cu file compiled by nvcc this header brings in the runtime API and the device
// built-ins. NVRTC compiles device code only and already provides the built-ins
// (threadIdx, blockIdx, blockDim, gridDim, __syncthreads, atomics, warp shuffles, the
// math functions, float2/float4/dim3 and make_float4 and the like), and a kernel cannot
// call the host runtime API, so there is nothing left to declare here. Half and bfloat16
// types come from <cuda_fp16.h> and <cuda_bf16.h>, as with nvcc.
#ifndef HALOSCOPE_SHIM_CUDA_RUNTIME_H
#define HALOSCOPE_SHIM_CUDA_RUNTIME_H
#endif // HALOSCOPE_SHIM_CUDA_RUNTIME_H
