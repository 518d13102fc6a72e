"""Digi-Q's critic against ground truth, its ablation switches, and safe best-of-N extraction (CPU).

Issue #40 items 1-4 at a small scale. Per seed (``--seed S``, the data seed too):

1. data: a noisy expert with habits (``expert_noise_sticky``) on ``--tasks`` train-split web searches;
   a weak start policy (SFT on the data's successes);
2. Digi-Q's stages once with N = 16 candidates (exact labels, encoder features fine-tuned on them), and
   the true value of every candidate of every stored state (replayed simulator, expert continuation);
3. critic rows: one critic per ``--critic NAME=OVERRIDES`` (``algo.digiq.*`` switches: action-aware
   inputs, the CQL term ...), all on the same stages; within-state Spearman and top-1 agreement of
   its out-of-fold Q against the true values (every state is scored by a critic that never saw it);
4. extraction rows, on the critics of ``--extract-critics``: best-of-N for N = 1, 4, 8, 16, as released
   (δ = 0.10, plain argmax) and safe (``algo.digiq.margin``: a proposal replaces the dataset action only
   when its advantage is higher by more than the margin, else the dataset action, kept if its
   advantage exceeds δ); each cloned from the start policy with the same actor budget; plus Filtered BC
   and offline DigiRL on the same data. Success on ``--val`` validation web searches.

``--final`` (after every seed): the recipe with the best mean validation success is evaluated on
``--test`` test web searches once, with the start, Filtered BC, offline DigiRL and released Digi-Q (N = 16).

Everything is resumable: a finished piece (data, SFT, stages, oracle, a critic, a row) is a file that a
rerun reads instead of recomputing. ``OUT/seed-S/...``; ``OUT/summary.json`` and ``summary.md``.

    nice -n 10 env PYTHONHASHSEED=0 python benchmarks/studies/digiq_critic_lab.py OUT --seed 0
    nice -n 10 env PYTHONHASHSEED=0 python benchmarks/studies/digiq_critic_lab.py OUT --final --seeds 0,1,2
"""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from digirl.algorithms.base import Sample, bc_update
from digirl.algorithms.digiq.algorithm import DigiQ
from digirl.algorithms.digiq.sidecar import Sidecar
from digirl.algorithms.registry import make_algorithm
from digirl.config.core import load_config
from digirl.data.store import TrajectoryStore
from digirl.envs.registry import make
from digirl.experiments.digiq_oracle import load_oracle, oracle_metrics, oracle_values
from digirl.policies.registry import load_policy
from digirl.sim.tasks.tasksets import load_taskset
from digirl.training.config import CollectConfig, SFTRunConfig, TrainConfig
from digirl.training.digiq import run_stages
from digirl.training.loop import train
from digirl.training.sft import collect, sft
from digirl.utils.provenance import result_metadata

log = logging.getLogger("digiq_critic_lab")

CRITICS = {  # in the order they run: the switches of issue #40 item 2, each alone, then combined
    "base": "",
    "element": "algo.digiq.action_features=element",
    "action": "algo.digiq.action_features=action",
    "noop": "algo.digiq.noop_td=1.0",
    "cql": "algo.digiq.conservative=1.0",
    "element_noop": "algo.digiq.action_features=element algo.digiq.noop_td=1.0",
    "outcome": "algo.digiq.outcome_td=1.0",
    "outcome_element": "algo.digiq.outcome_td=1.0 algo.digiq.action_features=element",
    "outcome_min": "algo.digiq.outcome_td=1.0 algo.digiq.twin=min",
    "outcome_max": "algo.digiq.outcome_td=1.0 algo.digiq.outcome_backup=max",
    "outcome_ce": "algo.digiq.outcome_td=1.0 algo.digiq.loss=ce",
    "outcome_max_ce": "algo.digiq.outcome_td=1.0 algo.digiq.outcome_backup=max algo.digiq.loss=ce",
    "outcome_long": "algo.digiq.outcome_td=1.0 algo.digiq.critic_steps=1500",
}
CURVE = (1, 4, 8, 16)
#: What every result of the lab records: the encoder backend reads the screenshot and the element list;
#: choices are read on validation (test only in ``--final``).
PROVENANCE = {"observation": "screenshot+elements", "selection_split": "validation"}
#: Extraction recipes: (δ, margin). "released": the argmax over candidates, kept above δ = 0.10.
RECIPES = {"released": (0.10, 0.0), "safe": (0.0, 0.05), "guard": (0.0, 1.0)}
#: Margins of the extraction sweep (δ = 0): a proposal replaces the dataset action only when its advantage is higher
#: by more than this; 1.0 never replaces it (advantages are in [-1, 1]), i.e. N = 1 with the critic's filter.
MARGINS = (0.0, 0.05, 0.1, 0.2, 0.3, 1.0)


def _json(path: Path, obj: Any) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(obj, indent=2))
    tmp.replace(path)


def _tasks(split: str, n: int) -> list[str]:
    return [t.instruction for t in load_taskset("general", split) if t.family == "web_search"][:n]


def evaluate(policy: Any, tasks: list[str], seed: int) -> float:
    """Greedy success over ``tasks`` (one episode each, episode seeds seed + i)."""
    env = make("digirl/sim-general-v0", perturbation=0)
    wins = 0.0
    for i, t in enumerate(tasks):
        obs, _ = env.reset(seed=seed + i, options={"task": t})
        r = 0.0
        for _ in range(env.default_horizon):
            obs, r, term, trunc, _ = env.step(policy.act([obs], greedy=True)[0].action)
            if term or trunc:
                break
        wins += float(r)
    return wins / len(tasks)


class Cell:
    """One seed: data, start policy, stages, ground truth, critics and rows, each cached in ``root``."""

    def __init__(self, out: Path, seed: int, args: argparse.Namespace) -> None:
        self.root = out / f"seed-{seed}"
        self.root.mkdir(parents=True, exist_ok=True)
        self.seed = seed
        self.args = args
        train_tasks = _tasks("train", args.tasks)
        (self.root / "tasks.txt").write_text("\n".join(train_tasks) + "\n")
        self.env = [f"env.task_file={self.root / 'tasks.txt'}", "env.runner=inline", "env.num_envs=1",
                    "env.perturbation=0", f"seed={seed}"]  # fmt: skip
        self.data = self.root / "data"
        self._trajs: list[Any] | None = None
        self.init = self.root / "sft" / "policy"
        self.base = [
            *self.env, "eval.test_tasks=0", "eval.train_tasks=0", "eval.val_tasks=0", "log.tensorboard=false",
            "mode=offline", f"offline_dataset={self.data}", f"policy.init={self.init}",
            f"algo.offline_actor_steps={args.actor_steps}", "algo.lr=2e-3", "algo.batch_size=32",
        ]  # fmt: skip
        self.digiq = [
            "algo.name=digiq", "algo.digiq.candidates=16", "algo.digiq.repft_steps=80",
            f"algo.digiq.critic_steps={args.critic_steps}", "algo.digiq.critic_hidden=128", "algo.digiq.folds=3",
            f"algo.digiq.data={self.root / 'stages'}", f"algo.digiq.workers={args.workers}",
        ]  # fmt: skip

    def trajs(self) -> list[Any]:
        """The dataset's usable trajectories, in the order Digi-Q scores them (loaded once)."""
        if self._trajs is None:
            self._trajs = [t for t in TrajectoryStore(self.data, create=False).load() if not t.env_failure and t.steps]
        return self._trajs

    def cfg(self, extra: str = "") -> TrainConfig:
        return load_config(TrainConfig, overrides=[*self.base, *self.digiq, *extra.split()])

    # ------------------------------------------------------------------ data and ground truth
    def prepare(self) -> None:
        a = self.args
        if not (self.data / "collect-config.yaml").exists():
            collect(load_config(CollectConfig, overrides=[*self.env, "expert=true", f"expert_noise={a.noise}",
                                                          "expert_noise_sticky=true", f"trajectories={a.trajectories}"]),
                    self.data)  # fmt: skip
        if not self.init.exists():
            policy = ["policy.default.dim=48", "policy.default.layers=1", "policy.default.heads=2"]
            sft(load_config(SFTRunConfig, overrides=[*self.env, *policy, f"sft.dataset={self.data}", "sft.steps=40"]),
                self.root / "sft")  # fmt: skip
        done = self.root / "oracle.json"  # written last: the stages and this many states' true values exist
        if not done.exists() or json.loads(done.read_text())["states"] != a.oracle_states:
            cfg = self.cfg()
            run_stages(cfg, self.root / "stages-run")
            m = oracle_values(cfg, self.root / "stages-run", max_states=a.oracle_states)
            _json(done, {"states": a.oracle_states, **m})

    # ------------------------------------------------------------------ critics
    def critic(self, name: str) -> dict[str, Any]:
        """Fit the critic variant ``name`` and compare its out-of-fold Q with the true values."""
        path = self.root / f"critic-{name}.json"
        if path.exists():
            done = dict(json.loads(path.read_text()))
            if "oracle/extractable/top1_agreement" not in done and path.with_suffix(".npz").exists():
                done |= self.rescore(name)  # a row from before the extractable figures: from its saved scores
                _json(path, done)
            return done
        cfg = self.cfg(CRITICS[name])
        stage: dict[str, Any] = {}
        if cfg.algo.digiq.outcome_td > 0:  # the executed proposals (shared by every row that asks for them)
            t0 = time.time()
            m = run_stages(cfg, self.root / "stages-run")
            stage = {"outcome_env_steps": m["train/digiq_outcome_env_steps"], "outcome_stage_s": time.time() - t0}
        torch.manual_seed(self.seed)
        algo = make_algorithm(load_policy(self.init), cfg.algo, seed=self.seed)
        assert isinstance(algo, DigiQ)
        t0 = time.time()
        c = algo.critique(TrajectoryStore(self.data, create=False).load())
        assert c is not None
        true = load_oracle(Sidecar(cfg.algo.digiq.data))
        steps = [(t.traj_id, h) for t, h in c.steps]
        res: dict[str, Any] = {
            **PROVENANCE,
            "overrides": CRITICS[name],
            "critic_s": time.time() - t0,
            **stage,
            **_figures(c.q, c.valid, steps, c.cands, true),
        }
        res |= {k: v for k, v in c.metrics.items() if k.startswith("critic/")}
        np.savez(self.root / f"critic-{name}.npz", q=c.q, v=c.v, valid=c.valid)
        rows: dict[str, Any] = {}
        trajs = {t.traj_id: t for t in c.trajs}
        for n in CURVE:
            for recipe, (delta, margin) in RECIPES.items():
                algo.dq.extract_candidates, algo.dq.delta, algo.dq.margin = n, delta, margin
                chosen, _, keep = algo.extract(c)
                picks = [(t.traj_id, h, int(j)) for (t, h), j, k in zip(c.steps, chosen, keep) if k]
                rows[f"{recipe}-n{n}"] = _cloned(picks, trajs, c.cands, true)
                (self.root / f"picks-{name}-{recipe}-n{n}.json").write_text(json.dumps(picks))
        res["extraction"] = rows
        _json(path, res)
        return res

    def rescore(self, name: str) -> dict[str, float]:
        """The oracle figures of critic ``name`` from its saved scores (``critic-NAME.npz``: Q and the candidates
        best-of-N may pick, per stored step in the dataset's order), without training it again."""
        z = np.load(self.root / f"critic-{name}.npz", allow_pickle=False)
        steps = [(t.traj_id, h) for t in self.trajs() for h in range(len(t.steps))]
        return _figures(z["q"], z["valid"], steps, _candidates(self.root / "stages"), load_oracle(Sidecar(self.root / "stages")))

    def sweep(self, name: str) -> dict[str, Any]:
        """What best-of-N clones at δ = 0 for every N of the curve and margin of ``MARGINS``, from the saved
        scores of critic ``name`` (no training): the true-best share and regret of the picks."""
        path = self.root / f"sweep-{name}.json"
        if path.exists():
            return dict(json.loads(path.read_text()))
        trajs = {t.traj_id: t for t in self.trajs()}
        cands = _candidates(self.root / "stages")
        true = load_oracle(Sidecar(self.root / "stages"))
        res = {f"n{n}-margin{m:g}": _cloned(self.picks(name, 0.0, m, n), trajs, cands, true) for n in CURVE for m in MARGINS}
        _json(path, res)
        return res

    def picks(self, name: str, delta: float, margin: float, n: int) -> list[tuple[str, int, int]]:
        """(traj_id, step, candidate) that best-of-N over the first ``n`` candidates keeps, from the saved scores of
        critic ``name`` (``algo.digiq.extract_candidates=n``, ``delta``, ``margin``)."""
        from digirl.algorithms.digiq.functional import best_of_n

        z = np.load(self.root / f"critic-{name}.npz")
        steps = [(t.traj_id, h) for t in self.trajs() for h in range(len(t.steps))]
        valid = z["valid"].copy()
        valid[:, n:] = False
        chosen, _, keep = best_of_n(z["q"], z["v"], valid, delta, use_candidates=n > 1, margin=margin)
        return [(tid, h, int(j)) for (tid, h), j, k in zip(steps, chosen, keep) if k]

    # ------------------------------------------------------------------ rows (validation success)
    def row(self, key: str) -> float:
        """Validation success of one row: start, fbc, digirl, or CRITIC:RECIPE-nN (BC of its picks); also the
        success on the data's own train-split tasks with new episode seeds (in distribution, not for choosing)."""
        path = self.root / "rows" / f"{key.replace(':', '__')}.json"
        res = json.loads(path.read_text()) if path.exists() else {}
        if "validation" not in res or "train_tasks" not in res:
            path.parent.mkdir(exist_ok=True)
            policy_dir = self.policy_dir(key)
            policy = load_policy(policy_dir)
            if "validation" not in res:
                val = _tasks("validation", self.args.val)
                res = {
                    **PROVENANCE,
                    "row": key,
                    "validation": evaluate(policy, val, seed=1000),
                    "episodes": len(val),
                    "policy": str(policy_dir),
                }
            res["train_tasks"] = evaluate(policy, _tasks("train", self.args.tasks), seed=2000)
            _json(path, res)
        return float(res["validation"])

    def policy_dir(self, key: str) -> Path:
        if key == "start":
            return self.init
        if key in ("fbc", "digirl"):
            run = self.root / key
            if not (run / "policy").exists():
                algo = "filtered_bc" if key == "fbc" else "digirl"
                train(load_config(TrainConfig, overrides=[*self.base, f"algo.name={algo}"]), run)
            return run / "policy"
        critic, recipe = key.split(":")
        out = self.root / "bc" / key.replace(":", "__")
        if not (out / "policy.json").exists() and not any(out.glob("*.safetensors")):
            self.critic(critic)
            name, n = recipe.rsplit("-n", 1)
            picks = self.picks(critic, *RECIPES[name], int(n))
            cands = _candidates(self.root / "stages")
            trajs = {t.traj_id: t for t in self.trajs()}
            samples = [Sample(trajs[tid].steps[h].observation, cands[(tid, h)][j]) for tid, h, j in picks]
            torch.manual_seed(self.seed)
            policy = load_policy(self.init)
            opt = torch.optim.AdamW(policy.parameters(), lr=2e-3)  # type: ignore[attr-defined]
            if samples:
                bc_update(policy, opt, samples, steps=self.args.actor_steps, batch_size=32, grad_accum=1,  # type: ignore[arg-type]
                          max_grad_norm=1.0, rng=np.random.default_rng(self.seed))  # fmt: skip
            policy.save(out)
        return out


def _figures(
    q: np.ndarray, valid: np.ndarray, steps: list[tuple[str, int]], cands: Any, true: dict[tuple[str, int, int], float]
) -> dict[str, float]:
    """The oracle figures of scores ``q`` [S, N] with the pickable mask ``valid`` of the stored steps ``steps``."""
    learned = {k: [float(x) for x in q[i, : len(cands[k])]] for i, k in enumerate(steps)}
    pickable = {k: [bool(x) for x in valid[i, : len(cands[k])]] for i, k in enumerate(steps)}
    return oracle_metrics(learned, true, pickable)


def _candidates(stages: Path) -> Any:
    from digirl.algorithms.digiq.stages import load_candidates

    return load_candidates(Sidecar(stages))


def _cloned(
    picks: list[tuple[str, int, int]], trajs: dict[str, Any], cands: Any, true: dict[tuple[str, int, int], float]
) -> dict[str, float]:
    """What an extraction clones: samples, noisy dataset actions, proposals, true-best share, regret."""
    noisy = [j == 0 and h in trajs[tid].metadata.get("noisy_steps", ()) for tid, h, j in picks]
    best, regret = [], []
    for tid, h, j in picks:
        vals = [true.get((tid, h, k)) for k in range(len(cands[(tid, h)]))]
        if any(x is None for x in vals):
            continue
        v = np.array(vals, dtype=np.float64)
        best.append(float(v[j] >= v.max() - 1e-9))
        regret.append(float(v.max() - v[j]))
    mean = lambda x: float(np.mean(x)) if len(x) else float("nan")  # noqa: E731
    return {"samples": float(len(picks)), "noisy_dataset_action": mean(noisy), "proposal": mean([j != 0 for *_, j in picks]),
            "best_true_value": mean(best), "true_regret": mean(regret)}  # fmt: skip


def rows_of(args: argparse.Namespace) -> list[str]:
    # the N = 16 rows first (released vs safe), then the rest of each curve; DigiRL last (its critic is the slowest)
    critics = args.extract_critics.split(",")
    first = ("released", "guard")
    keys = ["start", "fbc"] + [f"{c}:{r}-n16" for c in critics for r in first]
    keys += [f"{c}:{r}-n{n}" for n in CURVE[:-1] for c in critics for r in first]
    keys += [f"{c}:safe-n{n}" for n in CURVE[::-1] for c in critics]
    return keys + (["digirl"] if args.digirl else [])


_CRITIC_KEYS = (
    "oracle/spearman", "oracle/spearman_within_state", "oracle/top1_agreement", "oracle/top1_dataset_action",
    "oracle/top1_random", "oracle/value_chosen", "oracle/value_dataset_action", "oracle/value_best",
    "oracle/extractable/spearman_within_state", "oracle/extractable/top1_agreement",
    "oracle/extractable/top1_dataset_action", "oracle/extractable/top1_random",
)  # fmt: skip


def summarize(out: Path, seeds: list[int], args: argparse.Namespace) -> dict[str, Any]:
    critics: dict[str, dict[str, list[float]]] = {}
    rows: dict[str, list[float]] = {}
    train_rows: dict[str, list[float]] = {}
    for s in seeds:
        root = out / f"seed-{s}"
        for name in CRITICS:
            p = root / f"critic-{name}.json"
            if p.exists():
                d = json.loads(p.read_text())
                for k in _CRITIC_KEYS:  # rows from before the extractable figures lack them: nan
                    critics.setdefault(name, {}).setdefault(k, []).append(float(d.get(k, float("nan"))))
        for p in sorted((root / "rows").glob("*.json")) if (root / "rows").exists() else []:
            d = json.loads(p.read_text())
            rows.setdefault(d["row"], []).append(float(d["validation"]))
            if "train_tasks" in d:
                train_rows.setdefault(d["row"], []).append(float(d["train_tasks"]))
    return {"critics": critics, "validation": rows, "train_tasks": train_rows}


def render(summary: dict[str, Any]) -> str:
    """Two markdown tables: the critics against ground truth, and validation success per row (per seed)."""

    def cell(xs: list[float]) -> str:
        xs = [x for x in xs if np.isfinite(x)]  # a row from before a figure existed has none
        if not xs:
            return "—"
        return " / ".join(f"{x:.2f}" for x in xs) + (f" (mean {np.mean(xs):.2f})" if len(xs) > 1 else "")

    lines = ["| critic | within-state Spearman | top-1 | top-1 dataset action | top-1 random | Spearman, all pairs |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    for name, m in summary["critics"].items():
        lines.append(
            f"| {name} (`{CRITICS[name] or 'as released'}`) | {cell(m['oracle/spearman_within_state'])} | "
            f"{cell(m['oracle/top1_agreement'])} | {cell(m['oracle/top1_dataset_action'])} | {cell(m['oracle/top1_random'])} | "
            f"{cell(m['oracle/spearman'])} |"
        )
    lines += ["", "Over the candidates best-of-N may pick (valid, not labelled as leaving the screen unchanged):", "",
              "| critic | within-state Spearman | top-1 | top-1 dataset action | top-1 random |",
              "|---|---|---|---|---|"]  # fmt: skip
    for name, m in summary["critics"].items():
        e = "oracle/extractable/"
        lines.append(
            f"| {name} | {cell(m.get(e + 'spearman_within_state', []))} | {cell(m.get(e + 'top1_agreement', []))} | "
            f"{cell(m.get(e + 'top1_dataset_action', []))} | {cell(m.get(e + 'top1_random', []))} |"
        )
    lines += ["", "| row | validation success per seed |", "|---|---|"]
    lines += [f"| {k} | {cell(v)} |" for k, v in summary["validation"].items()]
    if summary.get("train_tasks"):
        lines += ["", "| row | success on the data's own tasks (new episode seeds) per seed |", "|---|---|"]
        lines += [f"| {k} | {cell(v)} |" for k, v in summary["train_tasks"].items()]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seeds", default="0,1,2", help="--final / --summary: the seeds to read")
    ap.add_argument("--tasks", type=int, default=16, help="train-split web searches in the data")
    ap.add_argument("--noise", type=float, default=0.5)
    ap.add_argument("--trajectories", type=int, default=64)
    ap.add_argument("--oracle-states", type=int, default=96, help="stored states whose every candidate gets a true value")
    ap.add_argument("--workers", type=int, default=1, help="processes of the exact-label and ground-truth stages")
    ap.add_argument("--actor-steps", type=int, default=150)
    ap.add_argument("--critic-steps", type=int, default=300)
    ap.add_argument("--val", type=int, default=24, help="validation web searches per row (one episode each)")
    ap.add_argument("--test", type=int, default=48, help="test web searches of the final evaluation")
    ap.add_argument("--critics", default=",".join(CRITICS), help="critic rows")
    ap.add_argument("--extract-critics", default="base,element", help="critics whose extraction curve is trained")
    ap.add_argument("--rows", default="", help="only these success rows, in this order (e.g. start,fbc,outcome:guard-n16)")
    ap.add_argument("--digirl", action="store_true", help="also offline DigiRL")
    ap.add_argument("--only-critics", action="store_true", help="stop after the critic rows")
    ap.add_argument("--final", action="store_true", help="the validation-chosen recipe and the baselines on test, once")
    ap.add_argument("--summary", action="store_true", help="only rewrite OUT/summary.json")
    ap.add_argument("--sweep", action="store_true", help="only the margin sweeps of the finished critics, then the summary")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    seeds = [int(s) for s in args.seeds.split(",")]
    meta = result_metadata(**PROVENANCE, command=sys.argv)
    if args.final:
        final(out, seeds, args, meta)
    elif args.sweep:
        for s in seeds:
            cell = Cell(out, s, args)
            for name in CRITICS:
                if (cell.root / f"critic-{name}.npz").exists():
                    cell.sweep(name)
    elif not args.summary:
        cell = Cell(out, args.seed, args)
        t0 = time.time()
        cell.prepare()
        log.info("seed %d: prepared in %.0f s", args.seed, time.time() - t0)
        for name in args.critics.split(","):
            r = cell.critic(name)
            cell.sweep(name)
            log.info("critic %s: within-state %.3f top1 %.3f (dataset action %.3f)", name,
                     r["oracle/spearman_within_state"], r["oracle/top1_agreement"], r["oracle/top1_dataset_action"])  # fmt: skip
        if not args.only_critics:
            for key in args.rows.split(",") if args.rows else rows_of(args):
                log.info("row %s: validation %.3f", key, cell.row(key))
    summary = {"meta": meta, "seeds": seeds, "args": vars(args), **summarize(out, seeds, args)}
    _json(out / "summary.json", summary)
    (out / "summary.md").write_text(render(summary))
    print(shlex.join(sys.argv))


def final(out: Path, seeds: list[int], args: argparse.Namespace, meta: dict[str, Any]) -> None:
    """Choose the Digi-Q recipe on validation (seed mean), then evaluate it and the baselines on test once."""
    s = summarize(out, seeds, args)["validation"]
    digiq = {k: v for k, v in s.items() if ":" in k and len(v) == len(seeds)}
    if not digiq:
        raise SystemExit("no Digi-Q row finished on every seed")
    # every recipe at the best validation mean (counts of episodes: exact ties happen); none is preferred by name
    best = max(round(float(np.mean(v)) * 1e9) for v in digiq.values())
    chosen = sorted(k for k, v in digiq.items() if round(float(np.mean(v)) * 1e9) == best)
    released = [f"{c}:released-n16" for c in args.extract_critics.split(",")]
    keys = ["start", "fbc", *released, *chosen] + (["digirl"] if args.digirl else [])
    test = _tasks("test", args.test)
    res: dict[str, Any] = {"meta": meta, "chosen_on_validation": chosen, "test_tasks": len(test), "test": {}}
    for k in dict.fromkeys(keys):
        per_seed = []
        for seed in seeds:
            cell = Cell(out, seed, args)
            per_seed.append(evaluate(load_policy(cell.policy_dir(k)), test, seed=5000))
        res["test"][k] = {"per_seed": per_seed, "mean": float(np.mean(per_seed)), "std": float(np.std(per_seed, ddof=1))}
        log.info("test %s: %s", k, per_seed)
    _json(out / "final.json", res)


if __name__ == "__main__":
    main()
