#!/usr/bin/env bash
# One device call (2026-12-07, sixth session): every GPU test of this tree
# (scripts/device-round30.sh: verdicts and figures of every lesson kernel, CUPTI lines against
# the emulator's, crash and hang survived, Cancel), then the hazard corpus of a seed the
# emulator's expectations were NOT made from (scripts/hazards/device-sanitize.sh, SEED,
# budget HAZARD_S; RESUME= an earlier hazards-device.tar.gz to finish it).
# Between them, the PTX & SASS listing check (scripts/device-listing.sh; LISTING=0 skips it).
# Carry .devbin (scripts/build-devbin.sh). TESTS=0 skips the tests, HAZARDS=0 the corpus.
set -uo pipefail
OUT="${OUT:-/tmp/round-th}"
mkdir -p "$OUT"
if [ "${TESTS:-1}" = 1 ]; then
    echo "== GPU tests ($(date -u +%T))"
    OUT="$OUT" TESTS_S=150 bash scripts/device-round30.sh
fi
if [ "${LISTING:-1}" = 1 ]; then
    # Issue 32 item 5: the PTX & SASS view's figures per SASS instruction, GPU vs emulator.
    echo "== listing ($(date -u +%T))"
    BIN=.devbin/haloscope OUT="$OUT/listing" timeout "${LISTING_S:-200}" bash scripts/device-listing.sh > "$OUT/listing.log" 2>&1
    grep -E "differs|printf kernel|kernels:|^[<>]" "$OUT/listing.log"
fi
[ "${HAZARDS:-1}" = 1 ] || { echo "== end ($(date -u +%T))"; exit 0; }
echo "== hazards seed ${SEED:-1206} ($(date -u +%T))"
OUT="$OUT" SEED="${SEED:-1206}" JOBS="${JOBS:-14}" GPU_SKIP="${GPU_SKIP:-1}" BUDGET="${HAZARD_S:-400}" \
    RESUME="${RESUME:-}" bash scripts/hazards/device-sanitize.sh > "$OUT/hazards.log" 2>&1
tail -4 "$OUT/hazards.log"
echo "== end ($(date -u +%T))"
