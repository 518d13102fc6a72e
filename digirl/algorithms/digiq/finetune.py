"""Representation fine-tuning, written once for every Digi-Q feature backend.

The question is the same for every screen model: "does this action change the screen?" (Yes/No
labels). :class:`YesNoFinetuning` runs it: 10% of the examples held out (when there are 20 or more)
to report accuracy, random minibatches from the rest, gradient clipping at 1, metrics
``critic/repft_…``. A backend supplies only what differs: which parameters train (and how, e.g. LoRA
adapters), its loss on a minibatch, its Yes/No prediction, and what to do when done.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from digirl.core.actions import Action
from digirl.core.types import Observation

__all__ = ["YesNoFinetuning"]


class YesNoFinetuning:
    """Mixin: :meth:`finetune` of :class:`~digirl.algorithms.digiq.features.FeatureBackend` over the hooks below."""

    #: Learning rate when ``algo.digiq.repft_lr`` is null.
    repft_default_lr: float = 1e-3
    #: Examples per forward pass when predicting the held-out ones.
    chunk: int

    # ------------------------------------------------------------------ what a backend supplies
    def _repft_targets(self, labels: Sequence[bool]) -> np.ndarray:
        """The labels as the backend's loss reads them (their mean is the logged Yes fraction)."""
        return np.asarray(labels, dtype=bool)

    def _repft_begin(self, y_train: np.ndarray) -> list[torch.nn.Parameter]:
        """Get ready to train (train mode, adapters, class weights from ``y_train``); the parameters to train."""
        raise NotImplementedError

    def _repft_loss(
        self, observations: Sequence[Observation], actions: Sequence[Action], y: np.ndarray
    ) -> tuple[torch.Tensor, float]:
        """The loss on one minibatch and the accuracy of its Yes/No answers."""
        raise NotImplementedError

    def _repft_predict(self, observations: Sequence[Observation], actions: Sequence[Action]) -> np.ndarray:
        """Yes (True) or No per example, without gradients."""
        raise NotImplementedError

    def _repft_end(self) -> None:
        """Back to evaluation mode (adapters merged), marked fine-tuned."""
        raise NotImplementedError

    # ------------------------------------------------------------------ the fine-tuning
    def finetune(
        self,
        observations: Sequence[Observation],
        actions: Sequence[Action],
        labels: Sequence[bool],
        *,
        steps: int,
        lr: float | None,
        batch_size: int,
        seed: int,
    ) -> dict[str, float]:
        """Train on "does the action change the screen?" for ``steps`` minibatches; returns ``critic/repft_…`` metrics."""
        n = len(labels)
        if n == 0 or steps <= 0:
            return {"critic/repft_examples": float(n)}
        y = self._repft_targets(labels)
        rng = np.random.default_rng(seed)
        order = rng.permutation(n)
        n_held = n // 10 if n >= 20 else 0
        held, train = order[:n_held], order[n_held:]
        params = self._repft_begin(y[train])
        opt = torch.optim.AdamW(params, lr=lr if lr is not None else self.repft_default_lr)
        losses, accs = [], []
        for _ in range(steps):
            idx = rng.choice(train, size=min(batch_size, len(train)), replace=len(train) < batch_size)
            loss, acc = self._repft_loss([observations[i] for i in idx], [actions[i] for i in idx], y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()  # type: ignore[no-untyped-call]
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            losses.append(float(loss.detach()))
            accs.append(acc)
        self._repft_end()
        metrics = {
            "critic/repft_loss": float(np.mean(losses[-20:])),
            "critic/repft_acc_train": float(np.mean(accs[-20:])),
            "critic/repft_examples": float(n),
            "critic/repft_yes_fraction": float(y.mean()),
        }
        if n_held:
            with torch.no_grad():
                parts = [held[j : j + self.chunk] for j in range(0, n_held, self.chunk)]
                pred = np.concatenate([self._repft_predict([observations[i] for i in p], [actions[i] for i in p]) for p in parts])
            metrics["critic/repft_acc_heldout"] = float((pred == (y[held] > 0.5)).mean())
            metrics["critic/repft_acc_heldout_majority"] = float(max(y[held].mean(), 1 - y[held].mean()))
        return metrics
