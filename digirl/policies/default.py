"""The default policy: a small multimodal transformer that trains from scratch on a CPU.

Tokens: [CLS] [IMAGE] [HISTORY] instruction words… UI elements…. The image token comes from a
small CNN over the screenshot (optionally stacked with the previous frame, as DigiRL stacks two);
element tokens embed each element's words, bounds, kind, flags and word overlap with the
instruction. Screenshot only with ``pixel_regions``, the element tokens are boxes detected from the pixels
(:mod:`digirl.policies.regions`), each its bounds plus a CNN feature of its crop. Heads on the encoder output:

- kind (12-way: tap an element, tap a grid cell, 4 swipes, type, back, home, enter, complete, impossible);
- a pointer over elements (tap their centre) and a coarse grid (taps elsewhere);
- typed text as an ordered selection of instruction words (a per-word Bernoulli).

``act`` samples (or takes the mode); ``log_prob`` scores given actions, so BC and RL losses use it.
Weights are saved as safetensors plus a JSON config — never pickle.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import torch
from torch import nn

from digirl.core.actions import Action
from digirl.core.errors import DataError
from digirl.core.types import Observation
from digirl.policies.base import ActOutput, LogProbFromMask
from digirl.policies.config import EncoderConfig, PolicyNetConfig
from digirl.policies.features import (
    ELEMENT_KINDS,
    KIND_INDEX,
    KINDS,
    Batch,
    decode_action,
    encode_actions,
    featurize,
)
from digirl.policies.regions import CROP_SIZE as REGION_CROP
from digirl.policies.registry import POLICY_FILE, read_policy_meta

if TYPE_CHECKING:
    from digirl.policies.config import PolicyConfig

__all__ = ["DefaultPolicy", "EncoderConfig", "PolicyNetConfig", "ScreenEncoder"]


class ScreenEncoder(nn.Module):
    """Encodes a featurized batch into token states; shared by the policy and the critics."""

    def __init__(self, cfg: EncoderConfig) -> None:
        super().__init__()
        d = cfg.dim
        self.cfg = cfg
        c = 3 * cfg.frame_stack
        self.cnn = nn.Sequential(
            nn.Conv2d(c, 16, 5, stride=2, padding=2),
            nn.GELU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1),
            nn.GELU(),
            nn.Conv2d(32, 32, 3, stride=2, padding=1),
            nn.GELU(),
            nn.AdaptiveAvgPool2d((6, 3)),
            nn.Flatten(),
            nn.Linear(32 * 18, d),
        )
        self.word = nn.Embedding(cfg.buckets, d, padding_idx=0)
        self.pos = nn.Embedding(cfg.max_instruction_words, d)
        self.elem_num = nn.Linear(9, d)
        self.elem_kind = nn.Embedding(len(ELEMENT_KINDS) + 1, d)
        self.hist = nn.Embedding(len(KINDS) + 1, d, padding_idx=0)
        self.hist_pos = nn.Embedding(cfg.history_len, d)
        self.type_emb = nn.Embedding(5, d)  # cls, image, history, instruction, element
        # Pixels-only regions carry no words: what a region shows enters through a crop of its pixels.
        self.region_cnn = _region_cnn(d) if cfg.pixel_regions else None
        self.cls = nn.Parameter(torch.zeros(1, 1, d))
        layer = nn.TransformerEncoderLayer(d, cfg.heads, 2 * d, cfg.dropout, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, cfg.layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)

    def forward(self, t: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Returns (cls state [B,d], instruction states [B,L,d], element states [B,K,d])."""
        b = t["instr"].shape[0]
        L = t["instr"].shape[1]
        K = t["elem_mask"].shape[1]
        img = self.cnn(t["image"]).unsqueeze(1)
        hist = (self.hist(t["history"]) + self.hist_pos.weight.unsqueeze(0) * (t["history"] > 0).unsqueeze(-1)).sum(
            1, keepdim=True
        )
        ew = t["elem_words"]
        wmask = (ew > 0).unsqueeze(-1).float()
        instr = self.word(t["instr"])
        ewords_each = self.word(ew) * wmask
        if self.training and self.cfg.word_dropout > 0:
            keep_instr, keep_elem = word_keep_masks(t["instr"], ew, self.cfg.word_dropout, self.cfg.buckets)
            instr = instr * keep_instr.unsqueeze(-1)
            ewords_each = ewords_each * keep_elem.unsqueeze(-1)
        instr = instr + self.pos.weight[:L].unsqueeze(0)
        ewords = ewords_each.sum(2) / wmask.sum(2).clamp(min=1.0)
        elem = ewords + self.elem_num(t["elem_num"]) + self.elem_kind(t["elem_kind"])
        if self.region_cnn is not None:
            # Only real regions go through the CNN (padding tokens are masked everywhere after this).
            real = t["elem_mask"]
            seen = torch.zeros_like(elem)
            if bool(real.any()):
                seen[real] = self.region_cnn(t["elem_pixels"][real].float() / 255.0).to(seen.dtype)
            elem = elem + seen
        types = self.type_emb.weight
        x = torch.cat(
            [
                self.cls.expand(b, 1, -1) + types[0],
                img + types[1],
                hist + types[2],
                instr + types[3],
                elem + types[4],
            ],
            dim=1,
        )
        pad = torch.cat([torch.zeros(b, 3, dtype=torch.bool, device=x.device), t["instr"] == 0, ~t["elem_mask"]], dim=1)
        h = self.norm(self.encoder(x, src_key_padding_mask=pad))
        return h[:, 0], h[:, 3 : 3 + L], h[:, 3 + L : 3 + L + K]


def _region_cnn(d: int) -> nn.Module:
    """A [3, 12, 32] region crop to one d-vector (stride 4 keeps a text line's strokes apart)."""
    h, w = REGION_CROP
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1),
        nn.GELU(),
        nn.Conv2d(16, 32, 3, stride=2, padding=1),
        nn.GELU(),
        nn.Conv2d(32, 32, 3, stride=2, padding=1),
        nn.GELU(),
        nn.Flatten(),
        nn.Linear(32 * ((h + 3) // 4) * ((w + 3) // 4), d),
    )


def word_keep_masks(instr: torch.Tensor, elem_words: torch.Tensor, p: float, buckets: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Word dropout: which word ids of ``instr`` [B, L] and ``elem_words`` [B, K, T] stay visible.

    One draw per sample and word bucket, so a hidden word is hidden wherever it occurs in its sample
    (the instruction and every element): the identity is gone, the overlap features still match.
    """
    b = instr.shape[0]
    hidden = torch.rand(b, buckets, device=instr.device) < p
    keep_instr = ~hidden.gather(1, instr)
    keep_elem = ~hidden.gather(1, elem_words.reshape(b, -1)).reshape(elem_words.shape)
    return keep_instr, keep_elem


def batch_to_tensors(batch: Batch, device: torch.device) -> dict[str, torch.Tensor]:
    out = {
        "image": torch.from_numpy(batch.image).to(device),
        "instr": torch.from_numpy(batch.instr).to(device),
        "elem_words": torch.from_numpy(batch.elem_words).to(device),
        "elem_num": torch.from_numpy(batch.elem_num).to(device),
        "elem_kind": torch.from_numpy(batch.elem_kind).to(device),
        "elem_mask": torch.from_numpy(batch.elem_mask).to(device),
        "history": torch.from_numpy(batch.history).to(device),
    }
    if batch.elem_pixels is not None:
        out["elem_pixels"] = torch.from_numpy(batch.elem_pixels).to(device)
    return out


class _PolicyNet(nn.Module):
    def __init__(self, cfg: EncoderConfig) -> None:
        super().__init__()
        d = cfg.dim
        spec = cfg.features
        self.encoder = ScreenEncoder(cfg)
        self.kind_head = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, len(KINDS)))
        self.ptr_q = nn.Linear(d, d)
        self.ptr_k = nn.Linear(d, d)
        self.grid_head = nn.Linear(d, spec.grid_size)
        self.type_head = nn.Sequential(nn.Linear(2 * d, d), nn.GELU(), nn.Linear(d, 1))
        # Prior: tap what the instruction mentions. A learnable weight on the element/instruction
        # word-overlap features, so the pointer generalizes to entities never seen in training.
        self.ptr_overlap = nn.Parameter(torch.tensor([4.0, 4.0]))
        # Is what the instruction names on this screen (tap it) or not (scroll on)? Zero-initialised,
        # so switching it on starts from the plain policy's action distribution.
        self.kind_match = nn.Linear(2, len(KINDS)) if cfg.screen_match else None
        if self.kind_match is not None:
            nn.init.zeros_(self.kind_match.weight)
            nn.init.zeros_(self.kind_match.bias)

    def forward(self, t: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        cls, instr, elem = self.encoder(t)
        d = cls.shape[-1]
        ptr = torch.einsum("bd,bkd->bk", self.ptr_q(cls), self.ptr_k(elem)) / math.sqrt(d)
        overlap = t["elem_num"][..., 6:8]
        ptr = ptr + (overlap * self.ptr_overlap).sum(-1)
        ptr = ptr.masked_fill(~t["elem_mask"], -1e9)
        kind = self.kind_head(cls)
        if self.kind_match is not None:
            best = overlap.masked_fill(~t["elem_mask"].unsqueeze(-1), 0.0).amax(1)
            kind = kind + self.kind_match(best)
        # No elements → tapping an element is impossible.
        no_elem = ~t["elem_mask"].any(1)
        kind = kind.masked_fill(no_elem.unsqueeze(1) & (torch.arange(len(KINDS), device=kind.device) == 0), -1e9)
        typ = self.type_head(torch.cat([instr, cls.unsqueeze(1).expand_as(instr)], -1)).squeeze(-1)
        typ = typ.masked_fill(t["instr"] == 0, -1e9)
        return {"kind": kind, "element": ptr, "grid": self.grid_head(cls), "type": typ}


class DefaultPolicy(LogProbFromMask):
    """The default from-scratch policy (see module docstring). Implements ``digirl.policies.base.Policy``."""

    kind = "default"

    def __init__(
        self,
        cfg: EncoderConfig | None = None,
        *,
        device: str | torch.device = "cpu",
        seed: int | None = None,
        tap_epsilon: float = 0.0,
    ) -> None:
        if not 0.0 <= tap_epsilon < 1.0:
            raise ValueError(f"tap_epsilon must be in [0, 1), got {tap_epsilon}")
        self.cfg = cfg or EncoderConfig()
        self.cfg.check_view()
        #: Share of the pointer's probability spread uniformly over the screen's elements when
        #: sampling (exploration; greedy actions and the trained distribution are unaffected).
        self.tap_epsilon = tap_epsilon
        if seed is not None:
            torch.manual_seed(seed)
        self.device = torch.device(device)
        self.net = _PolicyNet(self.cfg).to(self.device)
        self.spec = self.cfg.features
        self._gen = torch.Generator(device="cpu")
        self._gen.manual_seed(seed if seed is not None else 0)

    @classmethod
    def from_config(cls, cfg: PolicyConfig, *, device: torch.device, seed: int) -> DefaultPolicy:
        """A fresh, randomly initialised policy of ``cfg.default``'s size."""
        if cfg.init:
            raise DataError(f"policy.init={cfg.init}: not a saved policy folder (no policy.json)")
        return cls(cfg.default, device=device, seed=seed, tap_epsilon=cfg.tap_epsilon)

    @property
    def uses_elements(self) -> bool:
        """Whether it reads the screen's UI elements (``use_elements``), or the screenshot alone."""
        return bool(self.cfg.use_elements)

    # ------------------------------------------------------------------ acting
    def reseed(self, seed: int) -> None:
        """Restart sampling from ``seed`` (actors playing episodes themselves reseed per episode)."""
        self._gen.manual_seed(int(seed))

    def sampling_state(self) -> torch.Tensor:
        return self._gen.get_state()

    def set_sampling_state(self, state: torch.Tensor) -> None:
        self._gen.set_state(state)

    def parameters(self) -> Iterator[nn.Parameter]:
        return self.net.parameters()

    def train(self, mode: bool = True) -> None:
        self.net.train(mode)

    def featurize(self, observations: Sequence[Observation]) -> Batch:
        return featurize(observations, self.spec)

    @torch.no_grad()
    def act(self, observations: Sequence[Observation], *, greedy: bool = False, temperature: float = 1.0) -> list[ActOutput]:
        if not observations:
            return []
        was_training = self.net.training
        if was_training:
            _set_training(self.net, False)
        batch = self.featurize(observations)
        out = self.net(batch_to_tensors(batch, self.device))
        out = {k: v.float().cpu() for k, v in out.items()}
        # Greedy takes the mode, the same at every temperature, and scores it under the policy's own
        # distribution (what ``log_prob`` gives): a tiny temperature would report the log-probability of
        # a near point mass instead (0, or -1231.7 for a TYPE word forced on at temperature 1e-4).
        temp = 1.0 if greedy else max(temperature, 1e-4)
        # Whole-batch tensors: log_softmax rows are computed row by row either way (same values as
        # per-sample calls, checked in tests); per-sample work is only what draws from the generator.
        kind_lp = torch.log_softmax(out["kind"] / temp, -1)
        elem_lp = torch.log_softmax(out["element"] / temp, -1)
        if self.tap_epsilon > 0 and not greedy:
            elem_lp = _mix_uniform(elem_lp, torch.from_numpy(batch.elem_mask), self.tap_epsilon)
        grid_lp = torch.log_softmax(out["grid"] / temp, -1)
        type_logit = out["type"] / temp
        kind_np, elem_np, grid_np = kind_lp.numpy(), elem_lp.numpy(), grid_lp.numpy()
        if greedy:
            ks, es, cs = kind_lp.argmax(-1).tolist(), elem_lp.argmax(-1).tolist(), grid_lp.argmax(-1).tolist()
        results: list[ActOutput] = []
        for i in range(len(observations)):
            if greedy:
                k, e, c = ks[i], es[i], cs[i]
                mask = (type_logit[i] > 0).float()
            else:
                k, e, c, mask = self._sample(kind_lp[i], elem_lp[i], grid_lp[i], type_logit[i])
            name = KINDS[k]
            n_words = len(batch.instr_words[i])
            if name == "type" and n_words and not mask[:n_words].any():
                mask[int(type_logit[i, :n_words].argmax())] = 1.0  # never type an empty string
            lp = float(kind_np[i, k])
            if name == "tap_element":
                lp += float(elem_np[i, e])
            elif name == "tap_grid":
                lp += float(grid_np[i, c])
            elif name == "type":
                valid = out["type"][i] > -1e8
                bern = -nn.functional.binary_cross_entropy_with_logits(type_logit[i], mask, reduction="none")
                lp += float(bern[valid].sum())
            action = decode_action(k, e, c, mask.numpy(), batch.elements[i], batch.instr_words[i], self.spec)
            results.append(ActOutput(action, _action_text(action), lp))
        if was_training:
            _set_training(self.net, True)
        return results

    def _sample(
        self, kind_lp: torch.Tensor, elem_lp: torch.Tensor, grid_lp: torch.Tensor, type_logit: torch.Tensor
    ) -> tuple[int, int, int, torch.Tensor]:
        """One sample's draws, in the generator order every earlier version used (kind, element,
        cell, typed words), so a seeded policy keeps sampling the same actions."""
        g = self._gen
        k = int(torch.multinomial(kind_lp.exp(), 1, generator=g))
        e = int(torch.multinomial(elem_lp.exp(), 1, generator=g))
        c = int(torch.multinomial(grid_lp.exp(), 1, generator=g))
        return k, e, c, torch.bernoulli(torch.sigmoid(type_logit), generator=g)

    # ------------------------------------------------------------------ scoring
    def log_prob_with_mask(
        self, observations: Sequence[Observation], actions: Sequence[Action]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(log-probabilities [B], expressible mask [B]). Differentiable."""
        batch = self.featurize(observations)
        tg = encode_actions(batch, observations, actions, self.spec)
        out = self.net(batch_to_tensors(batch, self.device))
        dev = self.device
        kind = torch.from_numpy(tg.kind).to(dev)
        lp = torch.log_softmax(out["kind"].float(), -1).gather(1, kind[:, None]).squeeze(1)
        elem_t = torch.from_numpy(tg.element).to(dev)
        is_e = elem_t >= 0
        elem_lp = torch.log_softmax(out["element"].float(), -1).gather(1, elem_t.clamp(min=0)[:, None]).squeeze(1)
        lp = lp + torch.where(is_e, elem_lp, torch.zeros_like(elem_lp))
        cell_t = torch.from_numpy(tg.cell).to(dev)
        is_c = cell_t >= 0
        cell_lp = torch.log_softmax(out["grid"].float(), -1).gather(1, cell_t.clamp(min=0)[:, None]).squeeze(1)
        lp = lp + torch.where(is_c, cell_lp, torch.zeros_like(cell_lp))
        is_t = kind == KIND_INDEX["type"]
        tmask = torch.from_numpy(tg.type_mask).to(dev)
        logits = out["type"].float()
        word_valid = torch.from_numpy(batch.instr > 0).to(dev)
        bern = -nn.functional.binary_cross_entropy_with_logits(logits.clamp(-30, 30), tmask, reduction="none")
        type_lp = (bern * word_valid).sum(1)
        lp = lp + torch.where(is_t, type_lp, torch.zeros_like(type_lp))
        valid = torch.from_numpy(tg.valid).to(dev)
        return lp, valid

    # ------------------------------------------------------------------ persistence
    def state_dict(self) -> dict[str, torch.Tensor]:
        return {k: v.detach().cpu().contiguous() for k, v in self.net.state_dict().items()}

    def load_state_dict(self, sd: dict[str, torch.Tensor]) -> None:
        self.net.load_state_dict(sd)

    def save(self, path: str | Path) -> None:
        from safetensors.torch import save_file

        p = Path(path)
        p.mkdir(parents=True, exist_ok=True)
        save_file(self.state_dict(), str(p / "model.safetensors"))
        meta: dict[str, object] = {"kind": self.kind, "config": asdict(self.cfg)}
        if self.tap_epsilon:  # how it samples travels with the weights (actors load snapshots)
            meta["sampling"] = {"tap_epsilon": self.tap_epsilon}
        (p / "policy.json").write_text(json.dumps(meta, indent=2))

    @classmethod
    def load(cls, path: str | Path, *, device: str | torch.device = "cpu", cfg: PolicyConfig | None = None) -> DefaultPolicy:
        """A policy saved by :meth:`save`; a run's ``cfg`` sets how it samples (``cfg.tap_epsilon``),
        else the saved setting is kept."""
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        p = Path(path)
        meta_path, weights = p / POLICY_FILE, p / "model.safetensors"
        if meta_path.is_file() and not weights.is_file():  # policy.json is reported first when both are missing
            raise DataError(f"{weights}: missing (not a saved policy folder)")
        meta = read_policy_meta(p, cls.kind)
        try:
            net_cfg = EncoderConfig.from_dict(meta.get("config", {}))
        except (TypeError, ValueError) as e:
            raise DataError(f"{meta_path}: bad policy config ({e})") from e
        sampling = meta.get("sampling") or {}
        try:
            if not isinstance(sampling, dict):
                raise TypeError(f"'sampling' must be an object, got {type(sampling).__name__}")
            eps = cfg.tap_epsilon if cfg is not None else sampling.get("tap_epsilon", 0.0)
            policy = cls(net_cfg, device=device, tap_epsilon=float(eps))
        except (TypeError, ValueError) as e:
            raise DataError(f"{meta_path}: bad sampling setting ({e})") from e
        try:
            sd = load_file(str(weights))
        except (SafetensorError, OSError, ValueError) as e:
            raise DataError(f"{weights}: corrupt or truncated weights ({e})") from e
        try:
            policy.load_state_dict(sd)
        except RuntimeError as e:
            raise DataError(f"{weights}: weights do not match the config in policy.json ({e})") from e
        return policy


def _mix_uniform(logp: torch.Tensor, valid: torch.Tensor, eps: float) -> torch.Tensor:
    """log((1 − ε)·p + ε·uniform over the valid entries), row by row; rows without a valid entry
    (no elements on screen: the kind head never taps one) are returned unchanged."""
    n = valid.sum(-1, keepdim=True)
    mixed = ((1 - eps) * logp.exp() + eps * valid / n.clamp(min=1)).clamp(min=1e-30).log()
    mixed = torch.where(valid, mixed, torch.full_like(logp, -1e9))
    return torch.where(n > 0, mixed, logp)


def _set_training(net: nn.Module, mode: bool) -> None:
    """``net.train(mode)``: ``Module.train`` costs ~1 ms a call on this net (it goes through
    ``Module.__setattr__`` for every submodule), twice per ``act`` from a policy in training mode."""
    mods = list(net.modules())
    if any(type(m).train is not nn.Module.train for m in mods):
        net.train(mode)  # a module with its own train(): let it run
        return
    for m in mods:
        m.__dict__["training"] = mode


def _action_text(action: Action) -> str:
    try:
        from digirl.core.codecs import format_action

        return format_action(action, "json")
    except Exception:  # codecs are optional for acting; str() is exact enough for logs
        return str(action)


def count_parameters(policy: DefaultPolicy) -> int:
    return int(sum(p.numel() for p in policy.net.parameters()))
