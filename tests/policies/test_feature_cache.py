"""FeatureCache gives exactly what featurize gives, computes each key once, and forgets on retain."""

from __future__ import annotations

import numpy as np
import pytest

from digirl.policies.feature_cache import FeatureCache, _to_float, _to_uint8
from digirl.policies.features import FeatureSpec, featurize
from tests.policies.test_featurize_exact import _same, _sim_observations


def test_uint8_round_trip_is_exact_for_every_value() -> None:
    u8 = np.arange(256, dtype=np.uint8).reshape(1, 16, 16)
    shrunk = u8.astype(np.float32) / 255.0  # how screens.resize_screen makes the policy's image
    assert np.array_equal(_to_uint8(shrunk), u8)
    back = _to_float(_to_uint8(shrunk))
    assert back.dtype == np.float32 and back.tobytes() == shrunk.tobytes()


@pytest.mark.parametrize(
    ("taskset", "spec"),
    [
        ("general", FeatureSpec()),
        ("webshop", FeatureSpec(frame_stack=2)),
        ("general", FeatureSpec(label_rows=True)),
        ("webshop", FeatureSpec(use_elements=False, frame_stack=2)),
        ("general", FeatureSpec(use_elements=False, pixel_regions=True)),
    ],
)
def test_batches_equal_featurize_in_any_order_and_subset(taskset: str, spec: FeatureSpec) -> None:
    obs = _sim_observations(taskset, 3, seed=5)
    keys = [("ep", i) for i in range(len(obs))]
    cache = FeatureCache(spec)
    _same(cache.batch(keys, obs), featurize(obs, spec))  # cold: every key computed
    assert len(cache) == len(obs) and cache.stats == {"hits": 0, "misses": len(obs)}

    order = np.random.default_rng(0).permutation(len(obs))[: len(obs) // 2]
    sub = [obs[i] for i in order]
    _same(cache.batch([keys[i] for i in order], sub), featurize(sub, spec))  # warm: all from memory
    assert cache.stats == {"hits": len(order), "misses": len(obs)}


def test_only_new_keys_are_featurized_and_retain_forgets_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    obs = _sim_observations("general", 2, seed=1)
    spec = FeatureSpec()
    cache = FeatureCache(spec)
    seen: list[int] = []

    import digirl.policies.feature_cache as fc

    def counting(observations, s):  # type: ignore[no-untyped-def]
        seen.append(len(observations))
        return featurize(observations, s)

    monkeypatch.setattr(fc, "featurize", counting)
    cache.batch([0, 1, 2], obs[:3])
    cache.batch([1, 2, 3, 4], obs[1:5])
    assert seen == [3, 2]  # keys 3 and 4 only
    cache.retain([3, 4])
    assert len(cache) == 2
    cache.batch([0, 3], [obs[0], obs[3]])
    assert seen == [3, 2, 1]  # key 0 was forgotten, key 3 kept
    _same(cache.batch([5, 5, 0], [obs[5], obs[5], obs[0]]), featurize([obs[5], obs[5], obs[0]], spec))
    assert seen == [3, 2, 1, 1]  # a key repeated in one request is featurized once


def test_empty_and_mismatched_requests() -> None:
    spec = FeatureSpec()
    cache = FeatureCache(spec)
    _same(cache.batch([], []), featurize([], spec))
    obs = _sim_observations("general", 1, seed=0)
    with pytest.raises(ValueError, match="2 keys for 1 observations"):
        cache.batch([0, 1], obs[:1])


def test_a_key_reused_for_another_observation_is_featurized_again() -> None:
    obs = _sim_observations("webshop", 2, seed=3)
    spec = FeatureSpec()
    cache = FeatureCache(spec)
    cache.batch(["same-id"], [obs[0]])
    other = next(o for o in obs if o.step != obs[0].step)
    _same(cache.batch(["same-id"], [other]), featurize([other], spec))
    assert cache.stats["misses"] == 2
