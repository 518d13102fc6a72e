#!/usr/bin/env bash
# The seeds' recipe on our own pretrained screen VLM, screenshot only (policy.kind=hf), on one GPU:
#   1. the pretrained folder as a policy, as it stands (General and Web Shopping, test + validation);
#   2. SFT on expert demonstrations (General), evaluated;
#   3. DigiRL online from the SFT policy (General), evaluated every 2 iterations.
# Every step has a time cap within BUDGET_S seconds (a GPU loan is short); what finished is in OUT/summary.json.
#
#   bash benchmarks/gpu/run_vlm_recipe_gpu.sh MODEL_FOLDER OUT [ITERATIONS]
#
# No hyperparameter here was chosen on any result (selection split: none); validation is reported beside test.
set -u
MODEL=$1
OUT=$2
ITERS=${3:-6}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
HF=(policy.kind=hf env.num_envs=16 policy.hf.max_new_tokens=48)
EV=(eval.test_tasks=96 eval.val_tasks=32 eval.train_tasks=0)  # 32 General episodes took ~35 s on one H200
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/recipe.log"; }

BUDGET=${BUDGET_S:-540}  # seconds for all steps together; each step gets at most what is left
cap() { local left=$((BUDGET - SECONDS)); [ "$left" -gt "$1" ] && echo "$1" || echo $((left > 0 ? left : 1)); }

log "eval pretrained on general"
timeout "$(cap 240)" "$PY" -m digirl eval "$MODEL" "${HF[@]}" "${EV[@]}" env.id=digirl/sim-general-v0 --out "$OUT/pre-general" \
  >>"$OUT/recipe.log" 2>&1 || log "eval pretrained general: exit $?"

log "sft general"
timeout "$(cap 180)" "$PY" -m digirl sft "$OUT/sft-general" policy.init="$MODEL" policy.kind=hf env.num_envs=16 \
  env.id=digirl/sim-general-v0 sft.demos=256 sft.steps=300 sft.batch_size=64 sft.lr=3e-4 >>"$OUT/recipe.log" 2>&1 ||
  log "sft: exit $?"
timeout "$(cap 240)" "$PY" -m digirl eval "$OUT/sft-general/policy" "${HF[@]}" "${EV[@]}" env.id=digirl/sim-general-v0 \
  --out "$OUT/sft-general-eval" >>"$OUT/recipe.log" 2>&1 || log "eval sft: exit $?"

log "eval pretrained on webshop"
timeout "$(cap 240)" "$PY" -m digirl eval "$MODEL" "${HF[@]}" "${EV[@]}" env.id=digirl/sim-webshop-v0 --out "$OUT/pre-webshop" \
  >>"$OUT/recipe.log" 2>&1 || log "eval pretrained webshop: exit $?"

if [ $((BUDGET - SECONDS)) -gt 120 ]; then
  log "digirl online general, $ITERS iterations"
  timeout "$(cap 3600)" "$PY" -m digirl train "$OUT/digirl-general" policy.init="$OUT/sft-general/policy" "${HF[@]}" \
    env.id=digirl/sim-general-v0 mode=online iterations="$ITERS" rollout_size=64 algo.name=digirl \
    algo.lr=3e-5 algo.batch_size=32 eval.every=2 "${EV[@]}" log.tensorboard=false >>"$OUT/recipe.log" 2>&1 ||
    log "digirl: exit $?"
fi

"$PY" - "$OUT" "$MODEL" "$ITERS" <<'EOF'
import json, os, sys
from pathlib import Path
out = Path(sys.argv[1])
# provenance first: what the agent saw and how the settings were chosen (every stage's eval.json has its own command)
summary = {"observation": "screenshot", "selection_split": "none", "command": f"BUDGET_S={os.environ.get('BUDGET_S', '540')} bash benchmarks/gpu/run_vlm_recipe_gpu.sh {sys.argv[2]} {sys.argv[1]} {sys.argv[3]}"}
for f in sorted(out.glob("*/eval.json")):
    d = json.loads(f.read_text())
    summary[f.parent.name] = {k: d.get(k) for k in ("success_rate", "validation_success_rate", "test", "validation") if k in d} or d
m = out / "digirl-general" / "metrics.jsonl"
if m.is_file():
    summary["digirl-general-curve"] = [
        {k: v for k, v in json.loads(line).items() if "success" in k or k in ("iteration", "trajectories", "elapsed_s")}
        for line in m.read_text().splitlines() if line.strip()
    ]
(out / "summary.json").write_text(json.dumps(summary, indent=1))
print(json.dumps(summary, indent=1))
EOF
