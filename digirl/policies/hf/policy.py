"""``HFPolicy``: a local Hugging Face vision-language model as a trainable digirl policy.

Acting: each observation becomes one chat turn (the instruction, the last K actions, the current
and optionally the previous screenshot); the batch is left-padded and generated in one call
(greedy for evaluation, sampled at a temperature for collection, at most ``max_new_tokens``); the
text is parsed once by the configured codec in the observation's coordinate frame, so whatever
the model writes becomes an action or an INVALID action that carries the text.

Scoring: ``log_prob_with_mask`` runs prompt + action text + end-of-turn token, right-padded (a
sample's value does not depend on the rest of the batch), and sums the log-probabilities of the
action tokens. An action is expressible when it has a text form no longer than the generation cap.

Saving: full fine-tuning writes the model and processor with ``save_pretrained`` next to
``policy.json`` (the folder is also a plain Hugging Face checkpoint); LoRA writes the adapters
(safetensors) and the processor, and ``policy.json`` names the base model folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import logging
import os
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from digirl.core.actions import Action
from digirl.core.codecs import ActionCodec, get_codec
from digirl.core.errors import ConfigError, DataError
from digirl.core.types import Observation
from digirl.policies.base import ActOutput, LogProbFromMask
from digirl.policies.config import RUNTIME_KEYS, HFPolicyConfig
from digirl.policies.hf.geometry import ImageGeometry, crops_center, model_image_size, prepare_image
from digirl.policies.hf.loading import check_model_folder, load_model, load_processor, resolve_dtype
from digirl.policies.hf.lora import apply_lora, set_trainable, vision_frozen
from digirl.policies.hf.prompt import messages, render_prompt
from digirl.policies.registry import read_policy_meta
from digirl.utils.transfer import to_device

if TYPE_CHECKING:
    from digirl.policies.config import PolicyConfig

__all__ = ["RUNTIME_FIELDS", "Encoded", "HFPolicy"]

log = logging.getLogger(__name__)

#: Options that say how to run a saved policy, not what it is: a run's config overrides them on load
#: (the one list lives in ``digirl.policies.config.RUNTIME_KEYS``).
RUNTIME_FIELDS: tuple[str, ...] = RUNTIME_KEYS["hf"] or ()
#: Per-token processor outputs (everything else the processor returns belongs to the images).
_TOKEN_KEYS = ("mm_token_type_ids", "token_type_ids")


@dataclass
class Encoded:
    """One observation, processed: prompt token ids, image tensors and the coordinate codec."""

    key: str
    prompt_ids: torch.Tensor  # [L]
    token_extras: dict[str, torch.Tensor]  # [L] each
    images: dict[str, torch.Tensor]  # processor outputs for this sample's images
    codec: ActionCodec
    geometry: ImageGeometry
    n_images: int
    nbytes: int


def observation_key(obs: Observation) -> str:
    """A content hash of everything the prompt shows (screens, instruction, history)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(obs.screenshot.tobytes())
    h.update(repr(obs.screenshot.shape).encode())
    if obs.previous_screenshot is not None:
        h.update(obs.previous_screenshot.tobytes())
        h.update(repr(obs.previous_screenshot.shape).encode())
    h.update(obs.instruction.encode())
    for a in obs.history:
        h.update(repr(a).encode())
    return h.hexdigest()


class HFPolicy(LogProbFromMask):
    """A Hugging Face vision-language policy (see the module docstring). Implements ``Policy``."""

    kind = "hf"

    def __init__(
        self,
        model: Any,
        processor: Any,
        cfg: HFPolicyConfig,
        *,
        device: torch.device,
        base_model: Path | None = None,
    ) -> None:
        self.model = model
        self.processor = processor
        self.cfg = cfg
        self.device = device
        #: The folder the LoRA adapters sit on (``None`` for full fine-tuning).
        self.base_model = base_model
        tok = processor.tokenizer
        self.tokenizer = tok
        self.eos_id = int(tok.eos_token_id)
        self.pad_id = int(tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id)
        ip = processor.image_processor
        crop = crops_center(ip)
        if cfg.image_fit == "stretch" and crop is not None:
            raise ConfigError(
                "policy.hf.image_fit=stretch, but this processor center-crops, which cuts off part of the screen "
                "and makes coordinates impossible to map back; use image_fit=pad (or auto)"
            )
        pad = cfg.image_fit == "pad" or (cfg.image_fit == "auto" and crop is not None)
        self._pad_aspect = (crop[0] / crop[1] if crop else 1.0) if pad else None
        mean = getattr(ip, "image_mean", None) or [0.0, 0.0, 0.0]
        r, g, b = (round(255 * float(m)) for m in mean[:3])
        self._fill = (r, g, b)
        self._autocast = _autocast_wanted(cfg.autocast) and device.type == "cuda"
        self._cache: OrderedDict[str, Encoded] = OrderedDict()
        self._cache_bytes = 0
        self._cache_limit = 1 << 30  # bytes of processed prompts (mostly pixel tensors) kept for revisits
        self._keys: dict[int, tuple[Any, Any, tuple[str, tuple[Action, ...]], str]] = {}
        self._vision: Any = None
        self._rope_index = _rope_index_fn(self.model)
        if cfg.fast_vision_attention:
            from digirl.policies.hf.vision import enable_fast_vision_attention

            enable_fast_vision_attention(self.model)
        if vision_frozen(cfg) and cfg.vision_cache > 0:
            from digirl.policies.hf.vision import VisionFeatureCache

            self._vision = VisionFeatureCache.attach(self.model, cfg.vision_cache, device)
        set_trainable(self.model, cfg)
        if cfg.gradient_checkpointing:
            self.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        elif cfg.vision_checkpointing:
            _checkpoint_vision(self.model)
        if cfg.compile_lm:
            _compile_decoder_layers(self.model)
        self.model.eval()

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_config(cls, cfg: PolicyConfig, *, device: torch.device, seed: int) -> HFPolicy:
        """A policy on the local model folder ``cfg.init`` (LoRA adapters added when ``policy.hf.lora_r`` > 0)."""
        if not cfg.init:
            raise ConfigError(
                "policy.kind=hf needs policy.init=DIR: a local Hugging Face model folder (written by save_pretrained) "
                "or a saved hf policy; models are never downloaded"
            )
        torch.manual_seed(seed)
        return cls._from_folder(Path(cfg.init), cfg.hf, device=device)

    @classmethod
    def from_model(cls, model: Any, processor: Any, cfg: HFPolicyConfig, *, device: torch.device) -> HFPolicy:
        """A policy on an in-memory model (e.g. built from a config in a benchmark); LoRA is added per ``cfg``."""
        model = model.to(device)
        if cfg.lora_r > 0:
            model = apply_lora(model, cfg)
        return cls(model, processor, cfg, device=device)

    @classmethod
    def _from_folder(cls, folder: Path, hf: HFPolicyConfig, *, device: torch.device) -> HFPolicy:
        dtype = resolve_dtype(hf.dtype, device)
        model = load_model(folder, dtype=dtype, device=device, attn_implementation=hf.attn_implementation)
        processor = load_processor(folder)
        base = None
        if hf.lora_r > 0:
            model = apply_lora(model, hf)
            base = folder.resolve()
        return cls(model, processor, hf, device=device, base_model=base)

    @classmethod
    def load(cls, path: str | Path, *, device: str | torch.device = "cpu", cfg: PolicyConfig | None = None) -> HFPolicy:
        """A policy written by :meth:`save`. ``cfg`` supplies the run-time options (:data:`RUNTIME_FIELDS`)
        and, for a fully fine-tuned policy, ``policy.hf.lora_r`` > 0 starts fresh adapters on top of it."""
        p = Path(path)
        meta = read_policy_meta(p, HFPolicy.kind)
        try:
            saved = HFPolicyConfig.from_dict(meta.get("config", {}))
        except (TypeError, ValueError) as e:
            raise DataError(f"{p / 'policy.json'}: bad hf policy config ({e})") from e
        run = cfg.hf if cfg is not None else None
        if run is not None:
            saved = replace(saved, **{f: getattr(run, f) for f in RUNTIME_FIELDS})
        dev = torch.device(device) if isinstance(device, str) else device
        if not meta.get("lora"):
            if run is not None and run.lora_r > 0:  # LoRA on top of a fine-tuned policy
                lora = {f: getattr(run, f) for f in HFPolicyConfig.__dataclass_fields__ if f.startswith("lora_")}
                saved = replace(saved, **lora)
            else:
                saved = replace(saved, lora_r=0)
            return cls._from_folder(p, saved, device=dev)
        return cls._load_lora(p, meta, saved, dev)

    @classmethod
    def _load_lora(cls, p: Path, meta: dict[str, Any], hf: HFPolicyConfig, device: torch.device) -> HFPolicy:
        from peft import PeftModel

        base = Path(str(meta.get("base_model", "")))
        if not base.is_dir():
            raise DataError(
                f"{p / 'policy.json'}: the LoRA adapters need their base model at {base}, which does not exist "
                "(moved? edit base_model in policy.json, or merge the adapters where the base is available: "
                "digirl policy merge)"
            )
        want = meta.get("base_fingerprint")
        if want and want != _fingerprint(base):
            raise DataError(f"{base}: not the base model the adapters in {p} were trained on (its config or weights changed)")
        for f in ("adapter_model.safetensors", "adapter_config.json"):
            if not (p / f).is_file():
                raise DataError(f"{p / f}: missing (a LoRA policy folder holds its adapters)")
        model = load_model(base, dtype=resolve_dtype(hf.dtype, device), device=device, attn_implementation=hf.attn_implementation)
        try:
            model = PeftModel.from_pretrained(model, str(p), is_trainable=True)
        except (OSError, ValueError, RuntimeError, KeyError) as e:
            raise DataError(f"{p}: corrupt or mismatched LoRA adapters ({e})") from e
        processor = load_processor(p if (p / "tokenizer_config.json").is_file() else base)
        return cls(model.to(device), processor, hf, device=device, base_model=base)

    # ------------------------------------------------------------------ the Policy protocol
    def parameters(self) -> Iterator[torch.nn.Parameter]:
        """The trainable parameters only (the adapters under LoRA; not the frozen vision tower)."""
        return (p for p in self.model.parameters() if p.requires_grad)

    def train(self, mode: bool = True) -> None:
        self.model.train(mode)

    def _ctx(self) -> contextlib.AbstractContextManager[Any]:
        if self._autocast:
            return torch.autocast("cuda", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    # ------------------------------------------------------------------ encoding
    def encode_many(self, observations: Sequence[Observation]) -> list[Encoded]:
        """:meth:`encode` of each; new screens are processed in parallel threads (image resizing,
        normalisation and tokenisation release the GIL)."""
        keys = [self._key(o) for o in observations]
        todo = {k: o for k, o in zip(keys, observations) if k not in self._cache}
        if len(todo) > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1, len(todo))) as pool:
                done = dict(zip(todo, pool.map(lambda kv: self._encode(kv[1], kv[0]), todo.items())))
            for k, enc in done.items():
                self._remember(k, enc)
        return [self._lookup(k, o) for k, o in zip(keys, observations)]

    def encode(self, obs: Observation) -> Encoded:
        """The processed prompt of ``obs`` (cached by content)."""
        return self._lookup(self._key(obs), obs)

    def _lookup(self, key: str, obs: Observation) -> Encoded:
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        enc = self._encode(obs, key)
        self._remember(key, enc)
        return enc

    def _remember(self, key: str, enc: Encoded) -> None:
        self._cache[key] = enc
        self._cache_bytes += enc.nbytes
        while self._cache_bytes > self._cache_limit and len(self._cache) > 1:
            _, old = self._cache.popitem(last=False)
            self._cache_bytes -= old.nbytes

    def _key(self, obs: Observation) -> str:
        # The same observation object again (updates revisit them): skip hashing its pixels. Arrays
        # are held weakly, so the memo keeps no screenshot alive.
        prev = obs.previous_screenshot
        known = self._keys.get(id(obs))
        if (
            known is not None
            and known[0]() is obs.screenshot
            and (known[1]() if known[1] is not None else None) is prev
            and known[2] == (obs.instruction, obs.history)
        ):
            key = known[3]
        else:
            key = observation_key(obs)
            pref = weakref.ref(prev) if prev is not None else None
            self._keys[id(obs)] = (weakref.ref(obs.screenshot), pref, (obs.instruction, obs.history), key)
            while len(self._keys) > 16384:
                self._keys.pop(next(iter(self._keys)))
        return key

    def _encode(self, obs: Observation, key: str) -> Encoded:
        cfg = self.cfg
        ip = self.processor.image_processor
        screens = [obs.previous_screenshot] if cfg.previous_screenshot and obs.previous_screenshot is not None else []
        screens.append(obs.screenshot)
        images, geometry = [], None
        for s in screens:
            img, geometry = prepare_image(s, max_pixels=cfg.max_image_pixels, pad_aspect=self._pad_aspect, fill=self._fill)
            images.append(img)
        assert geometry is not None
        geometry = replace(geometry, model=model_image_size(ip, *geometry.canvas))
        frame = geometry.frame(cfg.coords)
        codec = get_codec(cfg.action_format, frame)
        text = render_prompt(
            cfg.prompt,
            obs.instruction,
            obs.history,
            action_format=cfg.action_format,
            coords=cfg.coords,
            frame=frame,
            history_len=cfg.history,
            image_size=geometry.model,
        )
        if getattr(self.processor, "chat_template", None):
            chat = self.processor.apply_chat_template(messages(text, len(images)), add_generation_prompt=True, tokenize=False)
        else:  # e.g. PaliGemma: the processor places the image tokens itself
            chat = text
        out = self.processor(text=[chat], images=images, return_tensors="pt")
        grid = out.get("image_grid_thw")
        if grid is not None and geometry.model is not None:
            patch = int(ip.patch_size)
            seen = (int(grid[-1][2]) * patch, int(grid[-1][1]) * patch)
            if seen != geometry.model:
                raise DataError(f"the processor resized the screenshot to {seen}, not {geometry.model} as predicted")
        ids = out["input_ids"][0]
        extras = {k: out[k][0] for k in _TOKEN_KEYS if k in out}
        imgs = {k: v for k, v in out.items() if k not in ("input_ids", "attention_mask", *_TOKEN_KEYS) and torch.is_tensor(v)}
        nbytes = sum(int(t.numel() * t.element_size()) for t in (ids, *extras.values(), *imgs.values()))
        return Encoded(key, ids, extras, imgs, codec, geometry, len(images), nbytes)

    def action_text(self, enc: Encoded, action: Action) -> str | None:
        """The text the model writes for ``action`` in ``enc``'s frame (``None`` for INVALID)."""
        return enc.codec.format(action) if action.is_valid else None

    def _target_ids(self, enc: Encoded, action: Action) -> list[int] | None:
        text = self.action_text(enc, action)
        if text is None:
            return None
        ids = [int(i) for i in self.tokenizer(text, add_special_tokens=False)["input_ids"]] + [self.eos_id]
        return ids if len(ids) <= self.cfg.max_new_tokens else None

    @staticmethod
    def _images(encs: Sequence[Encoded]) -> dict[str, torch.Tensor]:
        out: dict[str, torch.Tensor] = {}
        for k in encs[0].images:
            parts = [e.images[k] for e in encs]
            out[k] = torch.cat(parts, 0)
        return out

    def _model_inputs(
        self, encs: Sequence[Encoded], seqs: Sequence[torch.Tensor], *, left: bool, positions: bool = False
    ) -> dict[str, Any]:
        """Padded ids, attention mask, per-token extras (zero for tokens after the prompt) and images;
        with ``positions``, also the position ids where the model derives them from the images."""
        n = max(len(s) for s in seqs)
        if not left:  # scoring: trailing padding is masked and changes no earlier position under causal attention
            m = self.cfg.pad_to_multiple
            n = -(-n // m) * m
        b = len(seqs)
        ids = torch.full((b, n), self.pad_id, dtype=torch.long)
        mask = torch.zeros((b, n), dtype=torch.long)
        extras = {k: torch.zeros((b, n), dtype=v.dtype) for k, v in encs[0].token_extras.items()}
        for i, (e, s) in enumerate(zip(encs, seqs)):
            sl = slice(n - len(s), n) if left else slice(0, len(s))
            ids[i, sl] = s
            mask[i, sl] = 1
            p = len(e.prompt_ids)
            for k, v in e.token_extras.items():
                row = torch.zeros(len(s), dtype=v.dtype)
                row[:p] = v
                if k == "token_type_ids":  # PaliGemma: the answer is the "suffix"
                    row[p:] = 1
                extras[k][i, sl] = row
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": mask, **extras, **self._images(encs)}
        if positions and self._rope_index is not None:
            pos = _host_positions(self._rope_index, inputs)
            if pos is not None:
                inputs["position_ids"] = pos
        # With a feature cache, pixels stay on the host: the cache copies only the screens it lacks.
        host = {"pixel_values"} if self._vision is not None and self._vision.enabled else set()
        return {k: v if k in host else to_device(v, self.device) for k, v in inputs.items()}

    # ------------------------------------------------------------------ acting
    @torch.no_grad()
    def act(self, observations: Sequence[Observation], *, greedy: bool = False, temperature: float = 1.0) -> list[ActOutput]:
        if not observations:
            return []
        encs = self.encode_many(observations)
        was_training = self.model.training
        self.model.eval()
        inputs = self._model_inputs(encs, [e.prompt_ids for e in encs], left=True)
        gen: dict[str, Any] = {
            "max_new_tokens": self.cfg.max_new_tokens,
            "do_sample": not greedy,
            "eos_token_id": self.eos_id,
            "pad_token_id": self.pad_id,
            "return_dict_in_generate": True,
            "output_logits": True,
            "use_cache": True,
        }
        if not greedy:  # sample from the policy itself: no top-k / top-p truncation
            gen |= {"temperature": max(float(temperature), 1e-4), "top_k": 0, "top_p": 1.0}
        else:
            gen |= {"temperature": None, "top_k": None, "top_p": None}
        try:
            with self._ctx():
                out = self.model.generate(**inputs, **gen)
        finally:
            self.model.train(was_training)
        prompt_len = inputs["input_ids"].shape[1]
        new = out.sequences[:, prompt_len:].cpu()
        logp = torch.stack([x.float() for x in out.logits], 1).log_softmax(-1).cpu() if out.logits else None
        results: list[ActOutput] = []
        for i, e in enumerate(encs):
            row = new[i].tolist()
            end = row.index(self.eos_id) + 1 if self.eos_id in row else len(row)
            toks = row[:end]
            text = self.tokenizer.decode([t for t in toks if t != self.eos_id], skip_special_tokens=True)
            lp = float(logp[i, torch.arange(len(toks)), torch.tensor(toks)].sum()) if logp is not None and toks else None
            results.append(ActOutput(e.codec.parse(text), text, lp))
        return results

    # ------------------------------------------------------------------ scoring
    def log_prob_with_mask(
        self, observations: Sequence[Observation], actions: Sequence[Action]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(Σ log-probabilities of each action's tokens [B], expressible [B]); differentiable."""
        if len(observations) != len(actions):
            raise ValueError(f"{len(observations)} observations but {len(actions)} actions")
        b = len(observations)
        valid = torch.zeros(b, dtype=torch.bool, device=self.device)
        # float64: a sum of many token log-probabilities (-200 for a long text under a random model) is
        # only good to 1.5e-5 in float32, which would hide whether batching changes the value.
        lp = torch.zeros(b, dtype=torch.float64, device=self.device)
        rows: list[int] = []
        encs: list[Encoded] = []
        targets: list[list[int]] = []
        scored = [i for i, a in enumerate(actions) if a.is_valid]
        encoded = dict(zip(scored, self.encode_many([observations[i] for i in scored])))
        for i, a in enumerate(actions):
            if i not in encoded:
                continue
            e = encoded[i]
            t = self._target_ids(e, a)
            if t is None:
                continue
            rows.append(i)
            encs.append(e)
            targets.append(t)
        if not rows:
            return lp, valid
        seqs = [torch.cat([e.prompt_ids, torch.tensor(t, dtype=torch.long)]) for e, t in zip(encs, targets)]
        inputs = self._model_inputs(encs, seqs, left=False, positions=True)
        starts = [len(e.prompt_ids) - 1 for e in encs]  # position whose logits predict the first action token
        lo = min(starts)
        hi = max(s + len(t) for s, t in zip(starts, targets))
        keep = torch.arange(lo, hi, device=self.device)
        if self._vision is not None:
            self._vision.expect([(e.key, e.n_images) for e in encs])
        try:
            with self._ctx():
                out = self.model(**inputs, logits_to_keep=keep, use_cache=False)
        finally:
            if self._vision is not None:
                self._vision.expect(None)
        logits = out.logits.float()
        tgt = torch.zeros((len(rows), hi - lo), dtype=torch.long)
        m = torch.zeros((len(rows), hi - lo), dtype=torch.bool)
        for j, (s, t) in enumerate(zip(starts, targets)):
            tgt[j, s - lo : s - lo + len(t)] = torch.tensor(t)
            m[j, s - lo : s - lo + len(t)] = True
        tgt, m = to_device(tgt, self.device), to_device(m, self.device)
        tok_lp = torch.log_softmax(logits, -1).gather(-1, tgt.unsqueeze(-1)).squeeze(-1)
        per_sample = (tok_lp.double() * m).sum(1)
        idx = to_device(torch.tensor(rows), self.device)
        lp = lp.index_put((idx,), per_sample)
        valid = valid.index_put((idx,), torch.ones(len(rows), dtype=torch.bool, device=self.device))
        return lp, valid

    # ------------------------------------------------------------------ persistence
    @property
    def is_lora(self) -> bool:
        return self.cfg.lora_r > 0

    def save(self, path: str | Path) -> None:
        """Write ``policy.json`` and the weights (LoRA: the adapters) and processor into the folder ``path``."""
        p = Path(path)
        p.mkdir(parents=True, exist_ok=True)
        meta: dict[str, Any] = {"kind": self.kind, "config": asdict(self.cfg), "lora": self.is_lora}
        if self.is_lora:
            if self.base_model is None:
                raise ValueError(
                    "this LoRA policy was built on an in-memory model, which has no folder to refer to; merge it first"
                )
            meta["base_model"] = str(self.base_model)
            meta["base_fingerprint"] = _fingerprint(self.base_model)
        self.model.save_pretrained(str(p), safe_serialization=True)
        self.processor.save_pretrained(str(p))
        (p / "policy.json").write_text(json.dumps(meta, indent=2))

    def merged(self) -> HFPolicy:
        """A fully fine-tuned copy with the LoRA adapters folded into the weights (this policy is consumed)."""
        if not self.is_lora:
            return self
        model = self.model.merge_and_unload()
        return HFPolicy(model, self.processor, replace(self.cfg, lora_r=0), device=self.device)


def _autocast_wanted(configured: bool) -> bool:
    """``policy.hf.autocast``, unless ``accelerate launch --mixed_precision`` says otherwise."""
    mp = os.environ.get("ACCELERATE_MIXED_PRECISION", "").lower()
    if mp == "fp16":
        raise ConfigError("accelerate launch --mixed_precision fp16 is not supported by hf policies; use bf16 (or no)")
    if mp in ("no", "bf16"):
        return mp == "bf16"
    return configured


def _rope_index_fn(model: Any) -> Any:
    """The model's multimodal RoPE position function (Qwen-VL's ``get_rope_index``), or ``None``."""
    owners = [m for m in model.modules() if hasattr(type(m), "get_rope_index")]
    return owners[-1].get_rope_index if owners else None


def _host_positions(rope_index: Any, inputs: dict[str, torch.Tensor]) -> torch.Tensor | None:
    """Position ids computed on the host, before the inputs move to the device.

    Qwen-VL models compute them inside ``forward`` from ids and image grids with ``.tolist()`` and
    ``.item()``; on device tensors each of those makes the host wait until the device has drained,
    so the device idles while the host then launches the forward. The values are the same.
    """
    params = inspect.signature(rope_index).parameters
    required = [n for n, q in params.items() if q.default is inspect.Parameter.empty and q.kind is q.POSITIONAL_OR_KEYWORD]
    if any(n not in inputs for n in required if n != "self"):
        return None  # a signature this code does not know: leave it to the model
    pos, _ = rope_index(**{k: v for k, v in inputs.items() if k in params})
    return pos if torch.is_tensor(pos) else None


def _compile_decoder_layers(model: Any) -> None:
    """``torch.compile`` every layer of the language model (dynamic shapes: batches differ in length)."""
    from digirl.policies.hf.lora import is_vision_param

    stacks = [
        m
        for n, m in model.named_modules()
        if n.endswith("layers") and not is_vision_param(n) and isinstance(m, torch.nn.ModuleList)
    ]
    if not stacks:
        raise ConfigError("policy.hf.compile_lm: no decoder layer stack found in this model")
    for layer in stacks[0]:
        layer.compile(dynamic=True)


def _checkpoint_vision(model: Any) -> None:
    """Recompute the vision tower's activations in the backward pass, but not the language model's."""
    from digirl.policies.hf.lora import is_vision_param

    towers = [m for n, m in model.named_modules() if is_vision_param(n) and hasattr(m, "gradient_checkpointing_enable")]
    if not towers:
        raise ConfigError("policy.hf.vision_checkpointing: this model's vision tower does not support checkpointing")
    for m in towers[:1]:
        m.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})


def _fingerprint(base: Path) -> str:
    """What identifies a base model folder cheaply: its config and the sizes of its weight files."""
    check_model_folder(base)
    h = hashlib.blake2b(digest_size=12)
    h.update((base / "config.json").read_bytes())
    for f in sorted(base.glob("*.safetensors")):
        h.update(f"{f.name}:{f.stat().st_size}".encode())
    return h.hexdigest()
