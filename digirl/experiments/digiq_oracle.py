"""Critic quality against ground truth: the true value of every candidate action on held-out states.

The simulator can do what no real device can: replay an episode to any stored state, apply each
candidate action to a copy, and roll out a continuation — the scripted expert (deterministic: one
rollout) or the behaviour policy (``rollouts`` samples) — to the end of the episode. The discounted
return of that rollout is the candidate's true value; the learned Q of the same candidates (from a
run's annotations) is compared with it:

- Spearman rank correlation over all (state, candidate) pairs, and its mean within states;
- top-1 agreement: how often the candidate with the highest learned Q is among the truly best ones
  (states whose candidates do not all have the same true value), with the rates of a random pick and
  of always taking the dataset action for comparison;
- the mean true value of the candidate best-of-N would choose, of the dataset action, and of the best.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from digirl.algorithms.digiq.sidecar import Sidecar
from digirl.core.codecs import action_from_dict
from digirl.core.types import Trajectory
from digirl.training.config import TrainConfig

__all__ = ["oracle_metrics", "oracle_values", "pickable_of", "spearman"]

log = logging.getLogger(__name__)


def rank_average(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties given their average rank."""
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x))
    sx = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and sx[j + 1] == sx[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Spearman's rank correlation (Pearson on average ranks); NaN when either side is constant."""
    ra, rb = rank_average(np.asarray(a)), rank_average(np.asarray(b))
    if len(ra) < 2 or ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


# ---------------------------------------------------------------------------- ground truth
def _oracle_job(
    env_id: str,
    env_kwargs: dict[str, Any],
    payloads: list[dict[str, Any]],
    gamma: float,
    continuation: str,
    policy_dir: str | None,
    rollouts: int,
    seed: int,
) -> list[dict[str, Any]]:
    """True values of the candidates of the wanted steps (``payload["steps"]``) of each trajectory."""
    from digirl.training.digiq import ReplayError, _env, fork_env, replay_states

    env = _env(env_id, env_kwargs)
    policy = None
    if continuation == "policy":
        from digirl.policies.registry import load_policy

        assert policy_dir is not None
        policy = load_policy(policy_dir, device="cpu")
        if hasattr(policy, "_gen"):
            policy._gen.manual_seed(seed)
    out: list[dict[str, Any]] = []
    for p in payloads:
        try:
            for h, e, _ in replay_states(env, p, p["steps"]):
                # (candidate j, rollout k) → fork, its observation, return so far, discount, done
                live: list[list[Any]] = []
                for j, d in enumerate(p["cands"][h]):
                    for _k in range(rollouts):
                        f = fork_env(e)
                        obs, r, term, trunc, _ = f.step(action_from_dict(d))
                        live.append([j, f, obs, float(r), 1.0, term or trunc])
                while any(not x[5] for x in live):
                    active = [x for x in live if not x[5]]
                    if policy is not None:
                        acts = [o.action for o in policy.act([x[2] for x in active], greedy=False, temperature=1.0)]
                    else:
                        acts = [x[1].cheat() for x in active]
                    for x, a in zip(active, acts):
                        x[4] *= gamma
                        x[2], r, term, trunc, _ = x[1].step(a)
                        x[3] += x[4] * float(r)
                        x[5] = term or trunc
                for j in range(len(p["cands"][h])):
                    g = [x[3] for x in live if x[0] == j]
                    out.append({"traj_id": p["traj_id"], "step": h, "cand": j, "value": float(np.mean(g)),
                                "success": float(np.mean([v > 0 for v in g])), "rollouts": len(g)})  # fmt: skip
        except ReplayError as err:
            out.append({"traj_id": p["traj_id"], "failed": str(err)})
    return out


def oracle_values(
    cfg: TrainConfig,
    run_dir: str | Path,
    *,
    continuation: Literal["expert", "policy"] = "expert",
    rollouts: int = 1,
    max_states: int = 400,
) -> dict[str, float]:
    """True values of the candidates of up to ``max_states`` held-out states (the critic's held-out
    trajectories, in dataset order) into the sidecar stage ``oracle/<continuation>``."""
    from digirl.algorithms.digiq.algorithm import critic_trains_on, fold_of
    from digirl.algorithms.digiq.stages import load_candidates
    from digirl.training.digiq import _payload, load_dataset, replay_env_config, replay_results, sidecar_of
    from digirl.utils.progress import progress

    cfg = sidecar_of(cfg, run_dir)
    dq = cfg.algo.digiq
    env_id, env_kwargs = replay_env_config(cfg)
    from digirl.envs.registry import env_has

    if not env_has(env_id, "state_replay"):
        raise ValueError(f"ground-truth values need the simulator; the dataset comes from {env_id}")
    if continuation == "policy" and not cfg.policy.init:
        raise ValueError("continuation=policy needs policy.init (the behaviour policy)")
    rollouts = 1 if continuation == "expert" else max(1, rollouts)
    sidecar = Sidecar(dq.data)
    cands = load_candidates(sidecar)
    # states whose scoring critic never trained on them (all of them with folds > 1)
    trajs = [t for t in load_dataset(cfg) if not critic_trains_on(t.traj_id, fold_of(t.traj_id, dq.folds), dq)]
    chosen: list[tuple[Trajectory, list[int]]] = []
    n = 0
    for t in trajs:
        steps = [h for h in range(len(t.steps)) if (t.traj_id, h) in cands][: max_states - n]
        if steps:
            chosen.append((t, steps))
            n += len(steps)
        if n >= max_states:
            break
    ident = None if continuation == "expert" else _policy_fingerprint(cfg.policy.init)
    stage = sidecar.stage(f"oracle/{continuation}")
    failed: list[str] = []
    with stage.lock():
        stage.check_meta({"gamma": cfg.algo.gamma, "continuation": continuation, "rollouts": rollouts, "policy": ident})
        done = {(k[0], k[1]) for k in stage.keys()}
        todo = [(t, [h for h in hs if (t.traj_id, h) not in done]) for t, hs in chosen]
        todo = [(t, hs) for t, hs in todo if hs]
        jobs = []
        for i in range(0, len(todo), 4):
            payloads = []
            for t, hs in todo[i : i + 4]:
                p = _payload(t, cands)
                p["steps"] = hs
                payloads.append(p)
            jobs.append((env_id, env_kwargs, payloads, cfg.algo.gamma, continuation, cfg.policy.init, rollouts, cfg.seed + i))
        with progress(sum(len(hs) for _, hs in todo), f"digiq oracle ({continuation})") as bar:
            for res, job in replay_results(_oracle_job, jobs, dq.workers, failed):
                rows: dict[str, list[Any]] = {"traj_id": [], "step": [], "cand": [], "value": [], "success": [], "rollouts": []}
                for r in res:
                    for k in rows:
                        rows[k].append(r[k])
                stage.write_rows(rows)
                bar.advance(sum(len(p["steps"]) for p in job[2]))
    if failed:
        log.warning("%d held-out trajectories did not replay, e.g. %s", len(failed), failed[0])
    return {"oracle/states_computed": float(n), "oracle/replay_failures": float(len(failed))}


def _policy_fingerprint(path: str | None) -> str | None:
    if path is None:
        return None
    h = hashlib.sha256()
    for p in sorted(Path(path).glob("*")):
        if p.is_file():
            h.update(p.name.encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


# ---------------------------------------------------------------------------- learned vs true
def load_oracle(sidecar: Sidecar, continuation: str = "expert") -> dict[tuple[str, int, int], float]:
    return {
        (str(r["traj_id"]), int(r["step"]), int(r["cand"])): float(r["value"])
        for r in sidecar.stage(f"oracle/{continuation}").rows()
    }


def oracle_metrics(
    learned: dict[tuple[str, int], list[float]],
    true: dict[tuple[str, int, int], float],
    pickable: dict[tuple[str, int], list[bool]] | None = None,
) -> dict[str, float]:
    """Compare learned Q of each state's candidates (``learned[(traj_id, step)]``, candidate order)
    with their true values (see the module docstring). Keys ``oracle/…``. With ``pickable`` (per state,
    which candidates best-of-N may choose: valid, and not labelled as leaving the screen unchanged) the
    within-state figures are also given over those candidates only, under ``oracle/extractable/…``."""
    out = _metrics(learned, true, None)
    if pickable is not None:
        sub = _metrics(learned, true, pickable)
        keep = ("spearman_within_state", "decisive_states", "top1_agreement", "top1_random", "top1_dataset_action",
                "value_chosen", "value_best")  # fmt: skip
        out |= {f"oracle/extractable/{k}": sub[f"oracle/{k}"] for k in keep}
    return out


def _metrics(
    learned: dict[tuple[str, int], list[float]],
    true: dict[tuple[str, int, int], float],
    pickable: dict[tuple[str, int], list[bool]] | None,
) -> dict[str, float]:
    pairs_q: list[float] = []
    pairs_t: list[float] = []
    per_state: list[float] = []
    top1: list[float] = []
    rand1: list[float] = []
    data1: list[float] = []
    v_chosen: list[float] = []
    v_data: list[float] = []
    v_best: list[float] = []
    n_states = 0
    for (tid, h), qs in learned.items():
        ts = [true.get((tid, h, j)) for j in range(len(qs))]
        if any(t is None for t in ts) or not qs:
            continue
        idx = list(range(len(qs)))
        if pickable is not None:
            mask = pickable.get((tid, h), [])
            idx = [j for j in idx if j < len(mask) and mask[j]]
            if len(idx) < 2:  # nothing to choose between
                continue
        tv = np.array([ts[j] for j in idx], dtype=np.float64)
        qv = np.array([qs[j] for j in idx], dtype=np.float64)
        n_states += 1
        pairs_q += qv.tolist()
        pairs_t += tv.tolist()
        j = int(np.argmax(qv))
        v_chosen.append(tv[j])
        v_data.append(tv[0] if idx[0] == 0 else float("nan"))
        v_best.append(tv.max())
        if tv.max() > tv.min():
            best = tv == tv.max()
            top1.append(float(best[j]))
            rand1.append(float(best.mean()))
            data1.append(float(best[0]) if idx[0] == 0 else 0.0)  # a dataset action that cannot be picked is never best
            rho = spearman(qv, tv)
            if np.isfinite(rho):
                per_state.append(rho)
    return {
        "oracle/states": float(n_states),
        "oracle/pairs": float(len(pairs_q)),
        "oracle/spearman": spearman(pairs_q, pairs_t) if pairs_q else float("nan"),
        "oracle/spearman_within_state": float(np.mean(per_state)) if per_state else float("nan"),
        "oracle/decisive_states": float(len(top1)),
        "oracle/top1_agreement": float(np.mean(top1)) if top1 else float("nan"),
        "oracle/top1_random": float(np.mean(rand1)) if rand1 else float("nan"),
        "oracle/top1_dataset_action": float(np.mean(data1)) if data1 else float("nan"),
        "oracle/value_chosen": float(np.mean(v_chosen)) if v_chosen else float("nan"),
        "oracle/value_dataset_action": float(np.nanmean(v_data)) if v_data and not np.all(np.isnan(v_data)) else float("nan"),
        "oracle/value_best": float(np.mean(v_best)) if v_best else float("nan"),
    }


def learned_q(run_dir: str | Path, *, heldout_only: bool = True) -> dict[tuple[str, int], list[float]]:
    """Learned Q of every candidate from a Digi-Q run's latest annotations."""
    return {k: [q for q, _ in v] for k, v in _annotated(run_dir, heldout_only).items()}


def pickable_of(run_dir: str | Path, *, heldout_only: bool = True) -> dict[tuple[str, int], list[bool]]:
    """Which candidates best-of-N could choose, per state, from a Digi-Q run's latest annotations."""
    return {k: [ok for _, ok in v] for k, v in _annotated(run_dir, heldout_only).items()}


def _annotated(run_dir: str | Path, heldout_only: bool) -> dict[tuple[str, int], list[tuple[float, bool]]]:
    from digirl.data.annotations import ANNOTATIONS_DIR, read_annotations

    out: dict[tuple[str, int], list[tuple[float, bool]]] = {}
    for a in read_annotations(Path(run_dir) / ANNOTATIONS_DIR):
        cs = a.extra.get("candidates")
        if a.step < 0 or not cs or (heldout_only and not a.extra.get("heldout")):
            continue
        out[(a.traj_id, a.step)] = [(float(c["q"]), bool(c.get("valid", True))) for c in cs]
    return out


def evaluate_run(cfg: TrainConfig, run_dir: str | Path, *, continuation: Literal["expert", "policy"] = "expert",
                 rollouts: int = 1, max_states: int = 400) -> dict[str, Any]:  # fmt: skip
    """Ground-truth values (computed once per dataset) vs the run's learned Q; writes ``RUN/digiq-oracle.json``."""
    from digirl.training.digiq import sidecar_of

    cfg = sidecar_of(cfg, run_dir)
    computed = oracle_values(cfg, run_dir, continuation=continuation, rollouts=rollouts, max_states=max_states)
    learned = learned_q(run_dir)
    if not learned:
        raise ValueError(f"{run_dir}: no Digi-Q annotations with candidates (train the run first)")
    metrics = oracle_metrics(learned, load_oracle(Sidecar(cfg.algo.digiq.data), continuation), pickable_of(run_dir))
    rollouts = 1 if continuation == "expert" else rollouts
    res = {"run": str(run_dir), "continuation": continuation, "rollouts": rollouts, **computed, **metrics}
    (Path(run_dir) / f"digiq-oracle-{continuation}.json").write_text(json.dumps(res, indent=2))
    return res
