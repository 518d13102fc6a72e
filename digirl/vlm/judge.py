"""A pretrained screen VLM as the success judge, loaded directly (no server, no API key).

Pretraining's *judge* objective asks "is this task done on this screen, given the last actions?"
(:func:`digirl.vlm.data.judge_prompt`); :class:`PretrainedJudge` asks the same of a pretrained folder
and answers "yes" → success, "no" → failure, anything else → undecided (counted, never a failure).
It is a :class:`~digirl.judge.base.SuccessJudge`, so ``digirl judge audit --local FOLDER`` measures
it against the simulator's ground truth and a training run can use it for its reward.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from digirl.core.actions import Action
from digirl.judge.base import BaseJudge, JudgeQuery, JudgeVerdict
from digirl.vlm.data import judge_prompt

__all__ = ["PretrainedJudge"]


class PretrainedJudge(BaseJudge):
    """Judges with the model in ``folder`` (a ``digirl vlm pretrain`` output or any folder trained on
    the same question), greedy, on ``device`` (default: CUDA when available)."""

    def __init__(self, folder: str | Path, *, device: str | torch.device | None = None) -> None:
        from digirl.policies.hf.loading import load_model, load_processor
        from digirl.vlm.model import Collator

        dev = torch.device(device) if device is not None else torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.folder = Path(folder)
        self.model = load_model(self.folder, dtype=torch.float32, device=dev).eval()
        self.processor = load_processor(self.folder)
        self.collator = Collator(self.processor)
        self.device = dev
        self._lock = threading.Lock()  # one generation at a time: audits call from several threads
        self._latencies: list[float] = []  # seconds per call, lock wait included

    def _verdict(self, query: JudgeQuery) -> JudgeVerdict:
        from digirl.core.codecs import parse_action

        history = [a if isinstance(a, Action) else parse_action(str(a)) for a in query.actions]
        prompt = judge_prompt(query.instruction, history)
        t0 = time.perf_counter()
        with self._lock:
            answer = self._generate(prompt, query.screenshot)
            self._latencies.append(time.perf_counter() - t0)
        success = {"yes": True, "no": False}.get(answer.strip().lower())
        reason = "" if success is not None else f"answer {answer!r} is neither yes nor no"
        return JudgeVerdict(success, reason=reason, raw=answer, calls=1, latency_s=time.perf_counter() - t0)

    @torch.no_grad()
    def _generate(self, prompt: str, screenshot: np.ndarray) -> str:
        ids = torch.tensor([self.collator.prompt_ids(prompt)], device=self.device)
        mask = torch.ones_like(ids)
        pixels = torch.from_numpy(np.array(self.collator.resize(screenshot[..., :3]))).unsqueeze(0).to(self.device)
        inputs = self.collator.model_inputs(ids, mask, pixels)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=self.device.type == "cuda"):
            out = self.model.generate(
                **inputs,
                max_new_tokens=4,
                do_sample=False,
                eos_token_id=self.collator.eos_id,
                pad_token_id=self.collator.pad_id,
            )
        text: str = self.processor.tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True)
        return text.strip()

    def stats(self) -> dict[str, Any]:
        lat = sorted(self._latencies)
        return {
            "requests": len(lat),
            "latency_mean_s": round(sum(lat) / len(lat), 4) if lat else 0.0,
            "latency_p95_s": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 4) if lat else 0.0,
        }
