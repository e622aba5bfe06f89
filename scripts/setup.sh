#!/usr/bin/env bash
# Installs what haloscope needs to build and run on a machine with no CUDA toolkit:
# NVRTC from PyPI into .deps/nvrtc (unless one is already found), and the CUDA headers
# kernels may include (<cuda_fp16.h>, <cooperative_groups.h>, ...) from PyPI into
# .deps/cuda-headers, at NVRTC's version (unless a toolkit next to NVRTC has them).
# Safe to run again. See docs/includes.md.
set -euo pipefail
cd "$(dirname "$0")/.."

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

# The NVRTC haloscope will load, in the order src/cudalibs.rs tries them.
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
    for f in .deps/nvrtc/nvidia/*/lib/libnvrtc.so.*; do [ -e "$f" ] && { echo "$f"; return 0; }; done
    for d in "${CUDA_PATH:-/nonexistent}" /usr/local/cuda; do
        for f in "$d"/lib64/libnvrtc.so.*; do [ -e "$f" ] && { echo "$f"; return 0; }; done
    done
    return 1
}

if find_nvrtc >/dev/null; then
    echo "setup: NVRTC found"
else
    echo "setup: NVRTC not found; installing nvidia-cuda-nvrtc from PyPI into .deps/nvrtc"
    need_pip NVRTC
    pip_install --target .deps/nvrtc "nvidia-cuda-nvrtc>=12.4"
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
    version="$(ls -d .deps/nvrtc/nvidia_cuda_nvrtc-*.dist-info 2>/dev/null | sed -n 's/.*nvrtc-\([0-9]*\.[0-9]*\).*/\1/p' | head -1)"
    [ -n "$version" ] || version="$(basename "$(readlink -f "$nvrtc")" | sed -n 's/^libnvrtc\.so\.\([0-9]*\.[0-9]*\).*/\1/p')"
fi
toolkit_headers="$(dirname "$(dirname "$(readlink -f "$nvrtc")")")/include"

if [ -n "${HALOSCOPE_CUDA_INCLUDE:-}" ]; then
    echo "setup: CUDA headers from \$HALOSCOPE_CUDA_INCLUDE"
elif [ -z "$version" ]; then
    echo "setup: warning: could not tell NVRTC's version; not installing CUDA headers" >&2
elif ls .deps/cuda-headers/nvidia_cuda_runtime*-"$version".*.dist-info >/dev/null 2>&1; then
    echo "setup: CUDA $version headers found"
elif [[ "$nvrtc" != .deps/* ]] && [ -e "$toolkit_headers/cuda_fp16.h" ]; then
    echo "setup: CUDA headers found in $toolkit_headers"
else
    major="${version%%.*}"
    minor="${version#*.}"
    suffix=""
    [ "$major" -lt 13 ] && suffix="-cu$major"
    echo "setup: installing CUDA $version headers (nvidia-cuda-runtime$suffix, nvidia-cuda-cccl$suffix) from PyPI into .deps/cuda-headers"
    need_pip "the CUDA headers"
    rm -rf .deps/cuda-headers
    # The runtime headers at NVRTC's major.minor; libcu++ (CCCL, needed by
    # <cooperative_groups.h>) at the newest release not newer than NVRTC.
    if ! pip_install --target .deps/cuda-headers \
        "nvidia-cuda-runtime$suffix==$major.$minor.*" \
        "nvidia-cuda-cccl$suffix>=$major.0,<$major.$((minor + 1))"; then
        rm -rf .deps/cuda-headers
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
