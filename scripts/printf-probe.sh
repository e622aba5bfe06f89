#!/usr/bin/env bash
# Where the time of a printf in every thread goes on the GPU (issue 10): builds
# scripts/printf-probe.cu with the device machine's nvcc and runs it at several sizes and
# printf FIFO sizes, output to /dev/null and through a pipe. Each run is capped at 40 s.
set -uo pipefail
nvcc -arch=sm_90 -O2 -o /tmp/printf-probe scripts/printf-probe.cu || exit 1
# RUNS="N FIFO_MIB PRINT;..." picks the runs (default: the first session's, docs/measurements.md).
IFS=";" read -ra runs <<< "${RUNS:-4096 1 0;1024 1 1;1024 8 1;2048 8 1;4096 1 1;4096 8 1}"
for args in "${runs[@]}"; do
    timeout "${LIMIT:-40}" /tmp/printf-probe $args > /dev/null || echo "printf-probe $args: exit $?"
done
