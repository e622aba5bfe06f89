#!/usr/bin/env bash
# NVRTC 12 against NVRTC 13 on one backend (emu here, gpu through the device's nvrtc12 check).
# Issue 29 item 2: every lesson kernel (kernels/*/*.cu) and held-out learner kernel
# (tests/learner/*.cu) run once with NVRTC 13 and once with NVRTC 12, on one backend, and the
# figures compared: verdict, total/load/store sectors and the sectors of every source line.
#
#   BACKEND=emu|gpu NVRTC12=<dir with libnvrtc.so.12> HEADERS12=<dir1>:<dir2> \
#     OUT=<dir> bash scripts/workstation/nvrtc-side-by-side.sh
#
# NVRTC 13 is whatever haloscope finds by itself; NVRTC 12 is forced with $HALOSCOPE_NVRTC and
# its CUDA 12 headers with $HALOSCOPE_CUDA_INCLUDE. Writes $OUT/nvrtc-<major>.jsonl and prints
# the comparison (scripts/workstation/compare-nvrtc.py); exits 1 on any difference.
set -uo pipefail
BACKEND="${BACKEND:-emu}"
OUT="${OUT:-/tmp/nvrtc-side-by-side}"
BIN="${HALOSCOPE_BIN:-$PWD/.devbin/haloscope}"
[ -x "$BIN" ] || BIN="$PWD/target/release/haloscope"
: "${NVRTC12:?NVRTC12 must name the folder holding libnvrtc.so.12}"
: "${HEADERS12:?HEADERS12 must name the CUDA 12 include folders, colon-separated}"
mkdir -p "$OUT"
JOBS="${JOBS:-2}"
export BIN BACKEND OUT

one() {
    local major=$1 kernel=$2
    local lesson
    lesson=$(sed -n '1s#^// lesson: *##p' "$kernel")
    [ -n "$lesson" ] || lesson=$(basename "$(dirname "$kernel")")
    [ -f "lessons/$lesson/lesson.toml" ] || return 0
    local json
    json=$("$BIN" run --lesson "$lesson" --kernel "$kernel" --backend "$BACKEND" --json --seed 7 2> /dev/null)
    python3 -c '
import json, sys
major, kernel, text = sys.argv[1], sys.argv[2], sys.stdin.read()
try:
    r = json.loads(text)
except ValueError:
    print(json.dumps({"kernel": kernel, "major": major, "error": text[-300:]})); sys.exit()
p = r.get("profile") or {}
c = r.get("compile") or {}
print(json.dumps({"kernel": kernel, "major": major, "verdict": r.get("verdict"),
    "fault": (r.get("fault") or {}).get("kind"),
    "compiler_version": c.get("compiler_version"), "compiler_path": c.get("compiler_path"),
    "sectors": p.get("sectors"), "load_sectors": p.get("load_sectors"),
    "store_sectors": p.get("store_sectors"), "source": p.get("source"),
    "per_line": {str(l["line"]): l["sectors"] for l in p.get("per_line") or [] if l["sectors"]},
}))' "$major" "$kernel" <<< "$json"
}
export -f one

# One file per kernel and major (parallel jobs never share a file), gathered afterwards.
rm -rf "$OUT/each" && mkdir -p "$OUT/each"
each() { one "$1" "$2" > "$OUT/each/$1-$(tr '/' '_' <<< "$2").json"; }
export -f each
ls kernels/*/*.cu tests/learner/*.cu | xargs -P "$JOBS" -I{} bash -c 'each 13 {}'
ls kernels/*/*.cu tests/learner/*.cu |
    HALOSCOPE_NVRTC="$NVRTC12" HALOSCOPE_CUDA_INCLUDE="$HEADERS12" xargs -P "$JOBS" -I{} bash -c 'each 12 {}'
cat "$OUT"/each/13-*.json > "$OUT/nvrtc-13.jsonl"
cat "$OUT"/each/12-*.json > "$OUT/nvrtc-12.jsonl"
rm -rf "$OUT/each"
python3 "$(dirname "$0")/compare-nvrtc.py" "$OUT/nvrtc-13.jsonl" "$OUT/nvrtc-12.jsonl" | tee "$OUT/compare.md"
exit "${PIPESTATUS[0]}"
