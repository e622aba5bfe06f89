#!/usr/bin/env bash
# Builds, here, what the device checks (scripts/device/run.sh) need on the device machine,
# which has no Rust toolchain, into .devbin/: the release binary, every integration-test
# executable that holds GPU tests (#[ignore = "needs an NVIDIA GPU"], run there with
# --ignored by the gpu-tests check), and the PTX of every Rust kernel for
# scripts/device/replay-rustc.sh. Everything is stripped. Carry .devbin to the device machine.
#   bash scripts/device/build-devbin.sh [--binary-only]
# --binary-only (or BINARY_ONLY=1): only the stripped release binary, leaving the rest of
# .devbin as it is (enough for the checks that never run a Rust kernel or a test executable:
# hazard-sanitizer, non-root-profiling, nvrtc12, corpus, ...).
set -euo pipefail
cd "$(dirname "$0")/../.."
BINARY_ONLY="${BINARY_ONLY:-0}"
for arg in "$@"; do
    case "$arg" in
        --binary-only) BINARY_ONLY=1 ;;
        *) echo "usage: $0 [--binary-only]" >&2; exit 2 ;;
    esac
done
cargo build --release
if [ "$BINARY_ONLY" = 1 ]; then
    mkdir -p .devbin
    cp target/release/haloscope .devbin/haloscope
    strip .devbin/haloscope
    ls -la .devbin/haloscope
    exit 0
fi
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

# PTX of every Rust kernel, made by this machine's rustc, for scripts/device/replay-rustc.sh there.
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
