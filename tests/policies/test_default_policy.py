"""The default policy: acting, scoring, typed-text pointer, save/load and bad files."""

import numpy as np
import pytest
import torch

from digirl.core.actions import Action
from digirl.core.errors import DataError
from digirl.core.types import Observation, UIElement
from digirl.envs.toy import ToyEnv
from digirl.policies.default import DefaultPolicy, PolicyNetConfig, batch_to_tensors
from digirl.policies.features import KINDS, action_kind, mask_to_text, text_to_mask, words


def _obs(mode="mixed", n=6):
    env = ToyEnv(mode=mode)
    return [env.reset(seed=i)[0] for i in range(n)], env


def test_act_log_prob_agree_and_sampling_is_seeded():
    obs, _ = _obs()
    p = DefaultPolicy(seed=0)
    out = p.act(obs)
    lp = p.log_prob(obs, [o.action for o in out])
    assert lp.detach().numpy() == pytest.approx([o.log_prob for o in out], abs=1e-4)
    again = DefaultPolicy(seed=0).act(obs)
    assert [o.action for o in again] == [o.action for o in out]
    assert all(o.text for o in out)


def test_greedy_is_deterministic_and_valid():
    obs, _ = _obs()
    p = DefaultPolicy(seed=1)
    a = p.act(obs, greedy=True)
    b = p.act(obs, greedy=True)
    assert [x.action for x in a] == [x.action for x in b]
    assert all(x.action.is_valid for x in a)


def test_log_prob_is_differentiable_and_marks_unexpressible():
    obs, _ = _obs(n=3)
    p = DefaultPolicy(seed=0)
    acts = [Action.back(), Action.tap(0.5, 0.2), Action.invalid("garbage")]
    lp, valid = p.log_prob_with_mask(obs, acts)
    assert valid.tolist() == [True, True, False]
    lp[valid].sum().backward()
    assert any(q.grad is not None and q.grad.abs().sum() > 0 for q in p.parameters())
    assert torch.isnan(p.log_prob(obs, acts)[2])


def test_typed_text_pointer_round_trip():
    ws = words("What's the weather like inToronto?")
    assert ws == ["What's", "the", "weather", "like", "in", "Toronto"]
    m = text_to_mask("weather in Toronto", ws)
    assert mask_to_text(m, ws) == "weather in Toronto"
    assert text_to_mask("zebra", ws).sum() == 0


def test_brand_names_stay_one_typed_word():
    # "PlayStation" split into "Play Station" was typed back as two words, a query the search
    # predicate rejects: the policy could not complete that task. Typos like "inToronto" still split.
    ws = words("What does the PlayStation 5 look like? Play the latest video from BuzzFeed")
    assert "PlayStation" in ws and "BuzzFeed" in ws
    assert mask_to_text(text_to_mask("PlayStation 5", ws), ws) == "PlayStation 5"
    assert words("weather inToronto") == ["weather", "in", "Toronto"]


def test_action_kinds_cover_the_action_space():
    assert action_kind(Action.scroll("up")) == "swipe_up"
    assert action_kind(Action.type_text("x")) == "type"
    assert action_kind(Action.complete()) == "complete"
    assert action_kind(Action.invalid("?")) is None
    assert len(KINDS) == 12


def test_save_load_round_trip(tmp_path):
    obs, _ = _obs()
    p = DefaultPolicy(PolicyNetConfig(dim=32, layers=1, heads=2), seed=3)
    p.save(tmp_path / "pol")
    q = DefaultPolicy.load(tmp_path / "pol")
    assert [x.action for x in p.act(obs, greedy=True)] == [x.action for x in q.act(obs, greedy=True)]
    for k, v in p.state_dict().items():
        assert torch.equal(v, q.state_dict()[k])


def test_load_errors_name_the_file(tmp_path):
    p = DefaultPolicy(PolicyNetConfig(dim=32, layers=1, heads=2), seed=0)
    p.save(tmp_path / "pol")
    with pytest.raises(DataError, match="missing"):
        DefaultPolicy.load(tmp_path / "nothing")
    w = tmp_path / "pol" / "model.safetensors"
    w.write_bytes(w.read_bytes()[:100])
    with pytest.raises(DataError, match=r"model\.safetensors"):
        DefaultPolicy.load(tmp_path / "pol")
    (tmp_path / "pol" / "policy.json").write_text("{not json")
    with pytest.raises(DataError, match=r"policy\.json"):
        DefaultPolicy.load(tmp_path / "pol")


def test_frame_stack_uses_previous_screenshot():
    env = ToyEnv(mode="tap")
    o0, _ = env.reset(seed=0)
    o1 = env.step(Action.tap(0.01, 0.99))[0]
    assert o1.previous_screenshot is not None
    p = DefaultPolicy(PolicyNetConfig(frame_stack=2, dim=32, layers=1, heads=2), seed=0)
    batch = p.featurize([o0, o1])
    assert batch.image.shape[1] == 6
    assert np.abs(batch.image[0, 3:]).sum() == 0 and np.abs(batch.image[1, 3:]).sum() > 0


def test_screenshot_only_policy_never_sees_elements_and_taps_the_grid(tmp_path):
    from digirl.policies.features import element_under

    obs, _ = _obs()
    cfg = PolicyNetConfig(dim=32, layers=1, heads=2, use_elements=False, grid_cols=12, grid_rows=24)
    p = DefaultPolicy(cfg, seed=0)
    batch = p.featurize(obs)
    assert not batch.elem_mask.any() and all(e == () for e in batch.elements)
    outs = p.act(obs)
    for o in outs:  # a tap lands on a grid-cell centre of the finer grid
        if o.action.touch is not None and not o.action.is_swipe:
            x, y = o.action.touch
            assert (x * 12 - 0.5) == pytest.approx(round(x * 12 - 0.5), abs=1e-3)
            assert (y * 24 - 0.5) == pytest.approx(round(y * 24 - 0.5), abs=1e-3)
    # an expert's element tap is still learnable: it maps to the cell under it
    tap = Action.tap(*obs[0].elements[0].center)
    lp, valid = p.log_prob_with_mask(obs[:1], [tap])
    assert torch.isfinite(lp).all()
    assert bool(valid[0]) and element_under(obs[0].elements, *tap.touch) is not None
    p.save(tmp_path / "pol")
    assert DefaultPolicy.load(tmp_path / "pol").cfg.use_elements is False


def test_word_dropout_hides_a_word_everywhere_in_training_only():
    from digirl.policies.config import EncoderConfig
    from digirl.policies.default import ScreenEncoder, batch_to_tensors, word_keep_masks

    instr = torch.tensor([[5, 7, 9, 0], [5, 7, 9, 0]])
    elem = torch.tensor([[[7, 5, 0], [9, 11, 0]], [[7, 5, 0], [9, 11, 0]]])
    torch.manual_seed(0)
    hidden_instr = []
    for _ in range(200):
        ki, ke = word_keep_masks(instr, elem, 0.3, 16)
        for row in range(2):  # a word id is hidden in the elements exactly when it is in the instruction
            vis = {int(w): bool(k) for w, k in zip(instr[row], ki[row])}
            for w, k in zip(elem[row].flatten(), ke[row].flatten()):
                if int(w) in vis:
                    assert bool(k) == vis[int(w)]
        hidden_instr.append((~ki[:, :3]).float().mean())
    assert 0.25 < float(torch.stack(hidden_instr).mean()) < 0.35

    obs, _ = _obs(n=4)
    enc = ScreenEncoder(EncoderConfig(dim=32, layers=1, heads=2, word_dropout=0.5))
    t = batch_to_tensors(DefaultPolicy(seed=0).featurize(obs), torch.device("cpu"))
    enc.train()
    torch.manual_seed(1)
    a = enc(t)
    torch.manual_seed(1)
    assert all(torch.equal(x, y) for x, y in zip(a, enc(t)))  # seeded
    enc.eval()
    c = enc(t)
    assert all(torch.equal(x, y) for x, y in zip(c, enc(t))) and not torch.equal(a[0], c[0])  # off in eval
    with pytest.raises(ValueError, match="word_dropout"):
        EncoderConfig(word_dropout=1.0)


def test_tap_epsilon_mixes_the_pointer_when_sampling_only(tmp_path):
    from digirl.distributed.acting import PolicySnapshot
    from digirl.policies.config import PolicyConfig
    from digirl.policies.default import batch_to_tensors
    from digirl.policies.features import KIND_INDEX, element_under

    obs, _ = _obs(mode="tap", n=4)
    cfg = PolicyNetConfig(dim=32, layers=1, heads=2)
    plain, eps = DefaultPolicy(cfg, seed=0), DefaultPolicy(cfg, seed=0, tap_epsilon=0.5)
    with torch.no_grad():  # every sampled action taps an element, so each log-probability is known by hand
        last = plain.net.kind_head[-1]
        last.weight.zero_()
        last.bias.fill_(-30.0)
        last.bias[KIND_INDEX["tap_element"]] = 0.0
    eps.load_state_dict(plain.state_dict())
    # Greedy actions are the network's, whatever the exploration.
    assert [o.action for o in eps.act(obs, greedy=True)] == [o.action for o in plain.act(obs, greedy=True)]
    # The recorded behaviour log-probability is the mixture's: log p(kind) + log((1-e) p(el) + e / n).
    batch = plain.featurize(obs)
    with torch.no_grad():
        net = plain.net(batch_to_tensors(batch, plain.device))
    out = eps.act(obs)
    checked = 0
    for i, o in enumerate(out):
        assert o.action.touch is not None
        e = element_under(batch.elements[i], *o.action.touch)
        assert e is not None
        n = int(batch.elem_mask[i].sum())
        p_el = float(torch.softmax(net["element"][i], -1)[e])
        p_kind = float(torch.softmax(net["kind"][i], -1)[KIND_INDEX["tap_element"]])
        assert o.log_prob == pytest.approx(np.log(p_kind) + np.log(0.5 * p_el + 0.5 / n), abs=1e-4)
        checked += 1
    assert checked == len(obs)
    # The trained distribution (log_prob) is the network's, not the mixture.
    lp = eps.log_prob(obs, [o.action for o in out])
    assert lp.detach().numpy() == pytest.approx(plain.log_prob(obs, [o.action for o in out]).detach().numpy(), abs=1e-5)
    # Saved with the weights (actors load snapshots); a run's config decides when it loads a policy.
    eps.save(tmp_path / "pol")
    assert DefaultPolicy.load(tmp_path / "pol").tap_epsilon == 0.5
    assert PolicySnapshot.of(eps).load().tap_epsilon == 0.5  # type: ignore[attr-defined]
    assert DefaultPolicy.load(tmp_path / "pol", cfg=PolicyConfig()).tap_epsilon == 0.0
    assert DefaultPolicy.load(tmp_path / "pol", cfg=PolicyConfig(tap_epsilon=0.2)).tap_epsilon == 0.2
    plain.save(tmp_path / "plain")
    assert "sampling" not in (tmp_path / "plain" / "policy.json").read_text()  # files of policies without it are unchanged
    meta_path = tmp_path / "pol" / "policy.json"
    for bad in ('"often"', "[0.5]", '{"tap_epsilon": 2.0}'):
        meta_path.write_text(meta_path.read_text().split('"sampling"')[0] + f'"sampling": {bad}}}')
        with pytest.raises(DataError, match=r"policy\.json: bad sampling setting"):
            DefaultPolicy.load(tmp_path / "pol")
    with pytest.raises(ValueError, match="tap_epsilon"):
        PolicyConfig(tap_epsilon=1.0)
    with pytest.raises(ValueError, match="default policy only"):
        PolicyConfig(kind="api", tap_epsilon=0.1)


def test_tap_epsilon_explores_elements_the_network_never_picks():
    obs, _ = _obs(mode="tap", n=1)
    policy = DefaultPolicy(PolicyNetConfig(dim=32, layers=1, heads=2), seed=0, tap_epsilon=0.6)
    with torch.no_grad():  # a pointer certain of element 0
        policy.net.ptr_k.weight.zero_()
        policy.net.ptr_k.bias.zero_()
        policy.net.ptr_overlap.zero_()
    batch = policy.featurize(obs)
    n = int(batch.elem_mask[0].sum())
    assert n >= 2
    seen = set()
    for _ in range(200):
        a = policy.act(obs)[0].action
        if a.touch is not None:
            from digirl.policies.features import element_under

            seen.add(element_under(batch.elements[0], *a.touch))
    assert len(seen) >= 2


def _apps_screen(instruction: str) -> Observation:
    rows = ("Calendar 308 MB", "Camera 234 MB", "Pluto TV 308 MB", "Settings 308 MB")
    els = tuple(UIElement((0.0, 0.2 + 0.1 * i, 1.0, 0.3 + 0.1 * i), text, "list_item") for i, text in enumerate(rows))
    return Observation(np.zeros((64, 32, 3), np.uint8), instruction, elements=els)


def test_screen_match_starts_as_the_plain_policy_and_feeds_the_best_overlap_to_the_kind_head(tmp_path):
    small = {"dim": 32, "layers": 1, "heads": 2}
    plain = DefaultPolicy(PolicyNetConfig(**small), seed=4)
    matched = DefaultPolicy(PolicyNetConfig(**small, screen_match=True), seed=4)
    obs = [_apps_screen("Check the settings for the Pluto TV app"), _apps_screen("Open the Lyft Driver app")]
    acts = [Action.tap(0.5, 0.45), Action.swipe((0.5, 0.7), (0.5, 0.3))]
    # zero-initialised: the same weights and the same action distribution as without it
    assert torch.equal(plain.log_prob(obs, acts), matched.log_prob(obs, acts))

    net = matched.net
    assert net.kind_match is not None
    with torch.no_grad():
        net.kind_match.weight.copy_(torch.arange(2 * len(KINDS), dtype=torch.float32).reshape(len(KINDS), 2))
    t = batch_to_tensors(matched.featurize(obs), matched.device)
    with torch.no_grad():
        shift = net(t)["kind"] - plain.net(t)["kind"]
    # "Pluto TV 308 MB": 2 of its 4 words are among the instruction's 7 distinct ones (beating
    # "Settings 308 MB": 1 of 3, 1 of 7); the Lyft instruction names nothing on screen.
    best = torch.tensor([[2 / 4, 2 / 7], [0.0, 0.0]])
    assert torch.allclose(shift, best @ net.kind_match.weight.T)

    matched.save(tmp_path / "pol")
    again = DefaultPolicy.load(tmp_path / "pol")
    assert again.cfg.screen_match
    assert torch.equal(again.log_prob(obs, acts), matched.log_prob(obs, acts))
