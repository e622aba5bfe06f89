# Dev helper: print the PTX NVRTC makes of a .cu file (uses the pip nvrtc under .deps). From the
# repository root: python3 scripts/dev/nvrtc-ptx.py KERNEL.cu [compute_90]
import ctypes, sys, glob
lib = ctypes.CDLL(glob.glob(".deps/nvrtc/nvidia/cu*/lib/libnvrtc.so.*")[0])
src = open(sys.argv[1], "rb").read()
arch = sys.argv[2] if len(sys.argv) > 2 else "compute_90"
prog = ctypes.c_void_p()
assert lib.nvrtcCreateProgram(ctypes.byref(prog), src, sys.argv[1].encode(), 0, None, None) == 0
opts = [b"--gpu-architecture=" + arch.encode(), b"-lineinfo"]
arr = (ctypes.c_char_p * len(opts))(*opts)
r = lib.nvrtcCompileProgram(prog, len(opts), arr)
n = ctypes.c_size_t(); lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
log = ctypes.create_string_buffer(n.value); lib.nvrtcGetProgramLog(prog, log)
sys.stderr.write(log.value.decode())
if r == 0:
    lib.nvrtcGetPTXSize(prog, ctypes.byref(n)); b = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetPTX(prog, b); print(b.value.decode())
