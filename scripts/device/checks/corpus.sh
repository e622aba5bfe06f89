#!/usr/bin/env bash
# The generated corpus and the learner kernels on the GPU: ncu's sectors, then the GPU backend's.
# On the device machine from the repository root, .devbin carried (scripts/device/build-devbin.sh):
#   bash scripts/device/run.sh corpus@590        (the whole corpus wants a device call's 10 minutes)
# What runs:
#   - the learner kernels (tests/learner/*.cu) as a corpus of their own (SKIP_LEARNER=1 leaves
#     them out);
#   - the generated corpus (scripts/corpus/generate.py --seed SEED --count COUNT, default 2026
#     and 320), or only the FILEs named (corpus.sh stencil-2d/k0204.cu ...; the runner's
#     corpus=FILE,FILE); FIRST_MEASURED=N names the first N kernels of
#     tests/corpus/h200-2026-12-04.tsv (their figures are known: a speed check); MEASURED=TSV
#     (tests/corpus/h200-*.tsv) leaves out what an earlier call measured.
# Phase 1, ncu alone (beside CUPTI profiling ncu printed "Failed to profile" and ended its
# target again and again, 2026-12-04): NCU_SHARE % of BUDGET (default 45); NCU=0 skips it.
# Phase 2, the GPU backend, GPU_JOBS at once (default 6): learner kernels (timeout 90 s each),
# then the corpus (GPU_TIMEOUT, default 60 s each).
# New work stops after BUDGET seconds (default 170; through the runner, its CHECK_S less 40);
# a phase still running at HARD seconds (default BUDGET + 20) is killed. What ran is tarred
# into $OUT/corpus.tar.gz whatever happened (results in scripts/corpus/run.py's layout, the
# manifests, corpus.log). The emulator's side of the comparison runs on the build machine, with
# the same NVRTC (13.0.88 from PyPI): scripts/corpus/run.py run emu, collect, then
# scripts/corpus/compare.py (scripts/README.md).
set -uo pipefail
OUT="${OUT:-/tmp/corpus}"
mkdir -p "$OUT"
SEED="${SEED:-2026}"
COUNT="${COUNT:-320}"
if [ -n "${CHECK_S:-}" ]; then BUDGET="${BUDGET:-$((CHECK_S > 80 ? CHECK_S - 40 : CHECK_S / 2))}"; fi
BUDGET="${BUDGET:-170}"
HARD="${HARD:-$((BUDGET + 20))}"
GPU_JOBS="${GPU_JOBS:-6}"
ROOT="$PWD"
RUN="$ROOT/scripts/corpus/run.py"
export HALOSCOPE_BIN="$ROOT/.devbin/haloscope"
export HALOSCOPE_WORKER_EXE="$HALOSCOPE_BIN"
export HALOSCOPE_RUSTC="$ROOT/scripts/device/replay-rustc.sh"
W=/tmp/corpus-work
rm -rf "$W"
mkdir -p "$W/learner-src" "$W/learner-res" "$W/corpus-res"
files=("$@")
if [ -n "${FIRST_MEASURED:-}" ]; then
    mapfile -t -O "${#files[@]}" files < <(grep -v '^#' tests/corpus/h200-2026-12-04.tsv | head -n "$FIRST_MEASURED" | cut -f1)
fi
started=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - started))); }
# hard CMD...: CMD, killed (with its process group) when HARD seconds have passed.
hard() {
    local rest=$((HARD - ($(date +%s) - started)))
    [ "$rest" -gt 0 ] || { echo "!! past HARD, not run: $*"; return 0; }
    timeout -k 5 "$rest" "$@" || echo "!! exit $?: $*"
}

main() {
    date -u
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    ncu --version | tail -1
    "$HALOSCOPE_BIN" doctor | head -12

    # The learner kernels as a corpus of their own (run.py reads a manifest).
    if [ "${SKIP_LEARNER:-0}" != 1 ]; then
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
    fi
    python3 scripts/corpus/generate.py --seed "$SEED" --count "$COUNT" --out "$W/corpus-src" > /dev/null || echo "!! generator failed"
    # The kernels named (all when none), then less what MEASURED already has a figure for:
    # corpus-ncu/ and corpus-gpu/ hold what is left for each (links to the files).
    python3 "$RUN" subset "$W/corpus-src" "$W/corpus" "${files[@]}"
    python3 "$RUN" subset "$W/corpus" "$W/corpus-ncu" ${MEASURED:+--without-measured "$MEASURED" ncu}
    python3 "$RUN" subset "$W/corpus" "$W/corpus-gpu" ${MEASURED:+--without-measured "$MEASURED" cupti}

    # Phase 1, ncu alone.
    if [ "${NCU:-1}" = 1 ]; then
        local ncu_budget=$((BUDGET * ${NCU_SHARE:-45} / 100))
        if [ "${SKIP_LEARNER:-0}" != 1 ]; then
            hard python3 "$RUN" ncu "$W/learner-src" "$W/learner-res" --budget $((ncu_budget / 6))
        fi
        hard python3 "$RUN" ncu "$W/corpus-ncu" "$W/corpus-res" --budget $((ncu_budget - ($(date +%s) - started)))
    fi

    # Phase 2, the GPU backend: learner kernels, then the corpus.
    if [ "${SKIP_LEARNER:-0}" != 1 ]; then
        hard python3 "$RUN" run gpu "$W/learner-src" "$W/learner-res" --jobs "$GPU_JOBS" --budget "$(left)" --timeout 90
    fi
    hard python3 "$RUN" run gpu "$W/corpus-gpu" "$W/corpus-res" --jobs "$GPU_JOBS" --budget "$(left)" --timeout "${GPU_TIMEOUT:-60}"

    echo "all phases done in $(($(date +%s) - started)) s"
    ls "$W/corpus-res/gpu" 2> /dev/null | grep -c '\.exit$' | sed 's/^/corpus GPU-backend runs: /'
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('corpus ncu figures:', sum(isinstance(v,int) for v in d.values()))" \
        "$W/corpus-res/ncu.json" 2> /dev/null
}
main 2>&1 | tee "$W/corpus.log"
tar -C "$W" -czf "$OUT/corpus.tar.gz" corpus.log learner-res corpus-res corpus/manifest.json \
    $([ -f "$W/learner-src/manifest.json" ] && echo learner-src/manifest.json)
ls -la "$OUT/corpus.tar.gz"
