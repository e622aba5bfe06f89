#!/usr/bin/env bash
# One device call (2026-12-06, third session): every GPU test in tests/gpu.rs on the current
# tree (the lesson Contract change of issue 30 and the Cancel test), then issue 29's NVRTC 12 vs
# 13 side by side (scripts/workstation/device-nvrtc12.sh). Carry .devbin and .devbin12; build
# them with scripts/hazards/build-devbin.sh and `cargo test --release --test gpu --no-run`
# (stripped, xz'd to .devbin/test-gpu.xz). Everything lands in $OUT/verify.tar.gz.
set -uo pipefail
OUT="${OUT:-/tmp/device-verify}"
W=/tmp/device-verify-work
rm -rf "$W" && mkdir -p "$W" "$OUT"
export HALOSCOPE_WORKER_EXE="$PWD/.devbin/haloscope" HALOSCOPE_ROOT="$PWD"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$W/card.txt"
echo "== gpu tests ($(date -u +%T))"
xz -dc .devbin/test-gpu.xz > /tmp/test-gpu && chmod +x /tmp/test-gpu
timeout "${GPU_TESTS_S:-240}" /tmp/test-gpu --ignored --nocapture --test-threads 1 > "$W/gpu-tests.log" 2>&1
echo "gpu tests rc=$?"
grep -E "^test |test result|cancelled GPU run|panicked" "$W/gpu-tests.log" | head -20
echo "== nvrtc 12 vs 13 ($(date -u +%T))"
OUT="$W" NONROOT=0 JOBS="${JOBS:-8}" SIDE_BY_SIDE_S="${SIDE_BY_SIDE_S:-200}" \
    bash scripts/workstation/device-nvrtc12.sh > "$W/nvrtc12.log" 2>&1
tail -30 "$W/nvrtc12.log"
tar -czf "$OUT/verify.tar.gz" -C "$W" .
echo "== end ($(date -u +%T))"
