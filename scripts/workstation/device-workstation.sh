#!/usr/bin/env bash
# Issue 29 on the device machine, in one call (run from the repository root with .devbin
# carried: .devbin/haloscope from scripts/hazards/build-devbin.sh, and
# .devbin12/nvrtc12-bundle.tar.xz holding NVRTC 12.9 and the CUDA 12.9 headers from PyPI, made
# as docs/workstations.md says):
#   1. doctor as root;
#   2. as a user who is not root, plain and with CUPTI's refusal injected (device-nonroot.sh);
#   3. every lesson and learner kernel on the GPU with NVRTC 13 and with NVRTC 12
#      (nvrtc-side-by-side.sh, BACKEND=gpu).
# Writes everything under $OUT.
set -uo pipefail
OUT="${OUT:-/tmp/workstation-out}"
mkdir -p "$OUT"
HERE="$(dirname "$0")"
export HALOSCOPE_BIN="$PWD/.devbin/haloscope"
{
    date -u
    nvidia-smi --query-gpu=name,driver_version,compute_cap,display_active --format=csv,noheader
    "$HALOSCOPE_BIN" doctor
} > "$OUT/doctor-root.txt" 2>&1
cat "$OUT/doctor-root.txt"
echo "== non-root"
OUT="$OUT" timeout 150 bash "$HERE/device-nonroot.sh"
echo "== NVRTC 12 vs 13 on the GPU"
N12=/tmp/nvrtc12
rm -rf "$N12" && mkdir -p "$N12" && tar -xJf .devbin12/nvrtc12-bundle.tar.xz -C "$N12"
H="$N12/cuda-headers-cu12/nvidia"
BACKEND=gpu JOBS="${JOBS:-3}" OUT="$OUT/side-by-side" NVRTC12="$N12/nvrtc-cu12/nvidia/cuda_nvrtc/lib" \
    HEADERS12="$H/cuda_runtime/include:$H/cuda_cccl/include" timeout "${SIDE_BY_SIDE_S:-330}" bash "$HERE/nvrtc-side-by-side.sh" | tail -25
echo "done: $(date -u)"
