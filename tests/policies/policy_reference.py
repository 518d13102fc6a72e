"""Featurization and acting as they were before the speed work (frozen copies; the oracle).

``reference_featurize`` is the old :func:`digirl.policies.features.featurize` and
``reference_act`` the old per-sample decoding loop of ``DefaultPolicy.act`` (commit 3150a6b, names
changed only): the optimised code must return the same arrays and the same sampled actions for
the same generator state. Do not optimise or restyle them.
"""

# ruff: noqa

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from PIL import Image
from torch import nn

from digirl.core.types import Observation, UIElement
from digirl.policies.base import ActOutput
from digirl.policies.default import _action_text, batch_to_tensors
from digirl.policies.features import (
    ELEMENT_KINDS,
    KIND_INDEX,
    KINDS,
    Batch,
    FeatureSpec,
    action_kind,
    decode_action,
    word_id,
    words,
)
from digirl.utils.images import resize


def _resize(shot: np.ndarray, spec: FeatureSpec) -> np.ndarray:
    # Pillow 12's resize under every Pillow version (the one change to the frozen code)
    img = resize(Image.fromarray(shot), (spec.image_width, spec.image_height), Image.Resampling.BILINEAR)
    out: np.ndarray = np.asarray(img, dtype=np.float32).transpose(2, 0, 1) / 255.0
    return out


def reference_featurize(observations: Sequence[Observation], spec: FeatureSpec) -> Batch:
    b = len(observations)
    L, K, T = spec.max_instruction_words, spec.max_elements, spec.max_element_words
    image = np.zeros((b, 3 * spec.frame_stack, spec.image_height, spec.image_width), np.float32)
    instr = np.zeros((b, L), np.int64)
    elem_words = np.zeros((b, K, T), np.int64)
    elem_num = np.zeros((b, K, 9), np.float32)
    elem_kind = np.zeros((b, K), np.int64)
    elem_mask = np.zeros((b, K), bool)
    history = np.zeros((b, spec.history_len), np.int64)
    all_words: list[list[str]] = []
    all_elems: list[tuple[UIElement, ...]] = []
    for i, obs in enumerate(observations):
        image[i, :3] = _resize(obs.screenshot, spec)
        if spec.frame_stack > 1 and obs.previous_screenshot is not None:
            image[i, 3:6] = _resize(obs.previous_screenshot, spec)
        ws = words(obs.instruction)[:L]
        all_words.append(ws)
        instr[i, : len(ws)] = [word_id(w, spec.buckets) for w in ws]
        lower_instr = {w.lower() for w in ws}
        els = tuple(obs.elements or ())[:K]
        all_elems.append(els)
        for k, el in enumerate(els):
            text = el.text
            if spec.label_rows and el.clickable and not text.strip():  # a textless box reads as its labels
                inside = [
                    o.text
                    for o in els
                    if not o.clickable
                    and o.text.strip()
                    and el.bounds[0] <= o.center[0] <= el.bounds[2]
                    and el.bounds[1] <= o.center[1] <= el.bounds[3]
                ]
                text = " ".join(inside)
            ew = [w.lower() for w in words(text)]
            ids = [word_id(w, spec.buckets) for w in ew[:T]]
            elem_words[i, k, : len(ids)] = ids
            common = sum(1 for w in ew if w in lower_instr)
            elem_num[i, k] = (
                *el.bounds,
                float(el.clickable),
                float(el.focused),
                common / max(1, len(ew)),
                common / max(1, len(lower_instr)),
                float(bool(ew)),
            )
            elem_kind[i, k] = ELEMENT_KINDS.index(el.kind) + 1 if el.kind in ELEMENT_KINDS else 0
            elem_mask[i, k] = True
        hist = [KIND_INDEX.get(action_kind(a) or "", -1) + 1 for a in obs.history[-spec.history_len :]]
        if hist:
            history[i, -len(hist) :] = hist
    return Batch(image, instr, elem_words, elem_num, elem_kind, elem_mask, history, all_words, all_elems)


@torch.no_grad()
def reference_act(
    self: Any, observations: Sequence[Observation], *, greedy: bool = False, temperature: float = 1.0
) -> list[ActOutput]:
    if not observations:
        return []
    was_training = self.net.training
    self.net.eval()
    batch = reference_featurize(observations, self.spec)
    out = self.net(batch_to_tensors(batch, self.device))
    out = {k: v.float().cpu() for k, v in out.items()}
    temp = 1.0 if greedy else max(temperature, 1e-4)  # greedy reports the log-prob under the policy itself
    results: list[ActOutput] = []
    for i in range(len(observations)):
        kind_lp = torch.log_softmax(out["kind"][i] / temp, -1)
        elem_lp = torch.log_softmax(out["element"][i] / temp, -1)
        grid_lp = torch.log_softmax(out["grid"][i] / temp, -1)
        type_logit = out["type"][i] / temp
        if greedy:
            k = int(kind_lp.argmax())
            e = int(elem_lp.argmax())
            c = int(grid_lp.argmax())
            mask = (type_logit > 0).float()
        else:
            k = int(torch.multinomial(kind_lp.exp(), 1, generator=self._gen))
            e = int(torch.multinomial(elem_lp.exp(), 1, generator=self._gen))
            c = int(torch.multinomial(grid_lp.exp(), 1, generator=self._gen))
            mask = torch.bernoulli(torch.sigmoid(type_logit), generator=self._gen)
        n_words = len(batch.instr_words[i])
        if KINDS[k] == "type" and n_words and not mask[:n_words].any():
            mask[int(type_logit[:n_words].argmax())] = 1.0  # never type an empty string
        lp = float(kind_lp[k])
        if KINDS[k] == "tap_element":
            lp += float(elem_lp[e])
        elif KINDS[k] == "tap_grid":
            lp += float(grid_lp[c])
        elif KINDS[k] == "type":
            valid = out["type"][i] > -1e8
            bern = -nn.functional.binary_cross_entropy_with_logits(type_logit, mask, reduction="none")
            lp += float(bern[valid].sum())
        action = decode_action(k, e, c, mask.numpy(), batch.elements[i], batch.instr_words[i], self.spec)
        results.append(ActOutput(action, _action_text(action), lp))
    self.net.train(was_training)
    return results
