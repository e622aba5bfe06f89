#!/usr/bin/env bash
# The generated differential corpus on the device machine, in one call (issue 11):
# generates SEED/COUNT kernels (scripts/corpus/generate.py), then, at the same time,
#   - the emulator on every kernel (CPU only, EMU_JOBS at a time),
#   - one ncu per lesson over one `haloscope launch` of all its kernels (the ground truth),
#   - the GPU backend on every kernel (verification and CUPTI sectors, GPU_JOBS at a time),
# each stopping to start new work after BUDGET seconds, and writes to $OUT:
#   corpus-runs.jsonl (one line per kernel: scripts/gpu_compare.py's shape, plus features),
#   corpus-ptx.tar.gz (the PTX NVRTC made here of the sample the tests keep), corpus.log.
# scripts/corpus_compare.py turns corpus-runs.jsonl into the table in docs/measurements.md.
# Needs .devbin (scripts/build-devbin.sh) carried; run from the repository root.
set -uo pipefail
OUT="${OUT:-/tmp/corpus-out}"
mkdir -p "$OUT"
SEED="${SEED:-2026}"
COUNT="${COUNT:-320}"
BUDGET="${BUDGET:-330}"
EMU_JOBS="${EMU_JOBS:-8}"
GPU_JOBS="${GPU_JOBS:-4}"
ROOT="$PWD"
export HALOSCOPE_BIN="$ROOT/.devbin/haloscope"
export HALOSCOPE_WORKER_EXE="$HALOSCOPE_BIN"
exec > >(tee "$OUT/corpus.log") 2>&1

SRC=/tmp/corpus-src
RES=/tmp/corpus-results
rm -rf "$SRC" "$RES"
mkdir -p "$RES"
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
"$HALOSCOPE_BIN" doctor | head -20
python3 scripts/corpus/generate.py --seed "$SEED" --count "$COUNT" --out "$SRC" || exit 1
started=$(date +%s)
# A hard stop a minute after the budget: a run still going then is reported as not run.
HARD=$((BUDGET + 60))
# Two host threads per emulator run: EMU_JOBS x 2 of the 16 cores, the rest for the GPU runs.
HALOSCOPE_EMU_THREADS=2 timeout -k 5 "$HARD" python3 scripts/corpus_run.py run emu "$SRC" "$RES" --jobs "$EMU_JOBS" --budget "$BUDGET" --timeout 120 &
emu=$!
timeout -k 5 "$HARD" python3 scripts/corpus_run.py ncu "$SRC" "$RES" --budget "$BUDGET" &
ncu=$!
timeout -k 5 "$HARD" python3 scripts/corpus_run.py run gpu "$SRC" "$RES" --jobs "$GPU_JOBS" --budget "$BUDGET" --timeout 120 &
gpu=$!
# Wait for these three by pid: a bare `wait` also waits for the `tee` of the process
# substitution above, which never ends while this script holds its stdout (2026-12-03: that
# deadlock cost a whole device call its results).
wait "$emu" "$ncu" "$gpu"
echo "all three done in $(($(date +%s) - started)) s"
python3 scripts/corpus_run.py collect "$SRC" "$RES" > "$OUT/corpus-runs.jsonl"
wc -l "$OUT/corpus-runs.jsonl"

# The PTX of the sample the tests keep (tests/corpus/sample.txt), made by this NVRTC: the
# test replays it on the emulator and expects the H200's figures.
if [ -f tests/corpus/sample.txt ]; then
    mkdir -p /tmp/corpus-ptx
    while read -r file; do
        [ -n "$file" ] || continue
        lesson=$(sed -n '1s|^// lesson: *||p' "$SRC/$file")
        "$HALOSCOPE_BIN" compile --lesson "$lesson" --kernel "$SRC/$file" --sm 90 \
            -o "/tmp/corpus-ptx/$(echo "$file" | tr / _).ptx" 2> /dev/null || echo "no PTX for $file"
    done < tests/corpus/sample.txt
    tar -C /tmp/corpus-ptx -czf "$OUT/corpus-ptx.tar.gz" .
fi
python3 scripts/corpus_compare.py "$OUT/corpus-runs.jsonl" --summary || true
