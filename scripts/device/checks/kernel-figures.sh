#!/usr/bin/env bash
# Every lesson and learner kernel's figures on the GPU (CUPTI, ncu) against the emulator's.
# Runs on the lent GPU machine from the repository root, with the release binary, the GPU test
# binaries and the Rust kernels' PTX carried in .devbin/ (scripts/device/build-devbin.sh makes
# them here; the device machine has no Rust toolchain): `bash scripts/device/run.sh kernel-figures`.
#
# Steps (STEPS=kernels,tests,extras picks them; the default is kernels,extras):
# kernels: for every kernel in kernels/ (and tests/learner/, which name their lesson on line 1):
#    our GPU run (CUPTI sectors, verification, timing), ncu's smsp__sass_sectors_mem_global.sum
#    on one plain launch of the same kernel, and the emulator; compare-kernel-figures.py (beside
#    this script) then fails any kernel where CUPTI, ncu and the emulator disagree, unless
#    docs/known-differences.md lists that difference with its reason. KERNELS="..." names the
#    kernels instead (the learner-values check does).
# tests: the GPU tests (#[ignore = "needs an NVIDIA GPU"]): every .devbin/test-* with
#    --ignored, one test thread (TEST_THREADS), each executable capped at TESTS_S seconds
#    (default 900); FILTER=<name part> runs only the tests it names. The gpu-tests check is
#    this step alone.
# extras: the SASS of the 2D Rust kernels (docs/known-differences.md), CUPTI raw records,
#    end-to-end wall time and compute-sanitizer's racecheck.
#
# Exits 1 when any step failed (every step runs regardless and its exit status is kept; the
# summary at the end lists them), 0 when all passed. Writes $OUT/gpu-check.log, runs.jsonl,
# table.md and the step outputs.
#
# ONLY=<suffix> limits the kernels step to kernels whose path ends so (ONLY=.rs,
# ONLY=stencil-2d/starter.cu) and skips the other steps (all kernels take about 10 minutes:
# split them with ONLY=.cu / ONLY=.rs when one command's time is short).
set -euo pipefail
OUT="${OUT:-/tmp/gpu-check}"
mkdir -p "$OUT"
ROOT="$PWD"
HERE="$(cd "$(dirname "$0")" && pwd)"
BIN="$ROOT/.devbin/haloscope"
KNOWN="$ROOT/docs/known-differences.md"
if [ -n "${ONLY:-}" ]; then STEPS="${STEPS:-kernels}"; else STEPS="${STEPS:-kernels,extras}"; fi
export HALOSCOPE_WORKER_EXE="$BIN"
# No Rust toolchain on the device machine: replay the PTX rustc made on the build machine.
export HALOSCOPE_RUSTC="$ROOT/scripts/device/replay-rustc.sh"
exec > >(tee "$OUT/gpu-check.log") 2>&1
TEE_PID=$!
# finish CODE: lets tee write the whole log before the script exits.
finish() {
    exec >&- 2>&-
    wait "$TEE_PID" 2> /dev/null || true
    exit "$1"
}

# Anything outside a step that fails stops the script (set -e): say where.
trap 'echo "!! kernel-figures.sh stopped: line $LINENO exited $?"' ERR

FAILED=()
# step NAME CMD...: runs CMD, records a non-zero exit status as a failure of NAME.
step() {
    local name="$1"
    shift
    local rc=0
    "$@" || rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "!! FAILED (exit $rc): $name"
        FAILED+=("$name (exit $rc)")
    fi
    return 0
}
# expect CODES CMD...: CMD must exit with one of the space-separated CODES.
expect() {
    local codes="$1"
    shift
    local rc=0
    "$@" || rc=$?
    [[ " $codes " == *" $rc "* ]] && return 0
    echo "exit $rc, expected one of: $codes"
    return 1
}
has_step() { [[ ",$STEPS," == *",$1,"* ]]; }

tools=("$BIN" python3 nvidia-smi)
if has_step kernels; then tools+=(ncu); fi
for tool in "${tools[@]}"; do
    command -v "$tool" > /dev/null || { echo "missing: $tool (build .devbin with scripts/device/build-devbin.sh)"; finish 1; }
done

echo "== machine"
date -u
step nvidia-smi nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
if command -v ncu > /dev/null; then ncu --version | tail -1; fi
step doctor "$BIN" doctor

# kernel_lesson FILE: the lesson a kernel belongs to (its directory, or `// lesson: L`).
kernel_lesson() {
    case "$1" in
        kernels/*) basename "$(dirname "$1")" ;;
        *) sed -n '1s|^// lesson: *\([A-Za-z0-9_-]*\).*|\1|p' "$1" ;;
    esac
}

# One kernel: three runs into one JSON line of $RESULTS. Exit statuses are data here (a
# gate failure exits 10); the comparison judges them.
run_kernel() {
    local lesson="$1" kernel="$2" work gpu_exit=0 emu_exit=0 ncu_exit=0
    work=$(mktemp -d)
    timeout 300 "$BIN" run --lesson "$lesson" --kernel "$kernel" --backend gpu --json --seed 7 \
        > "$work/gpu.json" 2> "$work/gpu.err" || gpu_exit=$?
    timeout 300 "$BIN" run --lesson "$lesson" --kernel "$kernel" --backend emu --json --seed 7 \
        > "$work/emu.json" 2> "$work/emu.err" || emu_exit=$?
    timeout 300 ncu --clock-control none --metrics smsp__sass_sectors_mem_global.sum --print-units base --csv \
        "$BIN" launch --lesson "$lesson" --kernel "$kernel" --count 1 --seed 7 > "$work/ncu.csv" 2>&1 || ncu_exit=$?
    local rc=0
    python3 "$HERE/compare-kernel-figures.py" collect "$lesson" "$kernel" "$work" "$gpu_exit" "$emu_exit" "$ncu_exit" \
        >> "$RESULTS" || rc=$?
    # (errexit does not apply inside a function that step runs: check by hand.)
    rm -rf "$work"
    [ "$rc" -eq 0 ] || return "$rc"
    tail -1 "$RESULTS" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
g, e = r["gpu"], r["emu"]
print("  gpu:", r["gpu_exit"], g.get("verdict"), g.get("headline", g.get("error")))
print("  emu:", r["emu_exit"], e.get("verdict"), e.get("headline", e.get("error")))
print("  ncu per launch:", r["ncu_per_launch"], r.get("ncu_tail") or "")'
}

RESULTS="$OUT/runs.jsonl"
if has_step kernels; then
    : > "$RESULTS"
    for kernel in ${KERNELS:-kernels/*/*.cu kernels/*/*.rs tests/learner/*.cu}; do
        [ -f "$kernel" ] || continue
        [ -n "${ONLY:-}" ] && [[ "$kernel" != *"$ONLY" ]] && continue
        lesson=$(kernel_lesson "$kernel")
        [ -n "$lesson" ] && [ -f "lessons/$lesson/lesson.toml" ] || continue
        echo "== $kernel ($lesson)"
        step "collect $kernel" run_kernel "$lesson" "$kernel"
    done
    echo "== CUPTI vs ncu vs emulator (known differences: docs/known-differences.md)"
    step "compare CUPTI, ncu and the emulator" python3 "$HERE/compare-kernel-figures.py" compare "$RESULTS" "$KNOWN" --table "$OUT/table.md"
    python3 - "$RESULTS" <<'PY' | tee "$OUT/stages.md" || true
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    t = r["gpu"].get("timing") or {}
    stages = ", ".join(f"{s['stage']} {s['millis']:.0f} ms" for s in (r["gpu"].get("stages") or []))
    print(f"- {r['kernel']} (gpu): median {t.get('median_us', 0):.1f} us, {t.get('effective_gbps', 0):.0f} GB/s "
          f"(copy {t.get('copy_gbps') or 0:.0f}); {stages}")
PY
fi

if has_step tests; then
    echo "== GPU tests (--ignored)"
    found=0
    for t in .devbin/test-*; do
        [ -x "$t" ] || continue
        found=1
        echo "-- $t"
        start=$(date +%s)
        # shellcheck disable=SC2086 # FILTER is one name part, or none
        step "$(basename "$t") --ignored" env HALOSCOPE_BIN="$BIN" HALOSCOPE_ROOT="$ROOT" \
            timeout "${TESTS_S:-900}" "$t" --ignored --nocapture --test-threads "${TEST_THREADS:-1}" ${FILTER:-}
        echo "-- $t: $(($(date +%s) - start)) s"
    done
    [ "$found" = 1 ] || step "GPU test binaries in .devbin (run scripts/device/build-devbin.sh)" false
fi

if has_step extras; then
    echo "== SASS of the 2D Rust kernels (docs/known-differences.md: how the border branch is compiled)"
    for k in kernels/stencil-2d/starter.rs kernels/stencil-2d/solution.rs; do
        # Informational (the comparison above is the check): no ptxas, no dump.
        command -v ptxas > /dev/null && command -v cuobjdump > /dev/null || { echo "no ptxas/cuobjdump: SASS not dumped"; break; }
        sum=$(sha256sum "$k" | cut -d' ' -f1)
        name=$(basename "$k" .rs)
        step "ptxas $k" ptxas -arch=sm_90 ".devbin/rust-ptx/$sum.ptx" -o "$OUT/rust-2d-$name.cubin"
        if [ -f "$OUT/rust-2d-$name.cubin" ]; then
            step "cuobjdump $k" cuobjdump -sass "$OUT/rust-2d-$name.cubin" > "$OUT/rust-2d-$name.sass"
            rm -f "$OUT/rust-2d-$name.cubin"
            grep -nE "BRA|BSSY|BSYNC|STG|LDG|ISETP|PLOP3|EXIT" "$OUT/rust-2d-$name.sass" | head -40 || true
        fi
    done

    echo "== CUPTI raw records (stores check)"
    step "CUPTI debug run" expect "0 10" env HALOSCOPE_CUPTI_DEBUG="$OUT/cupti-debug.txt" \
        "$BIN" run --lesson stencil-1d --backend gpu --json > /dev/null
    if [ -f "$OUT/cupti-debug.txt" ]; then
        head -c 3000 "$OUT/cupti-debug.txt"
        echo
        grep -i "global" "$OUT/cupti-debug.txt" | head -40 || true
    fi

    echo "== end to end (starters: exit 10, gate failure)"
    step "end to end 2D" expect 10 /usr/bin/time -f "wall %e s" "$BIN" run --lesson stencil-2d --backend gpu > /dev/null
    step "end to end 3D" expect 10 /usr/bin/time -f "wall %e s" "$BIN" run --lesson stencil-3d --backend gpu > /dev/null

    echo "== compute-sanitizer racecheck on the 3D solution (n=33)"
    step "racecheck" compute-sanitizer --tool racecheck --error-exitcode 3 \
        "$BIN" launch --lesson stencil-3d --kernel kernels/stencil-3d/solution.cu --n 33 > "$OUT/racecheck.txt" 2>&1
    tail -3 "$OUT/racecheck.txt"
fi

echo "== summary"
if [ "${#FAILED[@]}" -eq 0 ]; then
    echo "all steps passed ($STEPS)"
    finish 0
fi
printf 'FAILED: %s\n' "${FAILED[@]}"
finish 1
