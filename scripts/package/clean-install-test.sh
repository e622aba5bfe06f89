#!/usr/bin/env bash
# The Debian package on a clean Debian 12, as a learner gets it: a minimal bookworm made here
# with debootstrap, `apt install ./haloscope_*.deb`, then as an ordinary user:
#   1. `haloscope run --lesson stencil-2d` passes (NVRTC is fetched from PyPI on this first use),
#   2. `haloscope` opens under Xvfb, runs the lesson with a learner's file opened into the editor
#      (so a draft is autosaved) and saves a screenshot,
#   3. `apt remove haloscope` removes the program and leaves the learner's drafts in place.
# Prints the package size, install time and time to the first frame; exit status 0 = all passed.
#
# Needs root (chroot, mounts), debootstrap, and network to a Debian mirror and to PyPI.
#   DEB=<file>    the package (default: the newest target/debian/haloscope_*.deb)
#   MIRROR=<url>  Debian mirror (default http://deb.debian.org/debian)
#   OUT=<dir>     screenshot, logs and timings (default target/clean-install)
#   KEEP=1        leave the chroot in place afterwards for a look
# The pristine bookworm is cached as target/clean-install/bookworm-minbase.tar.gz, so a second
# run starts from the same clean system in seconds.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
out="${OUT:-$repo/target/clean-install}"
mirror="${MIRROR:-http://deb.debian.org/debian}"
deb="${DEB:-$(ls -t target/debian/haloscope_*.deb 2>/dev/null | head -1)}"
[ -n "$deb" ] && [ -f "$deb" ] || { echo "clean-install-test: no package; run scripts/package/deb.sh first" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "clean-install-test: needs root (chroot)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "clean-install-test: needs debootstrap (apt install debootstrap)" >&2; exit 1; }
mkdir -p "$out"
pristine="$out/bookworm-minbase.tar.gz"
root=$(mktemp -d /var/tmp/haloscope-clean.XXXXXX)

cleanup() {
    for m in dev/pts dev proc sys; do umount -l "$root/$m" 2>/dev/null || true; done
    if [ "${KEEP:-0}" = 1 ]; then echo "clean-install-test: chroot kept at $root"; else rm -rf "$root"; fi
}
trap cleanup EXIT

if [ ! -f "$pristine" ]; then
    echo "== debootstrap bookworm (minbase) from $mirror"
    debootstrap --variant=minbase bookworm "$root" "$mirror" >"$out/debootstrap.log" 2>&1 ||
        { tail -20 "$out/debootstrap.log"; exit 1; }
    tar -czf "$pristine" -C "$root" .
else
    tar -xzf "$pristine" -C "$root"
fi

chmod 755 "$root" # mktemp (and the cached tar of it) make it 0700, and it is the learner's /
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# Extra certificate authorities of this network (a sandbox's HTTPS proxy, say): without them
# the first-use NVRTC download cannot verify PyPI here. On an ordinary network there are none.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
fi
cp "$deb" "$root/tmp/"
debname=$(basename "$deb")
cp kernels/stencil-2d/solution.cu "$root/tmp/learner.cu"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }
as_learner() { chroot "$root" /usr/sbin/runuser -u learner -- /usr/bin/env -i PATH=/usr/bin:/bin HOME=/home/learner LANG=C.UTF-8 "$@"; }

size_kb=$(( $(stat -c %s "$deb") / 1024 ))
echo "== package $debname: $size_kb KiB"
in_root apt-get update -q >"$out/apt-update.log" 2>&1 || { tail "$out/apt-update.log"; exit 1; }
start=$(date +%s.%N)
in_root apt-get install -y -q "/tmp/$debname" >"$out/apt-install.log" 2>&1 || { tail -30 "$out/apt-install.log"; exit 1; }
install_s=$(echo "$(date +%s.%N) - $start" | bc)
new_pkgs=$(grep -c '^Setting up ' "$out/apt-install.log" || true)
echo "== apt install ./$debname: ${install_s} s, $new_pkgs packages set up (dependencies fetched from the mirror)"
in_root dpkg -s haloscope | grep -E '^(Installed-Size|Depends)' | tee "$out/dpkg-status.txt"
test -x "$root/usr/bin/haloscope"
test -f "$root/usr/share/applications/haloscope.desktop"
test -f "$root/usr/share/icons/hicolor/256x256/apps/haloscope.png"
in_root useradd -m learner

echo "== as learner: haloscope run --lesson stencil-2d (first use: NVRTC from PyPI)"
# The starter is correct but over the gate by design (exit 10); the solution passes (exit 0).
start=$(date +%s.%N)
rc=0; as_learner haloscope run --lesson stencil-2d --json >"$out/run-starter.json" 2>"$out/run-starter.stderr" || rc=$?
run_s=$(echo "$(date +%s.%N) - $start" | bc)
grep -q '"verdict": *"gate-fail"' "$out/run-starter.json" && [ "$rc" = 10 ] ||
    { echo "the starter did not run as the lesson says (exit $rc):"; tail -20 "$out/run-starter.stderr"; head -c 3000 "$out/run-starter.json"; exit 1; }
sed 's/^/   /' "$out/run-starter.stderr"
echo "   starter: every element correct, over the gate as the lesson intends; ${run_s} s with the set-up"
solution=/usr/share/haloscope/kernels/stencil-2d/solution.cu
start=$(date +%s.%N)
as_learner haloscope run --lesson stencil-2d --kernel "$solution" --json >"$out/run-solution.json" 2>"$out/run-solution.stderr" ||
    { echo "the solution did not pass:"; tail -20 "$out/run-solution.stderr"; head -c 3000 "$out/run-solution.json"; exit 1; }
grep -q '"verdict": *"pass"' "$out/run-solution.json" || { echo "no pass verdict"; exit 1; }
echo "   solution: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["headline"])' "$out/run-solution.json" 2>/dev/null || echo passed) ($(echo "$(date +%s.%N) - $start" | bc) s)"

echo "== as learner: haloscope opens under Xvfb (apt install xvfb for the test only)"
in_root apt-get install -y -q --no-install-recommends xvfb xauth >"$out/apt-xvfb.log" 2>&1 || { tail "$out/apt-xvfb.log"; exit 1; }
as_learner xvfb-run -a -s "-screen 0 1600x1000x24" haloscope gui --lesson stencil-2d \
    --open /tmp/learner.cu --run --screenshot /tmp/clean-install.png >"$out/gui.log" 2>&1 ||
    { echo "the window did not open:"; tail -20 "$out/gui.log"; exit 1; }
cp "$root/tmp/clean-install.png" "$out/"
grep -o 'first frame shown [0-9]* ms' "$out/gui.log" | sed 's/^/   /'
draft="$root/home/learner/.local/share/haloscope/drafts/stencil-2d.cu"
[ -f "$draft" ] || { echo "no draft was autosaved at ${draft#"$root"}"; exit 1; }
echo "   draft autosaved: ${draft#"$root"}"

echo "== apt remove haloscope"
in_root apt-get remove -y -q haloscope >"$out/apt-remove.log" 2>&1 || { tail "$out/apt-remove.log"; exit 1; }
[ ! -e "$root/usr/bin/haloscope" ] || { echo "/usr/bin/haloscope is still there"; exit 1; }
[ ! -e "$root/usr/share/haloscope" ] || { echo "/usr/share/haloscope is still there"; exit 1; }
cmp -s "$draft" kernels/stencil-2d/solution.cu || { echo "the learner's draft changed or is gone"; exit 1; }
echo "   program gone, draft kept: ${draft#"$root"}"
echo "clean-install-test: all passed (screenshot $out/clean-install.png)"
