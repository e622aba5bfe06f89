#!/usr/bin/env bash
# What Hopper's async copies and clusters do, asked of ncu and compute-sanitizer on a probe (nvcc).
# On the device machine, from the repository root: builds probe-async-cluster.cu (beside this)
# with nvcc and asks ncu and compute-sanitizer about each kernel (see the .cu for what each
# asks). Writes $OUT/probe.log.
set -uo pipefail
OUT="${OUT:-/tmp/probe}"
mkdir -p "$OUT"
exec > >(tee "$OUT/probe.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc --version | tail -1
bin=/tmp/probe-async-cluster
nvcc -arch=sm_90a -lineinfo -o "$bin" "$(dirname "$0")/probe-async-cluster.cu" || exit 1
metrics=smsp__sass_sectors_mem_global.sum,smsp__sass_sectors_mem_global_op_ld.sum,smsp__sass_inst_executed_op_global_ld.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_op_read.sum,smsp__inst_executed_op_ldgsts.sum,l1tex__m_xbar2l1tex_read_sectors.sum
for k in bulk cp4 cp16 cpzero; do
    echo "== ncu $k"
    ncu --clock-control none --metrics "$metrics" --print-units base --csv "$bin" "$k" 2>&1 | grep -v '^==PROF==' | tail -8
done
echo "== ncu bulk source (SASS per instruction)"
ncu --clock-control none --section SourceCounters --print-details all --page source --print-source sass --csv "$bin" bulk 2>&1 | grep -iE "BLKCP|UBLK|LDG|SYNCS|Address|Source" | head -20
for k in early exitread; do
    for tool in racecheck memcheck synccheck initcheck; do
        echo "== compute-sanitizer $tool $k"
        timeout 120 compute-sanitizer --tool "$tool" --print-limit 4 "$bin" "$k" 2>&1 | head -30
    done
done
echo "== assert (plain, then memcheck)"
"$bin" assert 2>&1 | head -8
echo "exit $?"
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 "$bin" assert 2>&1 | head -20
