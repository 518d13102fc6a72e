"""How good a pretrained screen VLM is, on tasks and screens its pretraining never saw.

Held-out data: test-split instructions (pretraining draws from ``train`` only) on a seed stream of
its own, so every screen is new too. Measured, greedy:

* ``grounding`` — the tap the model names lands inside the element it was asked for;
* ``reading`` — the text it reads at a point equals the element's text exactly;
* ``action_match`` — the action it takes as an ``hf`` policy (``HFPolicy.act``, the path SFT and RL
  use) matches the expert's under the AitW matching metric (:func:`digirl.core.matching.actions_match`);
* ``typing`` — on steps where the expert types (a search query, a name), the policy types exactly
  the same text: held-out instructions name entities pretraining never saw, so this measures copying;
* ``judge`` — its yes/no on "is this task done on this screen?" equals the simulator's check.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from digirl.core.actions import ActionType
from digirl.core.codecs import CoordFrame, get_codec
from digirl.core.matching import actions_match
from digirl.vlm.config import PretrainConfig
from digirl.vlm.data import OBJECTIVES, Example, data_spec, iter_examples
from digirl.vlm.model import Collator

__all__ = ["evaluate", "generate_answers", "heldout_examples"]

_BATCH = 32


def heldout_examples(cfg: PretrainConfig, objective: str, n: int, keep: Callable[[Example], bool] | None = None) -> list[Example]:
    """``n`` examples of one objective from test-split tasks on unseen screens, as they are (no renamed
    words); ``keep``: only examples it accepts (drawn from at most 40·n examples)."""
    weights = tuple(1.0 if o == objective else 0.0 for o in OBJECTIVES)
    spec = replace(data_spec(cfg, split="test", stream=1), weights=weights, noise=0.25, rename=0.0)
    out = []
    for ex in iter_examples(spec, n if keep is None else 40 * n):
        if ex.objective == objective and (keep is None or keep(ex)):
            out.append(ex)
            if len(out) == n:
                break
    return out


@torch.no_grad()
def generate_answers(model: Any, processor: Any, examples: Sequence[Example], *, max_new_tokens: int = 48) -> list[str]:
    """Greedy answers of the model to each example's prompt (left-padded batches)."""
    collator = Collator(processor)
    device = next(model.parameters()).device
    out: list[str] = []
    for i in range(0, len(examples), _BATCH):
        chunk = examples[i : i + _BATCH]
        prompts = [collator.prompt_ids(ex.prompt) for ex in chunk]
        n = max(len(p) for p in prompts)
        ids = torch.full((len(chunk), n), collator.pad_id, dtype=torch.long)
        mask = torch.zeros((len(chunk), n), dtype=torch.long)
        for j, p in enumerate(prompts):
            ids[j, n - len(p) :] = torch.tensor(p)
            mask[j, n - len(p) :] = 1
        pixels = torch.from_numpy(np.stack([collator.resize(ex.screen) for ex in chunk])).to(device)
        inputs = collator.model_inputs(ids.to(device), mask.to(device), pixels)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.type == "cuda"):
            gen = model.generate(
                **inputs,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                eos_token_id=collator.eos_id,
                pad_token_id=collator.pad_id,
            )
        for row in gen[:, n:]:
            out.append(processor.tokenizer.decode(row, skip_special_tokens=True).strip())
    return out


def _inside(action: Any, box: tuple[float, float, float, float]) -> bool:
    if not action.is_valid or action.type != ActionType.DUAL_POINT or action.touch is None:
        return False
    x, y = action.touch
    return bool(box[0] <= x <= box[2] and box[1] <= y <= box[3])


def evaluate(
    folder: str | Path,
    cfg: PretrainConfig,
    *,
    device: torch.device | None = None,
    model: Any = None,
    processor: Any = None,
    n: int | None = None,
) -> dict[str, Any]:
    """The held-out metrics of the model in ``folder`` (or the ``model``/``processor`` given)."""
    from digirl.policies.config import HFPolicyConfig
    from digirl.policies.hf.policy import HFPolicy

    if model is None or processor is None:
        from digirl.policies.hf.loading import load_model, load_processor

        dev = device or torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = load_model(Path(folder), dtype=torch.float32, device=dev)
        processor = load_processor(Path(folder))
    count = n or cfg.eval_examples
    codec = get_codec("json", CoordFrame(1.0, 1.0))
    result: dict[str, Any] = {"examples_per_metric": count, "split": "test", "observation": "screenshot"}

    ground = heldout_examples(cfg, "ground", count)
    answers = generate_answers(model, processor, ground)
    hits = [ex.box is not None and _inside(codec.parse(a), ex.box) for ex, a in zip(ground, answers)]
    result["grounding"] = sum(hits) / max(1, len(hits))

    read = heldout_examples(cfg, "read", count)
    answers = generate_answers(model, processor, read)
    result["reading"] = sum(a == ex.target for ex, a in zip(read, answers)) / max(1, len(read))

    judge = heldout_examples(cfg, "judge", count)
    answers = generate_answers(model, processor, judge, max_new_tokens=4)
    result["judge_accuracy"] = sum(a == ex.target for ex, a in zip(judge, answers)) / max(1, len(judge))
    result["judge_positive_share"] = sum(ex.target == "yes" for ex in judge) / max(1, len(judge))

    acts = heldout_examples(cfg, "act", count)
    policy = HFPolicy.from_model(model, processor, HFPolicyConfig(), device=next(model.parameters()).device)
    outs = _act(policy, acts)
    matched = [ex.gold is not None and actions_match(o.action, ex.gold, elements=ex.elements) for ex, o in zip(acts, outs)]
    result["action_match"] = sum(matched) / max(1, len(matched))
    result["action_invalid"] = sum(not o.action.is_valid for o in outs) / max(1, len(outs))

    typed = heldout_examples(cfg, "act", count, keep=lambda ex: ex.gold is not None and ex.gold.type is ActionType.TYPE)
    outs = _act(policy, typed)
    same = [
        ex.gold is not None and o.action.type is ActionType.TYPE and o.action.text == ex.gold.text for ex, o in zip(typed, outs)
    ]
    result["typing"] = sum(same) / max(1, len(same))
    result["typing_examples"] = len(typed)
    return result


def _act(policy: Any, examples: Sequence[Example]) -> list[Any]:
    outs: list[Any] = []
    for i in range(0, len(examples), _BATCH):
        chunk = examples[i : i + _BATCH]
        outs.extend(policy.act([ex.observation for ex in chunk if ex.observation is not None], greedy=True))
    return outs
