#!/usr/bin/env bash
# Table 1 round 2 at a long online budget on one GPU host (16 CPU cores): 5 seeds, from a mediocre
# SFT start, Filtered BC vs DigiRL (the paper's curriculum cut) vs DigiRL keeping every success.
# Every (seed, method) run is its own process; deterministic mode is on (the default).
# Usage: benchmarks/gpu/run_table1_long_gpu.sh OUT_DIR general|webshop [key=value ...]
# Stratified SFT demos (every family demonstrated): add demo_sampling=stratified. The best measured
# recipes are presets: OMP_NUM_THREADS=1 digirl bench table1 OUT --preset table1-recipe-general (or -webshop).
#
# The SFT recipes give a start of ~15-30% test success (measured on the 2-core CPU machine, 5 seeds):
# General, 24 family-balanced demos and 150 steps: 14.2%; Web Shopping, 2 demos drawn uniformly and
# 60 steps: 29.0% (24 family-balanced demos already give 90% there).
set -euo pipefail
out=${1:?usage: $0 OUT_DIR general|webshop [key=value ...]}
set_name=${2:?usage: $0 OUT_DIR general|webshop [key=value ...]}
shift 2
case $set_name in
  general) sft=(demos=24 demo_sampling=family sft_steps=150) ;;
  webshop) sft=(demos=2 demo_sampling=uniform sft_steps=60) ;;
  *) echo "unknown task set: $set_name" >&2; exit 2 ;;
esac
export DIGIRL_NO_PROGRESS=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
exec python3 -m digirl bench table1 "$out" --preset table1-gpu "sets=[$set_name]" "${sft[@]}" \
  'seeds=[0,1,2,3,4]' offline_trajectories=64 iterations=32 rollout_size=32 eval_every=8 test_tasks=96 \
  train_tasks=0 num_envs=2 parallel=15 'only=[fbc_off2on,digirl_off2on]' \
  'variants=["digirl_off2on_keep_successes|digirl|off2on|algo.curriculum_keep_successes=true"]' "$@"
