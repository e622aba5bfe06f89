#!/usr/bin/env bash
# The wall time of a GPU run of every lesson kernel, split per stage (alone on the card).
# `haloscope run --backend gpu --json` for every lesson kernel (starter and solution, CUDA), with
# the report's own split per stage. Run it on the device machine with nothing else on the card
# (the timing stage shares the GPU otherwise):
#   bash scripts/device/run.sh stage-split[=REPEATS]
#   HALOSCOPE_BIN=.devbin/haloscope bash scripts/device/checks/stage-split.sh [REPEATS]
# Prints one TSV row per run (also into $OUT/stage-split.tsv when OUT is set): lesson, kernel,
# wall ms, verdict, "stage=ms" for each stage, then the process's timeline (HALOSCOPE_TIMELINE:
# ms since start and what happened). REPEATS defaults to 2.
set -uo pipefail
BIN="${HALOSCOPE_BIN:-.devbin/haloscope}"
REPEATS="${1:-2}"
export HALOSCOPE_WORKER_EXE="${HALOSCOPE_WORKER_EXE:-$BIN}"
timeline=$(mktemp)
# With OUT set (as the runner sets it), the rows go to $OUT/stage-split.tsv as well.
rows=/dev/null
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT" && rows="$OUT/stage-split.tsv"; fi
SUMMARY='
import json, sys
r = json.loads(sys.stdin.read())
print(r.get("verdict"), " ".join("%s=%.0f" % (s["stage"], s["millis"]) for s in r.get("stages", [])), sep="\t")'
for lesson_dir in lessons/*/; do
    lesson=$(basename "$lesson_dir")
    for kernel in "kernels/$lesson/starter.cu" "kernels/$lesson/solution.cu"; do
        [ -f "$kernel" ] || continue
        for _ in $(seq "$REPEATS"); do
            start=$(date +%s%N)
            json=$(HALOSCOPE_TIMELINE=1 "$BIN" run --backend gpu --json --lesson "$lesson" --kernel "$kernel" --seed 7 2> "$timeline")
            wall=$((($(date +%s%N) - start) / 1000000))
            printf '%s\t%s\t%s\t' "$lesson" "$(basename "$kernel")" "$wall"
            python3 -c "$SUMMARY" <<< "$json" | tr -d '\n' || printf 'no report'
            # Where the time outside the stages went: ms since the process started.
            printf '\t%s\n' "$(grep '^\[timeline\]' "$timeline" | cut -d' ' -f2- | paste -sd';')"
        done
    done
done | tee "$rows"
