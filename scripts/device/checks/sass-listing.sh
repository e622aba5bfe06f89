#!/usr/bin/env bash
# The Code view's sectors per SASS instruction, GPU (CUPTI) against the emulator, every kernel.
# For every lesson kernel and held-out learner kernel, the per-SASS-instruction sectors from the
# GPU (CUPTI's per-instruction SASS metrics) and from the emulator (its per-PTX-instruction figure
# put on the one SASS instruction ptxas made of it), both from `haloscope compile --sass
# --sectors`, compared line by line; printf kernels per source line (listing-per-line.py).
#   BIN=<haloscope> (default .devbin/haloscope)   OUT=<dir> (default /tmp/listing-out)   JOBS=12
#   ONLY="<kernel.cu> ..." (default: every kernel)
set -uo pipefail
BIN="${BIN:-.devbin/haloscope}"
OUT="${OUT:-/tmp/listing-out}"
HERE="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$OUT/runs"
export HALOSCOPE_NVDISASM="${HALOSCOPE_NVDISASM:-/usr/local/cuda/bin/nvdisasm}"
# The lesson a kernel is for: its first line's `// lesson:` tag, else its folder's name.
lesson_of() {
    local lesson
    lesson=$(sed -n '1s#^// lesson: *##p' "$1")
    echo "${lesson:-$(basename "$(dirname "$1")")}"
}
# One kernel's listing with one backend's sectors: <kernel> <backend>.
listing() {
    local name
    name=$(echo "$1" | tr '/' '_')
    timeout 120 "$BIN" compile --lesson "$(lesson_of "$1")" --kernel "$1" --sass --sectors "$2" \
        > "$OUT/runs/$name.$2.txt" 2> "$OUT/runs/$name.$2.err"
}
export -f lesson_of listing
export BIN OUT
# Every lesson kernel and held-out learner kernel whose lesson exists (or those in $ONLY).
kernels=()
for kernel in ${ONLY:-kernels/*/*.cu tests/learner/*.cu}; do
    [ -f "lessons/$(lesson_of "$kernel")/lesson.toml" ] && kernels+=("$kernel")
done
# The emulator's listings run on the CPUs alongside the GPU's, which take the card one at a time.
printf '%s\n' "${kernels[@]}" | xargs -P "${JOBS:-12}" -I{} bash -c 'listing "$1" emu' _ {} &
emulated=$!
for kernel in "${kernels[@]}"; do listing "$kernel" gpu; done
wait "$emulated"
same=0; differ=0; total=0
for kernel in "${kernels[@]}"; do
    name=$(echo "$kernel" | tr '/' '_')
    total=$((total + 1))
    # The SASS memory instructions with sectors: offset, text and figure.
    pick() { grep -E '^ +SASS .* \* .*sectors' "$1" | sed 's/  (line [0-9]*)//' | sort; }
    # A kernel that calls printf runs on the GPU as gated PTX compiled by the driver, and the
    # GPU's listing is of that code (other offsets, the gate's instructions): its SASS memory
    # instructions' sectors are compared per source line instead (line, count, sum).
    if grep -q "SASS: the code the GPU ran" "$OUT/runs/$name.gpu.err"; then
        pick() { python3 "$HERE/listing-per-line.py" "$1"; }
        echo "printf kernel, compared per source line: $kernel"
    fi
    # A known-failing variant that faults on both backends: the GPU's launch died, so it has
    # no figures (the emulator, which found the fault without dying, may have some). Agrees.
    verdict() { head -1 "$1" | sed 's/  .*//'; }
    if [ -z "$(pick "$OUT/runs/$name.gpu.txt")" ] && [ "$(verdict "$OUT/runs/$name.gpu.err")" = "FAIL (kernel fault)" ] \
        && [ "$(verdict "$OUT/runs/$name.emu.err")" = "FAIL (kernel fault)" ]; then
        same=$((same + 1)); echo "a kernel fault on both backends, no GPU figures to compare: $kernel"
    elif [ -n "$(pick "$OUT/runs/$name.gpu.txt")" ] && diff <(pick "$OUT/runs/$name.gpu.txt") <(pick "$OUT/runs/$name.emu.txt") > "$OUT/runs/$name.diff"; then
        same=$((same + 1))
    else
        differ=$((differ + 1)); echo "differs or empty: $kernel"; head -6 "$OUT/runs/$name.diff"
    fi
done
echo "kernels: $total; every SASS memory instruction's sectors equal (GPU vs emulator): $same; differ or empty: $differ"
tar -czf "$OUT/listing-runs.tar.gz" -C "$OUT" runs
