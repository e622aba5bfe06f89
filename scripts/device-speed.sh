#!/usr/bin/env bash
# Issue 13 on the device machine, in one call: (1) the GPU run's wall time and split per
# stage for every lesson kernel (scripts/gpu-split.sh, alone on the card), (2) the GPU tests
# (`--ignored`: every lesson kernel's H200 figures, CUPTI per line = emulator per line),
# (3) the GPU backend on the first CORPUS_KERNELS kernels of the seed-2026 corpus, whose
# CUPTI figures tests/corpus/h200-2026-12-04.tsv holds from 100 measured launches (compare
# with `python3 scripts/corpus_run.py collect`). Results in $OUT/device-speed.tar.gz.
#   OUT=... bash scripts/device-speed.sh        (.devbin carried: scripts/build-devbin.sh)
set -uo pipefail
OUT="${OUT:-/tmp/device-speed}"
REPEATS="${REPEATS:-3}"
CORPUS_KERNELS="${CORPUS_KERNELS:-64}"
export HALOSCOPE_BIN="$PWD/.devbin/haloscope" HALOSCOPE_WORKER_EXE="$PWD/.devbin/haloscope"
# The Rust kernels: the PTX this machine made (.devbin/rust-ptx), since the device has no rustc.
export HALOSCOPE_RUSTC="$PWD/scripts/replay-rustc.sh"
W=/tmp/device-speed-work
rm -rf "$W" && mkdir -p "$W/res" "$OUT"
started=$(date +%s)
{
    date -u
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    bash scripts/gpu-split.sh "$REPEATS" | tee "$W/gpu-split.tsv"
    echo "split done at $(($(date +%s) - started)) s"
    for t in .devbin/test-*; do
        echo "== $t --ignored"
        timeout -k 5 240 "$t" --ignored --test-threads 2 2>&1 | grep -E "^test |test result|panicked|assert" | head -40
    done
    echo "tests done at $(($(date +%s) - started)) s"
    python3 scripts/corpus/generate.py --seed 2026 --count 320 --out "$W/src" > /dev/null
    names=$(grep -v '^#' tests/corpus/h200-2026-12-04.tsv | head -n "$CORPUS_KERNELS" | cut -f1)
    # shellcheck disable=SC2086
    python3 scripts/corpus_run.py subset "$W/src" "$W/sub" $names
    python3 scripts/corpus_run.py run gpu "$W/sub" "$W/res" --jobs 4 --budget "${CORPUS_BUDGET:-150}" --timeout 60
    python3 scripts/corpus_run.py collect "$W/sub" "$W/res" > "$W/corpus-runs.jsonl"
    echo "corpus done at $(($(date +%s) - started)) s"
} > "$W/session.log" 2>&1
tar -C "$W" -czf "$OUT/device-speed.tar.gz" session.log gpu-split.tsv corpus-runs.jsonl res sub/manifest.json 2> /dev/null
tail -30 "$W/session.log"
