#!/usr/bin/env bash
# Real screenshots of the app under Xvfb (software rendering): the README's picture and one
# per results tab. Needs xvfb (Debian: apt-get install xvfb xauth).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-docs}"
mkdir -p "$OUT"
cargo build --release --quiet
data=$(mktemp -d)
for tab in result diagram chart; do
    name="screenshot-$tab.png"
    [ "$tab" = result ] && name="screenshot.png"
    xvfb-run -a -s "-screen 0 1600x1000x24" ./target/release/haloscope gui --lesson stencil-2d --run \
        --tab "$tab" --data-dir "$data" --screenshot "$OUT/$name"
done
rm -rf "$data"
ls -la "$OUT"/screenshot*.png
