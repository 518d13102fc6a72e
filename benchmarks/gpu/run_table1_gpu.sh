#!/usr/bin/env bash
# Table 1 for one task set, 3 seeds, with the ablations, in one command on a 4-GPU host
# (nvidia-h200-x4: 64 CPU cores). Each (seed, method) run is its own process; runs are spread
# over the GPUs. Usage: benchmarks/gpu/run_table1_gpu.sh OUT_DIR general|webshop [key=value ...]
#
# SFT budgets per set put the starting policy near the paper's Auto-UI starting point
# (14.6% General, 17.7% Web Shopping test success): few expert demos and few SFT steps. They were
# chosen from SFT success alone (on CPU: 6 demos → 13.5% on General; 3 demos → 25% and 4 → 33% on
# Web Shopping, whose "go to site" third is easy), before any RL result.
set -euo pipefail
out=${1:?usage: $0 OUT_DIR general|webshop [key=value ...]}
set_name=${2:?usage: $0 OUT_DIR general|webshop [key=value ...]}
shift 2
case $set_name in
  general) demos=6 ;;
  webshop) demos=3 ;;
  *) echo "unknown task set: $set_name" >&2; exit 2 ;;
esac
export DIGIRL_NO_PROGRESS=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
exec python3 -m digirl bench table1 "$out" --preset table1-gpu "sets=[$set_name]" "demos=$demos" \
  seeds=[0,1,2] ablations=true sft_steps=40 iterations=12 eval_every=4 train_tasks=24 \
  num_envs=3 parallel=18 "$@"
