#!/usr/bin/env bash
# x86 instructions one whole emulated launch costs per warp-instruction, counted by callgrind
# (exact and repeatable on a noisy VM, unlike wall time): the difference between a run of
# examples/emu_mix with two launches and one with one launch, so that compiling, drawing the
# inputs and everything else outside the launch cancels out. Counts everything the launch
# does (scheduling, barriers, memory set-up), where scripts/dev/emu-instr-cost.sh counts
# run_block only. Usage: scripts/dev/emu-launch-cost.sh [LESSON/KERNEL N]...
# (KERNEL is kernels/LESSON/KERNEL.cu). BIN=path/to/emu_mix measures another build (a
# worktree's, for a before figure). Needs valgrind and `cargo build --release --example emu_mix`.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${BIN:-target/release/examples/emu_mix}
if [ $# -eq 0 ]; then
  set -- stencil-1d/starter 1048576 stencil-2d/solution 256 stencil-3d/starter 64 \
         stencil-3d/solution 64 stencil-3d-registers/starter 64
fi
total() { # launches kernel n -> total Ir; the warp-instruction count goes to $tmp.out
  HALOSCOPE_EMU_THREADS=1 EMU_MIX_REPEATS=$1 valgrind --tool=callgrind --callgrind-out-file="$tmp.cg" \
    "$bin" "${2%/*}" "kernels/$2.cu" "$3" 2>/dev/null | head -1 > "$tmp.out"
  sed -n 's/^summary: //p; s/^totals: //p' "$tmp.cg" | head -1
}
tmp=$(mktemp)
while [ $# -ge 2 ]; do
  kernel=$1; n=$2; shift 2
  one=$(total 1 "$kernel" "$n"); two=$(total 2 "$kernel" "$n")
  insts=$(sed -n 's/.* s, \([0-9]*\) warp-instructions.*/\1/p' "$tmp.out")
  echo "$kernel n=$n: $((two - one)) x86 instructions per launch, $insts warp-instructions, $(((two - one) / insts)) per warp-instruction"
done
rm -f "$tmp" "$tmp.cg" "$tmp.out"
