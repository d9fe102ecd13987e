"""discogym's autumn suite as a verifiers environment: `vf-eval discogym-autumn` (docs/training.md)."""

from typing import Any

from discogym.interfaces.verifiers_env import DiscogymTaskset, DiscogymVerifiersEnv
from discogym.interfaces.verifiers_env import load_environment as _load_environment


class AutumnTaskset(DiscogymTaskset):
    """The autumn suite's tasks (`--env.taskset.split`, `.condition`, `.seed`, `.out`)."""

    SUITE = "autumn"


def load_environment(**taskset: Any) -> Any:
    """The autumn suite's environment, from the taskset's fields as keywords (the older verifiers contract)."""
    return _load_environment("autumn", **taskset)


__all__ = ["AutumnTaskset", "DiscogymVerifiersEnv", "load_environment"]
