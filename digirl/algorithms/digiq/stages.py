"""Digi-Q's data stages that need no environment: propose, pixel labels, fine-tune, featurize.

Each stage reads the trajectories, writes keyed parts into a :class:`~digirl.algorithms.digiq.sidecar.Sidecar`
(one part per chunk of trajectories, so a killed stage resumes where it stopped), and shows progress.
The exact simulator labels and the ground-truth values live in :mod:`digirl.training.digiq`, which
can replay episodes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from digirl.algorithms.digiq.functional import dedupe_candidates, pixel_change
from digirl.algorithms.digiq.sidecar import Key, Sidecar
from digirl.core.actions import Action
from digirl.core.codecs import action_from_dict, action_to_dict
from digirl.core.errors import DataError
from digirl.core.types import Observation, Trajectory
from digirl.utils.progress import progress

if TYPE_CHECKING:
    from digirl.algorithms.digiq.config import DigiQConfig
    from digirl.algorithms.digiq.features import FeatureBackend
    from digirl.policies.base import ActingPolicy, Policy

__all__ = [
    "Candidates",
    "Features",
    "Outcomes",
    "feature_variant",
    "featurize",
    "label_meta",
    "label_pixel",
    "load_candidates",
    "load_labels",
    "load_outcomes",
    "observation_at",
    "outcome_stage_name",
    "propose",
    "representation",
]

log = logging.getLogger(__name__)

#: (traj_id, step) → candidate actions, the dataset action first.
Candidates = dict[tuple[str, int], list[Action]]
_CHUNK = 16  # trajectories per part file


def observation_at(traj: Trajectory, h: int) -> Observation:
    """s_h; h = len(steps) is the observation after the last step (the last one if none was stored)."""
    if h < len(traj.steps):
        return traj.steps[h].observation
    return traj.final_observation if traj.final_observation is not None else traj.steps[-1].observation


def _chunks(trajs: Sequence[Trajectory]) -> list[Sequence[Trajectory]]:
    return [trajs[i : i + _CHUNK] for i in range(0, len(trajs), _CHUNK)]


# ---------------------------------------------------------------------------- propose
def propose(trajs: Sequence[Trajectory], policy: ActingPolicy, cfg: DigiQConfig, sidecar: Sidecar) -> dict[str, float]:
    """N − 1 more actions per stored step, sampled from the behaviour policy at ``cfg.temperature``;
    invalid and duplicate samples are drawn again up to ``cfg.resample`` more rounds."""
    stage = sidecar.stage("candidates")
    n = cfg.candidates
    with stage.lock():
        stage.check_meta({"candidates": n, "temperature": cfg.temperature, "resample": cfg.resample})
        done = {(k[0], k[1]) for k in stage.keys()}
        todo = [t for t in trajs if any((t.traj_id, h) not in done for h in range(len(t.steps)))]
        sampled = found = 0
        with progress(sum(len(t.steps) for t in todo), "digiq propose") as bar:
            for chunk in _chunks(todo):
                steps = [(t, h) for t in chunk for h in range(len(t.steps)) if (t.traj_id, h) not in done]
                obs = [t.steps[h].observation for t, h in steps]
                pools: list[list[Action]] = [[] for _ in steps]
                cands = [[t.steps[h].action] for t, h in steps]
                for _ in range(1 + cfg.resample if n > 1 else 0):
                    need = [i for i, c in enumerate(cands) if len(c) < n]
                    if not need:
                        break
                    want = [n - len(cands[i]) for i in need]
                    batch = [obs[i] for i, k in zip(need, want) for _ in range(k)]
                    outs = policy.act(batch, greedy=False, temperature=cfg.temperature) if batch else []
                    sampled += len(outs)
                    pos = 0
                    for i, k in zip(need, want):
                        pools[i] += [o.action for o in outs[pos : pos + k]]
                        pos += k
                        t, h = steps[i]
                        cands[i] = dedupe_candidates(t.steps[h].action, pools[i], n, obs[i].elements)
                rows: dict[str, list[Any]] = {"traj_id": [], "step": [], "cand": [], "action": [], "source": []}
                for (t, h), c in zip(steps, cands):
                    found += len(c)
                    for j, a in enumerate(c):
                        rows["traj_id"].append(t.traj_id)
                        rows["step"].append(h)
                        rows["cand"].append(j)
                        rows["action"].append(json.dumps(action_to_dict(a)))
                        rows["source"].append("dataset" if j == 0 else "policy")
                stage.write_rows(rows)
                bar.advance(len(steps))
    cands_all = load_candidates(sidecar)
    counts = [len(cands_all.get((t.traj_id, h), ())) for t in trajs for h in range(len(t.steps))]
    return {
        "train/digiq_candidates_per_state": float(np.mean(counts)) if counts else 0.0,
        "train/digiq_proposals_sampled": float(sampled),
    }


def load_candidates(sidecar: Sidecar) -> Candidates:
    out: dict[tuple[str, int], dict[int, Action]] = {}
    for r in sidecar.stage("candidates").rows():
        try:
            a = action_from_dict(json.loads(r["action"]))
        except (TypeError, ValueError) as e:
            raise DataError(f"{sidecar.path('candidates')}: bad candidate action {r.get('action')!r} ({e})") from e
        out.setdefault((str(r["traj_id"]), int(r["step"])), {})[int(r["cand"])] = a
    return {k: [v[j] for j in sorted(v)] for k, v in out.items()}


# ---------------------------------------------------------------------------- labels
def label_meta(cfg: DigiQConfig) -> dict[str, Any]:
    return {"label": cfg.label, "pixel_threshold": cfg.pixel_threshold}


def label_pixel(trajs: Sequence[Trajectory], cfg: DigiQConfig, sidecar: Sidecar) -> dict[str, float]:
    """The released heuristic for steps without a label: the dataset action is a "Yes" when the mean
    squared difference of ×0.25 screenshots of s and s′ exceeds ``cfg.pixel_threshold``."""
    stage = sidecar.stage("labels")
    with stage.lock():
        stage.check_meta(label_meta(cfg))
        done = {(k[0], k[1]) for k in stage.keys()}
        todo = [(t, h) for t in trajs for h in range(len(t.steps)) if (t.traj_id, h) not in done]
        if todo and cfg.label == "exact":
            raise DataError(
                f"{len(todo)} steps have no exact label; run `digirl digiq label` (simulator datasets) "
                "or use algo.digiq.label=auto"
            )
        with progress(len(todo), "digiq label (pixel)") as bar:
            for i in range(0, len(todo), 256):
                part = todo[i : i + 256]
                rows: dict[str, list[Any]] = {"traj_id": [], "step": [], "cand": [], "label": [], "method": [], "score": []}
                for t, h in part:
                    a = t.steps[h].action
                    score = pixel_change(t.steps[h].observation.screenshot, observation_at(t, h + 1).screenshot)
                    rows["traj_id"].append(t.traj_id)
                    rows["step"].append(h)
                    rows["cand"].append(0)
                    # ending the episode: the question does not apply; an unreadable action changes nothing
                    rows["label"].append(None if a.ends_episode else bool(a.is_valid and score > cfg.pixel_threshold))
                    rows["method"].append("pixel")
                    rows["score"].append(float(min(score, 1e9)))
                stage.write_rows(rows)
                bar.advance(len(part))
    return {"train/digiq_pixel_labels": float(len(todo))}


def load_labels(sidecar: Sidecar) -> dict[Key, bool]:
    """Yes/No labels by key (actions that end the episode have none)."""
    return {
        (str(r["traj_id"]), int(r["step"]), int(r["cand"])): bool(r["label"])
        for r in sidecar.stage("labels").rows()
        if r["label"] is not None
    }


# ---------------------------------------------------------------------------- representation fine-tuning
def representation(
    trajs: Sequence[Trajectory],
    cands: Candidates,
    labels: dict[Key, bool],
    policy: Policy | None,
    cfg: DigiQConfig,
    sidecar: Sidecar,
    *,
    seed: int,
) -> tuple[FeatureBackend, dict[str, float]]:
    """The feature backend, fine-tuned on the Yes/No labels unless ``cfg.repft`` is off; a fine-tuned
    backend already in the sidecar (same base weights and options) is loaded instead."""
    from digirl.algorithms.digiq.features import load_feature_backend, make_feature_backend

    backend = make_feature_backend(cfg, policy, seed=seed)
    if not cfg.repft:
        return backend, {}
    stage = sidecar.stage("repft")
    root = sidecar.path("repft")
    meta = {
        "base": backend.identity(),
        "steps": cfg.repft_steps,
        "lr": cfg.repft_lr,
        "batch": cfg.repft_batch,
        "labels": label_meta(cfg),
        "seed": seed,
    }
    with stage.lock():
        stage.check_meta(meta)
        if root is not None and (root / "backend" / "backend.json").is_file():
            log.info("representation fine-tuning: loading %s", root / "backend")
            metrics = json.loads((root / "metrics.json").read_text()) if (root / "metrics.json").is_file() else {}
            return load_feature_backend(root / "backend", cfg, policy), metrics
        by_id = {t.traj_id: t for t in trajs}
        ex = [
            (by_id[k[0]].steps[k[1]].observation, cands[(k[0], k[1])][k[2]], y)
            for k, y in sorted(labels.items())
            if k[0] in by_id and (k[0], k[1]) in cands and k[2] < len(cands[(k[0], k[1])])
        ]
        log.info("representation fine-tuning on %d labelled (screen, action) pairs", len(ex))
        metrics = backend.finetune(
            [e[0] for e in ex], [e[1] for e in ex], [e[2] for e in ex],
            steps=cfg.repft_steps, lr=cfg.repft_lr, batch_size=cfg.repft_batch, seed=seed,
        )  # fmt: skip
        if root is not None:
            tmp = root / f".tmp-{uuid.uuid4().hex}"
            try:
                backend.save(tmp)
                (root / "metrics.json").write_text(json.dumps(metrics, indent=2))
                shutil.rmtree(root / "backend", ignore_errors=True)  # an incomplete folder left by hand
                os.replace(tmp, root / "backend")  # the commit point
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    return backend, metrics


# ---------------------------------------------------------------------------- features
def feature_variant(ident: dict[str, Any]) -> str:
    """The folder name of a backend's features: its name and a hash of its identity."""
    return f"{ident.get('name', 'backend')}-{hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:12]}"


@dataclass
class Features:
    """f(s, a) rows keyed by (traj_id, step, cand) and φ(s) rows keyed by (traj_id, step, -1)."""

    f_index: dict[Key, int]
    f: np.ndarray
    phi_index: dict[Key, int]
    phi: np.ndarray
    variant: str


def featurize(trajs: Sequence[Trajectory], cands: Candidates, backend: FeatureBackend, sidecar: Sidecar) -> Features:
    """f(s, a) of every candidate and φ(s) of every state (and final observation), computed once into
    ``features/<variant>`` (variant: a hash of the backend's identity) as float16."""
    ident = backend.identity()
    variant = feature_variant(ident)
    stage = sidecar.stage(f"features/{variant}")
    with stage.lock():
        stage.check_meta(ident)
        have_f = set(stage.arrays("f")[0])
        have_phi = set(stage.arrays("phi")[0])
        todo = [
            t
            for t in trajs
            if any((t.traj_id, h, -1) not in have_phi for h in range(len(t.steps) + 1))
            or any(
                (t.traj_id, h, j) not in have_f for h in range(len(t.steps)) for j in range(len(cands.get((t.traj_id, h), ())))
            )
        ]
        with progress(sum(len(t.steps) for t in todo), f"digiq featurize ({ident.get('name')})") as bar:
            for chunk in _chunks(todo):
                fk: list[Key] = []
                fo: list[Observation] = []
                fa: list[Action] = []
                pk: list[Key] = []
                po: list[Observation] = []
                for t in chunk:
                    for h in range(len(t.steps) + 1):
                        if (t.traj_id, h, -1) not in have_phi:
                            pk.append((t.traj_id, h, -1))
                            po.append(observation_at(t, h))
                        if h == len(t.steps):
                            continue
                        for j, a in enumerate(cands.get((t.traj_id, h), ())):
                            if (t.traj_id, h, j) not in have_f:
                                fk.append((t.traj_id, h, j))
                                fo.append(t.steps[h].observation)
                                fa.append(a)
                if fk:
                    stage.write_arrays("f", fk, backend.action_features(fo, fa))
                if pk:
                    stage.write_arrays("phi", pk, backend.state_features(po))
                bar.advance(sum(len(t.steps) for t in chunk))
        f_index, f = stage.arrays("f")
        phi_index, phi = stage.arrays("phi")
    return Features(f_index, f, phi_index, phi, variant)


# ---------------------------------------------------------------------------- executed proposals
@dataclass
class Outcomes:
    """What executing a proposal once on a copy of its state gave (``algo.digiq.outcome_td``): per key
    (traj_id, step, cand) the reward, whether the episode ended (terminated, truncated), the next
    observation's step index and φ of the next screen (rows of ``phi``)."""

    reward: dict[Key, float]
    terminated: dict[Key, bool]
    truncated: dict[Key, bool]
    next_step: dict[Key, int]
    phi_index: dict[Key, int]
    phi: np.ndarray


def outcome_stage_name(backend: FeatureBackend) -> str:
    """Outcomes hold features of the next screens, so they belong to one feature backend."""
    return f"outcomes/{feature_variant(backend.identity())}"


def load_outcomes(sidecar: Sidecar, backend: FeatureBackend) -> Outcomes:
    """The executed proposals of ``backend``'s outcome stage (empty when the stage never ran)."""
    stage = sidecar.stage(outcome_stage_name(backend))
    out = Outcomes({}, {}, {}, {}, *stage.arrays("phi"))
    for r in stage.rows():
        k = (str(r["traj_id"]), int(r["step"]), int(r["cand"]))
        if k[2] < 0 or k not in out.phi_index:  # cand -1: a trajectory's done-marker
            continue
        out.reward[k] = float(r["reward"])
        out.terminated[k] = bool(r["terminated"])
        out.truncated[k] = bool(r["truncated"])
        out.next_step[k] = int(r["next_step"])
    return out
