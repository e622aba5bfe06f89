#!/usr/bin/env bash
# One device call (2026-12-06, fifth session): issue 30's refactor (the emulator as the
# ptx-emu crate, the backend's trace/profile seams) checked on the GPU: every GPU test on this
# tree (tests/*.rs with #[ignore = "needs an NVIDIA GPU"]: every lesson kernel's verdict and
# figures on the card, CUPTI's lines against the emulator's, the worker surviving a crash and
# a hang, Cancel ending a GPU run), with the Rust kernels' PTX replayed.
# Carry .devbin (scripts/build-devbin.sh). FILTER=<name part> runs only the tests it names.
set -uo pipefail
OUT="${OUT:-/tmp/round30}"
W=/tmp/round30-work
rm -rf "$W" && mkdir -p "$W" "$OUT"
export HALOSCOPE_WORKER_EXE="$PWD/.devbin/haloscope" HALOSCOPE_ROOT="$PWD" HALOSCOPE_RUSTC="$PWD/scripts/replay-rustc.sh"
export HALOSCOPE_BIN="$PWD/.devbin/haloscope"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$W/card.txt"
for exe in .devbin/test-*; do
    name=$(basename "$exe")
    echo "== $name ($(date -u +%T))"
    start=$(date +%s)
    timeout "${TESTS_S:-180}" "$exe" --ignored --nocapture --test-threads 1 ${FILTER:-} > "$W/$name.log" 2>&1
    rc=$?
    echo "$name rc=$rc in $(( $(date +%s) - start )) s"
    grep -E "^test |test result|panicked|cancel|instruction figures" "$W/$name.log" | head -30
done
tar -czf "$OUT/round30.tar.gz" -C "$W" .
echo "== end ($(date -u +%T))"
