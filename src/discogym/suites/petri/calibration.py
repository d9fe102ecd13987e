"""The v1 generator's calibration: an operating point per simulation, each driver's edges, and the lab ranges and
hidden-value draws that follow from them.

The edges were measured with ``discogym petri calibrate`` (calibrate.py): for each driver and side of the
operating point, the value at which an isolating 12-replicate experiment becomes significant in half of the
subsampled replicates. They are stored here, to 3 significant digits, so the frozen tasks depend on this table
and not on the last bits of a measurement. From them:

- a driver's lab range ends, on a side with an edge, where the edge lies :data:`INFORMATIVE_FROM` of the way from
  the control (so a value drawn blindly from the range is informative on about 40% of it); on a side without
  one, at the simulation's bound;
- a hidden value lies on a side with an edge, at ``control + x * (edge - control)`` with x drawn uniformly from
  the simulation's ``reach``: from just short of the edge to the end of the lab range, except swarm's, drawn
  weak (:data:`WEAK_REACH`). Changes near the edge make the hard tasks.
"""

from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from discogym.suites.petri.calibrate import INFORMATIVE_FROM
from discogym.suites.petri.sims.base import Param, Simulation

# swarm's drivers are drawn weak, close to their edges, as in the paper where swarm's order-parameter tasks
# make most of the hard band.
WEAK_REACH = (0.8, 1.3)
DIGITS = 3


def significant_digits(value: float, digits: int = DIGITS) -> float:
    """``value`` to ``digits`` significant digits."""
    return float(f"{value:.{digits}g}")


class SimCalibration(BaseModel):
    """One simulation's v1 calibration: its operating point (overrides on its control) and its drivers' edges."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base: dict[str, float]
    edges: dict[str, dict[str, float]]  # driver -> side ("down", "up") -> value where it becomes detectable
    # Where hidden values lie, in units of the edge's distance from the control (1: on the edge, where an
    # isolating experiment is significant half of the time; 1 / INFORMATIVE_FROM: the end of the lab range).
    reach: tuple[float, float] = (1.1, 1 / INFORMATIVE_FROM)

    def lab_range(self, param: Param, control: float) -> tuple[float, float]:
        """The range of a driver in v1 worlds."""
        edges = self.edges[param.name]
        ends = []
        for side, bound in (("down", param.low), ("up", param.high)):
            if side not in edges:
                ends.append(bound)
                continue
            end = control + (edges[side] - control) / INFORMATIVE_FROM
            end = float(round(end)) if param.kind == "int" else significant_digits(end)
            ends.append(max(end, param.low) if side == "down" else min(end, param.high))
        return ends[0], ends[1]

    def ranges_of(self, sim: Simulation, names: Sequence[str]) -> dict[str, tuple[float, float]]:
        """The legal ranges of a task's candidates: lab ranges for drivers, the simulation's for the others."""
        control = sim.resolve(self.base)
        return {
            name: self.lab_range(sim.param(name), control[name])
            if name in self.edges
            else (sim.param(name).low, sim.param(name).high)
            for name in sorted(names)
        }

    def hidden_value(self, param: Param, control: float, rng: np.random.Generator) -> float:
        """A hidden value of ``param``: a side with an edge, then a point ``control + x * (edge - control)`` with x
        uniform in :attr:`reach`, inside the lab range."""
        edges = self.edges[param.name]
        side = sorted(edges)[int(rng.integers(len(edges)))]
        low, high = self.lab_range(param, control)
        x = float(rng.uniform(*self.reach))
        value = control + x * (edges[side] - control)
        value = float(round(value)) if param.kind == "int" else significant_digits(value)
        value = min(max(value, low), high)
        if value == control:  # a rounded draw on the control changes nothing: move it one unit outwards
            value = control + (1.0 if side == "up" else -1.0) * (1.0 if param.kind == "int" else abs(control) * 1e-2)
        return value


def _calibration(
    base: Mapping[str, float], edges: Mapping[str, Mapping[str, float]], reach: tuple[float, float] | None = None
) -> SimCalibration:
    drivers = {name: dict(sides) for name, sides in edges.items()}
    if reach is None:
        return SimCalibration(base=dict(base), edges=drivers)
    return SimCalibration(base=dict(base), edges=drivers, reach=reach)


# Operating points: where each target metric varies from seed to seed (about 10% for market, swarm and social,
# 8% for origin; morph, whose drivers change its pattern's regime, keeps its control).
CALIBRATION: dict[str, SimCalibration] = {
    "market": _calibration(
        {"periods": 1000},
        {
            "price_impact": {"down": 0.00893, "up": 0.0112},
            "chartist_extrapolation": {"up": 15.7},
            "chartist_dispersion": {"down": 1.73, "up": 2.35},
            "noise_trader_volatility": {"up": 0.75},
            "predisposition": {"down": -0.459, "up": -0.133},
            "performance_memory": {"down": 0.854, "up": 0.982},
        },
    ),
    "swarm": _calibration(
        {"n_agents": 24, "noise": 2.5},
        {
            "noise": {"down": 2.36, "up": 2.65},
            "alignment_weight": {"down": 0.825, "up": 1.53},
            "interaction_radius": {"down": 0.897, "up": 1.11},
            "n_agents": {"up": 33},
        },
        reach=WEAK_REACH,
    ),
    "origin": _calibration(
        {"carrying_capacity": 200},
        {
            "birth_rate": {"down": 0.346, "up": 0.464},
            "death_rate": {"down": 0.17, "up": 0.233},
            "carrying_capacity": {"down": 176, "up": 223},
            "size_cost": {"down": 0.3, "up": 3.08},
        },
        reach=(1.3, 1 / INFORMATIVE_FROM),  # origin's tasks also fail on a decoy now and then: drivers a bit stronger
    ),
    "morph": _calibration(
        {},
        {
            "feed": {"down": 0.029, "up": 0.0319},
            "kill": {"down": 0.0614, "up": 0.0624},
            "du": {"down": 0.0778, "up": 0.0824},
            "dv_ratio": {"down": 0.495, "up": 0.505},
            "patches": {"down": 6},
        },
    ),
    "social": _calibration(
        {"n_agents": 100},
        {
            "epsilon": {"down": 0.181, "up": 0.292},
            "init_width": {"down": 0.759},
            "init_shape": {"down": 0.661},
        },
    ),
}
