#!/usr/bin/env bash
# `cargo install --locked --git <this repo>` as a learner with Rust would run it, then, with the
# source checkout cargo made deleted and an empty home: the course must come out of the binary,
# NVRTC must be fetched on first use, a lesson must run and the window must open (Xvfb).
# Installs this checkout's HEAD (commit first). Needs network to crates.io and PyPI.
#   CARGO_TARGET_DIR  where cargo builds (default target/cargo-install: a second run is quick)
#   OUT=<dir>         logs and screenshot (default target/cargo-install-test)
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
out="${OUT:-$repo/target/cargo-install-test}"
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cargo_home="${CARGO_HOME:-$HOME/.cargo}"

echo "== cargo install --locked --git file://$repo (HEAD $(git rev-parse --short HEAD))"
start=$(date +%s.%N)
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target/cargo-install}" \
    cargo install --locked --git "file://$repo" --root "$work/root" haloscope >"$out/install.log" 2>&1 ||
    { tail -30 "$out/install.log"; exit 1; }
echo "   $(echo "$(date +%s.%N) - $start" | bc) s"
# The source checkout cargo made for the build: gone, as after a cache clean, so nothing can
# be read from it.
checkout=$(grep -l '^name = "haloscope"' "$cargo_home"/git/checkouts/*/*/Cargo.toml | xargs -r ls -t | head -1)
[ -n "$checkout" ] || { echo "cannot find cargo's checkout of haloscope"; exit 1; }
rm -rf "$(dirname "$checkout")"

bin="$work/root/bin/haloscope"
mkdir -p "$work/home" "$work/cwd"
learner() { (cd "$work/cwd" && env -i PATH=/usr/bin:/bin HOME="$work/home" LANG=C.UTF-8 "$@"); }

echo "== haloscope lessons (course from the binary)"
learner "$bin" lessons | tee "$out/lessons.txt" | sed 's/^/   /'
echo "== haloscope run --lesson stencil-2d (first use: NVRTC from PyPI)"
rc=0; learner "$bin" run --lesson stencil-2d --json >"$out/run-starter.json" 2>"$out/run-starter.stderr" || rc=$?
sed 's/^/   /' "$out/run-starter.stderr"
python3 - "$out/run-starter.json" "$rc" "$work/home" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
assert sys.argv[2] == "10" and report["verdict"] == "gate-fail", (sys.argv[2], report["headline"])
assert report["kernel_file"].startswith(sys.argv[3] + "/.local/share/haloscope/"), report["kernel_file"]
print("   starter from", report["kernel_file"].replace(sys.argv[3], "~"), "->", report["headline"])
EOF
solution="$work/home/.local/share/haloscope/course/kernels/stencil-2d/solution.cu"
[ -f "$solution" ] || solution=$(find "$work/home/.local/share/haloscope" -path '*stencil-2d/solution.cu' | head -1)
learner "$bin" run --lesson stencil-2d --kernel "$solution" --json >"$out/run-solution.json" 2>"$out/run-solution.stderr" ||
    { echo "the solution did not pass"; tail "$out/run-solution.stderr"; exit 1; }
echo "   solution: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["headline"])' "$out/run-solution.json")"

echo "== the window (Xvfb)"
learner xvfb-run -a -s "-screen 0 1600x1000x24" "$bin" gui --lesson stencil-2d --run \
    --screenshot "$out/cargo-install.png" >"$out/gui.log" 2>&1 || { tail -20 "$out/gui.log"; exit 1; }
grep -o 'first frame shown [0-9]* ms' "$out/gui.log" | sed 's/^/   /'
echo "cargo-install-test: all passed (screenshot $out/cargo-install.png)"
