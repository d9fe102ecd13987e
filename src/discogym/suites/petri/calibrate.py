"""How the v1 task sets were calibrated: where each driver's effect on the target metric becomes detectable.

For a driver and a side of its control value, the *edge* is the smallest move from the control (as a fraction of
the way to the parameter's physical bound on that side) at which an isolating 12-replicate experiment is
significant in at least half of :data:`SUBSAMPLES` seeded 12-seed subsamples of :data:`SEEDS` paired seeds (the
same decision as a task's oracle power, for one parameter). The v1 calibration (``calibration.py``) sets each
driver's lab range so that the edge lies at :data:`INFORMATIVE_FROM` of the way from the control to the range's
end: values drawn uniformly from the range are informative on about 40% of it, as in the paper's ablation where
blindly chosen values mostly fail. ``discogym petri calibrate`` prints this table again.
"""

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from discogym.core import derive_seed
from discogym.suites.petri.sims.base import Param, Simulation
from discogym.suites.petri.stats import ALPHA, holm_rows, mann_whitney_p

SEEDS = 48
SUBSAMPLES = 2000
REPLICATES = 12
EDGE_POWER = 0.5
BISECTIONS = 4
INFORMATIVE_FROM = 0.6
# Fractions of the way from the control to the physical bound that are tried, finest near the control.
STEPS = (
    0.001,
    0.002,
    0.003,
    0.005,
    0.0075,
    0.01,
    0.015,
    0.02,
    0.03,
    0.05,
    0.075,
    0.1,
    0.15,
    0.2,
    0.3,
    0.4,
    0.55,
    0.7,
    0.85,
    1.0,
)


@dataclass(frozen=True)
class Edge:
    """Where one side of a driver becomes detectable: the fraction of the way to the bound, the value there,
    and the power measured at it (None on a side where no step reaches :data:`EDGE_POWER`)."""

    parameter: str
    side: str
    fraction: float | None
    value: float | None
    power: float


def calibration_seeds() -> list[int]:
    """The paired seeds of the calibration, apart from every task's seeds."""
    return [derive_seed("petri-calibration", i) for i in range(SEEDS)]


def power(sim: Simulation, control: np.ndarray, treated: np.ndarray, rng: np.random.Generator) -> float:
    """The fraction of paired 12-seed subsamples in which the treatment is significant on the target (Holm across
    the metric vector)."""
    target = sim.metrics.index(sim.target)
    picks = np.stack([rng.choice(len(control), size=REPLICATES, replace=False) for _ in range(SUBSAMPLES)])
    p = holm_rows(mann_whitney_p(control[picks], treated[picks], axis=1))[:, target]
    return float((p < ALPHA).mean())


def side_value(param: Param, control: float, side: str, fraction: float) -> float:
    """The value ``fraction`` of the way from ``control`` to the parameter's bound on ``side``."""
    bound = param.high if side == "up" else param.low
    value = min(max(control + fraction * (bound - control), param.low), param.high)
    return float(round(value)) if param.kind == "int" else value


def _edge_power(sim: Simulation, base: Mapping[str, float], control: np.ndarray, name: str, value: float) -> float:
    rng = np.random.default_rng(derive_seed("petri-calibration", name, value))
    return power(sim, control, sim.run({**base, name: value}, calibration_seeds()), rng)


def _side_edge(sim: Simulation, base: Mapping[str, float], control: np.ndarray, name: str, side: str) -> Edge:
    """The first step reaching :data:`EDGE_POWER`, narrowed by :data:`BISECTIONS` halvings from the step before."""
    param = sim.param(name)
    at_control = sim.resolve(base)[name]
    below = 0.0
    for fraction in STEPS:
        value = side_value(param, at_control, side, fraction)
        if value == at_control:
            continue
        measured = _edge_power(sim, base, control, name, value)
        if measured < EDGE_POWER:
            below = fraction
            continue
        for _ in range(BISECTIONS):
            middle = (below + fraction) / 2
            middle_value = side_value(param, at_control, side, middle)
            if middle_value in (value, at_control, side_value(param, at_control, side, below)):
                break
            middle_power = _edge_power(sim, base, control, name, middle_value)
            if middle_power >= EDGE_POWER:
                fraction, value, measured = middle, middle_value, middle_power
            else:
                below = middle
        return Edge(parameter=name, side=side, fraction=fraction, value=value, power=measured)
    return Edge(parameter=name, side=side, fraction=None, value=None, power=0.0)


def find_edges(sim: Simulation, base: Mapping[str, float], names: list[str]) -> list[Edge]:
    """The edges of the parameters ``names`` on both sides of the operating point ``base`` (overrides on the
    simulation's control)."""
    control = sim.run(base, calibration_seeds())
    at_control = sim.resolve(base)
    edges = []
    for name in names:
        param = sim.param(name)
        for side, bound in (("down", param.low), ("up", param.high)):
            if bound == at_control[name]:
                edges.append(Edge(parameter=name, side=side, fraction=None, value=None, power=0.0))
            else:
                edges.append(_side_edge(sim, base, control, name, side))
    return edges
