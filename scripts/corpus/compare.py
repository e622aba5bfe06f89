#!/usr/bin/env python3
"""The corpus comparison (scripts/corpus/run.py collect's lines) as Markdown.

    python3 scripts/corpus/compare.py RUNS.jsonl [--summary] [--reasons REASONS.tsv]

For every kernel: the verdicts of the GPU backend and the emulator, ncu's sectors x the
lesson's launches (the ground truth), CUPTI's (the GPU backend's) and the emulator's, and
per source line CUPTI's against the emulator's. A kernel matches when both verdicts are
equal and the three totals are equal. REASONS.tsv (kernel<TAB>reason) gives the reason of
each known mismatch; a mismatch without one is listed as "unexplained". Exit status 0 when
every kernel matches or has its reason, 1 otherwise. --summary prints only the counts and the
mismatches.
"""

import collections
import json
import sys


def fmt(v):
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else ("-" if v is None else str(v))


def per_line(report):
    profile = (report or {}).get("profile") or {}
    return {l["line"]: l["sectors"] for l in profile.get("per_line") or [] if l.get("sectors")}


def machine_code_note(report):
    """The emulator's machine-code marks: lines where ptxas removed global memory instructions."""
    code = ((report or {}).get("profile") or {}).get("machine_code") or {}
    removed = [l for l in code.get("lines") or [] if l.get("removed")]
    if not removed:
        return ""
    return "ptxas removed loads on line(s) " + ", ".join(
        f"{l['line']} ({l['removed']} of {l['ptx_instructions']}, {fmt(l.get('sectors_not_issued'))} sectors)"
        for l in removed)


def judge(r):
    """(kind, detail) of one kernel: kind is match, mismatch or not-compared."""
    gpu, emu = r.get("gpu") or {}, r.get("emu") or {}
    ncu = r.get("ncu_per_launch")
    if "verdict" not in gpu and isinstance(ncu, int) and "verdict" in emu:
        # No GPU-backend run (out of time) but ncu measured it: the emulator against the
        # ground truth alone; the verdict is not compared.
        ep = emu.get("profile") or {}
        if ep.get("sectors") is None:
            return "not-compared", f"emulator: no profile ({emu.get('headline', '')[:160]})"
        total = ncu * (ep.get("launches") or 1)
        if total == ep["sectors"]:
            return "match-ncu", ""
        return "mismatch", f"sectors ncu {fmt(total)}, emulator {fmt(ep['sectors'])} (no GPU-backend run)"
    for side, report in (("GPU backend", gpu), ("emulator", emu)):
        if "verdict" not in report:
            return "not-compared", f"{side}: {str(report.get('error', 'no report'))[:200]}"
        if report["verdict"] == "infra-error":
            return "not-compared", f"{side}: infrastructure error: {report.get('headline', '')[:200]}"
    gp, ep = gpu.get("profile") or {}, emu.get("profile") or {}
    launches = gp.get("launches") or ep.get("launches")
    ncu_total = ncu * launches if isinstance(ncu, int) and launches else None
    problems = []
    if gpu["verdict"] != emu["verdict"]:
        problems.append(f"verdict GPU {gpu['verdict']} / emulator {emu['verdict']} "
                        f"({gpu.get('headline', '')[:120]} | {emu.get('headline', '')[:120]})")
    figures = {"ncu": ncu_total, "CUPTI": gp.get("sectors"), "emulator": ep.get("sectors")}
    known = {k: v for k, v in figures.items() if v is not None}
    if len(set(known.values())) > 1:
        problems.append("sectors " + ", ".join(f"{k} {fmt(v)}" for k, v in figures.items()))
    if not problems and len(known) < 3:
        missing = [k for k, v in figures.items() if v is None]
        return "not-compared", "no figure from " + ", ".join(missing) + (
            f" ({(r.get('ncu_tail') or '')[:160]})" if "ncu" in missing else "")
    return ("mismatch" if problems else "match"), "; ".join(problems)


def main(argv):
    args = argv[1:]
    summary = "--summary" in args
    if summary:
        args.remove("--summary")
    reasons = {}
    if "--reasons" in args:
        i = args.index("--reasons")
        for line in open(args[i + 1]):
            if line.strip() and not line.startswith("#"):
                kernel, reason = line.rstrip("\n").split("\t", 1)
                reasons[kernel] = reason
        del args[i : i + 2]
    if len(args) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    runs = [json.loads(l) for l in open(args[0]) if l.strip()]
    kinds = collections.Counter()
    by_lesson = collections.defaultdict(collections.Counter)
    rows, unexplained = [], []
    line_checked = line_equal = 0
    line_diffs = []
    for r in runs:
        kind, detail = judge(r)
        kinds[kind] += 1
        by_lesson[r["lesson"]][kind] += 1
        note = machine_code_note(r.get("emu"))
        if kind not in ("match", "match-ncu"):
            reason = reasons.get(r["kernel"], "")
            if kind == "mismatch" and not reason:
                unexplained.append(r["kernel"])
            rows.append(f"| {r['kernel']} | {kind} | {detail} | {', '.join(r.get('features', []))} | "
                        f"{note or '-'} | {reason or 'unexplained'} |")
        gl, el = per_line(r.get("gpu")), per_line(r.get("emu"))
        if kind == "match" and gl and el:
            line_checked += 1
            if gl == el:
                line_equal += 1
            else:
                diff = ", ".join(f"line {k}: CUPTI {fmt(gl.get(k, 0))} emulator {fmt(el.get(k, 0))}"
                                 for k in sorted(set(gl) | set(el)) if gl.get(k, 0) != el.get(k, 0))
                line_diffs.append(f"- {r['kernel']}: {diff}")
    print(f"{len(runs)} kernels: {kinds['match']} match exactly (verdict and sectors: ncu = CUPTI = emulator), "
          f"{kinds['match-ncu']} match ncu (emulator = ncu; no GPU-backend run in the time), "
          f"{kinds['mismatch']} mismatch, {kinds['not-compared']} not compared")
    for lesson, c in sorted(by_lesson.items()):
        print(f"- {lesson}: {c['match']} match, {c['match-ncu']} match ncu, {c['mismatch']} mismatch, "
              f"{c['not-compared']} not compared")
    print(f"per line (kernels that match in total): {line_equal} of {line_checked} equal line by line")
    marked = sum(1 for r in runs if machine_code_note(r.get("emu")))
    print(f"kernels where ptxas removed global loads (machine-code mark): {marked}")
    if rows:
        print("\n| kernel | result | detail | features | machine-code mark | reason |\n|---|---|---|---|---|---|")
        print("\n".join(rows))
    if line_diffs:
        print("\nper-line differences:")
        print("\n".join(line_diffs if not summary else line_diffs[:20]))
    return 1 if unexplained or kinds["not-compared"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
