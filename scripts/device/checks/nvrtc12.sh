#!/usr/bin/env bash
# NVRTC 12 against NVRTC 13 on the GPU: every lesson and learner kernel's verdict and sectors alike.
# Issue 29 item 2 on the device machine, from the repository root, with .devbin carried
# (scripts/device/build-devbin.sh --binary-only is enough) and .devbin12/nvrtc12-bundle.tar.xz
# (NVRTC 12.9 and the CUDA 12.9 headers from PyPI, made as docs/workstations.md says):
#   1. doctor as root (NVRTC 13), and doctor with NVRTC 12;
#   2. every lesson and learner kernel on the GPU with NVRTC 13 and with NVRTC 12
#      (scripts/workstation/nvrtc-side-by-side.sh, BACKEND=gpu, JOBS at once, default 4),
#      capped at SIDE_BY_SIDE_S seconds (default 400; through the runner, its CHECK_S less 40).
# Writes $OUT/doctor-root.txt, doctor-nvrtc12.txt, compare.txt and side-by-side/ (nvrtc-13.jsonl,
# nvrtc-12.jsonl, compare.md); exits 1 on any difference. As a user who is not root: the
# non-root-profiling check.
set -uo pipefail
OUT="${OUT:-/tmp/nvrtc12-out}"
mkdir -p "$OUT"
export HALOSCOPE_BIN="$PWD/.devbin/haloscope"
if [ -n "${CHECK_S:-}" ]; then SIDE_BY_SIDE_S="${SIDE_BY_SIDE_S:-$((CHECK_S > 80 ? CHECK_S - 40 : CHECK_S / 2))}"; fi
{
    date -u
    nvidia-smi --query-gpu=name,driver_version,compute_cap,display_active --format=csv,noheader
    "$HALOSCOPE_BIN" doctor
} > "$OUT/doctor-root.txt" 2>&1
cat "$OUT/doctor-root.txt"
N12=/tmp/nvrtc12
rm -rf "$N12" && mkdir -p "$N12"
tar -xJf .devbin12/nvrtc12-bundle.tar.xz -C "$N12" || { echo "no .devbin12/nvrtc12-bundle.tar.xz (carry .devbin12)"; exit 1; }
H="$N12/cuda-headers-cu12/nvidia"
export NVRTC12="$N12/nvrtc-cu12/nvidia/cuda_nvrtc/lib" HEADERS12="$H/cuda_runtime/include:$H/cuda_cccl/include"
echo "== doctor with NVRTC 12"
HALOSCOPE_NVRTC="$NVRTC12" HALOSCOPE_CUDA_INCLUDE="$HEADERS12" "$HALOSCOPE_BIN" doctor > "$OUT/doctor-nvrtc12.txt" 2>&1
echo "doctor with NVRTC 12 rc=$?"
echo "== NVRTC 12 vs 13 on the GPU"
BACKEND=gpu JOBS="${JOBS:-4}" OUT="$OUT/side-by-side" timeout "${SIDE_BY_SIDE_S:-400}" \
    bash scripts/workstation/nvrtc-side-by-side.sh > "$OUT/compare.txt" 2>&1
rc=$?
echo "side-by-side rc=$rc"
head -5 "$OUT/compare.txt"
grep -A30 "difference(s)" "$OUT/compare.txt" | head -30
exit "$rc"
