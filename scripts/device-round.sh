#!/usr/bin/env bash
# One device call for issues 28, 29 and 30 (2026-12-06), when device time is short: the hazard
# corpus under compute-sanitizer (scripts/hazards/device-sanitize.sh, budget $HAZARD_S), the
# GPU Cancel test (tests/gpu.rs, carried xz'd as .devbin/test-gpu.xz), then the workstation
# checks (scripts/workstation/device-workstation.sh). Carry .devbin and .devbin12.
set -uo pipefail
OUT="${OUT:-/tmp/device-round}"
mkdir -p "$OUT"
export HALOSCOPE_WORKER_EXE="$PWD/.devbin/haloscope" HALOSCOPE_ROOT="$PWD"
echo "== hazards ($(date -u +%T))"
OUT="$OUT" SEED=1 JOBS="${JOBS:-14}" GPU_JOBS="${GPU_JOBS:-8}" BUDGET="${HAZARD_S:-300}" \
    bash scripts/hazards/device-sanitize.sh > "$OUT/hazards.log" 2>&1
tail -6 "$OUT/hazards.log"
echo "== cancel ($(date -u +%T))"
if [ -f .devbin/test-gpu.xz ]; then
    xz -dc .devbin/test-gpu.xz > /tmp/test-gpu && chmod +x /tmp/test-gpu
    timeout 90 /tmp/test-gpu --ignored cancel_stops --nocapture --test-threads 1 > "$OUT/cancel.log" 2>&1
    echo "cancel test rc=$?"
    grep -E "cancelled GPU run|test result|panicked" "$OUT/cancel.log"
fi
echo "== workstation ($(date -u +%T))"
OUT="$OUT/workstation" SIDE_BY_SIDE_S="${SIDE_BY_SIDE_S:-170}" timeout 260 \
    bash scripts/workstation/device-workstation.sh > "$OUT/workstation.log" 2>&1
tail -45 "$OUT/workstation.log"
echo "== end ($(date -u +%T))"
