"""The suites as Gymnasium environments: importing this module registers ``discogym/Crafting-v0``,
``discogym/Redstone-v0``, ``discogym/Petri-v0`` and ``discogym/Autumn-v0`` (docs/training.md), so that
``gymnasium.make("discogym.gym:discogym/Crafting-v0")`` works without importing it first.

Keyword arguments of ``gymnasium.make``: ``split`` (``training:SEED:COUNT`` for training tasks), ``condition``,
``task``, ``out`` (a folder the episodes are written to, which ``discogym report`` reads) and ``shaped_reward``;
``max_episode_steps`` is Gymnasium's own cap on steps.
"""

import gymnasium

from discogym.interfaces.gym import AnyText, DiscogymEnv

ENV_IDS = {
    "discogym/Crafting-v0": "crafting",
    "discogym/Redstone-v0": "redstone",
    "discogym/Petri-v0": "petri",
    "discogym/Autumn-v0": "autumn",
}


def register() -> None:
    """Register every suite's id with Gymnasium (again is harmless)."""
    for env_id, suite in ENV_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(env_id, entry_point="discogym.interfaces.gym:DiscogymEnv", kwargs={"suite": suite})


register()

__all__ = ["ENV_IDS", "AnyText", "DiscogymEnv", "register"]
