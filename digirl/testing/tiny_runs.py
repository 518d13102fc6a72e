"""Overrides for a `digirl train` run small enough for a test: online DigiRL on the toy env, inline
envs, tiny networks, a few gradient steps. Add ``iterations=N`` and whatever the test is about."""

from __future__ import annotations

__all__ = ["TINY_ONLINE_DIGIRL"]

TINY_ONLINE_DIGIRL: tuple[str, ...] = (
    "mode=online",
    "env.id=digirl/toy-mixed-v0",
    "env.runner=inline",
    "env.num_envs=2",
    "rollout_size=6",
    "eval.every=0",
    "eval.test_tasks=0",
    "eval.train_tasks=4",
    "algo.name=digirl",
    "algo.actor_steps=3",
    "algo.critic_steps=3",
    "algo.instruct_critic_steps=3",
    "algo.batch_size=8",
    "policy.default.dim=32",
    "algo.critic.dim=32",
    "policy.default.layers=1",
    "algo.critic.layers=1",
    "policy.default.heads=2",
    "algo.critic.heads=2",
    "log.tensorboard=false",
)
