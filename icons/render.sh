#!/usr/bin/env bash
# Regenerate the PNG app icons from haloscope.svg (needs: pip install cairosvg).
set -euo pipefail
cd "$(dirname "$0")"
for size in 16 32 48 64 128 256 512; do
  python3 -c 'import sys, cairosvg; cairosvg.svg2png(url=sys.argv[1], write_to=sys.argv[2], output_width=int(sys.argv[3]), output_height=int(sys.argv[3]))' \
    haloscope.svg "haloscope-${size}.png" "${size}"
done
