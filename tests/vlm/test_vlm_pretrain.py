"""The screen VLM's pretraining: data, the batch layout against the processor, the run, resume, loading."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("transformers")

import torch

from digirl.config.core import load_config
from digirl.core.errors import ConfigError
from digirl.vlm.config import PRESETS, PretrainConfig
from digirl.vlm.data import OBJECTIVES, DataSpec, ExampleSource
from digirl.vlm.model import Collator, build_processor, corpus_of, patchify
from digirl.vlm.pretrain import data_spec, pretrain

ROOT = Path(__file__).resolve().parents[2]
FAST = ["steps=4", "batch_size=4", "workers=0", "tokenizer_examples=24", "eval_examples=3", "log_every=2", "checkpoint_every=2"]


def _cfg(*extra: str) -> PretrainConfig:
    return load_config(PretrainConfig, overrides=[*FAST, *extra])


def test_batches_are_a_function_of_seed_and_index_and_use_train_tasks_only() -> None:
    src = ExampleSource(DataSpec(seed=3, rename=0.0))  # renamed typing examples are checked on their own
    a, b = src.batch(5, 6), ExampleSource(DataSpec(seed=3, rename=0.0)).batch(5, 6)
    assert [(e.objective, e.prompt, e.target) for e in a] == [(e.objective, e.prompt, e.target) for e in b]
    assert all(np.array_equal(x.screen, y.screen) for x, y in zip(a, b))
    other = src.batch(6, 6)
    assert [e.prompt for e in other] != [e.prompt for e in a]
    from digirl.sim.tasks.tasksets import load_taskset

    heldout = {
        t.instruction for split in ("test", "validation") for ts in ("general", "webshop") for t in load_taskset(ts, split)
    }
    train = {t.instruction for ts in ("general", "webshop") for t in load_taskset(ts, "train")}
    acts = [e for i in range(4) for e in src.batch(i, 8) if e.objective == "act"]
    assert acts and all(e.observation is not None and e.observation.instruction in train for e in acts)
    assert not any(e.observation.instruction in heldout - train for e in acts if e.observation is not None)


def test_objective_weights_select_the_objectives() -> None:
    only = tuple(1.0 if o == "ground" else 0.0 for o in OBJECTIVES)
    exs = ExampleSource(DataSpec(weights=only)).batch(0, 10)
    assert {e.objective for e in exs} == {"ground"}
    for e in exs:  # the answer is a tap at the centre of the named element
        assert e.box is not None and e.prompt.startswith("Where is")
        x0, y0, x1, y1 = e.box
        touch = json.loads(e.target)["touch"]
        assert x0 <= touch[0] <= x1 and y0 <= touch[1] <= y1


def test_objectives_setting_is_checked() -> None:
    with pytest.raises(ConfigError, match="unknown objective 'look'"):
        data_spec(_cfg("objectives=look=1"))
    with pytest.raises(ConfigError, match="at least one"):
        data_spec(_cfg("objectives=act=0"))
    assert data_spec(_cfg("objectives=act=2,judge=1")).weights == (2.0, 0, 0, 0, 0, 1.0)


def test_collated_batch_is_what_the_processor_makes() -> None:
    from PIL import Image

    from digirl.policies.hf.prompt import messages
    from digirl.vlm.config import ModelSize

    exs = ExampleSource(DataSpec()).batch(0, 3)
    proc = build_processor(ModelSize(vocab_size=600), corpus_of(exs))
    col = Collator(proc)
    batch = col(exs)
    for i, ex in enumerate(exs):
        chat = proc.apply_chat_template(messages(ex.prompt, 1), add_generation_prompt=True, tokenize=False)
        ref = proc(text=[chat], images=[Image.fromarray(ex.screen)], return_tensors="pt")
        n = ref["input_ids"].shape[1]
        assert batch.input_ids[i, :n].tolist() == ref["input_ids"][0].tolist()
        assert (batch.labels[i, :n] == -100).all()  # the prompt is not scored
        target = col.target_ids(ex.target)
        assert batch.labels[i, n : n + len(target)].tolist() == target
        values, grid = patchify(batch.pixels[i : i + 1], proc.image_processor)
        assert grid.tolist() == ref["image_grid_thw"].tolist()
        torch.testing.assert_close(values, ref["pixel_values"], atol=1e-5, rtol=0)


def test_training_inputs_match_what_transformers_computes() -> None:
    """The batch's own M-RoPE positions equal ``get_rope_index`` (padding included), and the packed
    vision attention gives the per-image loop's loss: the fast path trains the same model."""
    from digirl.policies.hf.vision import enable_fast_vision_attention
    from digirl.vlm.config import ModelSize
    from digirl.vlm.model import build_model

    exs = ExampleSource(DataSpec()).batch(1, 5)
    proc = build_processor(ModelSize(vocab_size=600), corpus_of(exs))
    col = Collator(proc)
    batch = col(exs)
    assert (batch.attention_mask == 0).any()  # right padding is exercised
    model = build_model(ModelSize(), proc, seed=0).eval()
    fast = col.model_inputs(batch.input_ids, batch.attention_mask, batch.pixels, positions=True)
    slow = col.model_inputs(batch.input_ids, batch.attention_mask, batch.pixels)
    ref, _ = model.model.get_rope_index(
        slow["input_ids"],
        mm_token_type_ids=slow["mm_token_type_ids"],
        image_grid_thw=slow["image_grid_thw"],
        attention_mask=slow["attention_mask"],
    )
    assert fast["position_ids"].tolist() == ref.tolist()
    with torch.no_grad():
        loss_ref = model(**slow, labels=batch.labels).loss
        assert enable_fast_vision_attention(model) == 1
        loss_fast = model(**fast, labels=batch.labels).loss
    torch.testing.assert_close(loss_fast, loss_ref, atol=1e-5, rtol=1e-5)


def test_act_prompt_is_the_hf_policys_prompt(tmp_path: Path) -> None:
    """A pretrained folder is a policy as it stands: the act objective trains on HFPolicy's own prompt."""
    from digirl.policies.config import HFPolicyConfig
    from digirl.policies.hf.policy import HFPolicy
    from digirl.vlm.config import ModelSize
    from digirl.vlm.model import build_model

    only = tuple(1.0 if o == "act" else 0.0 for o in OBJECTIVES)
    exs = ExampleSource(DataSpec(weights=only)).batch(0, 3)
    proc = build_processor(ModelSize(vocab_size=600), corpus_of(exs))
    policy = HFPolicy.from_model(build_model(ModelSize(), proc, seed=0), proc, HFPolicyConfig(), device=torch.device("cpu"))
    col = Collator(proc)
    for ex in exs:
        assert ex.observation is not None and ex.gold is not None
        enc = policy.encode(ex.observation)
        assert enc.prompt_ids.tolist() == col.prompt_ids(ex.prompt)
        assert policy.action_text(enc, ex.gold) == ex.target


def test_tiny_pretrain_writes_a_plain_hf_folder(tmp_path: Path) -> None:
    out = tmp_path / "vlm"
    summary = pretrain(_cfg(), out)
    assert summary["steps"] == 4 and summary["observation"] == "screenshot"
    assert [r["step"] for r in summary["log"]] == [2, 4]
    assert all(np.isfinite(r["loss"]) for r in summary["log"])
    assert set(summary["quality"]) >= {"grounding", "reading", "action_match", "judge_accuracy"}
    assert not (out / ".pretrain").exists()  # the optimizer state is dropped once finished
    assert "Held-out quality" in (out / "README.md").read_text()
    # Loads and generates in a process that never imports digirl.
    code = textwrap.dedent(
        f"""
        import sys, numpy as np
        from PIL import Image
        from transformers import AutoModelForImageTextToText, AutoProcessor
        m = AutoModelForImageTextToText.from_pretrained({str(out)!r})
        img = Image.new("RGB", (270, 600), (250, 250, 250))
        msgs = [{{"role": "user", "content": [{{"type": "image"}}, {{"type": "text", "text": "Where is Gmail?"}}]}}]
        try:
            p = AutoProcessor.from_pretrained({str(out)!r})
        except ImportError as e:  # transformers builds Qwen2-VL's video part only with torchvision
            assert "Torchvision" in str(e), e
            from transformers import AutoImageProcessor, AutoTokenizer
            tok, ip = AutoTokenizer.from_pretrained({str(out)!r}), AutoImageProcessor.from_pretrained({str(out)!r})
            im = ip(images=[img], return_tensors="pt")
            n = int(im["image_grid_thw"].prod()) // ip.merge_size ** 2
            text = tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
            text = text.replace("<|image_pad|>", "<|image_pad|>" * n)
            inp = dict(tok([text], return_tensors="pt"), **im)
            inp["mm_token_type_ids"] = (inp["input_ids"] == tok.convert_tokens_to_ids("<|image_pad|>")).long()
        else:
            text = p.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
            inp = p(text=[text], images=[img], return_tensors="pt")
        out = m.generate(**inp, max_new_tokens=5, do_sample=False)
        assert out.shape[1] > inp["input_ids"].shape[1]
        assert not any(k.startswith("digirl") for k in sys.modules)
        print("ok", type(m).__name__)
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"HF_HUB_OFFLINE": "1"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=240)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "ok Qwen2VLForConditionalGeneration" in r.stdout
    # Running it again on a finished folder changes nothing.
    again = pretrain(_cfg(), out)
    assert again["log"] == summary["log"]


def test_resume_refuses_other_settings(tmp_path: Path) -> None:
    out = tmp_path / "vlm"
    assert pretrain(_cfg("stop_after_s=1e-9"), out)["paused"]
    with pytest.raises(ConfigError, match="lr"):
        pretrain(_cfg("lr=0.5"), out)


def test_presets_parse() -> None:
    for name, over in PRESETS.items():
        cfg = load_config(PretrainConfig, overrides=[f"{k}={v}" for k, v in over.items()])
        assert cfg.steps >= 1, name


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


@pytest.mark.slow
def test_kill_9_during_pretraining_resumes_to_the_same_weights(tmp_path: Path) -> None:
    args = ["deterministic=true", "steps=8", "checkpoint_every=2", "eval_examples=0", "seed=1"]
    ref = tmp_path / "ref"
    pretrain(_cfg(*args), ref)
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "digirl", "vlm", "pretrain", str(out), *FAST, *args]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    state = out / ".pretrain" / "ckpt" / "state.json"
    deadline = time.time() + 240
    while time.time() < deadline and proc.poll() is None:
        if state.is_file() and json.loads(state.read_text())["step"] >= 2:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / "model.safetensors").exists()
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    a, b = _weights(ref), _weights(out)
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_sft_and_a_digirl_iteration_run_unchanged_on_a_pretrained_folder(tmp_path: Path) -> None:
    """The seeds' recipe on our own VLM: SFT from expert demos, then DigiRL, screenshot only."""
    from digirl.cli.main import main
    from digirl.training.checkpoint import latest_checkpoint, load_checkpoint

    vlm = tmp_path / "vlm"
    pretrain(_cfg("eval_examples=0"), vlm)
    sim = ["env.num_envs=2", "env.runner=inline", "policy.device=cpu", "policy.hf.max_new_tokens=40"]
    sft = ["sft.demos=4", "sft.steps=2", "sft.batch_size=4"]
    assert main(["sft", str(tmp_path / "sft"), "policy.kind=hf", f"policy.init={vlm}", *sim, *sft]) == 0
    run = tmp_path / "run"
    train = [
        "mode=online",
        "iterations=1",
        "rollout_size=2",
        "algo.name=digirl",
        "algo.actor_steps=1",
        "algo.batch_size=2",
        "algo.critic_steps=1",
        "algo.instruct_critic_steps=1",
        "algo.critic.dim=32",
        "algo.critic.layers=1",
        "algo.critic.heads=2",
        "eval.every=0",
        "eval.test_tasks=0",
        "eval.train_tasks=1",
        "log.tensorboard=false",
    ]
    assert main(["train", str(run), f"policy.init={tmp_path / 'sft' / 'policy'}", *sim, *train]) == 0
    assert json.loads((run / "policy" / "policy.json").read_text())["kind"] == "hf"
    assert load_checkpoint(latest_checkpoint(run))[0].iteration == 1


def test_typing_examples_rename_shared_words_in_instruction_and_answer() -> None:
    """Held-out tasks name entities pretraining never saw: typing examples rename the words the answer
    copies from the instruction, the same made-up word in both, so copying is what is learned."""
    from digirl.vlm.data import rename_words

    rng = np.random.default_rng(0)
    for _ in range(20):
        instruction, text = rename_words("Search for flights from Prague to Marrakech", "flights from Prague to Marrakech", rng)
        assert instruction == f"Search for {text}"  # one replacement for both
        assert text != "flights from Prague to Marrakech"  # at least one word renamed
        assert text.split()[1] == "from" and text.split()[3] == "to"  # short words stay
    assert rename_words("Open the settings", "wifi", rng) == ("Open the settings", "wifi")  # nothing shared
    only_act = tuple(1.0 if o == "act" else 0.0 for o in OBJECTIVES)
    typed = [
        e
        for i in range(30)
        for e in ExampleSource(DataSpec(weights=only_act, rename=1.0)).batch(i, 8)
        if e.gold is not None and e.gold.type.name == "TYPE"
    ]
    assert typed
    from digirl.sim.tasks.tasksets import load_taskset

    vocab = {
        w.strip("?.,!'\"").lower()
        for ts in ("general", "webshop")
        for t in load_taskset(ts, "train")
        for w in t.instruction.split()
    }
    renamed = 0
    for e in typed:
        assert e.observation is not None and e.gold is not None and e.gold.text
        assert json.loads(e.target)["text"] == e.gold.text and e.observation.instruction in e.prompt
        made_up = [w for w in e.gold.text.split() if w.isalpha() and w.lower() not in vocab]
        words = {w.strip("?.,!'\"") for w in e.observation.instruction.split()}
        assert all(w in words for w in made_up)  # a made-up word is in the instruction, to be copied
        renamed += bool(made_up)
    assert renamed >= len(typed) // 2


def test_a_pretrained_folder_judges_success_and_its_audit_counts_undecided(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``digirl judge audit --local FOLDER``: the folder answers the pretraining's judge question;
    yes → success, no → failure, anything else → undecided (counted, never a failure)."""
    from digirl.cli.main import main
    from digirl.judge.audit import run_audit
    from digirl.judge.episodes import expert_cases
    from digirl.vlm.judge import PretrainedJudge

    vlm = tmp_path / "vlm"
    pretrain(_cfg("eval_examples=0"), vlm)
    judge = PretrainedJudge(vlm, device="cpu")
    cases = expert_cases("digirl/sim-general-test-v0", 2, seed=0)
    real = judge.judge(cases[0].task, cases[0].screenshot, actions=cases[0].actions)
    assert isinstance(real.raw, str) and real.calls == 1
    assert real.success is {"yes": True, "no": False}.get(real.raw.lower())
    answers = iter(["yes", "no", "maybe"])
    monkeypatch.setattr(judge, "_generate", lambda prompt, screen: next(answers))
    verdicts = [judge.judge(c.task, c.screenshot, actions=c.actions) for c in (*cases, cases[0])]
    assert [v.success for v in verdicts] == [True, False, None]
    answers = iter(["yes", "no"])
    rep = run_audit(judge, cases, concurrency=2)
    assert rep.n == 2 and rep.tp + rep.fp + rep.tn + rep.fn == 2
    stats = judge.stats()
    assert stats["requests"] == 6 and 0 < stats["latency_mean_s"] <= stats["latency_p95_s"]
    assert main(["judge", "audit", "--local", str(vlm), "--env", "digirl/sim-general-test-v0", "--episodes", "2", "--json"]) == 0
