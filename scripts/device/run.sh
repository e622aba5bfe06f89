#!/usr/bin/env bash
# The one device runner: runs the checks named, each a script in scripts/device/checks/.
#   bash scripts/device/run.sh CHECK[@SECONDS][=ARG,ARG...] [CHECK...]
#   bash scripts/device/run.sh --list          (each check and what it checks)
# On the device machine (which has no Rust toolchain), with .devbin carried: build it here first
# with scripts/device/build-devbin.sh. Goes to the repository root itself.
# Prints the card once, then runs every check named, in order, whatever the ones before did:
# check NAME runs as `OUT=$OUT/NAME bash scripts/device/checks/NAME.sh ARG...` (OUT defaults to
# /tmp/device-out; the device tool's $OUT is what comes back), its whole output in
# $OUT/NAME.log, of which the last TAIL lines (default 20) are printed when it ends.
# Each check is killed after SECONDS, default CHECK_S (540); the check sees its limit as
# CHECK_S, and those with a budget of their own (corpus, hazard-sanitizer, nvrtc12) fit it.
# =ARG,ARG... passes arguments to that check alone (gpu-tests=printf, stage-split=3,
# learner-values=tests/learner/a.cu,tests/learner/b.cu). A check named twice gets
# $OUT/NAME-2 the second time.
# Exits 1 when any check failed (non-zero exit, or killed: 124), 2 on a check that does not exist.
set -uo pipefail
SELF="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$0")/../.."
CHECKS=scripts/device/checks
OUT="${OUT:-/tmp/device-out}"
CHECK_S="${CHECK_S:-540}"
TAIL="${TAIL:-20}"

# purpose NAME: the check's header line (the comment line after its shebang).
purpose() { sed -n '2s/^# *//p' "$CHECKS/$1.sh"; }

case "${1:-}" in
    --list)
        for f in "$CHECKS"/*.sh; do
            name=$(basename "$f" .sh)
            printf '%-22s %s\n' "$name" "$(purpose "$name")"
        done
        exit 0 ;;
    "" | -h | --help)
        sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$SELF"
        [ -n "${1:-}" ] && exit 0
        exit 2 ;;
esac

# Every check named must exist before any runs (a typo costs no device time).
for spec in "$@"; do
    name="${spec%%=*}"
    [[ "$name" != *@* ]] || [[ "${name#*@}" =~ ^[0-9]+$ ]] || { echo "not a number of seconds: $spec" >&2; exit 2; }
    name="${name%%@*}"
    [ -f "$CHECKS/$name.sh" ] || { echo "no such check: $name (bash scripts/device/run.sh --list)" >&2; exit 2; }
done

mkdir -p "$OUT"
echo "== card: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | paste -sd';')"
declare -A seen
summary=()
failed=0
for spec in "$@"; do
    args=()
    if [[ "$spec" == *=* ]]; then
        IFS=, read -ra args <<< "${spec#*=}"
        spec="${spec%%=*}"
    fi
    name="${spec%%@*}"
    limit="$CHECK_S"
    [[ "$spec" == *@* ]] && limit="${spec#*@}"
    seen[$name]=$((${seen[$name]:-0} + 1))
    dir="$name"
    [ "${seen[$name]}" -gt 1 ] && dir="$name-${seen[$name]}"
    mkdir -p "$OUT/$dir"
    echo "== $dir ($(date -u +%T), at most $limit s): $(purpose "$name")"
    start=$(date +%s)
    OUT="$OUT/$dir" CHECK_S="$limit" timeout -k 10 "$limit" bash "$CHECKS/$name.sh" "${args[@]}" \
        < /dev/null > "$OUT/$dir.log" 2>&1
    rc=$?
    took=$(($(date +%s) - start))
    tail -n "$TAIL" "$OUT/$dir.log"
    verdict="ok"
    [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && verdict="KILLED after $limit s"
    [ "$rc" -ne 0 ] && [ "$verdict" = ok ] && verdict="FAILED"
    [ "$rc" -ne 0 ] && failed=1
    echo "== $dir: exit $rc in $took s: $verdict (whole output: $dir.log)"
    summary+=("$(printf '%-22s exit %-3s %5s s  %s' "$dir" "$rc" "$took" "$verdict")")
done
echo "== summary ($(date -u +%T))"
printf '%s\n' "${summary[@]}"
exit "$failed"
