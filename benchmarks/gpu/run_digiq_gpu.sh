#!/usr/bin/env bash
# Digi-Q benchmark (both task sets, 3 seeds, ablations, critic vs ground truth) in one command on one
# nvidia-h200 / H100 with 16 CPU cores: `digirl bench digiq --preset digiq-gpu` (measured on one H100: General 22 min, Web Shopping about 35).
# Usage: benchmarks/gpu/run_digiq_gpu.sh OUT_DIR [key=value ...]
#   e.g. ... OUT sets=[general]            one set (half the time)
#        ... OUT candidates=16             the released N (the stages take about twice as long)
#   Rerun on the same OUT to resume (e.g. one set per session): prepared cells and finished runs are kept.
set -euo pipefail
out=${1:?usage: $0 OUT_DIR [key=value ...]}
shift
export DIGIRL_NO_PROGRESS=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
exec python3 -m digirl bench digiq "$out" --preset digiq-gpu "$@"
