"""L4 (beyond the paper, from its roadmap): locate a phase boundary.

A world is a simulation at its v1 operating point with one undisclosed setting (the *shifter*, drawn from a
range) that moves one of its validated transitions. The agent is told the scan parameter, its range, the regime
metric and the level that separates the regimes, and must report the scan value at which the metric's mean over
the world's 12 replicate seeds crosses that level. Generation finds it on a grid and by bisection, and keeps a
world only when the crossing is single and found again within the tolerance on 12 fresh seeds.
"""

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from discogym.suites.petri.sims.base import Simulation
from discogym.suites.petri.stats import ALPHA, cliffs_delta, holm_rows, mann_whitney_p

GRID = 9
BISECTIONS = 7
TOLERANCE = 0.04  # of the scan range's width


class Transition(BaseModel):
    """A validated regime change of one simulation and what moves it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    parameter: str
    metric: str
    level: float
    low: float
    high: float
    meaning: str
    shifter: str
    shifter_low: float
    shifter_high: float


class BoundaryTruth(BaseModel):
    """An L4 world's question and answer: where ``metric``'s mean crosses ``level`` as ``parameter`` goes from
    ``low`` to ``high``. Only ``value`` (and the shifter in ``changed``) is hidden."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    parameter: str
    metric: str
    level: float
    low: float
    high: float
    meaning: str
    value: float
    tolerance: float


TRANSITIONS: dict[str, Transition] = {
    "swarm": Transition(
        parameter="noise", metric="polarization", level=0.5, low=1.0, high=5.0,
        meaning="the order-to-disorder transition of the flock",
        shifter="interaction_radius", shifter_low=0.8, shifter_high=1.3,
    ),
    "social": Transition(
        parameter="epsilon", metric="largest_share", level=0.75, low=0.1, high=0.45,
        meaning="the consensus transition: most agents share one opinion cluster above it",
        shifter="init_width", shifter_low=0.6, shifter_high=1.0,
    ),
    "origin": Transition(
        parameter="death_rate", metric="extinct", level=0.5, low=0.1, high=0.6,
        meaning="the extinction threshold: most replicates die out above it",
        shifter="birth_rate", shifter_low=0.3, shifter_high=0.5,
    ),
    "morph": Transition(
        parameter="kill", metric="area_fraction", level=0.1, low=0.055, high=0.07,
        meaning="the washout boundary: the pattern dies out above it",
        shifter="feed", shifter_low=0.025, shifter_high=0.04,
    ),
    "market": Transition(
        parameter="predisposition", metric="chartist_share", level=0.5, low=-2.0, high=1.0,
        meaning="the switch to a chartist-dominated market",
        shifter="herding", shifter_low=0.5, shifter_high=2.5,
    ),
}  # fmt: skip


def mean_metric(sim: Simulation, world: dict[str, float], parameter: str, value: float, metric: str,
                seeds: Sequence[int]) -> float:  # fmt: skip
    """The metric's mean over ``seeds`` with ``parameter`` at ``value`` in ``world``."""
    return float(sim.run({**world, parameter: value}, seeds)[:, sim.metrics.index(metric)].mean())


def crossing(sim: Simulation, world: dict[str, float], transition: Transition, seeds: Sequence[int]) -> float | None:
    """Where the metric's mean crosses the level: None unless it crosses exactly once on the grid; then
    bisection between the two grid points around it, and a linear interpolation in the last interval."""
    grid = np.linspace(transition.low, transition.high, GRID)
    above = [mean_metric(sim, world, transition.parameter, float(x), transition.metric, seeds) > transition.level
             for x in grid]  # fmt: skip
    changes = [i for i in range(GRID - 1) if above[i] != above[i + 1]]
    if len(changes) != 1:
        return None
    low, high = float(grid[changes[0]]), float(grid[changes[0] + 1])
    low_above = above[changes[0]]
    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        if (mean_metric(sim, world, transition.parameter, middle, transition.metric, seeds) > transition.level) == (
            low_above
        ):
            low = middle
        else:
            high = middle
    at_low = mean_metric(sim, world, transition.parameter, low, transition.metric, seeds)
    at_high = mean_metric(sim, world, transition.parameter, high, transition.metric, seeds)
    if at_low == at_high:
        return (low + high) / 2
    return low + (transition.level - at_low) * (high - low) / (at_high - at_low)


def sharpness(
    sim: Simulation, world: dict[str, float], truth: BoundaryTruth, seeds: Sequence[int], rng: np.random.Generator
) -> tuple[float, float]:
    """How plainly the boundary shows: Cliff's delta between the metric one tolerance below and above it (over
    ``seeds``), and the fraction of 2,000 paired 12-seed subsamples in which that experiment is significant."""
    metric = sim.metrics.index(truth.metric)
    below = sim.run({**world, truth.parameter: max(truth.low, truth.value - truth.tolerance)}, seeds)
    above = sim.run({**world, truth.parameter: min(truth.high, truth.value + truth.tolerance)}, seeds)
    picks = np.stack([rng.choice(len(seeds), size=12, replace=False) for _ in range(2000)])
    significant = holm_rows(mann_whitney_p(below[picks], above[picks], axis=1))[:, metric] < ALPHA
    return cliffs_delta(below[:, metric], above[:, metric]), float(significant.mean())
