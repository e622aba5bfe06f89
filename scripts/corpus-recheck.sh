#!/usr/bin/env bash
# Measures a few kernels of the generated corpus again on the device machine: ncu alone
# first, then the GPU backend. For figures an earlier call could not trust (an ncu row of 0,
# a run made before a fix). Results go to $OUT/recheck.tar.gz (corpus_run.py's layout).
#   OUT=... bash scripts/corpus-recheck.sh stencil-2d/k0204.cu stencil-1d/k0016.cu ...
# SEED and COUNT as in scripts/device-session.sh; .devbin carried.
set -uo pipefail
OUT="${OUT:-/tmp/recheck}"
SEED="${SEED:-2026}"
COUNT="${COUNT:-320}"
export HALOSCOPE_BIN="$PWD/.devbin/haloscope" HALOSCOPE_WORKER_EXE="$PWD/.devbin/haloscope"
W=/tmp/corpus-recheck
rm -rf "$W" && mkdir -p "$W/res" "$OUT"
python3 scripts/corpus/generate.py --seed "$SEED" --count "$COUNT" --out "$W/src" > /dev/null
python3 scripts/corpus_run.py subset "$W/src" "$W/sub" "$@"
python3 scripts/corpus_run.py ncu "$W/sub" "$W/res" --budget 200
python3 scripts/corpus_run.py run gpu "$W/sub" "$W/res" --jobs 4 --budget 200 --timeout 90
tar -C "$W" -czf "$OUT/recheck.tar.gz" res sub/manifest.json
