#!/usr/bin/env python3
"""Compares what scripts/device/checks/async-cluster.sh brought back from the GPU with the
emulator here, kernel by kernel:

    python3 scripts/device/checks/compare-async-cluster.py RUNS.tgz [--bin target/release/haloscope] [--md OUT.md]

For each kernel: the GPU's verdict and the emulator's; the sectors over the profile run from
CUPTI (our GPU run), from ncu (one plain launch x the contract's launches) and from the
emulator; the lines whose sectors differ between CUPTI and the emulator; and the classes of
hazard compute-sanitizer's four tools reported at n = 33 beside the emulator's (`haloscope
check`). Prints a markdown table and exits 1 when a figure or a verdict disagrees.
"""

import argparse
import io
import json
import re
import subprocess
import sys
import tarfile

LAUNCHES = 100


def members(tgz):
    """{kernel directory name: {file name: text}} from the tarball."""
    out = {}
    with tarfile.open(tgz) as t:
        for m in t.getmembers():
            if not m.isfile():
                continue
            parts = m.name.split("/")
            if len(parts) != 3 or parts[0] != "runs":
                continue
            out.setdefault(parts[1], {})[parts[2]] = t.extractfile(m).read().decode(errors="replace")
    return out


def ncu_sectors(text):
    for line in text.splitlines():
        if "smsp__sass_sectors_mem_global.sum" in line:
            value = line.rsplit('","', 1)[-1].strip('"').replace(",", "")
            if value.isdigit():
                return int(value)
    return None


def sanitizer_classes(files):
    """The tools that reported something (a 'Potential'/'Invalid'/... line or errors > 0)."""
    found = []
    for tool in ("memcheck", "racecheck", "initcheck", "synccheck"):
        text = files.get(f"{tool}.txt", "")
        summary = re.search(r"ERROR SUMMARY: (\d+) error", text)
        hazard = re.search(r"(Potential|Invalid|Uninitialized|Race reported|Barrier error|unspecified launch failure)", text)
        if (summary and int(summary.group(1)) > 0) or hazard:
            found.append(tool)
    return found


def emulate(binary, lesson, kernel):
    r = subprocess.run([binary, "run", "--lesson", lesson, "--kernel", kernel, "--backend", "emu", "--json",
                        "--seed", "7"], capture_output=True, text=True)
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {"verdict": None, "headline": r.stderr[-300:]}


def check(binary, lesson, kernel):
    r = subprocess.run([binary, "check", "--lesson", lesson, "--kernel", kernel, "--json"],
                       capture_output=True, text=True)
    try:
        return json.loads(r.stdout).get("classes", [])
    except ValueError:
        return ["?"]


def per_line(report):
    return {l["line"]: l["sectors"] for l in (report.get("profile") or {}).get("per_line", [])
            # CUPTI gives no instruction count for LDGSTS (cp.async): its lines show as 0
            # instructions with sectors (H100, 2026-12-07).
            if l.get("global_instructions", 0) > 0 or l.get("sectors", 0) > 0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tgz")
    ap.add_argument("--bin", default="target/release/haloscope")
    ap.add_argument("--md")
    args = ap.parse_args()
    runs = members(args.tgz)
    rows, bad = [], 0
    for name, files in sorted(runs.items()):
        gpu = json.loads(files.get("gpu.json") or "{}") if files.get("gpu.json", "").strip() else {}
        lesson, kernel = gpu.get("lesson"), gpu.get("kernel_file")
        if not lesson or not kernel:
            rows.append((name, "no GPU report", "", "", "", "", "", ""))
            bad += 1
            continue
        emu = emulate(args.bin, lesson, kernel)
        cupti = (gpu.get("profile") or {}).get("sectors")
        ncu = ncu_sectors(files.get("ncu.csv", ""))
        ncu_total = ncu * LAUNCHES if ncu is not None else None
        em = (emu.get("profile") or {}).get("sectors")
        gl, el = per_line(gpu), per_line(emu)
        lines = sorted(l for l in set(gl) | set(el) if gl.get(l, 0) != el.get(l, 0))
        sanitizer = sanitizer_classes(files)
        emulator = check(args.bin, lesson, kernel)
        same = (gpu.get("verdict") == emu.get("verdict") and cupti == em
                and (ncu_total is None or ncu_total == cupti) and not lines)
        bad += not same
        rows.append((kernel, f"{gpu.get('verdict')} / {emu.get('verdict')}",
                     f"{cupti:,}" if cupti is not None else "-", f"{ncu_total:,}" if ncu_total is not None else "-",
                     f"{em:,}" if em is not None else "-",
                     ", ".join(f"{l}: {gl.get(l, 0):,} vs {el.get(l, 0):,}" for l in lines) or "all equal",
                     " ".join(sanitizer) or "none", " ".join(emulator) or "none"))
    out = io.StringIO()
    out.write("| kernel | verdict GPU / emulator | CUPTI | ncu x 100 | emulator | lines CUPTI vs emulator | "
              "compute-sanitizer (n=33) | emulator checks |\n|---|---|---:|---:|---:|---|---|---|\n")
    for r in rows:
        out.write("| " + " | ".join(r) + " |\n")
    text = out.getvalue()
    print(text)
    if args.md:
        open(args.md, "w").write(text)
    print(f"{len(rows)} kernels, {bad} with a difference in verdict or sectors")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
