#!/usr/bin/env python3
"""CUPTI, ncu and the emulator per kernel, for the kernel-figures check (kernel-figures.sh beside it).

    compare-kernel-figures.py collect LESSON KERNEL WORKDIR GPU_EXIT EMU_EXIT NCU_EXIT
        One JSON line for one kernel from WORKDIR/gpu.json, emu.json (haloscope run --json),
        their .err files and ncu.csv (ncu --csv --print-units base): the line compare reads.
    compare-kernel-figures.py compare RUNS.jsonl KNOWN.md [--table OUT.md]
        Checks every kernel of RUNS.jsonl; exit 0 when all agree, 1 on any failure, 2 when
        the inputs cannot be read.

A RUNS.jsonl line: {"lesson", "kernel", "gpu": RunReport | {"error"}, "emu": ...,
"gpu_exit", "emu_exit", "ncu_exit", "ncu_per_launch": int | null, "ncu_tail"}.
KNOWN.md is docs/known-differences.md: its ```tsv block lists the differences that are
understood, one per kernel and field, with the exact values each side gives and the reason.

Checks, for every kernel:
- both runs produced a report whose exit code is the process's, neither is an
  infrastructure error, ncu ran and gave a figure;
- CUPTI equals ncu x launches (always: both read the same SASS, so a gap is our bug);
- sectors, loads, stores, ideal and the verdict equal between the GPU and the emulator,
  unless KNOWN lists that kernel and field with exactly the values seen;
- every KNOWN entry for a kernel that ran is still seen (a stale entry is a failure too).
"""

import json
import sys

FIELDS = [
    # (field, key in the profile, shown as)
    ("sectors", "sectors", "sectors"),
    ("loads", "load_sectors", "load sectors"),
    ("stores", "store_sectors", "store sectors"),
    ("ideal", "ideal_sectors", "ideal sectors"),
]
KNOWN_COLUMNS = ["kernel", "field", "gpu", "emu", "kind", "reason"]


def parse_known(text):
    """The rows of the first ```tsv block: {(kernel, field): row}."""
    lines = text.splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if l.strip() == "```tsv")
    except StopIteration:
        raise ValueError("no ```tsv block")
    rows = {}
    header = None
    for number, line in enumerate(lines[start + 1 :], start + 2):
        if line.strip() == "```":
            break
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if header is None:
            if cells != KNOWN_COLUMNS:
                raise ValueError(f"line {number}: the header must be {' / '.join(KNOWN_COLUMNS)}")
            header = cells
            continue
        if len(cells) != len(KNOWN_COLUMNS) or not all(c.strip() for c in cells):
            raise ValueError(f"line {number}: {len(KNOWN_COLUMNS)} tab-separated non-empty cells expected")
        row = dict(zip(KNOWN_COLUMNS, (c.strip() for c in cells)))
        if row["field"] not in [f for f, _, _ in FIELDS] + ["verdict"]:
            raise ValueError(f"line {number}: unknown field {row['field']!r}")
        key = (row["kernel"], row["field"])
        if key in rows:
            raise ValueError(f"line {number}: {key[0]} {key[1]} listed twice")
        rows[key] = row
    else:
        raise ValueError("the ```tsv block is not closed")
    if header is None:
        raise ValueError("the ```tsv block has no header")
    return rows


def norm(value):
    """Figures as written in the docs (1,363,506,800) or in JSON (1363506800) compare equal."""
    text = str(value).strip()
    digits = text.replace(",", "").replace("_", "")
    return digits if digits.isdigit() else text


def matches(expected, seen):
    """`expected` may list alternatives: wrong-results|pass."""
    return norm(seen) in [norm(alt) for alt in expected.split("|")]


def fmt(v):
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else ("-" if v is None else str(v))


def compare(runs, known):
    """(table lines, failures, notes) for the runs against the known differences."""
    failures, notes, table = [], [], []
    table.append("| kernel | verdict gpu / emu | CUPTI | ncu x launches | emulator | loads gpu / emu | "
                 "stores gpu / emu | ideal gpu / emu | check |")
    table.append("|---|---|---:|---:|---:|---|---|---|---|")
    used = set()
    for r in runs:
        kernel = r.get("kernel", "?")
        problems = []
        gpu, emu = r.get("gpu") or {}, r.get("emu") or {}
        for side, report in (("gpu", gpu), ("emu", emu)):
            if "error" in report or "verdict" not in report:
                problems.append(f"{side} run gave no report: {str(report.get('error', report))[:300]}")
            elif report["verdict"] == "infra-error":
                problems.append(f"{side} run: infrastructure error: {report.get('headline')}")
        for side, report in (("gpu", gpu), ("emu", emu)):
            code = r.get(f"{side}_exit")
            if "exit_code" in report and code != report["exit_code"]:
                problems.append(f"{side} run exited {code}, its report says {report['exit_code']}")
        if r.get("ncu_exit", 0) != 0:
            problems.append(f"ncu exited {r.get('ncu_exit')}")
        gp, ep = gpu.get("profile") or {}, emu.get("profile") or {}
        if "verdict" in gpu and not gp:
            problems.append(f"the GPU run has no profile: {gpu.get('headline')}")
        if "verdict" in emu and not ep:
            problems.append(f"the emulator run has no profile: {emu.get('headline')}")
        if gp and ep and gp.get("launches") != ep.get("launches"):
            problems.append(f"launches differ: gpu {gp.get('launches')} emu {ep.get('launches')}")
        cupti = gp.get("sectors")
        launches = gp.get("launches") or ep.get("launches")
        ncu = r.get("ncu_per_launch")
        ncu_total = ncu * launches if isinstance(ncu, int) and launches else None
        if ncu is None:
            problems.append(f"ncu gave no smsp__sass_sectors_mem_global.sum: {(r.get('ncu_tail') or '')[-300:]}")
        elif cupti is not None and cupti != ncu_total:
            problems.append(f"CUPTI {fmt(cupti)} != ncu {fmt(ncu)} x {launches} = {fmt(ncu_total)}")

        def against_known(field, g, e):
            row = known.get((kernel, field))
            if row is not None:
                used.add((kernel, field))
            if g is None or e is None:
                return "?"
            if norm(g) == norm(e):
                if row is not None:
                    problems.append(f"{field}: known difference no longer seen (both {fmt(g)}); "
                                    "remove it from docs/known-differences.md")
                    return "stale"
                return "="
            if row is None:
                problems.append(f"{field}: gpu {fmt(g)} != emu {fmt(e)} (not a known difference)")
                return "DIFF"
            if matches(row["gpu"], g) and matches(row["emu"], e):
                notes.append(f"{kernel} {field}: gpu {fmt(g)}, emu {fmt(e)}: known ({row['kind']}): {row['reason']}")
                return "known"
            problems.append(f"{field}: gpu {fmt(g)} / emu {fmt(e)}, but the known difference says "
                            f"gpu {row['gpu']} / emu {row['emu']}")
            return "DIFF"

        marks = {}
        if "verdict" in gpu and "verdict" in emu:
            marks["verdict"] = against_known("verdict", gpu["verdict"], emu["verdict"])
        for field, key, _ in FIELDS:
            if gp and ep:
                marks[field] = against_known(field, gp.get(key), ep.get(key))
        for p in problems:
            failures.append(f"{kernel}: {p}")
        check = "FAIL" if problems else ("known" if "known" in marks.values() else "ok")
        table.append(
            f"| {kernel} | {gpu.get('verdict', '-')} / {emu.get('verdict', '-')} | {fmt(cupti)} | {fmt(ncu_total)} | "
            f"{fmt(ep.get('sectors'))} | {fmt(gp.get('load_sectors'))} / {fmt(ep.get('load_sectors'))} | "
            f"{fmt(gp.get('store_sectors'))} / {fmt(ep.get('store_sectors'))} | "
            f"{fmt(gp.get('ideal_sectors'))} / {fmt(ep.get('ideal_sectors'))} | {check} |"
        )
        # Per line (CUDA kernels; PTX-loaded Rust kernels have no SASS lines): reported, not checked.
        gl = {l["line"]: l["sectors"] for l in gp.get("per_line") or [] if l.get("sectors")}
        el = {l["line"]: l["sectors"] for l in ep.get("per_line") or [] if l.get("sectors")}
        if gl and el and gl != el:
            diff = ", ".join(f"line {k}: gpu {fmt(gl.get(k, 0))} emu {fmt(el.get(k, 0))}"
                             for k in sorted(set(gl) | set(el)) if gl.get(k, 0) != el.get(k, 0))
            notes.append(f"{kernel} per line (not checked): {diff}")
    ran = {r.get("kernel") for r in runs}
    for (kernel, field), row in sorted(known.items()):
        if kernel in ran and (kernel, field) not in used:
            failures.append(f"{kernel}: known difference for {field} could not be compared (no figures)")
    if not runs:
        failures.append("no kernel was run")
    return table, failures, notes


def collect(lesson, kernel, work, gpu_exit, emu_exit, ncu_exit):
    """The JSON object of one kernel's three runs (see the module's doc)."""

    def load(name):
        text = open(f"{work}/{name}.json", errors="replace").read()
        try:
            return json.loads(text)
        except ValueError as e:
            try:
                err = open(f"{work}/{name}.err", errors="replace").read()
            except OSError:
                err = ""
            return {"error": f"{e}: {text[-500:]} {err[-1500:]}"}

    ncu_text = open(f"{work}/ncu.csv", errors="replace").read()
    ncu = ncu_per_launch(ncu_text)
    if int(ncu_exit) != 0:
        ncu = None
    return {"lesson": lesson, "kernel": kernel, "gpu": load("gpu"), "emu": load("emu"),
            "gpu_exit": int(gpu_exit), "emu_exit": int(emu_exit), "ncu_exit": int(ncu_exit),
            "ncu_per_launch": ncu, "ncu_tail": ncu_text[-800:] if ncu is None else None}


def ncu_per_launch(text):
    """smsp__sass_sectors_mem_global.sum from ncu's --csv output: the sum over the kernel
    launches it profiled (one: haloscope launch --count 1), None when there is none."""
    import csv

    total = None
    for row in csv.reader(text.splitlines()):
        if len(row) > 5 and row[-3] == "smsp__sass_sectors_mem_global.sum":
            value = row[-1].replace(",", "").strip()
            try:
                total = (total or 0) + int(float(value))
            except ValueError:
                return None
    return total


def main(argv):
    args = argv[1:]
    if args[:1] == ["collect"]:
        if len(args) != 7:
            print(__doc__.strip().splitlines()[2], file=sys.stderr)
            return 2
        try:
            print(json.dumps(collect(*args[1:])))
        except (OSError, ValueError) as e:
            print(f"compare-kernel-figures collect: {e}", file=sys.stderr)
            return 2
        return 0
    if args[:1] != ["compare"]:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    args = args[1:]
    table_path = None
    if "--table" in args:
        i = args.index("--table")
        table_path = args[i + 1]
        del args[i : i + 2]
    if len(args) != 2:
        print(__doc__.strip().splitlines()[5], file=sys.stderr)
        return 2
    try:
        known = parse_known(open(args[1]).read())
        runs = [json.loads(l) for l in open(args[0]) if l.strip()]
    except (OSError, ValueError) as e:
        print(f"compare-kernel-figures: cannot read the inputs: {e}", file=sys.stderr)
        return 2
    table, failures, notes = compare(runs, known)
    text = "\n".join(table) + "\n"
    if table_path:
        with open(table_path, "w") as f:
            f.write(text)
    print(text)
    for n in notes:
        print(f"note: {n}")
    for f in failures:
        print(f"FAIL: {f}")
    print(f"{len(runs)} kernel(s) compared, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
