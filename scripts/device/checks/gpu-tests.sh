#!/usr/bin/env bash
# The GPU tests: every .devbin/test-* (tests/*.rs with #[ignore = "needs an NVIDIA GPU"]) with --ignored.
# What they cover: every lesson kernel's verdict and figures on the card, CUPTI's lines against
# the emulator's, printf attributed and capped, the worker surviving a crash and a hang, Cancel
# ending a GPU run, the Rust kernels (their PTX replayed by scripts/device/replay-rustc.sh).
# On the device machine with .devbin carried (scripts/device/build-devbin.sh):
#   bash scripts/device/run.sh gpu-tests          (or gpu-tests=NAME_PART, as FILTER)
# FILTER=<name part> runs only the tests it names (FILTER=cancel_stops, FILTER=printf);
# TESTS_S caps each test executable (default 180 s); TEST_THREADS (default 1).
# The loop itself is kernel-figures.sh's `tests` step (one copy); its log is $OUT/gpu-check.log.
set -uo pipefail
if [ $# -gt 0 ]; then FILTER="$1"; fi
FILTER="${FILTER:-}" TESTS_S="${TESTS_S:-180}" STEPS=tests exec bash "$(dirname "$0")/kernel-figures.sh"
