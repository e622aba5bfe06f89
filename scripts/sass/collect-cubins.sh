#!/usr/bin/env bash
# Makes the sm_90 cubins scripts/sass/opcode-table.py learns the opcode table from: every
# kernel of the course, every learner kernel and the hazard corpus of seed 77, each compiled
# by `haloscope compile --sass` with nvdisasm wrapped so that the cubin it is handed is kept.
#   bash scripts/sass/collect-cubins.sh OUT_DIR
# then: python3 scripts/sass/opcode-table.py <nvdisasm> OUT_DIR/*.cubin
set -euo pipefail
cd "$(dirname "$0")/../.."
out="$(realpath -m "${1:?usage: $0 OUT_DIR}")"
mkdir -p "$out"
nvdisasm="$(ls .deps/nvdisasm/nvidia/*/bin/nvdisasm | tail -1)"
wrapper="$out/nvdisasm-keeping-cubins.sh"
cat > "$wrapper" <<WRAP
#!/usr/bin/env bash
for a in "\$@"; do case "\$a" in *.cubin) cp "\$a" "$out/\$KERNEL_NAME.cubin";; esac; done
exec "$(realpath "$nvdisasm")" "\$@"
WRAP
chmod +x "$wrapper"
corpus="$(mktemp -d)"
python3 scripts/hazards/generate.py --seed 77 --with-tests --out "$corpus" > /dev/null
cargo build --release --quiet
for f in kernels/*/*.cu tests/learner/*.cu "$corpus"/*/*.cu "$corpus"/tests/*.cu; do
    lesson="$(basename "$(dirname "$f")")"
    [ -d "lessons/$lesson" ] || lesson="$(grep -o 'lesson: [a-z0-9-]*' "$f" | head -1 | cut -d' ' -f2)"
    [ -n "$lesson" ] || continue
    name="$(echo "$f" | tr '/' '_' | sed 's/\.cu$//')"
    KERNEL_NAME="$name" HALOSCOPE_NVDISASM="$wrapper" ./target/release/haloscope compile \
        --lesson "$lesson" --kernel "$f" --sass > /dev/null 2>&1 || echo "not compiled: $f ($lesson)" >&2
done
rm -rf "$corpus"
ls "$out"/*.cubin | wc -l
