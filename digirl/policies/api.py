"""An OpenAI-compatible chat endpoint as an act-only policy (``policy.kind=api``).

Any server that speaks ``POST {base_url}/chat/completions`` with image content parts — vLLM serving a
VLM, a hosted model, a CogAgent-style model behind an OpenAI shim — acts for collection and evaluation.
Per observation it sends one user message: the screenshot as a base64 data URL (optionally the previous
screenshot before it) and the template's text (the instruction and the last K actions); the answer is
parsed once by the configured codec, so unreadable text becomes an INVALID action, never a crash.

Requests run in threads (``max_concurrency`` at once) through the shared
:class:`~digirl.utils.openai_chat.ChatClient` (timeouts, retries with exponential backoff honouring
``Retry-After``, a call log); outputs come back in the order of the observations. The API key is read
from the environment variable ``api_key_env`` names at each request; ``save`` writes only the
variable's name. The policy is not trainable: the learners refuse it with a clear message.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from digirl.core.actions import Action
from digirl.core.codecs import parse_action
from digirl.core.errors import ConfigError
from digirl.core.types import Observation
from digirl.policies.base import ActOutput
from digirl.policies.config import APIPolicyConfig, with_overrides
from digirl.policies.prompts import ChatTemplate, autoui_prompt, history_text, template_for
from digirl.policies.registry import read_policy_meta, saved_kind_config
from digirl.utils.openai_chat import ChatClient, ChatClientError, ChatUnavailable, image_data_url

if TYPE_CHECKING:
    import torch

    from digirl.policies.config import PolicyConfig

__all__ = ["APIPolicy"]

log = logging.getLogger(__name__)

#: HTTP statuses that mean the configuration is wrong (key, model, URL): never turned into INVALID actions.
_CONFIG_STATUSES = {401, 403, 404}


class APIPolicy:
    """Act through an OpenAI-compatible chat endpoint (see module docstring). An ``ActingPolicy``."""

    kind = "api"

    def __init__(self, cfg: APIPolicyConfig, *, sleep: Callable[[float], None] = time.sleep, seed: int | None = None) -> None:
        if not cfg.model:
            raise ConfigError(
                "policy.api.model is empty: name the model the endpoint serves (e.g. policy.api.model=Qwen2.5-VL-7B)"
            )
        self.cfg = cfg
        self.template = self._template(cfg)
        self.client = ChatClient(
            cfg.base_url,
            cfg.model,
            api_key_env=cfg.api_key_env,
            max_concurrency=cfg.max_concurrency,
            max_retries=cfg.max_retries,
            timeout_s=cfg.timeout_s,
            backoff_base_s=cfg.backoff_base_s,
            backoff_max_s=cfg.backoff_max_s,
            retry_after_max_s=cfg.retry_after_max_s,
            call_log_path=cfg.call_log,
            seed=seed,
            sleep=sleep,
            name="policy",
        )
        self._failed = 0

    @staticmethod
    def _template(cfg: APIPolicyConfig) -> ChatTemplate:
        base = template_for(cfg.template, cfg.codec)
        return ChatTemplate(
            base.system if cfg.system_prompt is None else cfg.system_prompt,
            base.user if cfg.user_template is None else cfg.user_template,
        )

    def __repr__(self) -> str:
        return f"APIPolicy(base_url={self.cfg.base_url!r}, model={self.cfg.model!r}, codec={self.cfg.codec!r})"

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_config(cls, cfg: PolicyConfig, *, device: torch.device | None = None, seed: int = 0) -> APIPolicy:
        """A policy from ``cfg.api``. ``policy.init`` may name an empty folder: the settings are saved
        there (``policy.json``), so ``digirl eval DIR`` works again later without repeating them."""
        policy = cls(cfg.api, seed=seed)
        if cfg.init:
            folder = Path(cfg.init)
            if any(folder.iterdir()):
                raise ConfigError(
                    f"policy.init={folder} holds files but no policy.json; for kind=api give an empty folder "
                    "(the endpoint settings are saved there) or a folder saved by an api policy"
                )
            policy.save(folder)
            log.info("saved the api policy settings to %s", folder / "policy.json")
        return policy

    @classmethod
    def load(cls, path: str | Path, *, device: torch.device | str | None = None, cfg: PolicyConfig | None = None) -> APIPolicy:
        """A policy saved by :meth:`save`. Settings in ``cfg.api`` that differ from the defaults (given on
        the command line) override the saved ones, e.g. ``policy.api.max_concurrency=32``."""
        saved = saved_kind_config(path, read_policy_meta(path, cls.kind), APIPolicyConfig, cls.kind)
        return cls(with_overrides(saved, cfg.api if cfg is not None else None))

    def save(self, path: str | Path) -> None:
        """``policy.json`` with the endpoint settings; the key's variable name, never the key."""
        p = Path(path)
        p.mkdir(parents=True, exist_ok=True)
        tmp = p / "policy.json.tmp"
        tmp.write_text(json.dumps({"kind": self.kind, "config": asdict(self.cfg)}, indent=2))
        tmp.replace(p / "policy.json")

    # ------------------------------------------------------------------ acting
    def messages(self, obs: Observation) -> list[dict[str, Any]]:
        """The chat messages sent for ``obs``: the system text (if any), then one user message with the
        screenshot(s) as image parts followed by the template's text."""
        c = self.cfg
        values = {
            "{instruction}": obs.instruction,
            "{history}": history_text(obs.history, c.history_len, c.codec),
            "{step}": str(obs.step),
            "{autoui_prompt}": autoui_prompt(obs.instruction, obs.history, c.history_len),
        }
        text = self.template.user
        for k, v in values.items():  # plain replacement: templates may hold JSON braces
            text = text.replace(k, v)
        screens = [obs.previous_screenshot] if (c.send_previous and obs.previous_screenshot is not None) else []
        screens.append(obs.screenshot)
        parts: list[dict[str, Any]] = [
            {"type": "image_url", "image_url": {"url": image_data_url(s, c.image_format, c.image_max_side, c.jpeg_quality)}}
            for s in screens
        ]
        parts.append({"type": "text", "text": text})
        msgs: list[dict[str, Any]] = [{"role": "system", "content": self.template.system}] if self.template.system else []
        msgs.append({"role": "user", "content": parts})
        return msgs

    def _act_one(self, obs: Observation, temperature: float) -> ActOutput:
        try:
            reply = self.client.complete(
                self.messages(obs), temperature=temperature, max_tokens=self.cfg.max_tokens, meta={"step": obs.step}
            )
        except ChatClientError as e:
            if self.cfg.on_error == "raise" or e.status in _CONFIG_STATUSES:
                raise
            return self._failure(str(e))
        except ChatUnavailable as e:
            if self.cfg.on_error == "raise":
                raise
            return self._failure(str(e))
        return ActOutput(parse_action(reply.text, self.cfg.codec), reply.text, None)

    def _failure(self, reason: str) -> ActOutput:
        self._failed += 1
        log.warning("policy endpoint failed; recording an INVALID action: %s", reason)
        return ActOutput(Action.invalid("", f"endpoint failure: {reason}"), "", None)

    def act(self, observations: Sequence[Observation], *, greedy: bool = False, temperature: float = 1.0) -> list[ActOutput]:
        """One action per observation, in order; greedy sends temperature 0."""
        if not observations:
            return []
        temp = 0.0 if greedy else float(temperature)
        workers = min(self.cfg.max_concurrency, len(observations))
        if workers == 1:
            return [self._act_one(o, temp) for o in observations]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="api-policy") as pool:
            return list(pool.map(lambda o: self._act_one(o, temp), observations))

    def stats(self) -> dict[str, Any]:
        """Requests, retries, tokens and latency over the call log, and actions lost to endpoint failures."""
        return {**self.client.stats(), "failed_actions": self._failed}
