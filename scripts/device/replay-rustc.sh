#!/usr/bin/env bash
# Stands in for rustc on the device machine, which has no Rust toolchain: it answers the
# version and target queries, and for a kernel build copies the PTX that the real rustc made
# here for the same kernel source (scripts/device/build-devbin.sh puts it in .devbin/rust-ptx,
# named by the source's sha256). The device checks that run Rust kernels set HALOSCOPE_RUSTC to it.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
case "${1:-}" in
    --version) echo "rustc 1.95.0 (replayed from the build machine)"; exit 0 ;;
    --print) echo "nvptx64-nvidia-cuda"; exit 0 ;;
esac
out=""
prev=""
for a in "$@"; do
    [ "$prev" = "-o" ] && out="$a"
    prev="$a"
done
kernel=$(ls *.rs | grep -v -e '^haloscope_root.rs$' -e '^gpu.rs$' | head -1)
sum=$(sha256sum "$kernel" | cut -d' ' -f1)
ptx="$here/.devbin/rust-ptx/$sum.ptx"
if [ ! -f "$ptx" ]; then
    echo '{"$message_type":"diagnostic","message":"no PTX was prepared for this kernel on the build machine","level":"error","spans":[],"rendered":""}' >&2
    exit 1
fi
cp "$ptx" "$out"
