"""Digi-Q's stages on a stored dataset, and ``digirl digiq train``.

``digirl digiq propose | label | repft | featurize | train RUN offline_dataset=D policy.init=P ...``:
each stage writes keyed sidecar parts into ``algo.digiq.data`` (default ``RUN/digiq``), resumes after
``kill -9`` by computing only the missing keys, and runs the stages before it when they are missing.
``train`` runs every missing stage, then the training loop with ``algo.name=digiq``.

Exact labels (simulator datasets): the simulator is deterministic given the episode seed and the
actions, so every stored state is reached again by replaying the episode; each candidate is applied to
a copy of that state and labelled "Yes" when its screen differs from the screen after a no-op (a tap
on the status-bar clock, the expert's "wait"), so loading screens that advance on their own are not
credited to the action. A trajectory whose replay does not reproduce its stored screenshots (another
perturbation level, a non-simulator env) falls back to the pixel heuristic.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from digirl.algorithms.digiq.sidecar import Sidecar
from digirl.core.actions import Action
from digirl.core.codecs import action_from_dict, action_to_dict
from digirl.core.types import TaskSpec, Trajectory
from digirl.training.config import TrainConfig

__all__ = ["STAGES", "ReplayError", "fork_env", "replay_states", "run_stages", "sidecar_of", "train_digiq"]

log = logging.getLogger(__name__)

STAGES = ("propose", "label", "repft", "featurize", "outcomes")


class ReplayError(RuntimeError):
    """Replaying a trajectory did not reproduce its stored screens."""


def sidecar_of(cfg: TrainConfig, run_dir: str | Path) -> TrainConfig:
    """``cfg`` with ``algo.name=digiq`` and ``algo.digiq.data`` set (default ``RUN/digiq``)."""
    data = cfg.algo.digiq.data or str(Path(run_dir) / "digiq")
    return replace(cfg, algo=replace(cfg.algo, name="digiq", digiq=replace(cfg.algo.digiq, data=data)))


def load_dataset(cfg: TrainConfig) -> list[Trajectory]:
    from digirl.data.store import TrajectoryStore

    if not cfg.offline_dataset:
        raise ValueError("Digi-Q's stages need offline_dataset=PATH (a dataset from `digirl collect`)")
    trajs = TrajectoryStore(cfg.offline_dataset, create=False).load()
    return [t for t in trajs if not t.env_failure and t.steps]


def replay_env_config(cfg: TrainConfig) -> tuple[str, dict[str, Any]]:
    """The env that produced the dataset: its ``collect-config.yaml`` when present, else ``cfg.env``."""
    env = cfg.env
    assert cfg.offline_dataset is not None
    saved = Path(cfg.offline_dataset) / "collect-config.yaml"
    if saved.is_file():
        from digirl.config.core import load_config
        from digirl.training.config import CollectConfig

        try:
            env = load_config(CollectConfig, preset=str(saved)).env
        except Exception as e:  # a config of another digirl version: replay verification still guards
            log.warning("%s: not readable (%s); replaying with the run's env config", saved, e)
    return env.id, env.env_kwargs()


# ---------------------------------------------------------------------------- replaying episodes
_FORK_LOCK = threading.Lock()


def _deepcopy_function(f: types.FunctionType, memo: dict[int, Any]) -> types.FunctionType:
    """A closure copied with its captured objects (``copy`` treats functions as atomic, so a copied
    view's ``on_tap`` closure would still act on the original phone)."""
    if not f.__closure__ and not f.__defaults__ and not f.__kwdefaults__:
        return f
    cells = tuple(
        types.CellType(copy.deepcopy(c.cell_contents, memo)) if _filled(c) else types.CellType() for c in f.__closure__ or ()
    )
    g = types.FunctionType(f.__code__, f.__globals__, f.__name__, copy.deepcopy(f.__defaults__, memo), cells or f.__closure__)
    g.__kwdefaults__ = copy.deepcopy(f.__kwdefaults__, memo)
    g.__dict__.update(f.__dict__)
    g.__qualname__ = f.__qualname__
    memo[id(f)] = g
    return g


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 (an empty cell raises)
    except ValueError:
        return False
    return True


def fork_env(env: Any) -> Any:
    """An independent copy of a pure-Python env mid-episode: its objects *and the closures that
    capture them* are copied (the renderer and the task list, which are stateless caches, are shared).
    Stepping the copy never changes ``env`` (``tests/training/test_digiq_stages.py`` checks it)."""
    memo: dict[int, Any] = {}
    for name in ("renderer", "_tasks"):
        v = getattr(env, name, None)
        if v is not None:
            memo[id(v)] = v
    phone = getattr(env, "phone", None)  # the simulator's view caches: rebuilt by the copy on demand
    if getattr(phone, "_tree", None) is not None:
        memo[id(phone._tree)] = None  # type: ignore[union-attr]
    if isinstance(getattr(phone, "_static", None), dict):
        memo[id(phone._static)] = {}  # type: ignore[union-attr]
    dispatch = copy._deepcopy_dispatch  # type: ignore[attr-defined]
    with _FORK_LOCK:
        saved = dispatch[types.FunctionType]
        dispatch[types.FunctionType] = _deepcopy_function
        try:
            return copy.deepcopy(env, memo)
        finally:
            dispatch[types.FunctionType] = saved


def _shot_hash(a: np.ndarray) -> str:
    return hashlib.blake2b(np.ascontiguousarray(a).tobytes(), digest_size=12).hexdigest()


def _payload(
    t: Trajectory, cands: dict[tuple[str, int], list[Action]] | None = None, *, with_hashes: bool = True
) -> dict[str, Any]:
    """What a replay worker needs of a trajectory (no screenshots: their hashes)."""
    return {
        "traj_id": t.traj_id,
        "task": t.task.to_dict(),
        "seed": t.seed,
        "actions": [action_to_dict(s.action) for s in t.steps],
        "hashes": [_shot_hash(s.observation.screenshot) for s in t.steps] if with_hashes else [],
        "cands": {h: [action_to_dict(a) for a in cands[(t.traj_id, h)]] for h in range(len(t.steps))} if cands else {},
    }


_ENVS: dict[str, Any] = {}


def _env(env_id: str, env_kwargs: dict[str, Any]) -> Any:
    key = json.dumps([env_id, env_kwargs], sort_keys=True)
    if key not in _ENVS:
        from digirl.envs.registry import make

        _ENVS[key] = make(env_id, **env_kwargs)
    return _ENVS[key]


def replay_states(env: Any, p: dict[str, Any], steps: Sequence[int] | None = None) -> Iterator[tuple[int, Any, Any]]:
    """Reset ``env`` to the trajectory's episode and yield (h, env at s_h, observation s_h) for the
    wanted steps, checking every replayed screen against the stored one (:class:`ReplayError` on a
    mismatch). Fork the env (:func:`fork_env`) before stepping it: the replay continues from it."""
    if p["seed"] is None:
        raise ReplayError(f"trajectory {p['traj_id']} has no seed; it cannot be replayed")
    obs, _ = env.reset(seed=int(p["seed"]), options={"task": TaskSpec.from_dict(p["task"])})
    wanted = set(range(len(p["actions"]))) if steps is None else set(steps)
    for h, a in enumerate(p["actions"]):
        if p["hashes"] and _shot_hash(obs.screenshot) != p["hashes"][h]:
            raise ReplayError(f"trajectory {p['traj_id']}: replayed screen {h} differs from the stored one")
        if h in wanted:
            yield h, env, obs
        if h == max(wanted, default=-1):
            return
        obs, *_ = env.step(action_from_dict(a))


def _noop(obs: Any) -> Action | None:
    """A tap that changes nothing: the status-bar clock (the scripted expert's "wait")."""
    for el in obs.elements or ():
        if el.ref == "status.clock":
            return Action.tap(*el.center)
    return None


def _screen_after(env: Any, action: Action) -> np.ndarray | None:
    """The screen after ``action`` on a copy of ``env`` (None when it ends the episode)."""
    if action.ends_episode or not action.is_valid:
        return None
    e = fork_env(env)
    obs, *_ = e.step(action)
    out: np.ndarray = obs.screenshot
    return out


_Rows = list[dict[str, Any]]
_RowsOf = Callable[[Any, dict[str, Any]], _Rows]


def _replay_job(env_id: str, env_kwargs: dict[str, Any], payloads: list[dict[str, Any]], rows_of: _RowsOf) -> _Rows:
    """``rows_of(env, payload)`` for every trajectory of ``payloads``; one that does not replay gets no rows
    (``{"traj_id": ..., "failed": reason}`` instead)."""
    env = _env(env_id, env_kwargs)
    out: list[dict[str, Any]] = []
    for p in payloads:
        try:
            out += rows_of(env, p)
        except ReplayError as err:
            out.append({"traj_id": p["traj_id"], "failed": str(err)})
    return out


def _label_rows(env: Any, p: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for h, e, obs in replay_states(env, p):
        noop = _noop(obs)
        after_noop = _screen_after(e, noop) if noop is not None else None
        base: np.ndarray = after_noop if after_noop is not None else obs.screenshot
        for j, d in enumerate(p["cands"][h]):
            a = action_from_dict(d)
            label: bool | None = None  # ending the episode: the question does not apply
            if not a.is_valid:
                label = False
            elif not a.ends_episode:
                after = _screen_after(e, a)
                label = after is not None and not np.array_equal(after, base)
            rows.append({"traj_id": p["traj_id"], "step": h, "cand": j, "label": label})
    return rows


def _exact_labels_job(env_id: str, env_kwargs: dict[str, Any], payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Label every candidate of every step of ``payloads`` (see :func:`_replay_job` for trajectories that do not replay)."""
    return _replay_job(env_id, env_kwargs, payloads, _label_rows)


def _outcome_rows(env: Any, p: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for h, e, _ in replay_states(env, p):
        for j, d in enumerate(p["cands"][h]):
            a = action_from_dict(d)
            if j == 0 or not a.is_valid:
                continue
            obs, r, term, trunc, _ = fork_env(e).step(a)
            rows.append({"traj_id": p["traj_id"], "step": h, "cand": j, "reward": float(r),
                         "terminated": bool(term), "truncated": bool(trunc), "obs": obs})  # fmt: skip
    rows.append({"traj_id": p["traj_id"], "step": -1, "cand": -1, "reward": 0.0, "terminated": False,
                 "truncated": False, "obs": None})  # fmt: skip
    return rows


def _outcomes_job(env_id: str, env_kwargs: dict[str, Any], payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Execute every valid proposal (candidates after the dataset action) of every step once, on a copy of the
    replayed state: its reward, whether the episode ended, and the observation it led to. One row with
    ``cand = -1`` per replayed trajectory marks it done (see :func:`_replay_job` for one that does not replay)."""
    return _replay_job(env_id, env_kwargs, payloads, _outcome_rows)


def execute_outcomes(cfg: TrainConfig, trajs: Sequence[Trajectory], backend: Any, sidecar: Sidecar) -> dict[str, float]:
    """Stage ``outcomes`` (``algo.digiq.outcome_td`` > 0): every valid proposal executed once on a copy of its
    replayed state, with φ of the screen it led to from ``backend`` (see :func:`_outcomes_job`). Each executed
    proposal is one environment step the data cost (``train/digiq_outcome_env_steps``)."""
    from digirl.algorithms.digiq.stages import load_candidates, outcome_stage_name
    from digirl.utils.progress import progress

    dq = cfg.algo.digiq
    env_id, env_kwargs = replay_env_config(cfg)
    stage = sidecar.stage(outcome_stage_name(backend))
    cands = load_candidates(sidecar)
    failed: list[str] = []
    executed = 0
    with stage.lock():
        stage.check_meta({"features": backend.identity(), "env": env_id})
        have = stage.keys()
        done = {k[0] for k in have if k[2] == -1}
        before = sum(1 for k in have if k[2] >= 0)
        todo = [t for t in trajs if t.traj_id not in done]
        chunk = 4  # trajectories per job: their next screens are held until featurized
        jobs = [(env_id, env_kwargs, [_payload(t, cands) for t in todo[i : i + chunk]]) for i in range(0, len(todo), chunk)]
        with progress(len(todo), "digiq outcomes") as bar:
            for res, job in replay_results(_outcomes_job, jobs, dq.workers, failed):
                ran = [r for r in res if r["cand"] >= 0]
                if ran:  # features first, then the rows that say they exist (a kill in between recomputes them)
                    keys = [(r["traj_id"], r["step"], r["cand"]) for r in ran]
                    stage.write_arrays("phi", keys, backend.state_features([r["obs"] for r in ran]))
                cols = ("traj_id", "step", "cand", "reward", "terminated", "truncated")
                rows: dict[str, list[Any]] = {k: [r[k] for r in res] for k in cols}
                rows["next_step"] = [-1 if r["obs"] is None else int(r["obs"].step) for r in res]
                stage.write_rows(rows)
                executed += len(ran)
                bar.advance(len(job[2]))
    if failed:
        log.warning("%d trajectories did not replay (no executed proposals for them), e.g. %s", len(failed), failed[0])
    return {
        "train/digiq_outcome_env_steps": float(before + executed),
        "train/digiq_outcomes_executed_now": float(executed),
        "train/digiq_outcome_replay_failures": float(len(failed)),
    }


def map_jobs(fn: Any, jobs: list[tuple[Any, ...]], workers: int) -> Iterator[Any]:
    """``fn(*job)`` for every job, in order: in this process, or in ``workers`` processes."""
    if workers <= 1 or len(jobs) <= 1:
        for j in jobs:
            yield fn(*j)
        return
    import multiprocessing as mp

    with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as pool:
        futures = [pool.submit(fn, *j) for j in jobs]
        for f in futures:
            yield f.result()


def replay_results(
    fn: Any, jobs: list[tuple[Any, ...]], workers: int, failed: list[str]
) -> Iterator[tuple[list[dict[str, Any]], tuple[Any, ...]]]:
    """:func:`map_jobs` over replay jobs: each job with the results of its trajectories that replayed;
    the ids of those that did not (a result ``{"failed": traj_id}``) are appended to ``failed``."""
    for res, job in zip(map_jobs(fn, jobs, workers), jobs):
        failed.extend(r["failed"] for r in res if "failed" in r)
        yield [r for r in res if "failed" not in r], job


def label_exact(cfg: TrainConfig, trajs: Sequence[Trajectory], sidecar: Sidecar) -> dict[str, float]:
    """Exact Yes/No labels of every candidate by replaying the simulator (see the module docstring)."""
    from digirl.algorithms.digiq.stages import label_meta, load_candidates
    from digirl.utils.progress import progress

    dq = cfg.algo.digiq
    env_id, env_kwargs = replay_env_config(cfg)
    stage = sidecar.stage("labels")
    cands = load_candidates(sidecar)
    failed: list[str] = []
    n_yes = n_all = 0
    with stage.lock():
        stage.check_meta(label_meta(dq))
        done = {k[0] for k in stage.keys()}
        todo = [t for t in trajs if t.traj_id not in done]
        chunk = 8
        jobs = [(env_id, env_kwargs, [_payload(t, cands) for t in todo[i : i + chunk]]) for i in range(0, len(todo), chunk)]
        with progress(len(todo), "digiq label (exact)") as bar:
            for res, job in replay_results(_exact_labels_job, jobs, dq.workers, failed):
                rows: dict[str, list[Any]] = {"traj_id": [], "step": [], "cand": [], "label": [], "method": [], "score": []}
                for r in res:
                    for k in ("traj_id", "step", "cand", "label"):
                        rows[k].append(r[k])
                    rows["method"].append("exact")
                    rows["score"].append(float("nan") if r["label"] is None else float(r["label"]))
                    n_yes += int(bool(r["label"]))
                    n_all += int(r["label"] is not None)
                stage.write_rows(rows)
                bar.advance(len(job[2]))
    if failed:
        log.warning("%d trajectories did not replay (pixel labels for them), e.g. %s", len(failed), failed[0])
    return {
        "train/digiq_exact_labels": float(n_all),
        "train/digiq_exact_yes_fraction": n_yes / max(1, n_all),
        "train/digiq_replay_failures": float(len(failed)),
    }


# ---------------------------------------------------------------------------- the stages
def _is_sim(cfg: TrainConfig) -> bool:
    from digirl.envs.registry import env_has

    return env_has(replay_env_config(cfg)[0], "state_replay")


def run_stages(cfg: TrainConfig, run_dir: str | Path, upto: str | None = None) -> dict[str, float]:
    """Run the stages up to ``upto`` (None: every stage the config needs, ``outcomes`` only with
    ``algo.digiq.outcome_td`` > 0); each one computes only what is missing. Returns their metrics."""
    from digirl.algorithms.digiq.stages import featurize, label_pixel, load_candidates, load_labels, propose, representation
    from digirl.policies.base import Policy
    from digirl.training.common import build_policy
    from digirl.utils.rng import seed_everything

    if upto is None:
        upto = "outcomes" if cfg.algo.digiq.outcome_td > 0 else "featurize"
    if upto not in STAGES:
        raise ValueError(f"unknown stage {upto!r}; stages: {', '.join(STAGES)}")
    cfg = sidecar_of(cfg, run_dir)
    dq = cfg.algo.digiq
    seed_everything(cfg.seed)
    trajs = load_dataset(cfg)
    sidecar = Sidecar(dq.data)
    policy = build_policy(cfg.policy, seed=cfg.seed)
    metrics: dict[str, float] = {
        "train/digiq_trajectories": float(len(trajs)),
        "train/digiq_steps": float(sum(t.length for t in trajs)),
    }
    metrics |= propose(trajs, policy, dq, sidecar)
    if upto == "propose":
        return metrics
    if dq.label != "pixel" and _is_sim(cfg):
        metrics |= label_exact(cfg, trajs, sidecar)
    elif dq.label == "exact":
        raise ValueError(
            f"algo.digiq.label=exact needs a simulator dataset; {cfg.offline_dataset} is not one (use auto or pixel)"
        )
    metrics |= label_pixel(trajs, dq, sidecar)  # what the exact labels could not cover
    if upto == "label":
        return metrics
    trainable = policy if isinstance(policy, Policy) else None
    backend, m = representation(trajs, load_candidates(sidecar), load_labels(sidecar), trainable, dq, sidecar, seed=cfg.seed)
    metrics |= m
    if upto == "repft":
        return metrics
    feats = featurize(trajs, load_candidates(sidecar), backend, sidecar)
    metrics["train/digiq_feature_dim_action"] = float(feats.f.shape[1])
    metrics["train/digiq_feature_dim_state"] = float(feats.phi.shape[1])
    if upto == "featurize":
        return metrics
    if not _is_sim(cfg):
        raise ValueError(
            f"algo.digiq.outcome_td executes proposals on copies of replayed states; {cfg.offline_dataset} is not a "
            "simulator dataset (set algo.digiq.outcome_td=0)"
        )
    metrics |= execute_outcomes(cfg, trajs, backend, sidecar)
    return metrics


def train_digiq(cfg: TrainConfig, run_dir: str | Path) -> dict[str, Any]:
    """Every missing stage, then the training loop with ``algo.name=digiq`` (resumable as a whole)."""
    from digirl.training.loop import train

    cfg = sidecar_of(cfg, run_dir)
    stages = run_stages(cfg, run_dir)
    result = train(cfg, run_dir)
    result["stages"] = stages
    return result
