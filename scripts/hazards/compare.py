#!/usr/bin/env python3
"""The hazard corpus's verdicts: compute-sanitizer on the GPU against the emulator's checks.

    python3 scripts/hazards/compare.py DEVICE_TAR [--emu DIR] [--tsv OUT.tsv] [--md OUT.md]

DEVICE_TAR is what scripts/device/checks/hazard-sanitizer.sh brought back (the corpus manifest, one
log and exit code per kernel and tool, the GPU backend's verdicts). The emulator's side is
`haloscope check --json` of every kernel of the same corpus (regenerated here from the
manifest's seed... i.e. scripts/hazards/generate.py with the same seed), run now unless
--emu names a folder of earlier results (<lesson>_<file>.json).

Classes are named after the sanitizer tools (src/report/hazard.rs): memcheck, racecheck,
initcheck, synccheck. A kernel's GPU classes are the tools that reported an error. Writes the
table as TSV (tests/hazards/expected.tsv: what CI checks the emulator against) and as
Markdown (for docs/archive/measurements-log.md), and prints the counts.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def parse_log(tool, text):
    """(reported, details): whether the tool reported an error, and its first report lines."""
    details = []
    if tool == "racecheck":
        m = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", text)
        reported = bool(m and int(m.group(1)) > 0)
        for line in text.splitlines():
            if re.search(r"(Error|Warning|ERROR|WARNING|WARN): (Race reported|Potential|\(Warp Level)", line):
                details.append(line.strip("= ").strip())
        if m:
            details.insert(0, f"{m.group(1)} hazards ({m.group(2)} errors, {m.group(3)} warnings)")
        return reported, details[:3]
    m = re.search(r"ERROR SUMMARY: (\d+) errors?", text)
    reported = bool(m and int(m.group(1)) > 0)
    keys = {
        "memcheck": r"Invalid __\w+__ (read|write)|misaligned|out of bounds",
        "initcheck": r"Uninitialized __\w+__ memory read",
        "synccheck": r"Barrier error|Invalid arguments|Divergent thread",
    }[tool]
    for line in text.splitlines():
        if re.search(keys, line):
            details.append(line.strip("= ").strip())
    return reported, details[:3]


def read_device(tar_path):
    """{kernel name: {"gpu": set of classes, "tools": {tool: (exit, details)}}}, manifest, gpu verdicts."""
    out = {}
    with tarfile.open(tar_path) as tar:
        files = {m.name: m for m in tar.getmembers() if m.isfile()}

        def text(name):
            return tar.extractfile(files[name]).read().decode("utf-8", "replace") if name in files else None

        manifest = json.loads(text("corpus/manifest.json"))
        verdicts = json.loads(text("gpu-verdicts.json") or "{}")
        for e in manifest:
            name = f"{e['lesson']}__{os.path.splitext(os.path.basename(e['file']))[0]}"
            tools, classes, missing = {}, set(), []
            for tool in TOOLS:
                code = (text(f"logs/{name}.{tool}.exit") or "").strip()
                log = text(f"logs/{name}.{tool}.log") or ""
                if code in ("", "skipped"):
                    missing.append(tool)
                    continue
                reported, details = parse_log(tool, log)
                if code == "124":
                    missing.append(tool)
                    details = ["timed out"] + details
                tools[tool] = (code, details)
                if reported:
                    classes.add(tool)
            out[name] = {"entry": e, "gpu": classes, "tools": tools, "missing": missing,
                         "verdict": (verdicts.get(name) or {}).get("verdict")}
    return out, manifest


def sanitizer_classes(result):
    """The classes of an emulator result that compute-sanitizer has a tool for: global races
    and hangs have none, so they are left out of every comparison."""
    return set(result.get("classes", [])) - {"global-race", "hang"}


def run_emulator(manifest, corpus, jobs=2):
    binary = os.environ.get("HALOSCOPE_BIN", os.path.join(ROOT, "target/release/haloscope"))

    def one(e):
        cmd = [binary, "check", "--lesson", e["lesson"], "--kernel", os.path.join(corpus, e["file"]), "--json"]
        for n in e["sizes"]:
            cmd += ["--n", str(n)]
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        try:
            return json.loads(r.stdout)
        except ValueError:
            return {"outcome": "error", "classes": [], "fault": r.stderr[-300:], "findings": []}

    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(one, manifest))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("device_tar")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--tsv")
    ap.add_argument("--md")
    args = ap.parse_args()
    device, manifest = read_device(args.device_tar)
    with tempfile.TemporaryDirectory() as corpus:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts/hazards/generate.py"), "--seed", args.seed,
                        "--out", corpus, "--with-tests"], check=True, capture_output=True)
        here = json.load(open(os.path.join(corpus, "manifest.json")))
        # The generator may have grown since the device run (new bases come after the old
        # ones): every kernel the device ran must still be made the same; the new ones have no
        # sanitizer results and are left out.
        made = {e["file"]: e["hazard"] for e in here}
        if any(made.get(e["file"]) != e["hazard"] for e in manifest):
            sys.exit("the generator here makes another corpus than the device's manifest: same seed? same generator?")
        if len(here) > len(manifest):
            print(f"{len(here) - len(manifest)} kernels generated here are newer than the device run: not compared")
        emu = run_emulator(manifest, corpus)
    rows = []
    for e, r in zip(manifest, emu):
        name = f"{e['lesson']}__{os.path.splitext(os.path.basename(e['file']))[0]}"
        d = device[name]
        gpu, mine = d["gpu"], sanitizer_classes(r)
        rows.append({"name": name, "e": e, "d": d, "r": r, "gpu": gpu, "emu": mine,
                     "status": "agree" if gpu == mine else ("emulator-only" if mine > gpu else
                                                           "sanitizer-only" if gpu > mine else "differ")})
    counts = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    print(f"{len(rows)} kernels: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for row in rows:
        if row["status"] != "agree":
            print(f"  {row['status']:15} {row['name']:32} {row['e']['base']:6} {row['e']['tile']:6} "
                  f"{row['e']['hazard']:18} gpu={sorted(row['gpu'])} emu={sorted(row['emu'])} "
                  f"missing={row['d']['missing']}")
    if args.tsv:
        with open(args.tsv, "w") as f:
            f.write("# kernel\tbase\ttile\thazard\tsanitizer\temulator\tstatus\tgpu_verdict\n")
            for row in rows:
                f.write("\t".join([row["e"]["file"], row["e"]["base"], row["e"]["tile"], row["e"]["hazard"],
                                   ",".join(sorted(row["gpu"])) or "-", ",".join(sorted(row["emu"])) or "-",
                                   row["status"], row["d"]["verdict"] or "-"]) + "\n")
    if args.md:
        with open(args.md, "w") as f:
            f.write("| kernel | base | tile | injected | compute-sanitizer | emulator | status |\n|---|---|---|---|---|---|---|\n")
            for row in rows:
                f.write(f"| {row['e']['file']} | {row['e']['base']} | {row['e']['tile']} | {row['e']['hazard']} | "
                        f"{', '.join(sorted(row['gpu'])) or 'none'} | {', '.join(sorted(row['emu'])) or 'none'} | "
                        f"{row['status']} |\n")
    json.dump([{k: (sorted(v) if isinstance(v, set) else v) for k, v in row.items() if k not in ("d",)}
               | {"tools": row["d"]["tools"], "missing": row["d"]["missing"], "gpu_verdict": row["d"]["verdict"]}
               for row in rows], open(os.environ.get("HAZARDS_JSON", "/tmp/hazards-compare.json"), "w"), indent=1,
              default=list)


if __name__ == "__main__":
    main()
