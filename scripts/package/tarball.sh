#!/usr/bin/env bash
# Builds the portable Linux tarball: haloscope-<version>-<arch>-linux.tar.gz holding the same
# files as the Debian package (bin/, share/) plus install.sh, which copies them under ~/.local.
#   NO_BUILD=1  use target/release/haloscope as it is
#   OUT=<dir>   where the tarball goes (default target/portable)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "${NO_BUILD:-0}" = 1 ] || cargo build --release
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
arch=$(uname -m)
name="haloscope-$version-$arch-linux"
out="${OUT:-target/portable}"
stage="$out/$name"
rm -rf "$stage" && mkdir -p "$stage/bin" "$stage/share/applications" "$stage/share/haloscope" "$stage/share/doc/haloscope"
cp target/release/haloscope "$stage/bin/"
strip "$stage/bin/haloscope"
cp packaging/linux/haloscope.desktop "$stage/share/applications/"
for size in 16 32 48 64 128 256 512; do
    mkdir -p "$stage/share/icons/hicolor/${size}x${size}/apps"
    cp "icons/haloscope-$size.png" "$stage/share/icons/hicolor/${size}x${size}/apps/haloscope.png"
done
mkdir -p "$stage/share/icons/hicolor/scalable/apps"
cp icons/haloscope.svg "$stage/share/icons/hicolor/scalable/apps/haloscope.svg"
cp -r lessons kernels "$stage/share/haloscope/"
cp README.md docs/install.md "$stage/share/doc/haloscope/"
cp packaging/linux/install.sh "$stage/install.sh"
chmod 755 "$stage/install.sh" "$stage/bin/haloscope"
tar -czf "$out/$name.tar.gz" -C "$out" "$name"
rm -rf "$stage"
ls "$out/$name.tar.gz"
