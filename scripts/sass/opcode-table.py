#!/usr/bin/env python3
"""Learns the sm_90 opcode table that src/compile/cubin.rs reads cubins with, from nvdisasm.

For every cubin given, `nvdisasm -hex -c` prints each instruction's mnemonic beside its
encoding; the low 12 bits of the first 64-bit word are the opcode. This prints, for every
opcode seen, its mnemonics and whether it touches global memory (the mnemonics
`machine_code::SASS_GLOBAL` names), as the Rust rows of src/compile/sass_opcodes.rs, and
fails when one opcode was seen with two mnemonics of different kinds (the table would then
be ambiguous). Usage:
    python3 scripts/sass/opcode-table.py NVDISASM CUBIN... > rows.txt
Where the cubins come from: scripts/sass/collect-cubins.sh.
"""
import re
import subprocess
import sys

GLOBAL = {"LDG", "STG", "ATOMG", "RED", "REDG", "LD", "ST", "ATOM", "LDGSTS"}
LINE = re.compile(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_]+)[^;]*;\s*/\*\s*0x([0-9a-f]{16})\s*\*/")


def main():
    tool, cubins = sys.argv[1], sys.argv[2:]
    seen = {}
    for cubin in cubins:
        text = subprocess.run([tool, "-hex", "-c", cubin], capture_output=True, text=True, check=True).stdout
        for match in LINE.finditer(text):
            mnemonic, word = match.group(1), int(match.group(2), 16)
            seen.setdefault(word & 0xFFF, set()).add(mnemonic)
    bad = False
    for opcode in sorted(seen):
        names = sorted(seen[opcode])
        kinds = {name in GLOBAL for name in names}
        if len(kinds) > 1:
            print(f"opcode {opcode:#05x} is both global and not: {names}", file=sys.stderr)
            bad = True
            continue
        kind = "Global" if kinds.pop() else "Other"
        print(f"    ({opcode:#05x}, SassClass::{kind}, \"{'/'.join(names)}\"),")
    print(f"{len(seen)} opcodes from {len(cubins)} cubins", file=sys.stderr)
    sys.exit(1 if bad else 0)


main()
