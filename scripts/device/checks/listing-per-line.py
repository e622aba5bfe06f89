#!/usr/bin/env python3
"""Per source line, the sectors of the SASS global memory instructions of a `haloscope compile
--sass --sectors` listing, summed (lines with none left out) (scripts/device/checks/sass-listing.sh
compares printf kernels this way: the GPU's listing is of the driver's compile of the gated
PTX, whose instructions and offsets are not NVRTC's)."""

import re
import sys

line = 0
sums = {}
for text in open(sys.argv[1]):
    head = re.match(r"^ *(\d+) \| ", text)
    if head:
        line = int(head.group(1))
    elif text.startswith("(no source line"):
        line = 0
    m = re.match(r"^ +SASS .* \* .*?([\d,]+) sectors", text)
    if m:
        sums[line] = sums.get(line, 0) + int(m.group(1).replace(",", ""))
for line, total in sorted(sums.items()):
    if total:
        print(f"line {line}: {total} sectors")
