#!/usr/bin/env bash
# Issue 29 item 2 on the device, on its own: every lesson and learner kernel on the GPU with
# NVRTC 13 and with NVRTC 12 (nvrtc-side-by-side.sh), doctor with NVRTC 12, and doctor as a
# user who is not root with CUPTI's refusal injected. Everything goes into one tar,
# $OUT/nvrtc12-gpu.tar.gz (the device tool brings back only a few files per call).
set -uo pipefail
OUT="${OUT:-/tmp/nvrtc12-out}"
W=/tmp/nvrtc12-work
rm -rf "$W" && mkdir -p "$W"
N12=/tmp/nvrtc12
rm -rf "$N12" && mkdir -p "$N12" && tar -xJf .devbin12/nvrtc12-bundle.tar.xz -C "$N12"
H="$N12/cuda-headers-cu12/nvidia"
export NVRTC12="$N12/nvrtc-cu12/nvidia/cuda_nvrtc/lib" HEADERS12="$H/cuda_runtime/include:$H/cuda_cccl/include"
HALOSCOPE_NVRTC="$NVRTC12" HALOSCOPE_CUDA_INCLUDE="$HEADERS12" .devbin/haloscope doctor > "$W/doctor-nvrtc12.txt" 2>&1
HALOSCOPE_BIN="$PWD/.devbin/haloscope" BACKEND=gpu JOBS="${JOBS:-4}" OUT="$W/side-by-side" \
    timeout "${SIDE_BY_SIDE_S:-400}" bash "$(dirname "$0")/nvrtc-side-by-side.sh" > "$W/compare.txt" 2>&1
echo "side-by-side rc=$?"
head -5 "$W/compare.txt"; grep -A30 "difference(s)" "$W/compare.txt" | head -30
[ "${NONROOT:-1}" = 1 ] && OUT="$W" timeout 100 bash "$(dirname "$0")/device-nonroot.sh" > "$W/nonroot.txt" 2>&1
tar -czf "$OUT/nvrtc12-gpu.tar.gz" -C "$W" .
ls -la "$OUT"
