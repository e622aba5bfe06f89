#!/usr/bin/env bash
# Runs on the lent GPU machine (see docs/measurements.md), from the repository root, with the
# release binaries carried in .devbin/ (scripts/build-devbin.sh makes them here).
#
# For every kernel in kernels/: our GPU run (CUPTI sectors, verification, timing), ncu's
# smsp__sass_sectors_mem_global.sum on plain launches of the same kernel, and the emulator;
# then the GPU tests, and an end-to-end timing. Writes $OUT/gpu-check.json and a log.
set -uo pipefail
OUT="${OUT:-/tmp/gpu-check}"
mkdir -p "$OUT"
BIN="$PWD/.devbin/haloscope"
export HALOSCOPE_WORKER_EXE="$BIN"
# No Rust toolchain on the device machine: replay the PTX rustc made on the build machine.
export HALOSCOPE_RUSTC="$PWD/scripts/replay-rustc.sh"
exec > >(tee "$OUT/gpu-check.log") 2>&1

echo "== machine"
date -u
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
ncu --version | tail -1
"$BIN" doctor

RESULTS="$OUT/runs.jsonl"
: > "$RESULTS"
for lesson_dir in kernels/*/; do
    lesson=$(basename "$lesson_dir")
    [ -f "lessons/$lesson/lesson.toml" ] || continue
    for kernel in "$lesson_dir"*.cu "$lesson_dir"*.rs; do
        [ -f "$kernel" ] || continue
        # ONLY=.rs (a suffix) limits the run to some kernels.
        [ -n "${ONLY:-}" ] && [[ "$kernel" != *"$ONLY" ]] && continue
        echo "== $kernel"
        work=$(mktemp -d)
        "$BIN" run --lesson "$lesson" --kernel "$kernel" --backend gpu --json --seed 7 > "$work/gpu.json" 2> "$work/gpu.err"
        "$BIN" run --lesson "$lesson" --kernel "$kernel" --backend emu --json --seed 7 > "$work/emu.json" 2> "$work/emu.err"
        ncu --clock-control none --metrics smsp__sass_sectors_mem_global.sum --print-units base --csv \
            "$BIN" launch --lesson "$lesson" --kernel "$kernel" --count 1 > "$work/ncu.csv" 2>&1
        python3 - "$lesson" "$kernel" "$work" <<'PY' >> "$RESULTS"
import csv, json, sys
lesson, kernel, work = sys.argv[1:4]
def load(name):
    text = open(f"{work}/{name}.json").read()
    try:
        return json.loads(text)
    except Exception as e:
        return {"error": f"{e}: {text[-500:]} {open(f'{work}/{name}.err').read()[-1500:]}"}
ncu_text = open(f"{work}/ncu.csv").read()
ncu = None
for r in csv.reader(ncu_text.splitlines()):
    if len(r) > 5 and r[-3] == "smsp__sass_sectors_mem_global.sum":
        ncu = int(float(r[-1].replace(",", "")))
print(json.dumps({"lesson": lesson, "kernel": kernel, "gpu": load("gpu"), "emu": load("emu"),
                  "ncu_per_launch": ncu, "ncu_tail": ncu_text[-800:] if ncu is None else None}))
PY
        rm -rf "$work"
        tail -1 "$RESULTS" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
g, e = r["gpu"], r["emu"]
print("  gpu:", g.get("verdict"), g.get("headline", g.get("error")))
print("  emu:", e.get("verdict"), e.get("headline", e.get("error")))
print("  ncu per launch:", r["ncu_per_launch"], r.get("ncu_tail") or "")'
    done
done

echo "== table"
python3 - "$RESULTS" <<'PY' | tee "$OUT/table.md"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| kernel | verdict (gpu) | CUPTI sectors (100 launches) | ncu x100 | emulator | emu/ncu | median us | GB/s | copy GB/s |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    g, e = r["gpu"], r["emu"]
    cupti = (g.get("profile") or {}).get("sectors")
    launches = (g.get("profile") or {}).get("launches") or 100
    ncu = r["ncu_per_launch"] * launches if r["ncu_per_launch"] is not None else None
    emu = (e.get("profile") or {}).get("sectors")
    t = g.get("timing") or {}
    ratio = f"{emu / ncu:.4f}" if emu and ncu else "-"
    fmt = lambda v: f"{v:,}" if isinstance(v, int) else "-"
    print(f"| {r['kernel']} | {g.get('verdict')} | {fmt(cupti)} | {fmt(ncu)} | {fmt(emu)} | {ratio} | "
          f"{t.get('median_us', 0):.1f} | {t.get('effective_gbps', 0):.0f} | {t.get('copy_gbps') or 0:.0f} |")
print()
for r in rows:
    stages = ", ".join(f"{s['stage']} {s['millis']:.0f} ms" for s in (r["gpu"].get("stages") or []))
    print(f"- {r['kernel']} (gpu): {stages}")
PY

echo "== per-line comparison, GPU (CUPTI) vs emulator: sectors, loads/stores, ideal, lanes"
python3 - "$RESULTS" <<'PY' | tee "$OUT/per-line.md"
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    g, e = (r["gpu"].get("profile") or {}), (r["emu"].get("profile") or {})
    if not g or not e:
        continue
    print(f"{r['kernel']}: gpu loads {g['load_sectors']:,} stores {g['store_sectors']:,} ideal {g['ideal_sectors']:,} lanes {g['average_active_lanes']:.2f}"
          f" | emu loads {e['load_sectors']:,} stores {e['store_sectors']:,} ideal {e['ideal_sectors']:,}")
PY

echo "== CUPTI raw records (stores check)"
HALOSCOPE_CUPTI_DEBUG="$OUT/cupti-debug.txt" "$BIN" run --lesson stencil-1d --backend gpu --json > /dev/null 2>&1
head -c 3000 "$OUT/cupti-debug.txt"; echo; grep -i "global" "$OUT/cupti-debug.txt" | head -40

[ -n "${ONLY:-}" ] && exit 0
echo "== end to end"
/usr/bin/time -f "wall %e s" "$BIN" run --lesson stencil-2d --backend gpu > /dev/null
/usr/bin/time -f "wall %e s" "$BIN" run --lesson stencil-3d --backend gpu > /dev/null

echo "== GPU tests"
for t in .devbin/test-*; do
    [ -x "$t" ] && HALOSCOPE_BIN="$BIN" HALOSCOPE_ROOT="$PWD" "$t" --nocapture --test-threads 1
done

echo "== compute-sanitizer racecheck on the 3D solution (n=33)"
compute-sanitizer --tool racecheck "$BIN" launch --lesson stencil-3d --kernel kernels/stencil-3d/solution.cu --n 33 2>&1 | tail -3
