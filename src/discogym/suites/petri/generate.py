"""Mystery worlds: seeded task generation with its ground truth verified at generation time, difficulty
ratings, and the frozen task sets.

A task changes one driver (two at L3) from the simulation's control configuration and names, besides the
driver(s), two decoys as candidates. Generation keeps a draw only when, on the task's own 12 replicate seeds
(those the blind harness runs every experiment on), the isolating experiment of each driver is significant on
the target metric (Mann-Whitney U, Holm across the metric vector, alpha 0.05) and each decoy's is not; at L2
the hidden world must change the target mean by at least 10%; at L3 the interaction contrast must pass a
5,000-permutation sign-flip test. A draw that fails is replaced by the draw of the next attempt's sub-seed.
"""

from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from discogym.core.seeding import derive_seed
from discogym.suites.petri.sims.base import Param, Simulation
from discogym.suites.petri.stats import ALPHA, cliffs_delta, compare, holm_rows, mann_whitney_p, sign_flip_p

Tier = Literal["L1", "L2", "L3"]
Band = Literal["easy", "moderate", "hard"]
Magnitude = Literal["small", "medium", "large"]

REPLICATES = 12
DIFFICULTY_SEEDS = 48  # per cell, for the oracle power: more than the 12 of an experiment
SUBSAMPLES = 2000
PERMUTATIONS = 5000
MAX_ATTEMPTS = 100
MAGNITUDE_BOUNDS = (0.10, 0.35, 0.75)  # |relative change|: small from 10%, medium from 35%, large from 75%
# Statistics are stored to this many significant digits: their last bits depend on the machine's floating-point
# math (transcendental functions, BLAS, numpy and scipy versions), the decisions made from them do not.
STATISTIC_DIGITS = 6
# The statistics of a task file, as paths into its JSON; everything else in it is compared exactly.
STATISTICS = (
    "relative_change",
    "interaction_p",
    "isolating_p_holm",
    "difficulty.cliffs_delta",
    "difficulty.oracle_power",
)


class Difficulty(BaseModel):
    """How hard a task is: the weakest driver's Cliff's delta, and the oracle power with its band."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cliffs_delta: float
    oracle_power: float
    band: Band


class Draw(BaseModel):
    """One attempt's choice: the changed parameters with their hidden values, and the decoys with the
    informative values the reference solver tests them at."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    changed: dict[str, float]
    decoys: dict[str, float]


class PetriTaskSpec(BaseModel):
    """A frozen mystery world. Everything below ``candidates`` is hidden from the agent."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    set: str
    tier: Tier
    simulation: str
    seed: int
    attempt: int
    target: str
    control: dict[str, float]
    candidates: list[str]
    replicate_seeds: list[int]
    changed: dict[str, float]
    reference_values: dict[str, float]
    relative_change: float
    direction: Literal["up", "down"] | None = None
    magnitude: Magnitude | None = None
    interaction: Literal["positive", "negative"] | None = None
    interaction_p: float | None = None
    isolating_p_holm: dict[str, float]
    difficulty: Difficulty


def magnitude_class(change: float) -> Magnitude | None:
    """The L2 class of a relative change of the target mean, or None below 10%."""
    size = abs(change)
    if size >= MAGNITUDE_BOUNDS[2]:
        return "large"
    if size >= MAGNITUDE_BOUNDS[1]:
        return "medium"
    return "small" if size >= MAGNITUDE_BOUNDS[0] else None


def round_statistic(value: float) -> float:
    """``value`` to :data:`STATISTIC_DIGITS` significant digits, as stored in task files."""
    return float(f"{value:.{STATISTIC_DIGITS}g}")


def band(power: float) -> Band:
    """The difficulty band of an oracle power."""
    return "easy" if power >= 0.85 else "moderate" if power >= 0.55 else "hard"


def task_seeds(sub_seed: int, count: int) -> list[int]:
    """The replicate seeds of a task: the first 12 are its experiments' seeds."""
    return [derive_seed(sub_seed, "replicate", i) for i in range(count)]


def _continuous_value(param: Param, control: float, rng: np.random.Generator) -> float:
    """An L2 hidden value: between the control and beyond one of the informative values, inside the range."""
    toward = float(rng.choice(np.asarray(param.test_values)))
    value = control + float(rng.uniform(0.5, 1.5)) * (toward - control)
    value = min(max(value, param.low), param.high)
    return float(round(value)) if param.kind == "int" else round(value, 6)


def draw(sim: Simulation, tier: Tier, rng: np.random.Generator) -> Draw:
    """Choose the changed parameter(s), their hidden values and two decoys with their test values."""
    drivers = [p for p in sim.params if p.role == "driver" and p.test_values]
    decoys = [p for p in sim.params if p.role == "decoy" and p.test_values]
    count = 2 if tier == "L3" else 1
    chosen = [drivers[i] for i in sorted(rng.choice(len(drivers), size=count, replace=False))]
    changed = {}
    for param in chosen:
        if tier == "L2":
            changed[param.name] = _continuous_value(param, sim.control[param.name], rng)
        else:
            changed[param.name] = float(rng.choice(np.asarray(param.test_values)))
    picked = [decoys[i] for i in sorted(rng.choice(len(decoys), size=2, replace=False))]
    return Draw(changed=changed, decoys={p.name: float(rng.choice(np.asarray(p.test_values))) for p in picked})


class _Cells:
    """Per-seed metric vectors of every cell a task needs, on the task's seeds."""

    def __init__(self, sim: Simulation, drawn: Draw, seeds: Sequence[int]) -> None:
        self.control = sim.run({}, seeds)
        self.hidden = sim.run(drawn.changed, seeds)
        self.isolating = {name: sim.run({name: value}, seeds) for name, value in drawn.changed.items()}
        self.isolating.update({name: sim.run({name: value}, seeds) for name, value in drawn.decoys.items()})


def _isolating_p(sim: Simulation, cells: _Cells, rows: slice) -> dict[str, float]:
    target = sim.metrics.index(sim.target)
    return {
        name: compare(cells.control[rows], values[rows], sim.metrics)[target].p_holm
        for name, values in cells.isolating.items()
    }


def _oracle_power(sim: Simulation, cells: _Cells, drawn: Draw, rng: np.random.Generator) -> float:
    """The fraction of 12-seed subsamples in which every driver's isolating test is significant on the target
    and no decoy's is (the decision an optimal isolating sweep makes)."""
    target = sim.metrics.index(sim.target)
    picks = np.stack([rng.choice(DIFFICULTY_SEEDS, size=REPLICATES, replace=False) for _ in range(SUBSAMPLES)])
    control = cells.control[picks]  # (subsamples, replicates, metrics)
    solved = np.ones(SUBSAMPLES, dtype=bool)
    for name, values in cells.isolating.items():
        significant = holm_rows(mann_whitney_p(control, values[picks], axis=1))[:, target] < ALPHA
        solved &= significant if name in drawn.changed else ~significant
    return float(solved.mean())


def _verify(sim: Simulation, tier: Tier, drawn: Draw, cells: _Cells, sub_seed: int) -> dict[str, object] | None:
    """The ground truth of a draw, or None when the draw fails verification."""
    experiment = slice(0, REPLICATES)
    p_holm = _isolating_p(sim, cells, experiment)
    if any(p_holm[name] >= ALPHA for name in drawn.changed) or any(p_holm[name] < ALPHA for name in drawn.decoys):
        return None
    target = sim.metrics.index(sim.target)
    change = compare(cells.control[experiment], cells.hidden[experiment], sim.metrics)[target].relative_change
    truth: dict[str, object] = {
        "isolating_p_holm": {name: round_statistic(p) for name, p in p_holm.items()},
        "relative_change": round_statistic(change),
    }
    if tier in ("L1", "L2"):
        truth["direction"] = "up" if change > 0 else "down"
    if tier == "L2":
        truth["magnitude"] = magnitude_class(change)
        if truth["magnitude"] is None:
            return None
    if tier == "L3":
        first, second = drawn.changed
        contrasts = (
            cells.hidden[experiment, target]
            - cells.isolating[first][experiment, target]
            - cells.isolating[second][experiment, target]
            + cells.control[experiment, target]
        )
        p = sign_flip_p(contrasts, PERMUTATIONS, np.random.default_rng(derive_seed(sub_seed, "permutations")))
        if p >= ALPHA or contrasts.mean() == 0:
            return None
        truth["interaction"] = "positive" if contrasts.mean() > 0 else "negative"
        truth["interaction_p"] = round_statistic(p)
    return truth


def _difficulty(sim: Simulation, drawn: Draw, cells: _Cells, sub_seed: int) -> Difficulty:
    target = sim.metrics.index(sim.target)
    deltas = [cliffs_delta(cells.control[:, target], cells.isolating[name][:, target]) for name in drawn.changed]
    weakest = min(deltas, key=abs)
    power = _oracle_power(sim, cells, drawn, np.random.default_rng(derive_seed(sub_seed, "oracle")))
    return Difficulty(cliffs_delta=round_statistic(weakest), oracle_power=round_statistic(power), band=band(power))


def generate_task(sim: Simulation, tier: Tier, seed: int, set_name: str = "adhoc") -> PetriTaskSpec:
    """The task of ``sim`` at ``tier`` from ``seed``: the first attempt whose draw passes verification."""
    for attempt in range(MAX_ATTEMPTS):
        sub_seed = derive_seed("petri-task", sim.name, tier, seed, attempt)
        drawn = draw(sim, tier, np.random.default_rng(sub_seed))
        seeds = task_seeds(sub_seed, DIFFICULTY_SEEDS)
        cells = _Cells(sim, drawn, seeds)
        truth = _verify(sim, tier, drawn, cells, sub_seed)
        if truth is None:
            continue
        return PetriTaskSpec.model_validate(
            {
                "id": f"{sim.name}-{seed}",
                "set": set_name,
                "tier": tier,
                "simulation": sim.name,
                "seed": seed,
                "attempt": attempt,
                "target": sim.target,
                "control": sim.resolve(),
                "candidates": sorted([*drawn.changed, *drawn.decoys]),
                "replicate_seeds": seeds[:REPLICATES],
                "changed": drawn.changed,
                "reference_values": {**drawn.changed, **drawn.decoys},
                "difficulty": _difficulty(sim, drawn, cells, sub_seed),
                **truth,
            }
        )
    raise RuntimeError(f"no verified {tier} task of {sim.name} from seed {seed} in {MAX_ATTEMPTS} attempts")
