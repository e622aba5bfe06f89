#!/usr/bin/env bash
# One short device call (2026-12-07, seventh session; device time was scarce): issue 32's
# checks first, then the rest of the GPU tests.
#   1. tests/gpu.rs `a_printf_kernels_instruction_figures_fit_the_code_the_gpu_ran`;
#   2. scripts/device-listing.sh: every lesson and learner kernel's per-SASS-instruction
#      sectors, GPU (CUPTI) against the emulator (printf kernels per source line);
#   3. every other GPU test (scripts/device-round30.sh), if TESTS=1 (default).
# Carry .devbin (scripts/build-devbin.sh). Everything lands in $OUT.
set -uo pipefail
OUT="${OUT:-/tmp/round-issue32}"
mkdir -p "$OUT"
export HALOSCOPE_WORKER_EXE="$PWD/.devbin/haloscope" HALOSCOPE_ROOT="$PWD" HALOSCOPE_RUSTC="$PWD/scripts/replay-rustc.sh"
export HALOSCOPE_BIN="$PWD/.devbin/haloscope"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/card.txt"
echo "== printf test ($(date -u +%T))"
timeout 120 .devbin/test-gpu --ignored --nocapture --test-threads 1 printf > "$OUT/printf-test.log" 2>&1
echo "rc=$?"; grep -E "^test |test result|panicked|instruction figures" "$OUT/printf-test.log"
echo "== listing ($(date -u +%T))"
BIN=.devbin/haloscope OUT="$OUT/listing" timeout "${LISTING_S:-200}" bash scripts/device-listing.sh > "$OUT/listing.log" 2>&1
grep -E "differs|printf kernel|kernels:|^[<>]" "$OUT/listing.log"
if [ "${TESTS:-1}" = 1 ]; then
    echo "== GPU tests ($(date -u +%T))"
    OUT="$OUT" TESTS_S=150 bash scripts/device-round30.sh
fi
echo "== end ($(date -u +%T))"
