#!/usr/bin/env bash
# The compiler view's answers for every lesson and learner kernel, from one haloscope binary:
# `compile --ptx --sass` (the PTX & SASS listing, its global-instruction marks) and, from
# `run --backend emu --json --seed 7`, the machine-code check, the moves and the accesses only
# the unoptimised build makes. Run it with the binary before and after a change to the
# compiler view and `diff -r` the two folders (issue 43: one decoder, same answers).
#   bash scripts/dev/compare-compiler-view.sh BIN OUTDIR
set -u
BIN=$(realpath "$1")
OUT=$2
mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
for k in kernels/*/*.cu tests/learner/*.cu; do
    lesson=$(sed -n '1s#^// lesson: *##p' "$k")
    lesson=${lesson:-$(basename "$(dirname "$k")")}
    [ -f "lessons/$lesson/lesson.toml" ] || continue
    name=$(echo "$k" | tr / _)
    timeout 120 "$BIN" compile --lesson "$lesson" --kernel "$k" --ptx --sass > "$OUT/$name.listing" 2>&1
    timeout 300 "$BIN" run --lesson "$lesson" --kernel "$k" --backend emu --json --seed 7 2> /dev/null | python3 -c '
import json, sys
try:
    r = json.load(sys.stdin)
except ValueError as e:
    print("no report", e)
    sys.exit()
p = r.get("profile") or {}
keep = {"machine_code": p.get("machine_code"), "moves": p.get("moves"),
        "unexecuted": r.get("unexecuted"), "verdict": r.get("verdict")}
print(json.dumps(keep, indent=1, sort_keys=True))' > "$OUT/$name.json"
done
echo "$(ls "$OUT" | wc -l) files in $OUT"
