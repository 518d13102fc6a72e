"""Frozen digests of whole episodes: screenshots, UI elements, rewards and infos must not change.

The digests were recorded with the renderer and apps of revision 45926e5 (before incremental
rendering and the shared system views): for the same seeds and policies, every pixel, element
list, reward and info must stay the same. A change that alters what the phone shows on purpose
must update them (run this module as a script to print the new values). Updated since on purpose:
("webshop", 1, 0, "mixed"), when the expert began to scroll with the default policy's own swipe.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from digirl.sim.env import SimEnv

# (task set, perturbation, world version, policy, episodes) → sha256 of everything observed.
GOLDEN: dict[tuple[str, int, int, str, int], str] = {
    ("general", 0, 0, "expert", 12): "3c20189091dedc54c59dcc605f2aa7ae8ff960bec12fcde15e9e269ad6c36373",
    ("general", 0, 0, "mixed", 12): "34eb624dde73e40c3bb2d1c847a92564b0b85be3fb5286b48363432cd0380658",
    ("general", 0, 0, "random", 12): "b88c58daf0b5932edfb7fb7d51230d8a432171b9b3629d6646da9130bdbddf26",
    ("general", 1, 0, "expert", 12): "fdf0a107c1b0f746d98bf999ba08b21a0d58d95fc616744e7a09bb67a32be2be",
    ("general", 1, 0, "mixed", 12): "a0e9fa1abdd5b5c47c878898054e8dc288bada84d927b7f1d1899781a2d3af09",
    ("general", 1, 0, "random", 12): "e30f672337fce0dc777ca5847da1e05143b70ebd4c4344ab5c1ec4eec0fe76aa",
    ("general", 2, 1, "expert", 12): "4c89488bd19175196bbd1aa12c5fe807e246cba9f96384f75eef2d3e8ccaa749",
    ("general", 2, 1, "mixed", 12): "8fd95d5a558a40bf032051b5fb97f630146c5ae41d4abf8ab043b7abb4f958e6",
    ("general", 2, 1, "random", 12): "095fc358b3f94e8954c7d06d34f8183261f0c3cfbb861dcf55a15200bf8ae7b7",
    ("webshop", 0, 0, "expert", 12): "143a5747e871e77b113fbbc358de2bfea4eb54e94b58570ea5419dc3f00affad",
    ("webshop", 0, 0, "mixed", 12): "f19e4bfc792cc78d552ac9b352e90d384f1ca608aa0bf5b2ca528119b34d4fc4",
    ("webshop", 0, 0, "random", 12): "50c90de50a151b2408371d2349c40dc1c3376f5cdec9135149892f8506886ff6",
    ("webshop", 1, 0, "expert", 12): "a029c443ea2bef8e7e3365023409c1dbc71333620be9d2b51940f17d744c6f00",
    ("webshop", 1, 0, "mixed", 12): "3cfaf9e2856c49a636be0527b6dfa87fa5a58b1f85a40a82cecf321de748b729",
    # session 22: the Files app lists a "Recent" folder after "Apps" (a random episode opens Files)
    ("webshop", 1, 0, "random", 12): "5756a86349d8f5ecd47e185981be685af6ffe1a208d27797ab1673b17789099e",
    ("webshop", 2, 1, "expert", 12): "3d17c67e601540fbddcdb8bc24cce8a5adf4f0a4dad1f0c5c0c76d82a50c9a6a",
    ("webshop", 2, 1, "mixed", 12): "9da6c464bc27e22bf4556d7bbcf8a10da2c491b526401a814aa5e5b431d4099a",
    ("webshop", 2, 1, "random", 12): "2374d8a18fe645fbbde4a5e5374cbed05e56da827e5abbf8d9338047caea8f1e",
    ("phone", 0, 0, "expert", 12): "490b369e150924f29a26252867e46bf094fe13f6c4982c6f2de39fd664581af4",
    ("phone", 0, 0, "mixed", 12): "f6aa16ece95c03c6838c4f6e63346433377223b618db06ec57862b459c77deb3",
    # session 22: the world clock's "Add city" button, inert before, opens its city search (a random tap hits it)
    ("phone", 0, 0, "random", 12): "d8d087b8c738a8f19b52ec54743e1a23daad0e6e7ce9e46cc7084e17490023a3",
    ("phone", 1, 0, "expert", 12): "44545ffa9165ac84d414e9639acf00f68d44b63ba82e43c64ea17b8251eb2621",
    ("phone", 1, 0, "mixed", 12): "eccef8a8b36449d034aa9929b8c5bf64735351768ab5b84a09b34d4655b1a9dd",
    ("phone", 1, 0, "random", 12): "7dda526275a943383f1bccdfcc85a4cf29333557ab049eb5ceb3e2cdf84648d6",
    ("phone", 2, 1, "expert", 12): "dba15991f5bed619d0dff265962531791512d123af2f92bca3e4ac2ac3319ade",
    ("phone", 2, 1, "mixed", 12): "aacf59d021b7b22ce053e41bf8ab5280841bb33d4940c04ece6e5c56759a8916",
    ("phone", 2, 1, "random", 12): "568393c56ac45916b3142459724f8105c8ee871e2170e5c7b6c42d342eda2ab7",
}


def episode_digest(taskset: str, level: int, world: int, policy: str, episodes: int) -> str:
    """Digest of ``episodes`` episodes (seeds 0..episodes-1): every observation, reward and info."""
    env = SimEnv(taskset=taskset, perturbation=level, world_version=world, expert_jitter=0.2)
    rng = np.random.default_rng(level * 10 + world)
    h = hashlib.sha256()
    for ep in range(episodes):
        obs, _ = env.reset(seed=ep)
        h.update(obs.screenshot.tobytes())
        h.update(repr(obs.elements).encode())
        done = False
        while not done:
            a = env.cheat() if policy == "expert" or (policy == "mixed" and rng.random() < 0.6) else None
            if a is None:
                a = env.action_space.sample(rng)
            obs, r, term, trunc, info = env.step(a)
            h.update(obs.screenshot.tobytes())
            h.update(repr((obs.elements, r, term, trunc, sorted(info.items()))).encode())
            done = term or trunc
    return h.hexdigest()


@pytest.mark.parametrize("case", sorted(GOLDEN))
def test_episodes_match_frozen_digest(case: tuple[str, int, int, str, int]) -> None:
    assert episode_digest(*case) == GOLDEN[case]


if __name__ == "__main__":
    cases = [
        (ts, level, world, policy, 12)
        for ts in ("general", "webshop", "phone")
        for level, world in ((0, 0), (1, 0), (2, 1))
        for policy in ("expert", "mixed", "random")
    ]
    for c in cases:
        print(f"    {c!r}: {episode_digest(*c)!r},")
