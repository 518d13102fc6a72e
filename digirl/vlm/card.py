"""The model card (``README.md``) of a pretrained screen VLM folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["write_card"]


def _pct(v: Any) -> str:
    return f"{100 * float(v):.1f}%" if isinstance(v, (int, float)) else "not measured"


def write_card(out: Path, summary: dict[str, Any]) -> Path:
    """Write ``out/README.md`` from a pretraining summary (``pretrain.json``)."""
    cfg = summary["config"]
    q = summary.get("quality", {})
    m = cfg["model"]
    last = summary["log"][-1] if summary.get("log") else {}
    text = f"""# Screen VLM pretrained on the digirl simulator

A Qwen2-VL-architecture model (`Qwen2VLForConditionalGeneration`, {summary["parameters"]:,} parameters) trained
from random initialisation by `digirl vlm pretrain` on screens of digirl's simulated phone. Nothing was
downloaded: the tokenizer (byte-level BPE, {m["vocab_size"]} tokens) was trained on the simulator's own text.

It loads with plain transformers:

```python
from transformers import AutoModelForImageTextToText, AutoProcessor
model = AutoModelForImageTextToText.from_pretrained("{out.name}")
processor = AutoProcessor.from_pretrained("{out.name}")
```

and is a digirl policy as it stands: `policy.kind=hf policy.init={out.name}` (JSON actions, normalized
points: the `hf` policy's defaults).

## Objectives (next-token loss on the answer)
- **act**: the `hf` policy's prompt (instruction, last actions, screenshot) → the scripted expert's next action;
- **ground**: "Where is X?" → a tap inside X;  **read**: "What does the element at [x, y] say?" → its text;
- **list**: the screen's texts and boxes;  **effect**: what an action changes;  **judge**: is the task done (yes/no).

Mix: `{cfg["objectives"]}`; typed words shared with the instruction renamed to made-up ones in
{cfg.get("rename", 0):.0%} of typing examples. Data: expert episodes with {cfg["noise"]:.0%} random actions on the task sets
`{cfg["tasksets"]}`, **train split only**, every perturbation level and world version.

## Training
{summary["steps"]:,} steps × {cfg["batch_size"]} examples ({summary["examples_seen"]:,} examples), AdamW (peak lr
{cfg["lr"]}), seed {cfg["seed"]}, {summary["train_seconds"]:.0f} s on {summary["device"]}. Final loss {last.get("loss", "n/a")}.
Language model: {m["layers"]} layers × {m["hidden"]}; vision tower: {m["vision_depth"]} blocks × {m["vision_hidden"]};
images up to {m["max_pixels"]:,} pixels (28 px per token).

## Held-out quality (test-split instructions, screens never seen in pretraining)
| metric | value |
|---|---|
| grounding (tap inside the named element) | {_pct(q.get("grounding"))} |
| reading (exact text) | {_pct(q.get("reading"))} |
| instruction → action (AitW action match) | {_pct(q.get("action_match"))} |
| typing (exact text where the expert types; copies unseen entities) | {_pct(q.get("typing"))} |
| judge (done or not, vs the simulator's check) | {_pct(q.get("judge_accuracy"))} |

{q.get("examples_per_metric", 0)} examples per metric. Regenerate this folder with the command in `pretrain.yaml`'s
settings: `digirl vlm pretrain OUT --preset ...`.
"""
    path = out / "README.md"
    path.write_text(text)
    return path
