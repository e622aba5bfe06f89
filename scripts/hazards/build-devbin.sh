#!/usr/bin/env bash
# Builds the release binary here and puts a stripped copy in .devbin/ for the device machine
# (which has no Rust toolchain): what scripts/hazards/device-sanitize.sh runs there.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release
mkdir -p .devbin
cp target/release/haloscope .devbin/haloscope
strip .devbin/haloscope
ls -la .devbin/haloscope
