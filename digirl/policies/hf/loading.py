"""Local model folders → model + processor, never a download.

A folder is what ``save_pretrained`` writes: ``config.json``, safetensors weights, the tokenizer
files and the image processor's config. :func:`check_model_folder` names what is missing before
transformers is asked. Processors are loaded with ``AutoProcessor``; where that fails or returns a
bare tokenizer (Qwen-VL and SmolVLM processors also build a video processor, which needs
torchvision), the processor is assembled from its parts with the video side left out
(:func:`image_only_processor_class`): policies only ever pass images.
"""

from __future__ import annotations

import inspect
import json
import logging
from pathlib import Path
from typing import Any

from digirl.core.errors import DataError

__all__ = [
    "check_model_folder",
    "hf",
    "image_only_processor_class",
    "load_model",
    "load_processor",
    "resolve_dtype",
]

log = logging.getLogger(__name__)

_TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "spiece.model")
_IMAGE_PROCESSOR_FILES = ("preprocessor_config.json", "processor_config.json")


def hf() -> Any:
    """The ``transformers`` module, untyped: its classes differ between versions and are duck-typed here."""
    import importlib

    try:
        return importlib.import_module("transformers")
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError("policy.kind=hf needs the hf extra: pip install 'digirl[hf]'") from e


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise DataError(f"{path}: not valid JSON ({e})") from e
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected a JSON object")
    return data


def check_model_folder(path: str | Path, *, weights: bool = True) -> Path:
    """``path`` as a local Hugging Face model folder, or a :class:`DataError` listing what is missing.

    ``weights=False`` checks only for a processor (tokenizer + image processor).
    """
    p = Path(path)
    if not p.is_dir():
        raise DataError(
            f"{p}: no such folder. policy.init must be a local model folder written by save_pretrained "
            "(models are never downloaded)"
        )
    missing: list[str] = []
    if weights and not (p / "config.json").is_file():
        missing.append("config.json (the model config)")
    if weights:
        index = p / "model.safetensors.index.json"
        if index.is_file():
            shards = sorted(set(_json(index).get("weight_map", {}).values()))
            missing += [f"{s} (a weight shard listed in {index.name})" for s in shards if not (p / s).is_file()]
        elif not (p / "model.safetensors").is_file():
            why = "the weights"
            if any(p.glob("pytorch_model*.bin")):
                why += "; pickled pytorch_model.bin files are not loaded: re-save with save_pretrained(safe_serialization=True)"
            missing.append(f"model.safetensors or model.safetensors.index.json + shards ({why})")
    if not any((p / f).is_file() for f in _TOKENIZER_FILES):
        missing.append("tokenizer.json (or tokenizer.model / vocab.json + merges.txt: the tokenizer)")
    if not any((p / f).is_file() for f in _IMAGE_PROCESSOR_FILES):
        missing.append("preprocessor_config.json or processor_config.json (the image processor)")
    if missing:
        present = ", ".join(sorted(f.name for f in p.iterdir())) or "nothing"
        raise DataError(
            f"{p} is not a complete Hugging Face model folder; missing: " + "; ".join(missing) + f". Present: {present}. "
            "Write it with model.save_pretrained(DIR) and processor.save_pretrained(DIR)"
        )
    return p


def resolve_dtype(name: str, device: Any) -> Any:
    """``auto`` → bfloat16 on CUDA, float32 elsewhere; otherwise the named torch dtype."""
    import torch

    if name == "auto":
        return torch.bfloat16 if getattr(device, "type", str(device)) == "cuda" else torch.float32
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


def load_model(path: str | Path, *, dtype: Any, device: Any, attn_implementation: str = "sdpa") -> Any:
    """``AutoModelForImageTextToText`` from a local folder (safetensors only), on ``device``."""
    p = check_model_folder(path)
    try:
        model = hf().AutoModelForImageTextToText.from_pretrained(
            str(p), local_files_only=True, use_safetensors=True, dtype=dtype, attn_implementation=attn_implementation
        )
    except (OSError, ValueError, KeyError) as e:
        raise DataError(f"{p}: transformers could not load this model ({type(e).__name__}: {e})") from e
    return model.to(device)


def image_only_processor_class(cls: type) -> type:
    """``cls`` without its video processor (or ``cls`` itself when it has none).

    The subclass keeps the family's name, so a processor saved from it still names the real class.
    """
    others = [a for a in cls.get_attributes() if a not in ("image_processor", "tokenizer")]  # type: ignore[attr-defined]
    if not others:
        return cls

    def __init__(self: Any, image_processor: Any = None, tokenizer: Any = None, chat_template: Any = None, **kwargs: Any) -> None:
        # ProcessorMixin pairs the positional parts with get_attributes(), which no longer lists
        # the video processor, so the family's None for it is dropped.
        parts = {"image_processor": image_processor, "tokenizer": tokenizer, **{a: None for a in others}}
        cls.__init__(self, chat_template=chat_template, **parts, **kwargs)  # type: ignore[misc]

    return type(cls.__name__, (cls,), {"__init__": __init__, "__module__": cls.__module__})


def _processor_class_name(p: Path) -> str | None:
    for f in ("processor_config.json", "preprocessor_config.json", "tokenizer_config.json"):
        if (p / f).is_file():
            name = _json(p / f).get("processor_class")
            if isinstance(name, str):
                return name
    mapping = hf().models.auto.processing_auto.PROCESSOR_MAPPING_NAMES
    model_type = _json(p / "config.json").get("model_type") if (p / "config.json").is_file() else None
    name = mapping.get(model_type) if isinstance(model_type, str) else None
    return name if isinstance(name, str) else None


def _image_processor(tf: Any, p: Path) -> Any:
    """The folder's image processor; without torchvision, its pure-PIL variant built from the saved config."""
    try:
        return tf.AutoImageProcessor.from_pretrained(str(p), local_files_only=True)
    except (ImportError, OSError, ValueError) as e:
        cause: Exception = e
    cfg: dict[str, Any] = {}
    if (p / "processor_config.json").is_file():
        cfg = dict(_json(p / "processor_config.json").get("image_processor") or {})
    if not cfg and (p / "preprocessor_config.json").is_file():
        cfg = _json(p / "preprocessor_config.json")
    name = str(cfg.get("image_processor_type", ""))
    for cls_name in (name.removesuffix("Fast") + "Pil", name.removesuffix("Fast")):
        cls = getattr(tf, cls_name, None) if name else None
        if cls is not None:
            kwargs = {k: v for k, v in cfg.items() if k not in ("image_processor_type", "processor_class")}
            try:
                return cls(**kwargs)
            except (ImportError, TypeError, ValueError) as e:
                cause = e
    raise DataError(f"{p}: could not load the image processor {name or '(unnamed)'} ({type(cause).__name__}: {cause})")


def _assemble_processor(p: Path, cause: Exception | None) -> Any:
    tf = hf()
    name = _processor_class_name(p)
    cls = getattr(tf, name, None) if name else None
    if cls is None:
        why = f" ({type(cause).__name__}: {cause})" if cause else ""
        raise DataError(f"{p}: no multimodal processor could be loaded{why}; is this a vision-language model folder?")
    try:
        tokenizer = tf.AutoTokenizer.from_pretrained(str(p), local_files_only=True)
    except (OSError, ValueError) as e:
        raise DataError(f"{p}: could not load the tokenizer ({e})") from e
    image_processor = _image_processor(tf, p)
    chat_template = getattr(tokenizer, "chat_template", None)
    for f in ("chat_template.jinja", "chat_template.json"):
        if chat_template is None and (p / f).is_file():
            text = (p / f).read_text()
            chat_template = json.loads(text).get("chat_template") if f.endswith(".json") else text
    extra: dict[str, Any] = {}
    if (p / "processor_config.json").is_file():
        params = inspect.signature(cls.__init__).parameters
        skip = {"self", "image_processor", "tokenizer", "video_processor", "chat_template"}
        extra = {k: v for k, v in _json(p / "processor_config.json").items() if k in params and k not in skip}
    processor = image_only_processor_class(cls)(
        image_processor=image_processor, tokenizer=tokenizer, chat_template=chat_template, **extra
    )
    log.info("%s: assembled %s from its tokenizer and image processor (images only)", p, name)
    return processor


def load_processor(path: str | Path) -> Any:
    """The folder's multimodal processor (tokenizer + image processor + chat template)."""
    p = check_model_folder(path, weights=False)
    cause: Exception | None = None
    try:
        proc = hf().AutoProcessor.from_pretrained(str(p), local_files_only=True)
    except (OSError, ValueError, ImportError, AttributeError, TypeError, KeyError) as e:
        proc, cause = None, e
    if getattr(proc, "image_processor", None) is not None and getattr(proc, "tokenizer", None) is not None:
        return proc
    return _assemble_processor(p, cause)
