#!/usr/bin/env bash
# A few corpus kernels measured again (ncu alone first, then the GPU backend), for untrusted figures.
# For figures an earlier call could not trust (an ncu row of 0, a run made before a fix): the
# corpus check on the kernels named only, without the learner kernels, ncu given half the
# budget, 4 GPU-backend runs at once of 90 s at most. Results as the corpus check's
# ($OUT/corpus.tar.gz); SEED and COUNT as there. On the device machine, .devbin carried:
#   bash scripts/device/run.sh corpus-recheck=stencil-2d/k0204.cu,stencil-1d/k0016.cu
#   OUT=... bash scripts/device/checks/corpus-recheck.sh stencil-2d/k0204.cu stencil-1d/k0016.cu ...
set -uo pipefail
[ $# -gt 0 ] || { echo "corpus-recheck: name the corpus kernels to measure again (stencil-2d/k0204.cu ...)" >&2; exit 2; }
SKIP_LEARNER=1 NCU_SHARE="${NCU_SHARE:-50}" GPU_JOBS="${GPU_JOBS:-4}" GPU_TIMEOUT="${GPU_TIMEOUT:-90}" \
    exec bash "$(dirname "$0")/corpus.sh" "$@"
