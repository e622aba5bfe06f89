#!/usr/bin/env bash
# haloscope as a user who is not root: plain, and with CUPTI's "profiling refused" status injected.
# Issue 29 item 1 on the device machine: haloscope run as a user who is not root, once as it is
# (the lent card lets every user profile) and once with CUPTI's real refusal status injected at
# the CUPTI call site, as a workstation with RmProfilingAdminOnly=1 answers. Also grading with
# --backend gpu under the same injection. Run from the repository root with .devbin/haloscope
# carried (scripts/device/build-devbin.sh --binary-only is enough); needs root (useradd,
# runuser). Writes $OUT/*.json and prints a summary.
set -uo pipefail
OUT="${OUT:-/tmp/nonroot-out}"
mkdir -p "$OUT"
chmod 777 "$OUT"
ROOT="$PWD"
USER_NAME=haloscope-learner
id "$USER_NAME" > /dev/null 2>&1 || useradd --create-home "$USER_NAME" || echo "useradd failed"
# The learner needs to read the repository and run the binary.
chmod -R a+rX "$ROOT" 2> /dev/null || true
as_learner() {
    runuser -u "$USER_NAME" -- env HOME="/home/$USER_NAME" PATH="$PATH" \
        LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" "$@"
}
echo "== who: $(as_learner id)"
echo "== RmProfilingAdminOnly: $(grep -i ProfilingAdmin /proc/driver/nvidia/params 2>/dev/null)"
cd "$ROOT"
as_learner .devbin/haloscope doctor > "$OUT/doctor-plain.txt" 2>&1; echo "doctor rc=$?"
as_learner env HALOSCOPE_INJECT_CUPTI_STATUS='*=CUPTI_ERROR_INSUFFICIENT_PRIVILEGES' \
    .devbin/haloscope doctor > "$OUT/doctor-injected.txt" 2>&1; echo "doctor injected rc=$?"
for lesson in stencil-1d stencil-2d stencil-3d; do
    as_learner .devbin/haloscope run --lesson "$lesson" --kernel "kernels/$lesson/solution.cu" \
        --backend gpu --json > "$OUT/$lesson-plain.json" 2> "$OUT/$lesson-plain.err"
    echo "$lesson plain rc=$?"
    as_learner env HALOSCOPE_INJECT_CUPTI_STATUS='*=CUPTI_ERROR_INSUFFICIENT_PRIVILEGES' \
        .devbin/haloscope run --lesson "$lesson" --kernel "kernels/$lesson/solution.cu" \
        --backend gpu --json > "$OUT/$lesson-injected.json" 2> "$OUT/$lesson-injected.err"
    echo "$lesson injected rc=$?"
done
as_learner env HALOSCOPE_INJECT_CUPTI_STATUS='*=CUPTI_ERROR_INSUFFICIENT_PRIVILEGES' \
    .devbin/haloscope run --lesson stencil-2d --kernel kernels/stencil-2d/solution.cu --backend gpu \
    > "$OUT/stencil-2d-injected.txt" 2>&1
# Grading with --backend gpu under the same refusal: the table's sectors come from the emulator.
# (in /tmp: $OUT may sit under root's home, which the learner cannot enter)
SUBS=/tmp/haloscope-grade-subs
rm -rf "$SUBS" && mkdir -p "$SUBS" && cp kernels/stencil-2d/solution.cu kernels/stencil-2d/starter.cu "$SUBS/"
chmod -R a+rwX "$SUBS"
as_learner env HALOSCOPE_INJECT_CUPTI_STATUS='*=CUPTI_ERROR_INSUFFICIENT_PRIVILEGES' \
    .devbin/haloscope grade --lesson stencil-2d --backend gpu --jobs 1 --skip-lesson-check \
    --out "$SUBS/grade-out" "$SUBS" > "$OUT/grade.txt" 2>&1
echo "grade injected rc=$?"; tail -5 "$OUT/grade.txt"
cp "$SUBS/grade-out/grades.csv" "$OUT/grades.csv" 2> /dev/null && cat "$OUT/grades.csv"
python3 - "$OUT" <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    try:
        r = json.load(open(f))
    except Exception as e:
        print(os.path.basename(f), "unreadable:", e); continue
    p = r.get("profile") or {}
    scalars = {k: v for k, v in p.items() if isinstance(v, (str, int, float, bool))}
    print(os.path.basename(f), "verdict:", r.get("verdict"), "fault:", r.get("fault"), "profile:", scalars)
PY
