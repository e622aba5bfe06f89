#!/usr/bin/env python3
"""Compares two runs of scripts/workstation/nvrtc-side-by-side.sh (NVRTC 13 and NVRTC 12):
a Markdown table of verdicts and sectors per kernel, then every difference. Exit 1 when any
kernel differs in verdict, totals or per-line sectors, or either run has no result."""
import json
import sys


def load(path):
    """Every JSON object in the file, by kernel (objects need not be one per line)."""
    text, at, decoder, runs = open(path).read(), 0, json.JSONDecoder(), {}
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return runs
        r, at = decoder.raw_decode(text, at)
        runs[r["kernel"]] = r


def main(new_path, old_path):
    new, old = load(new_path), load(old_path)
    kernels = sorted(set(new) | set(old))
    versions = lambda runs: sorted({r.get("compiler_version") or "?" for r in runs.values()})
    print(f"NVRTC {', '.join(versions(new))} vs NVRTC {', '.join(versions(old))}, {len(kernels)} kernels\n")
    print("| kernel | verdict 13 | verdict 12 | sectors 13 | sectors 12 | per line |")
    print("|---|---|---|---|---|---|")
    differences = []
    for k in kernels:
        a, b = new.get(k, {"error": "no result"}), old.get(k, {"error": "no result"})
        if "error" in a or "error" in b:
            differences.append(f"{k}: {a.get('error') or b.get('error')}")
            print(f"| {k} | {a.get('verdict')} | {b.get('verdict')} | - | - | no result |")
            continue
        same_lines = a["per_line"] == b["per_line"]
        print(f"| {k} | {a['verdict']} | {b['verdict']} | {a['sectors']} | {b['sectors']} | "
              f"{'same' if same_lines else 'differ'} |")
        for field in ("verdict", "fault", "sectors", "load_sectors", "store_sectors"):
            if a[field] != b[field]:
                differences.append(f"{k}: {field} {a[field]} (13) vs {b[field]} (12)")
        if not same_lines:
            lines = sorted(set(a["per_line"]) | set(b["per_line"]), key=int)
            diff = [f"line {l}: {a['per_line'].get(l, 0)} vs {b['per_line'].get(l, 0)}"
                    for l in lines if a["per_line"].get(l) != b["per_line"].get(l)]
            differences.append(f"{k}: per-line sectors differ: {'; '.join(diff)}")
    print(f"\n{len(differences)} difference(s)")
    for d in differences:
        print(f"- {d}")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
