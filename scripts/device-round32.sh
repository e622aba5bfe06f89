#!/usr/bin/env bash
# One device call (2026-12-06, fourth session): issue 32's per-instruction comparison
# (scripts/device-listing.sh: the Code view's SASS sectors, GPU against emulator, for every
# lesson and learner kernel), then every GPU test on this tree (tests/*.rs with
# #[ignore = "needs an NVIDIA GPU"]) with the Rust kernels' PTX replayed (issue 29's Rust test).
# Carry .devbin (scripts/build-devbin.sh).
set -uo pipefail
OUT="${OUT:-/tmp/round32}"
W=/tmp/round32-work
rm -rf "$W" && mkdir -p "$W" "$OUT"
export HALOSCOPE_WORKER_EXE="$PWD/.devbin/haloscope" HALOSCOPE_ROOT="$PWD" HALOSCOPE_RUSTC="$PWD/scripts/replay-rustc.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$W/card.txt"
echo "== listing ($(date -u +%T))"
BIN=.devbin/haloscope OUT="$W/listing" timeout "${LISTING_S:-300}" bash scripts/device-listing.sh > "$W/listing.log" 2>&1
tail -12 "$W/listing.log"
for exe in .devbin/test-*; do
    name=$(basename "$exe")
    echo "== $name ($(date -u +%T))"
    timeout "${TESTS_S:-150}" "$exe" --ignored --nocapture --test-threads 1 > "$W/$name.log" 2>&1
    echo "$name rc=$?"
    grep -E "^test |test result|panicked" "$W/$name.log" | head -20
done
tar -czf "$OUT/round32.tar.gz" -C "$W" .
echo "== end ($(date -u +%T))"
