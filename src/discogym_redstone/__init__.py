"""discogym's redstone suite as a verifiers environment: `vf-eval discogym-redstone` (docs/training.md)."""

from typing import Any

from discogym.interfaces.verifiers_env import DiscogymTaskset, DiscogymVerifiersEnv
from discogym.interfaces.verifiers_env import load_environment as _load_environment


class RedstoneTaskset(DiscogymTaskset):
    """The redstone suite's tasks (`--env.taskset.split`, `.condition`, `.seed`, `.out`)."""

    SUITE = "redstone"


def load_environment(**taskset: Any) -> Any:
    """The redstone suite's environment, from the taskset's fields as keywords (the older verifiers contract)."""
    return _load_environment("redstone", **taskset)


__all__ = ["DiscogymVerifiersEnv", "RedstoneTaskset", "load_environment"]
