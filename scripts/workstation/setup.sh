#!/usr/bin/env bash
# Installs what haloscope needs to build and run on a machine with no CUDA toolkit:
# NVRTC from PyPI into .deps/nvrtc (unless one is already found), and the CUDA headers
# kernels may include (<cuda_fp16.h>, <cooperative_groups.h>, ...) from PyPI into
# .deps/cuda-headers, at NVRTC's version (unless a toolkit next to NVRTC has them).
# Safe to run again. See docs/includes.md.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v cargo >/dev/null 2>&1; then
    echo "cargo was not found: install Rust from https://rustup.rs (stable 1.95 or newer)" >&2
    exit 1
fi

PYTHON="${PYTHON:-python3}"
need_pip() {
    if ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
        echo "setup: $PYTHON with pip is needed to fetch $1 (Debian: apt-get install python3-pip)" >&2
        exit 1
    fi
}
pip_install() {
    "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-warn-script-location "$@"
}

# The NVRTC major this machine needs (src/cudalibs.rs `nvrtc_fit` decides the same at run time):
# 13 where the driver runs CUDA 13 (driver 580+) and the GPU is Turing (7.5) or newer, 12 for a
# CUDA 12 driver (525-575) or an older card (NVRTC 13 dropped Maxwell, Pascal and Volta); 13
# without a GPU (the emulator takes either). HALOSCOPE_NVRTC_MAJOR=12|13 overrides it. The GPU
# is the one haloscope will use: HALOSCOPE_DEVICE, else the first without a display.
wanted_major() {
    if [ -n "${HALOSCOPE_NVRTC_MAJOR:-}" ]; then echo "$HALOSCOPE_NVRTC_MAJOR"; return; fi
    command -v nvidia-smi >/dev/null 2>&1 || { echo 13; return; }
    local rows row
    rows="$(nvidia-smi --query-gpu=index,driver_version,compute_cap,display_active --format=csv,noheader 2>/dev/null)" \
        || { echo 13; return; }
    [ -n "$rows" ] || { echo 13; return; }
    if [ -n "${HALOSCOPE_DEVICE:-}" ]; then
        row="$(grep "^$HALOSCOPE_DEVICE," <<< "$rows" | head -1)"
    else
        row="$(grep -i ', disabled$' <<< "$rows" | head -1)"
    fi
    [ -n "$row" ] || row="$(head -1 <<< "$rows")"
    local driver cc
    driver="$(cut -d, -f2 <<< "$row" | tr -d ' ')"
    cc="$(cut -d, -f3 <<< "$row" | tr -d ' ')"
    driver="${driver%%.*}"
    local cc_num=$(( ${cc%%.*} * 10 + ${cc#*.} ))
    if [ "$driver" -lt 525 ]; then
        echo "setup: warning: NVIDIA driver $driver runs neither CUDA 12 nor 13: install driver 525 or newer" \
            "(580+ for CUDA 13) for GPU runs; the emulator works meanwhile" >&2
        echo 13
    elif [ "$driver" -lt 580 ] || [ "$cc_num" -lt 75 ]; then
        echo "setup: this GPU (compute capability $cc, driver $driver) needs NVRTC 12" >&2
        echo 12
    else
        echo 13
    fi
}
MAJOR="$(wanted_major)"
if [ "$MAJOR" = 12 ]; then
    NVRTC_DEPS=.deps/nvrtc-cu12 NVRTC_PACKAGE="nvidia-cuda-nvrtc-cu12>=12.4,<13" HEADERS_DEPS=.deps/cuda-headers-cu12
else
    NVRTC_DEPS=.deps/nvrtc NVRTC_PACKAGE="nvidia-cuda-nvrtc>=13.0,<14" HEADERS_DEPS=.deps/cuda-headers
fi

# An NVRTC of major $MAJOR that haloscope will load, in the order src/cudalibs.rs tries them.
find_nvrtc() {
    local f
    if [ -n "${HALOSCOPE_NVRTC:-}" ] && [ -e "$HALOSCOPE_NVRTC" ]; then
        if [ -d "$HALOSCOPE_NVRTC" ]; then
            for f in "$HALOSCOPE_NVRTC"/libnvrtc.so.*; do [ -e "$f" ] && { echo "$f"; return 0; }; done
        else
            echo "$HALOSCOPE_NVRTC"
            return 0
        fi
    fi
    for f in .deps/nvrtc*/nvidia/*/lib/libnvrtc.so."$MAJOR"; do [ -e "$f" ] && { echo "$f"; return 0; }; done
    for d in "${CUDA_PATH:-/nonexistent}" /usr/local/cuda; do
        for f in "$d"/lib64/libnvrtc.so."$MAJOR"; do [ -e "$f" ] && { echo "$f"; return 0; }; done
    done
    return 1
}

if find_nvrtc >/dev/null; then
    echo "setup: NVRTC $MAJOR found"
else
    echo "setup: NVRTC $MAJOR not found; installing $NVRTC_PACKAGE from PyPI into $NVRTC_DEPS"
    need_pip NVRTC
    pip_install --target "$NVRTC_DEPS" "$NVRTC_PACKAGE"
    find_nvrtc >/dev/null || { echo "setup: NVRTC install failed" >&2; exit 1; }
fi

# CUDA headers. NVRTC itself has none of them on its include path; haloscope passes the
# directory it finds (src/cudalibs.rs) with -I.
nvrtc="$(find_nvrtc)"
nvrtc_version() {
    "$PYTHON" - "$1" <<'PY' 2>/dev/null
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
major, minor = ctypes.c_int(), ctypes.c_int()
if lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)) == 0:
    print(f"{major.value}.{minor.value}")
PY
}
version="$(nvrtc_version "$nvrtc" || true)"
if [ -z "$version" ]; then
    # No python to ask: the version in the pip metadata, or in the file name.
    version="$(ls -d "$NVRTC_DEPS"/nvidia_cuda_nvrtc*-*.dist-info 2>/dev/null | sed -n 's/.*nvrtc[-_a-z0-9]*-\([0-9]*\.[0-9]*\).*/\1/p' | head -1)"
    [ -n "$version" ] || version="$(basename "$(readlink -f "$nvrtc")" | sed -n 's/^libnvrtc\.so\.\([0-9]*\.[0-9]*\).*/\1/p')"
fi
toolkit_headers="$(dirname "$(dirname "$(readlink -f "$nvrtc")")")/include"

if [ -n "${HALOSCOPE_CUDA_INCLUDE:-}" ]; then
    echo "setup: CUDA headers from \$HALOSCOPE_CUDA_INCLUDE"
elif [ -z "$version" ]; then
    echo "setup: warning: could not tell NVRTC's version; not installing CUDA headers" >&2
elif ls "$HEADERS_DEPS"/nvidia_cuda_runtime*-"$version".*.dist-info >/dev/null 2>&1; then
    echo "setup: CUDA $version headers found"
elif [[ "$nvrtc" != .deps/* ]] && [ -e "$toolkit_headers/cuda_fp16.h" ]; then
    echo "setup: CUDA headers found in $toolkit_headers"
else
    major="${version%%.*}"
    minor="${version#*.}"
    suffix=""
    [ "$major" -lt 13 ] && suffix="-cu$major"
    echo "setup: installing CUDA $version headers (nvidia-cuda-runtime$suffix, nvidia-cuda-cccl$suffix) from PyPI into $HEADERS_DEPS"
    need_pip "the CUDA headers"
    rm -rf "$HEADERS_DEPS"
    # The runtime headers at NVRTC's major.minor; libcu++ (CCCL, needed by
    # <cooperative_groups.h>) at the newest release not newer than NVRTC.
    if ! pip_install --target "$HEADERS_DEPS" \
        "nvidia-cuda-runtime$suffix==$major.$minor.*" \
        "nvidia-cuda-cccl$suffix>=$major.0,<$major.$((minor + 1))"; then
        rm -rf "$HEADERS_DEPS"
        echo "setup: warning: the CUDA headers could not be installed; kernels can still include" \
            "<cstdio>, <cstdint> and <cuda_runtime.h> (haloscope's own), and with NVRTC 13.3 or newer" \
            "every other CUDA header too (NVRTC's bundled copy)" >&2
    fi
fi

# nvdisasm, for the machine-code check (src/compile/machine_code.rs): which global memory
# instructions ptxas kept. Without it runs still work; the report says the check did not run.
if [ -n "${HALOSCOPE_NVDISASM:-}" ] || ls .deps/nvdisasm/nvidia/*/bin/nvdisasm >/dev/null 2>&1 \
    || [ -x "$(dirname "$toolkit_headers")/bin/nvdisasm" ] || command -v nvdisasm >/dev/null 2>&1; then
    echo "setup: nvdisasm found"
else
    echo "setup: installing nvdisasm (nvidia-cuda-nvdisasm) from PyPI into .deps/nvdisasm"
    need_pip nvdisasm
    major="${version%%.*}"
    if ! pip_install --target .deps/nvdisasm "nvidia-cuda-nvdisasm>=${major:-13}.0"; then
        echo "setup: warning: nvdisasm could not be installed; runs will not compare the PTX with the machine code" >&2
    fi
fi
