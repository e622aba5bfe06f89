#!/usr/bin/env bash
# Frame time of the real app under Xvfb with software rendering (Mesa llvmpipe): a 500-line
# kernel in the editor, the diagram shown after a run, 600 frames repainted back to back.
# Also the time from process start to the first frame. Prints JSON lines.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet
big=$(mktemp --suffix=.cu)
# 500 lines: the 2D solution followed by commented copies of itself.
python3 - "$big" <<'PY'
import sys
src = open("kernels/stencil-2d/solution.cu").read().splitlines()
lines = list(src)
while len(lines) < 500:
    lines += ["// " + l for l in src]
open(sys.argv[1], "w").write("\n".join(lines[:500]) + "\n")
PY
echo "{\"editor_lines\": $(wc -l < "$big")}"
data=$(mktemp -d)
for tab in diagram result; do
    xvfb-run -a -s "-screen 0 1600x1000x24" env LIBGL_ALWAYS_SOFTWARE=1 ./target/release/haloscope gui --lesson stencil-2d \
        --open "$big" --run --tab "$tab" --data-dir "$data" --frame-bench 600 2>/dev/null | sed "s/^{/{\"tab\": \"$tab\", /"
done
# The block replay playing at 60 steps/s (a new picture every frame), then the heat map.
xvfb-run -a -s "-screen 0 1600x1000x24" env LIBGL_ALWAYS_SOFTWARE=1 ./target/release/haloscope gui --lesson stencil-2d \
    --open "$big" --run --tab diagram --play --data-dir "$data" --frame-bench 600 2>/dev/null | sed "s/^{/{\"tab\": \"replay playing\", /"
xvfb-run -a -s "-screen 0 1600x1000x24" env LIBGL_ALWAYS_SOFTWARE=1 ./target/release/haloscope gui --lesson stencil-2d \
    --open "$big" --run --tab heatmap --data-dir "$data" --frame-bench 600 2>/dev/null | sed "s/^{/{\"tab\": \"heatmap\", /"
# Launch to first frame: the app reports when its first frame has been presented, measured
# from the start of the process.
xvfb-run -a -s "-screen 0 1600x1000x24" ./target/release/haloscope gui --lesson stencil-2d --data-dir "$data" \
    --frame-bench 3 2>&1 >/dev/null | grep -m1 "first frame" || true
rm -rf "$data" "$big"
