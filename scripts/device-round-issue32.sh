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
OUT="$OUT/printf" FILTER=printf TESTS_S=120 bash scripts/device-round30.sh
OUT="$OUT" TESTS=0 HAZARDS=0 bash scripts/device-round-tests-hazards.sh
if [ "${TESTS:-1}" = 1 ]; then
    OUT="$OUT" TESTS_S=150 bash scripts/device-round30.sh
fi
