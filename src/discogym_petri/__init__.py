"""discogym's petri suite as a verifiers environment: `vf-eval discogym-petri` (docs/training.md)."""

from typing import Any

from discogym.interfaces.verifiers_env import DiscogymTaskset, DiscogymVerifiersEnv
from discogym.interfaces.verifiers_env import load_environment as _load_environment


class PetriTaskset(DiscogymTaskset):
    """The petri suite's tasks (`--env.taskset.split`, `.condition`, `.seed`, `.out`)."""

    SUITE = "petri"


def load_environment(**taskset: Any) -> Any:
    """The petri suite's environment, from the taskset's fields as keywords (the older verifiers contract)."""
    return _load_environment("petri", **taskset)


__all__ = ["DiscogymVerifiersEnv", "PetriTaskset", "load_environment"]
