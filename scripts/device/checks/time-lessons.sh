#!/usr/bin/env bash
# Every lesson kernel's time on the card, and ncu's why (L1 hits, DRAM bytes, occupancy, stalls).
# On the device machine, from the repository root, with .devbin/haloscope: every lesson
# kernel's time on the card (our GPU run: CUDA events over the contract's 100 launches, the
# card's copy bandwidth measured by the worker) and, for the 2D and 3D starters and
# solutions, why a kernel with fewer sectors can run slower: ncu's L1 hit rate, DRAM bytes,
# achieved occupancy and the warps' stall reasons at the barrier. Writes $OUT/time.log and
# $OUT/time-runs.tgz. The 2D lesson's timing variants (loads_first, async_tile, loop_fill,
# sides_from_cache: what a learner can change to make the tile faster) get both.
# LESSONS="..." and NCU="lesson:kernel ..." narrow the two lists.
set -uo pipefail
OUT="${OUT:-/tmp/time-lessons}"
W=/tmp/time-lessons
rm -rf "$W"
mkdir -p "$W" "$OUT"
BIN="$PWD/.devbin/haloscope"
export HALOSCOPE_WORKER_EXE="$BIN"
export HALOSCOPE_RUSTC="$PWD/scripts/device/replay-rustc.sh"
exec > >(tee "$OUT/time.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
for lesson in ${LESSONS:-$(ls lessons)}; do
    for kernel in kernels/"$lesson"/*.cu; do
        name="$lesson-$(basename "$kernel" .cu)"
        timeout 120 "$BIN" run --lesson "$lesson" --kernel "$kernel" --backend gpu --json --seed 7 > "$W/$name.json" 2> "$W/$name.err"
        python3 - "$W/$name.json" "$kernel" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except ValueError:
    print(f"{sys.argv[2]}: no report"); sys.exit()
t = r.get("timing") or {}
p = r.get("profile") or {}
print(f"{sys.argv[2]}\t{r.get('verdict')}\tsectors {p.get('sectors')}\tmedian {t.get('median_us')} us"
      f"\tmin {t.get('min_us')}\tmax {t.get('max_us')}\t{t.get('effective_gbps')} GB/s\tcopy {t.get('copy_gbps')} GB/s")
PY
    done
done
metrics=l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_lg_throttle.ratio,gpu__time_duration.sum,smsp__sass_sectors_mem_global.sum
NCU_DEFAULT="stencil-2d:starter stencil-2d:solution stencil-2d:loads_first stencil-2d:async_tile stencil-2d:loop_fill
stencil-2d:sides_from_cache stencil-3d:starter stencil-3d:solution stencil-3d-registers:solution stencil-2d-cluster:solution"
for entry in ${NCU:-$NCU_DEFAULT}; do
    lesson="${entry%%:*}"
    kernel="kernels/$lesson/${entry#*:}.cu"
    echo "== ncu $kernel"
    timeout 180 ncu --clock-control none --metrics "$metrics" --print-units base --csv \
        "$BIN" launch --lesson "$lesson" --kernel "$kernel" --count 3 --seed 7 > "$W/ncu-$lesson-${entry#*:}.csv" 2>&1
    grep -E 'hit_rate|dram__bytes|warps_active|stalled|duration|sectors_mem' "$W/ncu-$lesson-${entry#*:}.csv" \
        | awk -F'","' '{print $(NF-2), $NF}' | tr -d '"' | sort | uniq -c | head -40
done
tar czf "$OUT/time-runs.tgz" -C "$W" .
echo "== done"
