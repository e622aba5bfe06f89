#!/usr/bin/env bash
# Installs what haloscope needs to build and run on a machine with no CUDA toolkit:
# NVRTC from PyPI into .deps/nvrtc (unless one is already found). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
    echo "cargo was not found: install Rust from https://rustup.rs (stable 1.95 or newer)" >&2
    exit 1
fi

have_nvrtc() {
    [ -n "${HALOSCOPE_NVRTC:-}" ] && [ -e "$HALOSCOPE_NVRTC" ] && return 0
    ls .deps/nvrtc/nvidia/*/lib/libnvrtc.so.* >/dev/null 2>&1 && return 0
    for d in "${CUDA_PATH:-/nonexistent}" /usr/local/cuda; do
        ls "$d"/lib64/libnvrtc.so.* >/dev/null 2>&1 && return 0
    done
    return 1
}

if have_nvrtc; then
    echo "setup: NVRTC found"
else
    echo "setup: NVRTC not found; installing nvidia-cuda-nvrtc from PyPI into .deps/nvrtc"
    PYTHON="${PYTHON:-python3}"
    if ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
        echo "setup: $PYTHON with pip is needed to fetch NVRTC (Debian: apt-get install python3-pip)" >&2
        exit 1
    fi
    "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
        --target .deps/nvrtc "nvidia-cuda-nvrtc>=12.4"
    have_nvrtc || { echo "setup: NVRTC install failed" >&2; exit 1; }
fi
