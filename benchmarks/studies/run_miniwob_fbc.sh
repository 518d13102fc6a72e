#!/usr/bin/env bash
# MiniWoB++ learning runs in a real Chromium (2 CPU cores are enough): for each task and seed, SFT
# from 4 scripted-solver demos, then 12 online iterations of Filtered BC (32 episodes each, 4 pages),
# evaluated on the same 50 fixed seeds every 4 iterations; then a summary table.
# Usage: [SEEDS="0 1 2"] benchmarks/studies/run_miniwob_fbc.sh OUT_DIR [task ...]
# (default tasks: click-link click-option click-checkboxes). Needs the browser extra and Chromium.
# Pages proceed independently, so episode timing (and with it the policy's sampling order) varies
# from run to run: the same seed does not reproduce a run bit for bit.
set -euo pipefail
out=${1:?usage: $0 OUT_DIR [task ...]}
shift
tasks=("$@")
[ ${#tasks[@]} -gt 0 ] || tasks=(click-link click-option click-checkboxes)
for t in "${tasks[@]}"; do
  for s in ${SEEDS:-0 1 2}; do
    E=("env.id=digirl/miniwob.$t-v0" env.num_envs=4 seed="$s")
    digirl sft "$out/$t-s$s-sft" "${E[@]}" sft.demos=4 sft.steps=30
    digirl train "$out/$t-s$s" "${E[@]}" mode=online policy.init="$out/$t-s$s-sft/policy" algo.name=filtered_bc \
      iterations=12 rollout_size=32 eval.test_tasks=50 eval.train_tasks=0 eval.every=4
  done
done
python3 "$(dirname "$0")/summarize_miniwob_fbc.py" "$out"
