#!/usr/bin/env bash
# Installs the portable haloscope under ~/.local (or $PREFIX): the program, the course, the
# menu entry and the icons. Run it from the unpacked folder. Uninstall: `./install.sh --remove`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
prefix="${PREFIX:-$HOME/.local}"
files=(bin/haloscope share/applications/haloscope.desktop share/haloscope share/doc/haloscope)
for size in 16x16 32x32 48x48 64x64 128x128 256x256 512x512; do
    files+=("share/icons/hicolor/$size/apps/haloscope.png")
done
files+=(share/icons/hicolor/scalable/apps/haloscope.svg)
if [ "${1:-}" = --remove ]; then
    for f in "${files[@]}"; do rm -rf "${prefix:?}/$f"; done
    echo "haloscope removed from $prefix (drafts in ~/.local/share/haloscope are kept)"
    exit 0
fi
for f in "${files[@]}"; do
    mkdir -p "$prefix/$(dirname "$f")"
    rm -rf "${prefix:?}/$f"
    cp -r "$here/$f" "$prefix/$f"
done
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$prefix/share/applications" || true
echo "haloscope installed in $prefix/bin (in the applications menu too)"
case ":$PATH:" in *":$prefix/bin:"*) ;; *) echo "add $prefix/bin to PATH to start it as \`haloscope\`" ;; esac
