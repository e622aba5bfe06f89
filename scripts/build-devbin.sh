#!/usr/bin/env bash
# Builds the release binary and the GPU test binary into .devbin/ for the device machine.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release
mkdir -p .devbin
cp target/release/haloscope .devbin/haloscope
test_bin=$(cargo test --release --test gpu --no-run --message-format=json 2>/dev/null \
    | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "gpu":
        print(m["executable"])')
cp "$test_bin" .devbin/test-gpu
# PTX of every Rust kernel, made by this machine's rustc, for scripts/replay-rustc.sh there.
mkdir -p .devbin/rust-ptx
for k in kernels/*/*.rs; do
    lesson=$(basename "$(dirname "$k")")
    [ -f "lessons/$lesson/lesson.toml" ] || continue
    sum=$(sha256sum "$k" | cut -d' ' -f1)
    ./target/release/haloscope compile --lesson "$lesson" --kernel "$k" --sm 90 -o ".devbin/rust-ptx/$sum.ptx"
done
# Strip debug info: what travels to the device machine is limited to 64 MiB.
strip .devbin/haloscope .devbin/test-gpu
ls -la .devbin
