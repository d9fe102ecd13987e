"""The five petri simulations ("model organisms"), by name (importing this module imports them all)."""

from discogym.core.errors import UserError
from discogym.suites.petri.sims import market, morph, origin, social, swarm
from discogym.suites.petri.sims.base import Check, Param, Simulation

SIMULATIONS: dict[str, Simulation] = {
    sim.name: sim
    for sim in (market.SIMULATION, swarm.SIMULATION, origin.SIMULATION, morph.SIMULATION, social.SIMULATION)
}


def get_simulation(name: str) -> Simulation:
    """The simulation called ``name``, or a UserError listing them."""
    sim = SIMULATIONS.get(name)
    if sim is None:
        raise UserError(f"unknown simulation '{name}'; simulations: {', '.join(SIMULATIONS)}")
    return sim


__all__ = ["SIMULATIONS", "Check", "Param", "Simulation", "get_simulation"]
