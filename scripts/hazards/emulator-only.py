#!/usr/bin/env python3
"""The hazard corpus on the emulator alone, when no GPU is at hand:

    python3 scripts/hazards/generate.py --seed S --out DIR
    python3 scripts/hazards/emulator-only.py DIR

Runs `haloscope check --json` on every kernel (compare.py's `run_emulator`), then prints, per
injected hazard, how many kernels the emulator reports a hazard for and of which classes, and
lists every kernel with no injected hazard that got a report (a false fault, unless the
sanitizer reports it too: compare.py with a device run is the ground truth)."""

import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402

corpus = sys.argv[1]
manifest = json.load(open(os.path.join(corpus, "manifest.json")))
results = compare.run_emulator(manifest, corpus, jobs=2)
by_hazard = collections.defaultdict(lambda: [0, 0, collections.Counter()])
reported_on_correct = []
for e, r in zip(manifest, results):
    classes = compare.sanitizer_classes(r)
    row = by_hazard[e["hazard"]]
    row[0] += 1
    row[1] += bool(classes)
    row[2].update(classes)
    if e["hazard"] == "none" and classes:
        reported_on_correct.append((e["file"], e["base"], e["tile"], r.get("outcome"), sorted(classes)))
print("| injected hazard | kernels | emulator reports a hazard | classes |")
print("|---|---:|---:|---|")
for hazard, (kernels, reported, classes) in sorted(by_hazard.items(), key=lambda x: -x[1][0]):
    print(f"| {hazard} | {kernels} | {reported} | {', '.join(f'{c} {n}' for c, n in sorted(classes.items()))} |")
print("outcomes:", dict(collections.Counter(r.get("outcome") for r in results)))
print("kernels with no injected hazard that got a report:", len(reported_on_correct))
for row in reported_on_correct:
    print("  ", *row)
