#!/usr/bin/env bash
# On the device machine (carry .devbin with the release binary): the kernels named run on the
# GPU and on the emulator through scripts/gpu-check.sh's kernel step (seed 7 on both, ncu for
# the sector ground truth), so the first mismatching values of each size, the verdicts and the
# sectors can be compared afterwards: python3 scripts/compare-learner-values.py runs.jsonl.
#   OUT=... bash scripts/device-learner-values.sh KERNEL...
set -uo pipefail
OUT="${OUT:-/tmp/device-learner-values}"
mkdir -p "$OUT"
KERNELS="$*" STEPS=kernels OUT="$OUT" bash scripts/gpu-check.sh
python3 scripts/compare-learner-values.py "$OUT/runs.jsonl" | tee "$OUT/values.txt"
