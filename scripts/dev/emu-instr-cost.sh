#!/usr/bin/env bash
# x86 instructions the interpreter spends per warp-instruction, counted by callgrind (exact
# and repeatable on a noisy machine, unlike wall time): one launch per kernel at a small size
# on one host thread. Usage: scripts/dev/emu-instr-cost.sh [LESSON KERNEL N]...
# Needs valgrind and `cargo build --release --example emu_mix`.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -eq 0 ]; then
  set -- stencil-1d kernels/stencil-1d/solution.cu 262144 \
         stencil-2d kernels/stencil-2d/starter.cu 512 stencil-2d kernels/stencil-2d/solution.cu 512 \
         stencil-3d kernels/stencil-3d/solution.cu 64 stencil-3d-registers/ kernels/stencil-3d-registers/solution.cu 64
fi
while [ $# -ge 3 ]; do
  lesson=${1%/}; kernel=$2; n=$3; shift 3
  out=$(mktemp)
  insts=$(HALOSCOPE_EMU_THREADS=1 valgrind --tool=callgrind --callgrind-out-file="$out" \
    target/release/examples/emu_mix "$lesson" "$kernel" "$n" 2>/dev/null | sed -n 's/.* s, \([0-9]*\) warp-instructions.*/\1/p')
  ir=$(callgrind_annotate --inclusive=yes "$out" 2>/dev/null | awk "/BlockRunner::run_block/ && !done {print; done=1}" | awk '{gsub(",","",$1); print $1}')
  echo "$kernel n=$n: $insts warp-instructions, $ir x86 instructions in run_block, $((ir / insts)) per warp-instruction"
  rm -f "$out"
done
