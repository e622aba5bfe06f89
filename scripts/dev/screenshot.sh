#!/usr/bin/env bash
# Real screenshots of the app under Xvfb (software rendering): the README's picture and one
# per results tab (the 2D solution for the replay, heat map and comparison with the starter),
# plus presenter mode. Needs xvfb (Debian: apt-get install xvfb xauth).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT="${1:-docs}"
mkdir -p "$OUT"
cargo build --release --quiet
shot() { # name tab kernel [extra args]
    local name=$1 tab=$2 kernel=$3
    shift 3
    local data
    data=$(mktemp -d)
    xvfb-run -a -s "-screen 0 1600x1000x24" env HALOSCOPE_WINDOW=1500x900 ./target/release/haloscope gui \
        --lesson stencil-2d --run --tab "$tab" --data-dir "$data" --open "$kernel" --screenshot "$OUT/$name" "$@"
    rm -rf "$data"
}
shot screenshot.png result kernels/stencil-2d/starter.cu
# The replay just after the barrier: every warp has written its rows of the tile.
shot screenshot-diagram.png diagram kernels/stencil-2d/solution.cu --replay-step 50
shot screenshot-heatmap.png heatmap kernels/stencil-2d/solution.cu
shot screenshot-compare.png compare kernels/stencil-2d/solution.cu
shot screenshot-chart.png chart kernels/stencil-2d/starter.cu
# Presenter mode during the staging: a side-column load (one lane per sector).
shot screenshot-presenter.png diagram kernels/stencil-2d/solution.cu --present --replay-step 30
ls -la "$OUT"/screenshot*.png
