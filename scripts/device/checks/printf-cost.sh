#!/usr/bin/env bash
# Where the time of a printf in every thread goes on the GPU: kernel vs draining the FIFO (nvcc probe).
# Builds printf-cost.cu (beside this; issue 10) with the device machine's nvcc and runs it at
# several sizes and printf FIFO sizes, output to /dev/null. Each run is capped at LIMIT
# seconds (default 40). Writes $OUT/printf-cost.txt (the probe's lines, from stderr).
set -uo pipefail
OUT="${OUT:-/tmp/printf-cost}"
mkdir -p "$OUT"
nvcc -arch=sm_90 -O2 -o /tmp/printf-cost "$(dirname "$0")/printf-cost.cu" || exit 1
# RUNS="N FIFO_MIB PRINT;..." picks the runs (default: the first session's, docs/archive/measurements-log.md).
IFS=";" read -ra runs <<< "${RUNS:-4096 1 0;1024 1 1;1024 8 1;2048 8 1;4096 1 1;4096 8 1}"
failed=0
for args in "${runs[@]}"; do
    # shellcheck disable=SC2086 # three numbers
    timeout "${LIMIT:-40}" /tmp/printf-cost $args 2>&1 > /dev/null | tee -a "$OUT/printf-cost.txt"
    rc=${PIPESTATUS[0]}
    [ "$rc" = 0 ] || { echo "printf-cost $args: exit $rc"; failed=1; }
done
exit "$failed"
