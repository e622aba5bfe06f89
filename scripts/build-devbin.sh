#!/usr/bin/env bash
# Builds, here, what scripts/gpu-check.sh needs on the device machine (which has no Rust
# toolchain) into .devbin/: the release binary, every integration-test executable that holds
# GPU tests (#[ignore = "needs an NVIDIA GPU"], run there with --ignored), and the PTX of every
# Rust kernel for scripts/replay-rustc.sh. Carry .devbin to the device machine.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release
rm -rf .devbin
mkdir -p .devbin
cp target/release/haloscope .devbin/haloscope

# The test executables cargo built, with the source file of each (same release profile).
cargo test --release --no-run --message-format=json 2> /dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        print(m["target"]["name"], m["target"]["src_path"], m["executable"], sep="\t")' > .devbin/tests.tsv
copied=0
while IFS=$'\t' read -r name src exe; do
    grep -q '#\[ignore = "needs an NVIDIA GPU"\]' "$src" || continue
    cp "$exe" ".devbin/test-$name"
    copied=$((copied + 1))
done < .devbin/tests.tsv
rm .devbin/tests.tsv
[ "$copied" -gt 0 ] || { echo "no test executable with GPU tests found" >&2; exit 1; }

# PTX of every Rust kernel, made by this machine's rustc, for scripts/replay-rustc.sh there.
mkdir -p .devbin/rust-ptx
for k in kernels/*/*.rs; do
    lesson=$(basename "$(dirname "$k")")
    [ -f "lessons/$lesson/lesson.toml" ] || continue
    sum=$(sha256sum "$k" | cut -d' ' -f1)
    ./target/release/haloscope compile --lesson "$lesson" --kernel "$k" --sm 90 -o ".devbin/rust-ptx/$sum.ptx"
done
# Strip debug info: what travels to the device machine is limited to 64 MiB in all.
strip .devbin/haloscope .devbin/test-*
ls -la .devbin
size=$(du -sm .devbin | cut -f1)
echo ".devbin: ${size} MiB (the working tree and .devbin travel together, 64 MiB at most)"
