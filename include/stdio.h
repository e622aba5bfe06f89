// haloscope shim: <stdio.h> for kernels compiled with NVRTC.
//
// The only part of stdio that device code can call is printf, and NVRTC already declares
// it (device printf, with output at the end of the launch). Files, streams and scanf
// have no device counterpart, so this header declares nothing else.
#ifndef HALOSCOPE_SHIM_STDIO_H
#define HALOSCOPE_SHIM_STDIO_H
#endif // HALOSCOPE_SHIM_STDIO_H
