#!/usr/bin/env python3
"""The generated corpus (scripts/corpus/generate.py) on the device machine: every kernel on the
GPU backend, under ncu and on the emulator (the corpus check, scripts/device/checks/corpus.sh;
the emulator's side on the build machine).

    python3 scripts/corpus/run.py run emu|gpu CORPUS RESULTS [--jobs J] [--timeout S] [--budget S]
        `haloscope run --backend B --json --seed 7` for every kernel of CORPUS/manifest.json,
        J at a time; RESULTS/B/<name>.json, .err, .exit. Stops starting new ones after
        --budget seconds (what did not run is reported as not run, never as agreeing).
    python3 scripts/corpus/run.py ncu CORPUS RESULTS [--budget S]
        One `ncu --metrics smsp__sass_sectors_mem_global.sum` per lesson over one
        `haloscope launch` of all its kernels (each launched once, in manifest order; after a
        fault the rest are launched again in a new process): RESULTS/ncu.json, {name: sectors}.
    python3 scripts/corpus/run.py collect CORPUS RESULTS
        One line per kernel on stdout in scripts/device/checks/compare-kernel-figures.py's RUNS.jsonl shape.
    python3 scripts/corpus/run.py subset CORPUS OUT [--without-measured TSV ncu|cupti] [FILE ...]
        A corpus of links to some of CORPUS's kernels: the FILEs named (all when none), less
        those TSV (tests/corpus/h200-*.tsv) has an ncu or CUPTI figure for.

$HALOSCOPE_BIN names the binary (default .devbin/haloscope).
"""

import concurrent.futures
import csv
import json
import os
import subprocess
import sys
import time

BIN = os.environ.get("HALOSCOPE_BIN", ".devbin/haloscope")
METRIC = "smsp__sass_sectors_mem_global.sum"


def manifest(corpus):
    with open(os.path.join(corpus, "manifest.json")) as f:
        return json.load(f)


def name_of(entry):
    """A file name for a kernel's results: lesson and index, unique in the corpus."""
    return f"{entry['lesson']}__k{entry['index']:04d}"


def option(args, flag, default):
    if flag in args:
        i = args.index(flag)
        value = args[i + 1]
        del args[i : i + 2]
        return type(default)(value)
    return default


def run_backend(backend, corpus, results, jobs, timeout, budget):
    out = os.path.join(results, backend)
    os.makedirs(out, exist_ok=True)
    start = time.monotonic()

    def one(entry):
        base = os.path.join(out, name_of(entry))
        if time.monotonic() - start > budget:
            return "skipped"
        cmd = [BIN, "run", "--lesson", entry["lesson"], "--kernel", os.path.join(corpus, entry["file"]),
               "--backend", backend, "--json", "--seed", "7"]
        with open(base + ".json", "w") as so, open(base + ".err", "w") as se:
            try:
                code = subprocess.run(cmd, stdout=so, stderr=se, timeout=timeout).returncode
            except subprocess.TimeoutExpired:
                code = 124
        with open(base + ".exit", "w") as f:
            f.write(str(code))
        return code

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        codes = list(pool.map(one, manifest(corpus)))
    done = [c for c in codes if c != "skipped"]
    print(f"{backend}: {len(done)} of {len(codes)} kernels run in {time.monotonic() - start:.0f} s; "
          f"exit codes: {sorted({c: done.count(c) for c in done}.items())}", flush=True)


def ncu_rows(path):
    """The metric's value per profiled launch, in launch order (ncu's "ID" column)."""
    rows = []
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return rows
    header = None
    for row in csv.reader(text.splitlines()):
        if header is None:
            if "Metric Name" in row and "ID" in row:
                header = row
            continue
        if len(row) != len(header):
            continue
        r = dict(zip(header, row))
        if r.get("Metric Name") != METRIC:
            continue
        try:
            rows.append((int(r["ID"]), int(float(r["Metric Value"].replace(",", "")))))
        except ValueError:
            continue
    return [v for _, v in sorted(rows)]


def run_chunk(cmd, timeout):
    """Runs `cmd` in a process group of its own; on timeout the whole group is killed (ncu's
    target process would otherwise keep the pipes open). Returns its stdout lines."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, _ = proc.communicate()
    return (out or "").splitlines()


def run_ncu(corpus, results, budget, chunk=40):
    """ncu over chunks of `chunk` kernels of one lesson, the lessons' chunks taken in turn (so
    that every lesson is measured when the budget runs out); figures are written after every
    chunk, so what was measured survives a call that ends early."""
    start = time.monotonic()
    figures = {}
    lessons = {}
    for entry in manifest(corpus):
        lessons.setdefault(entry["lesson"], []).append(entry)
    queues = {l: [es[i : i + chunk] for i in range(0, len(es), chunk)] for l, es in lessons.items()}
    order = []
    while any(queues.values()):
        for lesson in list(queues):
            if queues[lesson]:
                order.append((lesson, queues[lesson].pop(0)))
    for part, (lesson, pending) in enumerate(order):
        while pending and time.monotonic() - start < budget:
            log = os.path.join(results, f"ncu-{part}-{len(pending)}.csv")
            cmd = ["ncu", "--clock-control", "none", "--metrics", METRIC, "--print-units", "base", "--csv",
                   "--log-file", log, BIN, "launch", "--lesson", lesson, "--count", "1", "--seed", "7", "--kernel"]
            cmd += [os.path.join(corpus, e["file"]) for e in pending]
            lines = run_chunk(cmd, max(10, budget - (time.monotonic() - start)))
            by_file = {os.path.join(corpus, e["file"]): e for e in pending}
            launched = [l[len("launched "):] for l in lines if l.startswith("launched ")]
            values = ncu_rows(log)
            touched = set()
            if len(launched) == len(values):
                for path, value in zip(launched, values):
                    figures[name_of(by_file[path])] = value
                touched.update(launched)
            else:
                print(f"ncu {lesson} chunk {part}: {len(launched)} launched, {len(values)} ncu rows", flush=True)
            for l in lines:
                for prefix in ("not launched ", "faulted "):
                    if l.startswith(prefix):
                        path = l[len(prefix):].split(": ", 1)[0]
                        touched.add(path)
                        figures[name_of(by_file[path])] = l
            rest = [e for e in pending if os.path.join(corpus, e["file"]) not in touched]
            if len(rest) == len(pending):
                break  # no progress: do not loop
            pending = rest
        with open(os.path.join(results, "ncu.json"), "w") as f:
            json.dump(figures, f, indent=1, sort_keys=True)
    # ncu gave a row of 0 sectors for 2 of 320 launches in each of two calls on 2026-12-04
    # (different kernels each time; measured again, each equalled CUPTI): such a kernel is
    # measured once more on its own, and a second 0 stands.
    by_name = {name_of(e): (lesson, e) for lesson, es in lessons.items() for e in es}
    for name in [n for n, v in figures.items() if v == 0]:
        if time.monotonic() - start >= budget:
            break
        lesson, entry = by_name[name]
        log = os.path.join(results, f"ncu-again-{name}.csv")
        cmd = ["ncu", "--clock-control", "none", "--metrics", METRIC, "--print-units", "base", "--csv",
               "--log-file", log, BIN, "launch", "--lesson", lesson, "--count", "1", "--seed", "7", "--kernel",
               os.path.join(corpus, entry["file"])]
        run_chunk(cmd, max(10, budget - (time.monotonic() - start)))
        values = ncu_rows(log)
        if len(values) == 1:
            print(f"ncu {name}: 0 at first, {values[0]} measured again", flush=True)
            figures[name] = values[0]
    with open(os.path.join(results, "ncu.json"), "w") as f:
        json.dump(figures, f, indent=1, sort_keys=True)
    measured = sum(1 for v in figures.values() if isinstance(v, int))
    print(f"ncu: {measured} of {sum(len(e) for e in lessons.values())} measured in {time.monotonic() - start:.0f} s",
          flush=True)


def collect(corpus, results):
    def load(side, name):
        base = os.path.join(results, side, name)
        try:
            code = int(open(base + ".exit").read().strip())
        except (OSError, ValueError):
            return {"error": "not run (out of time)"}, None
        text = open(base + ".json", errors="replace").read()
        try:
            return json.loads(text), code
        except ValueError as e:
            err = open(base + ".err", errors="replace").read()
            return {"error": f"exit {code}: {e}: {text[-300:]} {err[-800:]}"}, code

    try:
        ncu = json.load(open(os.path.join(results, "ncu.json")))
    except (OSError, ValueError):
        ncu = {}
    for entry in manifest(corpus):
        name = name_of(entry)
        gpu, gpu_exit = load("gpu", name)
        emu, emu_exit = load("emu", name)
        value = ncu.get(name)
        print(json.dumps({
            "lesson": entry["lesson"], "kernel": entry["file"], "features": entry.get("features", []),
            "gpu": gpu, "emu": emu, "gpu_exit": gpu_exit, "emu_exit": emu_exit,
            "ncu_exit": 0 if isinstance(value, int) else 1,
            "ncu_per_launch": value if isinstance(value, int) else None,
            "ncu_tail": None if isinstance(value, int) else str(value or "not measured"),
        }))


def subset(corpus, out, files, measured, column):
    os.makedirs(out, exist_ok=True)
    entries = manifest(corpus)
    if files:
        entries = [e for e in entries if e["file"] in set(files)]
    if measured:
        have = set()
        for line in open(measured):
            if line.startswith("#") or not line.strip():
                continue
            fields = line.rstrip("\n").split("\t")
            if fields[2 if column == "ncu" else 3] != "-":
                have.add(fields[0])
        entries = [e for e in entries if e["file"] not in have]
    for e in entries:
        os.makedirs(os.path.dirname(os.path.join(out, e["file"])), exist_ok=True)
        os.symlink(os.path.abspath(os.path.join(corpus, e["file"])), os.path.join(out, e["file"]))
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(entries, f, indent=1)
    print(f"{out}: {len(entries)} of {len(manifest(corpus))} kernels", flush=True)


def main(argv):
    args = argv[1:]
    if args[:1] == ["run"] and len(args) >= 4:
        jobs = option(args, "--jobs", 4)
        timeout = option(args, "--timeout", 180)
        budget = option(args, "--budget", 10_000)
        run_backend(args[1], args[2], args[3], jobs, timeout, budget)
        return 0
    if args[:1] == ["ncu"] and len(args) >= 3:
        budget = option(args, "--budget", 10_000)
        run_ncu(args[1], args[2], budget)
        return 0
    if args[:1] == ["subset"] and len(args) >= 3:
        measured, column = None, None
        if "--without-measured" in args:
            i = args.index("--without-measured")
            measured, column = args[i + 1], args[i + 2]
            del args[i : i + 3]
        subset(args[1], args[2], args[3:], measured, column)
        return 0
    if args[:1] == ["collect"] and len(args) == 3:
        collect(args[1], args[2])
        return 0
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
