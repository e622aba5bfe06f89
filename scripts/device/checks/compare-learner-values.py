#!/usr/bin/env python3
"""Compares the GPU's and the emulator's reports of each kernel in a runs.jsonl of kernel-figures.sh:
verdict, sectors, and every value the reports list among each size's first mismatches
(element index and the value the kernel wrote). Exit 1 when any differ."""
import json
import sys


def values(report):
    """{(n, index): value written} over the sizes' first mismatches."""
    out = {}
    for size in report.get("sizes") or []:
        for m in size.get("first_mismatches") or []:
            out[(size["n"], m["index"])] = m["got"]
    return out


def main(path):
    bad = 0
    for line in open(path):
        r = json.loads(line)
        gpu, emu = r["gpu"], r["emu"]
        gv, ev = values(gpu), values(emu)
        same_values = gv == ev
        gs = (gpu.get("profile") or {}).get("sectors")
        es = (emu.get("profile") or {}).get("sectors")
        ok = same_values and gpu.get("verdict") == emu.get("verdict") and gs == es
        bad += not ok
        print(f"{r['kernel']}: gpu {gpu.get('verdict')} {gs}, emu {emu.get('verdict')} {es}, "
              f"ncu per launch {r.get('ncu_per_launch')}; {len(gv)} values compared: "
              f"{'same' if same_values else 'DIFFERENT'}")
        if not same_values:
            for k in sorted(set(gv) | set(ev)):
                if gv.get(k) != ev.get(k):
                    print(f"  n={k[0]} [{k[1]}]: gpu {gv.get(k)} emu {ev.get(k)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
