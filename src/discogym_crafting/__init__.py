"""discogym's crafting suite as a verifiers environment: `vf-eval discogym-crafting` (docs/training.md)."""

from typing import Any

from discogym.interfaces.verifiers_env import DiscogymTaskset, DiscogymVerifiersEnv
from discogym.interfaces.verifiers_env import load_environment as _load_environment


class CraftingTaskset(DiscogymTaskset):
    """The crafting suite's tasks (`--env.taskset.split`, `.condition`, `.seed`, `.out`)."""

    SUITE = "crafting"


def load_environment(**taskset: Any) -> Any:
    """The crafting suite's environment, from the taskset's fields as keywords (the older verifiers contract)."""
    return _load_environment("crafting", **taskset)


__all__ = ["CraftingTaskset", "DiscogymVerifiersEnv", "load_environment"]
