#!/usr/bin/env bash
# The asynchronous-copy and cluster kernels on the GPU (CUPTI, ncu, compute-sanitizer), for the emulator.
# On the device machine, from the repository root, with .devbin carried
# (scripts/device/build-devbin.sh): the asynchronous-copy and cluster kernels of issue 40
# against the GPU's own figures.
#   1. per kernel: our GPU run (verdict, CUPTI sectors per line), ncu's
#      smsp__sass_sectors_mem_global.sum on one plain launch, and compute-sanitizer's four
#      tools on one launch at n = 33 (the emulator's side runs on the build machine:
#      python3 scripts/device/checks/compare-async-cluster.py $OUT/runs.tgz reads both);
#   2. the same for the fifth lesson's starter, solution and known-failing variants.
# KERNELS="lesson:path ..." overrides the list. Writes $OUT/check.log and $OUT/runs.tgz.
set -uo pipefail
OUT="${OUT:-/tmp/async-cluster}"
mkdir -p "$OUT/runs"
BIN="$PWD/.devbin/haloscope"
export HALOSCOPE_WORKER_EXE="$BIN"
# No Rust toolchain on the device machine: replay the PTX rustc made on the build machine
# (.devbin/rust-ptx, one file per kernel source's sha256).
export HALOSCOPE_RUSTC="$PWD/scripts/device/replay-rustc.sh"
exec > >(tee "$OUT/check.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ncu --version | tail -1
compute-sanitizer --version | tail -1
DEFAULT="stencil-2d:tests/learner/async_pipeline_primitives.cu stencil-2d:tests/learner/async_cuda_pipeline.cu
stencil-2d:tests/learner/async_cg_memcpy.cu stencil-2d:tests/learner/async_cuda_barrier.cu
stencil-2d:tests/learner/mbarrier_ptx_2d.cu stencil-2d:tests/learner/bulk_rows_2d.cu
stencil-2d:tests/learner/async_no_wait.cu stencil-1d:tests/learner/bulk_copy_1d.cu
stencil-3d:tests/learner/async_plane_3d.cu
stencil-2d-cluster:tests/learner/cluster_ptx.cu stencil-2d-cluster:tests/learner/cluster_dims_generic.cu
stencil-2d-cluster:kernels/stencil-2d-cluster/starter.cu stencil-2d-cluster:kernels/stencil-2d-cluster/solution.cu
stencil-2d-cluster:kernels/stencil-2d-cluster/no_cluster_sync.cu
stencil-2d-cluster:kernels/stencil-2d-cluster/exit_before_neighbours.cu
stencil-2d-cluster:kernels/stencil-2d-cluster/global_sides.cu
stencil-2d-cluster:kernels/stencil-2d-cluster/starter.rs stencil-2d-cluster:kernels/stencil-2d-cluster/solution.rs"
for entry in ${KERNELS:-$DEFAULT}; do
    lesson="${entry%%:*}"
    kernel="${entry#*:}"
    name="$(basename "$(dirname "$kernel")")-$(basename "$kernel" | tr . _)"
    dir="$OUT/runs/$name"
    mkdir -p "$dir"
    echo "== $kernel ($lesson)"
    timeout 300 "$BIN" run --lesson "$lesson" --kernel "$kernel" --backend gpu --json --seed 7 > "$dir/gpu.json" 2> "$dir/gpu.err"
    echo "gpu exit $?"
    python3 - "$dir/gpu.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("  no report:", e); sys.exit()
p = r.get("profile") or {}
print("  verdict", r.get("verdict"), "sectors", p.get("sectors"), "|", r.get("headline", "")[:300])
PY
    timeout 300 ncu --clock-control none --metrics smsp__sass_sectors_mem_global.sum --print-units base --csv \
        "$BIN" launch --lesson "$lesson" --kernel "$kernel" --count 1 --seed 7 > "$dir/ncu.csv" 2>&1
    echo "ncu exit $?: $(grep -h 'smsp__sass_sectors_mem_global.sum' "$dir/ncu.csv" | tail -1 | awk -F'","' '{print $NF}')"
    # The four tools at once (separate processes on one GPU), for the kernels whose
    # hazards (or their absence) the emulator's checks are compared on: SANITIZE lists them
    # by file name (the hazard corpus, scripts/hazards/, covers the generated ones).
    case " ${SANITIZE:-async_cuda_barrier.cu async_no_wait.cu bulk_rows_2d.cu cluster_dims_generic.cu solution.cu no_cluster_sync.cu exit_before_neighbours.cu} " in
        *" $(basename "$kernel") "*) ;;
        *) continue ;;
    esac
    tools=()
    for tool in memcheck racecheck initcheck synccheck; do
        (
            extra=""
            [ "$tool" = initcheck ] && extra="--initcheck-address-space all"
            timeout 300 compute-sanitizer --tool "$tool" $extra --print-limit 3 \
                "$BIN" launch --lesson "$lesson" --kernel "$kernel" --n 33 --count 1 --seed 7 > "$dir/$tool.txt" 2>&1
            echo $? > "$dir/$tool.exit"
        ) &
        tools+=($!)
    done
    # (The four by their ids: a bare `wait` also waits for the log's tee, which never ends.)
    wait "${tools[@]}"
    for tool in memcheck racecheck initcheck synccheck; do
        echo "  $tool exit $(cat "$dir/$tool.exit"): $(grep -c 'Potential\|Invalid\|Uninitialized\|Barrier\|Race\|hazard' "$dir/$tool.txt") lines; $(grep -m1 'ERROR SUMMARY' "$dir/$tool.txt")"
    done
done
tar czf "$OUT/runs.tgz" -C "$OUT" runs
echo "== done"
