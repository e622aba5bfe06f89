#!/usr/bin/env bash
# The values a kernel writes, its verdict and sectors: GPU against emulator, for the kernels named.
# On the device machine (carry .devbin with the release binary): the kernels named run on the
# GPU and on the emulator through kernel-figures.sh's kernels step (seed 7 on both, ncu for
# the sector ground truth), then compare-learner-values.py compares the first mismatching
# values of each size, the verdicts and the sectors (exit 1 when any differ).
#   bash scripts/device/run.sh learner-values=KERNEL,KERNEL...
#   OUT=... bash scripts/device/checks/learner-values.sh KERNEL...   (or KERNELS="...")
# No kernel named: every kernel kernel-figures.sh runs (lesson and learner kernels).
set -uo pipefail
OUT="${OUT:-/tmp/device-learner-values}"
HERE="$(dirname "$0")"
mkdir -p "$OUT"
if [ $# -gt 0 ]; then KERNELS="$*"; fi
KERNELS="${KERNELS:-}" STEPS=kernels OUT="$OUT" bash "$HERE/kernel-figures.sh"
python3 "$HERE/compare-learner-values.py" "$OUT/runs.jsonl" | tee "$OUT/values.txt"
exit "${PIPESTATUS[0]}"
