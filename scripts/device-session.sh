#!/usr/bin/env bash
# Everything a device session needs from the H200, in one call
# (2026-12-04: under 400 s of device time were left, so one call had to carry it all):
#   1. the GPU tests (`--ignored`: every lesson kernel's H200 figures, CUPTI per-line =
#      emulator per-line, a crash and a hang survived, printf attributed and capped);
#   2. the learner kernels (tests/learner/*.cu) on the GPU backend and under ncu;
#   3. the generated corpus (scripts/corpus/generate.py, SEED/COUNT): ncu on every kernel,
#      the GPU backend on as many as the budget allows (learner kernels go first).
# ncu runs first and alone (it fails beside CUPTI), then the tests beside the GPU backend.
# For the whole corpus give the call its 10 minutes: BUDGET=560 HARD=580 (timeout_s 600).
# MEASURED=FILE.tsv leaves out what an earlier call measured; SKIP_LEARNER=1 the learner
# kernels; SPLIT=0 the per-stage timing of the lesson kernels (scripts/gpu-split.sh).
# The emulator's side of the comparison runs on the build machine (with the same NVRTC,
# 13.0.88 from PyPI), so the device's time goes to what only the device can measure.
# Every job stops starting new work after BUDGET seconds and is killed at HARD seconds;
# what ran is tarred into $OUT/device-session.tar.gz whatever happened.
# Needs .devbin (scripts/build-devbin.sh) carried; run from the repository root.
set -uo pipefail
OUT="${OUT:-/tmp/device-session}"
mkdir -p "$OUT"
SEED="${SEED:-2026}"
COUNT="${COUNT:-320}"
BUDGET="${BUDGET:-170}"
HARD="${HARD:-190}"
GPU_JOBS="${GPU_JOBS:-6}"
ROOT="$PWD"
export HALOSCOPE_BIN="$ROOT/.devbin/haloscope"
export HALOSCOPE_WORKER_EXE="$HALOSCOPE_BIN"
export HALOSCOPE_RUSTC="$ROOT/scripts/replay-rustc.sh"
W=/tmp/device-session-work
rm -rf "$W"
mkdir -p "$W/learner-src" "$W/learner-res" "$W/corpus-res"
LOG="$W/session.log"
exec > >(tee "$LOG") 2>&1
started=$(date +%s)
date -u
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
ncu --version | tail -1
"$HALOSCOPE_BIN" doctor | head -12

# The learner kernels as a corpus of their own (corpus_run.py reads a manifest).
python3 - "$W/learner-src" <<'PY'
import glob, json, os, re, shutil, sys
out = sys.argv[1]
entries = []
for i, path in enumerate(sorted(glob.glob("tests/learner/*.cu"))):
    first = open(path).readline()
    m = re.match(r"// lesson: *([A-Za-z0-9_-]+)", first)
    if not m:
        continue
    name = os.path.basename(path)
    shutil.copy(path, os.path.join(out, name))
    entries.append({"lesson": m.group(1), "file": name, "index": i, "features": ["learner"]})
json.dump(entries, open(os.path.join(out, "manifest.json"), "w"), indent=1)
print(f"learner kernels: {len(entries)}")
PY
python3 scripts/corpus/generate.py --seed "$SEED" --count "$COUNT" --out "$W/corpus-src" || echo "!! generator failed"

# MEASURED=tests/corpus/h200-*.tsv: what an earlier call measured is not measured again.
# corpus-ncu/ and corpus-gpu/ hold what is left for each (links to the files).
python3 scripts/corpus_run.py subset "$W/corpus-src" "$W/corpus-ncu" ${MEASURED:+--without-measured "$MEASURED" ncu}
python3 scripts/corpus_run.py subset "$W/corpus-src" "$W/corpus-gpu" ${MEASURED:+--without-measured "$MEASURED" cupti}

left() { echo $((BUDGET - ($(date +%s) - started))); }

# Phase 1, ncu alone: on 2026-12-04 ncu running beside CUPTI profiling (the GPU tests and
# backend runs) printed "Failed to profile" and ended its target again and again, so 206 of
# 320 corpus kernels got no figure. NCU_SHARE of the budget (default 45 %) goes to it.
NCU_BUDGET=$((BUDGET * ${NCU_SHARE:-45} / 100))
[ "${SKIP_LEARNER:-0}" = 1 ] || python3 scripts/corpus_run.py ncu "$W/learner-src" "$W/learner-res" --budget $((NCU_BUDGET / 6))
python3 scripts/corpus_run.py ncu "$W/corpus-ncu" "$W/corpus-res" --budget $((NCU_BUDGET - ($(date +%s) - started)))

# Phase 1b, alone on the card as well: a full GPU run of every lesson kernel, timed per stage.
[ "${SPLIT:-1}" = 1 ] && bash scripts/gpu-split.sh "${SPLIT_REPEATS:-2}" | tee "$W/gpu-split.tsv"

# Phase 2: the GPU tests, each test executable at once, beside the GPU backend.
tests=()
for t in .devbin/test-*; do
    [ "${SKIP_TESTS:-0}" = 1 ] && break
    name=$(basename "$t")
    (
        echo "== $t --ignored"
        timeout -k 5 "$((HARD - ($(date +%s) - started)))" "$t" --ignored --test-threads 4 2>&1
        echo "== $t exit $?"
    ) > "$W/$name.log" 2>&1 &
    tests+=($!)
done

# The GPU backend: learner kernels, then the corpus.
(
    [ "${SKIP_LEARNER:-0}" = 1 ] || python3 scripts/corpus_run.py run gpu "$W/learner-src" "$W/learner-res" --jobs "$GPU_JOBS" --budget "$(left)" --timeout 90
    python3 scripts/corpus_run.py run gpu "$W/corpus-gpu" "$W/corpus-res" --jobs "$GPU_JOBS" --budget "$(left)" --timeout 60
) &
gpu=$!

# The hard stop: whatever still runs at HARD seconds is killed (its results so far stay).
(
    sleep "$((HARD - ($(date +%s) - started)))"
    pkill -9 -f "corpus_run.py" 2> /dev/null
    pkill -9 -f ".devbin/" 2> /dev/null
) > /dev/null 2>&1 &
killer=$!
wait "${tests[@]}" "$gpu"
pkill -P "$killer" 2> /dev/null
kill "$killer" 2> /dev/null
echo "all jobs done in $(($(date +%s) - started)) s"
cat "$W"/test-*.log > "$W/gpu-tests.log" 2> /dev/null
grep -E "^test |test result|panicked|==" "$W/gpu-tests.log" | head -60
ls "$W/corpus-res/gpu" 2> /dev/null | grep -c '\.exit$' | sed 's/^/corpus GPU-backend runs: /'
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('corpus ncu figures:', sum(isinstance(v,int) for v in d.values()))" \
    "$W/corpus-res/ncu.json" 2> /dev/null
exec >&- 2>&-
sleep 1
touch "$W/gpu-split.tsv"
tar -C "$W" -czf "$OUT/device-session.tar.gz" session.log gpu-tests.log gpu-split.tsv learner-res corpus-res learner-src/manifest.json
