"""The five petri simulations ("model organisms"), by name. Each simulation's module (and scipy, which most of
them use) is imported when the simulation is first asked for, so listing the suite stays fast."""

import importlib

from discogym.core import UserError
from discogym.suites.petri.sims.base import Check, Param, Simulation

NAMES = ("market", "swarm", "origin", "morph", "social")


def get_simulation(name: str) -> Simulation:
    """The simulation called ``name``, or a UserError listing them."""
    if name not in NAMES:
        raise UserError(f"unknown simulation '{name}'; simulations: {', '.join(NAMES)}")
    simulation: Simulation = importlib.import_module(f"discogym.suites.petri.sims.{name}").SIMULATION
    return simulation


def all_simulations() -> dict[str, Simulation]:
    """Every simulation by name, in the documented order (imports them all)."""
    return {name: get_simulation(name) for name in NAMES}


__all__ = ["NAMES", "Check", "Param", "Simulation", "all_simulations", "get_simulation"]
