#!/usr/bin/env bash
# The hazard corpus under compute-sanitizer's four tools: the ground truth for the emulator's checks.
# The corpus is scripts/hazards/generate.py's (issue 28). Run on the device machine from the
# repository root, with .devbin/haloscope carried (scripts/device/build-devbin.sh --binary-only
# is enough):
#
#   SEED=1 JOBS=12 BUDGET=420 bash scripts/device/run.sh hazard-sanitizer
#
# FIRST=N limits both to the kernels numbered N and up (a seed's newer bases: 208 and up for
# the asynchronous copies and clusters). GPU_SKIP=1 leaves out the GPU backend's runs;
# RESUME=<an earlier hazards-device.tar.gz> keeps its finished tool runs.
#
# For every kernel and every tool (memcheck, racecheck, synccheck, initcheck with
# --initcheck-address-space all), one process:
#   compute-sanitizer --tool T ... haloscope launch --lesson L --kernel K --n <small sizes>
# which launches the kernel once at each of the lesson's verification sizes below its profile
# size (the sizes `haloscope check` uses). Then, with what is left of BUDGET, each kernel once
# on the GPU backend (`haloscope run --backend gpu --json`, the lesson's full sizes) for the
# GPU's own verdict. Logs, exit codes and the manifest go to $OUT/hazards-device.tar.gz;
# scripts/hazards/compare.py reads them (on the build machine).
set -uo pipefail
OUT="${OUT:-/tmp/hazards-out}"
SEED="${SEED:-1}"
JOBS="${JOBS:-12}"
# Through scripts/device/run.sh the check's time limit (CHECK_S) sets the default budget:
# the tool runs still in flight (120 s at most each) and the tar must fit after it.
if [ -n "${CHECK_S:-}" ]; then BUDGET="${BUDGET:-$((CHECK_S > 210 ? CHECK_S - 150 : CHECK_S / 3))}"; fi
BUDGET="${BUDGET:-420}"
GPU_JOBS="${GPU_JOBS:-4}"
export BIN="${HALOSCOPE_BIN:-$PWD/.devbin/haloscope}"
export W=/tmp/hazards-work
rm -rf "$W"
mkdir -p "$W/logs" "$W/gpu" "$OUT"
# RESUME=<an earlier hazards-device.tar.gz>: its finished tool runs are kept, not run again
# (a device call is at most 10 minutes; the corpus takes more).
if [ -n "${RESUME:-}" ]; then
    tar -C "$W" -xzf "$RESUME" logs
    grep -l skipped "$W"/logs/*.exit 2> /dev/null | while read -r f; do rm -f "$f" "${f%.exit}.log"; done
    echo "resuming: $(ls "$W"/logs/*.exit | wc -l) tool runs kept from $RESUME"
fi
export STARTED=$(date +%s) BUDGET
{
    date -u
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    compute-sanitizer --version | tail -2
    "$BIN" doctor 2>&1 | head -8
} > "$W/env.txt" 2>&1
cat "$W/env.txt"
python3 scripts/hazards/generate.py --seed "$SEED" --out "$W/corpus" --with-tests

# One job per line: lesson, file, tool, sizes (kernel-major, so that a budget cut leaves
# whole kernels).
python3 - "$W/corpus" > "$W/jobs.tsv" <<'PY'
import json, sys
import os
first = int(os.environ.get("FIRST", "0"))  # FIRST=N: only the kernels numbered N and up
for e in json.load(open(sys.argv[1] + "/manifest.json")):
    if e["index"] < first:
        continue
    for tool in ("memcheck", "racecheck", "synccheck", "initcheck"):
        print(e["lesson"], e["file"], tool, ",".join(map(str, e["sizes"])), sep="\t")
PY

sanitize() {
    local lesson=$1 file=$2 tool=$3 sizes=$4
    local name="${lesson}__$(basename "$file" .cu).$tool"
    [ -f "$W/logs/$name.exit" ] && return
    if [ $(($(date +%s) - STARTED)) -gt "$BUDGET" ]; then
        echo skipped > "$W/logs/$name.exit"
        return
    fi
    local extra=()
    [ "$tool" = initcheck ] && extra=(--initcheck-address-space all)
    local nargs=()
    for n in ${sizes//,/ }; do nargs+=(--n "$n"); done
    timeout -k 5 120 compute-sanitizer --tool "$tool" "${extra[@]}" --print-limit 20 --error-exitcode 99 \
        "$BIN" launch --lesson "$lesson" --kernel "$W/corpus/$file" "${nargs[@]}" > "$W/logs/$name.log" 2>&1
    echo $? > "$W/logs/$name.exit"
}
export -f sanitize
tr '\t' ' ' < "$W/jobs.tsv" | xargs -P "$JOBS" -L 1 bash -c 'sanitize "$@"' _
echo "sanitizer jobs done after $(($(date +%s) - STARTED)) s: $(ls "$W"/logs/*.exit | wc -l) exits, $(grep -l skipped "$W"/logs/*.exit | wc -l) skipped"

# The GPU's own verdict at the lesson's full sizes, as long as the budget lasts.
gpu_run() {
    local lesson=$1 file=$2
    local name="${lesson}__$(basename "$file" .cu)"
    [ $(($(date +%s) - STARTED)) -gt "$BUDGET" ] && return
    [ -n "${GPU_SKIP:-}" ] && return
    timeout -k 5 90 "$BIN" run --lesson "$lesson" --kernel "$W/corpus/$file" --backend gpu --json --seed 7 \
        > "$W/gpu/$name.json" 2> "$W/gpu/$name.err"
    echo $? > "$W/gpu/$name.exit"
}
export -f gpu_run
python3 -c "
import json,os,sys
first = int(os.environ.get('FIRST', '0'))
for e in json.load(open(sys.argv[1] + '/manifest.json')):
    if e['index'] >= first: print(e['lesson'], e['file'])" "$W/corpus" \
    | xargs -P "$GPU_JOBS" -L 1 bash -c 'gpu_run "$@"' _
echo "GPU runs done after $(($(date +%s) - STARTED)) s: $(ls "$W"/gpu/*.exit 2> /dev/null | wc -l)"
# The reports are large; keep the verdict, the fault and the findings.
python3 - "$W/gpu" <<'PY'
import glob, json, os, sys
out = {}
for path in glob.glob(sys.argv[1] + "/*.json"):
    name = os.path.basename(path)[:-5]
    try:
        r = json.load(open(path))
        out[name] = {"verdict": r.get("verdict"), "fault": r.get("fault"), "headline": r.get("headline")}
    except ValueError:
        out[name] = {"verdict": None, "error": open(path[:-5] + ".err").read()[-400:]}
json.dump(out, open(sys.argv[1] + "/../gpu-verdicts.json", "w"), indent=1)
PY
tar -C "$W" -czf "$OUT/hazards-device.tar.gz" env.txt jobs.tsv logs gpu-verdicts.json corpus/manifest.json
ls -la "$OUT"
