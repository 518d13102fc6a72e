"""Figures of ``device_variation.py`` (issue 42): per-seed rows, the paired comparison of held-out
against train devices, which devices each pool ran on, and the Markdown summary."""

from __future__ import annotations

import statistics
from typing import Any

from digirl.experiments.stats import mcnemar_exact, paired_bootstrap, paired_difference

#: Reported figure -> (condition, split).
FIGURES = {
    "test_train_devices": ("train_devices", "test"),
    "test_heldout_devices": ("heldout_devices", "test"),
    "test_default_device": ("default_device", "test"),
    "validation_train_devices": ("train_devices", "validation"),
    "validation_heldout_devices": ("heldout_devices", "validation"),
}
BAR = 0.9  # the issue's: held-out-device success >= 0.9 x train-device success


def _ratio(b: float, a: float) -> float | None:
    return b / a if a > 0 else None


def seed_row(record: dict[str, Any]) -> dict[str, Any]:
    ev = record["eval"]
    row: dict[str, Any] = {"seed": record["seed"]}
    for key, (cond, split) in FIGURES.items():
        row[key] = ev[cond]["splits"][split]["report"]["success_rate"]
    row["ratio_test"] = _ratio(row["test_heldout_devices"], row["test_train_devices"])
    row["ratio_validation"] = _ratio(row["validation_heldout_devices"], row["validation_train_devices"])
    row["stage_s"] = {name: st["s"] for name, st in record["stages"].items()}
    row["eval_s"] = {c: ev[c]["eval_s"] for c in ev}
    return row


def spread(vals: list[float]) -> dict[str, Any]:
    return {"per_seed": vals, "mean": statistics.fmean(vals), "sample_std": statistics.stdev(vals) if len(vals) > 1 else None}


def paired(records: list[dict[str, Any]], split: str, reps: int) -> dict[str, Any]:
    """(b) held-out devices against (a) train devices, episode by episode: the same tasks and seeds."""
    a_eps = [r["eval"]["train_devices"]["splits"][split]["episodes"] for r in records]
    b_eps = [r["eval"]["heldout_devices"]["splits"][split]["episodes"] for r in records]
    key = [[(e["task_id"], e["seed"]) for e in eps] for eps in a_eps + b_eps]
    if any(k != key[0] for k in key):
        return {"same_tasks_and_seeds": False}
    n = len(key[0])
    failed = {i for eps in a_eps + b_eps for i in range(n) if eps[i]["env_failure"]}  # unscored: the pair is left out
    keep = [i for i in range(n) if i not in failed]
    xa = [[float(eps[i]["success"]) for i in keep] for eps in a_eps]
    xb = [[float(eps[i]["success"]) for i in keep] for eps in b_eps]
    boot = paired_bootstrap(xa, xb, reps=reps, seed=0)
    flat_a, flat_b = [bool(x) for row in xa for x in row], [bool(x) for row in xb for x in row]
    rates_a, rates_b = [statistics.fmean(r) for r in xa], [statistics.fmean(r) for r in xb]
    lo_hi = boot["ratio_ci95"]
    verdict = "not resolved"
    if lo_hi is not None and lo_hi[0] >= BAR:
        verdict = "met (interval above the bar)"
    elif lo_hi is not None and lo_hi[1] < BAR:
        verdict = "missed (interval below the bar)"
    return {
        "same_tasks_and_seeds": True,
        "tasks": n,
        "pairs_left_out_env_failure": len(failed) * len(records),
        "bootstrap": boot,
        "mcnemar_exact": mcnemar_exact(flat_a, flat_b),
        "seed_level_t": paired_difference(rates_b, rates_a).to_dict() if len(records) > 1 else None,
        "bar": {"ratio_needed": BAR, "ratio": boot["ratio"], "ratio_ci95": lo_hi, "verdict": verdict},
    }


def device_check(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Which devices each pool's episodes ran on (read back by replaying their resets)."""
    from digirl.sim.perturb import DEVICE_POOLS

    pools = {"train_devices": set(DEVICE_POOLS["train"]), "heldout_devices": set(DEVICE_POOLS["test"])}
    out: dict[str, Any] = {}
    ids: dict[str, set[Any]] = {}
    for name in records[0]["eval"]:
        eps = [e for r in records for sp in r["eval"][name]["splits"].values() for e in sp["episodes"]]
        ids[name] = {e["device_id"] for e in eps}
        real = sorted(i for i in ids[name] if i is not None)
        in_pool = ids[name] == {None} if name == "default_device" else set(real) <= pools[name] and None not in ids[name]
        out[name] = {
            "episodes": len(eps),
            "distinct_devices": len(real),
            "first_device_ids": real[:12],
            "in_its_pool": bool(in_pool),
            "replay_matches_all": all(e["replay_matches"] for e in eps),
        }
    same_index = [
        (ea["device_id"], eb["device_id"])
        for r in records
        for split in r["eval"]["heldout_devices"]["splits"]
        for ea, eb in zip(
            r["eval"]["train_devices"]["splits"][split]["episodes"], r["eval"]["heldout_devices"]["splits"][split]["episodes"]
        )
    ]
    out["train_heldout_shared_devices"] = len(ids["train_devices"] & ids["heldout_devices"] - {None})
    out["pairs_on_different_devices"] = sum(x != y for x, y in same_index) / max(1, len(same_index))
    return out


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def markdown(s: dict[str, Any]) -> str:
    lines = [
        "# Device variation, pixels only (issue 42)",
        "",
        f"Preset `{s['preset']}`, {len(s['finished_seeds'])} finished seed(s) of {len(s['protocol']['seeds'])}; "
        f"observation `{s['observation']}`, selection split `{s['selection_split']}`; {s['cpu_count']} CPUs, "
        f"GPU {s['gpu_model']}; git {s['git_revision']}; {s['wall_s']:.0f} s wall.",
        "",
        "| seed | test (a) train devices | test (b) held-out | test (c) default | (b)/(a) test | val (a) | val (b) "
        "| (b)/(a) val |",
        "|---|---|---|---|---|---|---|---|",
    ]
    cells = ("test_train_devices", "test_heldout_devices", "test_default_device", "ratio_test")
    vcells = ("validation_train_devices", "validation_heldout_devices", "ratio_validation")
    for row in s["per_seed"]:
        lines.append("| " + " | ".join([str(row["seed"]), *(_pct(row[k]) for k in cells + vcells)]) + " |")
    m = s["means"]

    def mean_cell(k: str) -> str:
        if k not in m:
            return "–"
        sd = m[k]["sample_std"]
        return f"{100 * m[k]['mean']:.1f}" + ("" if sd is None else f" ± {100 * sd:.1f}") + "%"

    lines.append("| mean ± sample std | " + " | ".join(mean_cell(k) for k in cells + vcells) + " |")
    for split, p in s["paired"].items():
        if not p.get("same_tasks_and_seeds"):
            lines += ["", f"{split}: (a) and (b) did not play the same tasks and seeds: no paired comparison."]
            continue
        b, mc, ci = p["bootstrap"], p["mcnemar_exact"], p["bootstrap"]["ratio_ci95"]
        ratio = "–" if b["ratio"] is None else f"{b['ratio']:.3f}" + ("" if ci is None else f" (95% {ci[0]:.3f} … {ci[1]:.3f})")
        lo, hi = b["difference_ci95"]
        lines += [
            "",
            f"**{split}, paired** ({b['pairs']} episode pairs): (b) − (a) {100 * b['difference']:+.1f} points "
            f"(95% bootstrap {100 * lo:+.1f} … {100 * hi:+.1f}); (b)/(a) {ratio}; bar {BAR}: {p['bar']['verdict']}; "
            f"McNemar exact p = {mc['p_value']:.3g} ({mc['only_a']} pairs won only on (a), {mc['only_b']} only on (b)).",
        ]
    d = s["device_check"]
    if d:
        lines += [
            "",
            "Devices (read back by replaying each episode's reset): "
            + "; ".join(
                f"{c['name']} {d[c['name']]['distinct_devices']} distinct, in its pool: {d[c['name']]['in_its_pool']}"
                for c in s["conditions"]
            )
            + f"; shared by (a) and (b): {d['train_heldout_shared_devices']}; pairs on different devices: "
            f"{100 * d['pairs_on_different_devices']:.0f}%.",
        ]
    for u in s["unfinished"]:
        lines += ["", f"Unfinished: seed {u['seed']}: {u['stopped']}."]
    lines += ["", f"Command: `{s['command_line']}`", ""]
    return "\n".join(lines)
