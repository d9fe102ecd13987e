"""Mystery worlds: seeded task generation with its ground truth verified at generation time, difficulty
ratings, and the frozen task sets.

A task changes one driver (two at L3) from the simulation's control configuration and names, besides the
driver(s), two decoys as candidates. Generation keeps a draw only when, on the task's own 12 replicate seeds
(those the blind harness runs every experiment on), the isolating experiment of each driver is significant on
the target metric (Mann-Whitney U, Holm across the metric vector, alpha 0.05) and each decoy's is not; at L2
the hidden world must change the target mean by at least 10%; at L3 the interaction contrast must pass a
5,000-permutation sign-flip test. A draw that fails is replaced by the draw of the next attempt's sub-seed.

Two generations exist. ``v0`` (the first frozen sets) draws hidden values among each driver's curated test values
around the simulation's own control. ``v1`` works at a calibrated operating point per simulation and draws each
hidden value beyond where its driver becomes detectable, inside a lab range the task records (calibration.py).
"""

from collections.abc import Collection, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from discogym.core import derive_seed
from discogym.suites.petri.boundary import TOLERANCE, TRANSITIONS, BoundaryTruth, crossing, sharpness
from discogym.suites.petri.calibration import CALIBRATION, SimCalibration, significant_digits
from discogym.suites.petri.sims.base import Param, Simulation
from discogym.suites.petri.stats import ALPHA, cliffs_delta, compare, holm_rows, mann_whitney_p, sign_flip_p
from discogym.suites.petri.tasks import Band, Difficulty, Direction, Generation, Magnitude, PetriTaskSpec, Tier

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
    "boundary.value",
)


class Draw(BaseModel):
    """One attempt's choice: the changed parameters with their hidden values, and the decoys with the
    informative values the reference solver tests them at."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    changed: dict[str, float]
    decoys: dict[str, float]


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


def draw_calibrated(sim: Simulation, calibration: SimCalibration, tier: Tier, rng: np.random.Generator) -> Draw:
    """The v1 draw: driver(s) from the calibrated pool, each hidden value on a detectable side of the operating
    point, between a little short of the edge and the end of the lab range; decoys as in v0."""
    pool = [p for p in sim.params if p.name in calibration.edges]
    decoys = [p for p in sim.params if p.role == "decoy" and p.test_values]
    count = 2 if tier == "L3" else 1
    chosen = [pool[i] for i in sorted(rng.choice(len(pool), size=count, replace=False))]
    control = sim.resolve(calibration.base)
    changed = {param.name: calibration.hidden_value(param, control[param.name], rng) for param in chosen}
    picked = [decoys[i] for i in sorted(rng.choice(len(decoys), size=2, replace=False))]
    return Draw(changed=changed, decoys={p.name: float(rng.choice(np.asarray(p.test_values))) for p in picked})


class _Cells:
    """Per-seed metric vectors of every cell a task needs: first on the experiments' 12 seeds, which decide
    whether the draw is verified; then, for a verified draw, the control and isolating cells on the rest of the
    difficulty seeds (a replicate's row depends only on its seed, so the rows are those of one long batch)."""

    def __init__(self, sim: Simulation, base: dict[str, float], drawn: Draw, seeds: Sequence[int]) -> None:
        self.sim, self.base, self.drawn = sim, base, drawn
        self.control = sim.run(base, seeds)
        self.hidden = sim.run({**base, **drawn.changed}, seeds)
        self.isolating = {name: sim.run({**base, name: value}, seeds) for name, value in self._treatments()}

    def _treatments(self) -> list[tuple[str, float]]:
        return list({**self.drawn.changed, **self.drawn.decoys}.items())

    def extend(self, seeds: Sequence[int]) -> None:
        """Add the control and isolating rows of ``seeds`` (the hidden world's are not needed past verification)."""
        self.control = np.concatenate([self.control, self.sim.run(self.base, seeds)])
        for name, value in self._treatments():
            self.isolating[name] = np.concatenate(
                [self.isolating[name], self.sim.run({**self.base, name: value}, seeds)]
            )


def _isolating_p(sim: Simulation, cells: _Cells, rows: slice, metric: str) -> dict[str, float]:
    target = sim.metrics.index(metric)
    return {
        name: compare(cells.control[rows], values[rows], sim.metrics)[target].p_holm
        for name, values in cells.isolating.items()
    }


def _oracle_power(sim: Simulation, cells: _Cells, drawn: Draw, metric: str, rng: np.random.Generator) -> float:
    """The fraction of 12-seed subsamples in which every driver's isolating test is significant on the target
    and no decoy's is (the decision an optimal isolating sweep makes)."""
    target = sim.metrics.index(metric)
    picks = np.stack([rng.choice(DIFFICULTY_SEEDS, size=REPLICATES, replace=False) for _ in range(SUBSAMPLES)])
    control = cells.control[picks]  # (subsamples, replicates, metrics)
    solved = np.ones(SUBSAMPLES, dtype=bool)
    for name, values in cells.isolating.items():
        significant = holm_rows(mann_whitney_p(control, values[picks], axis=1))[:, target] < ALPHA
        solved &= significant if name in drawn.changed else ~significant
    return float(solved.mean())


def _verify_blind(sim: Simulation, drawn: Draw, cells: _Cells) -> dict[str, object] | None:
    """The ground truth of a blind draw: the driver's isolating experiment significant on some metric, each
    decoy's on none of the metrics the hidden world moves; the target is the metric it moves with the smallest
    p (the first on ties)."""
    experiment = slice(0, REPLICATES)
    rows = {
        name: compare(cells.control[experiment], values[experiment], sim.metrics)
        for name, values in cells.isolating.items()
    }
    hidden = compare(cells.control[experiment], cells.hidden[experiment], sim.metrics)
    moved: dict[str, Direction] = {
        row.metric: "up" if row.relative_change > 0 else "down" for row in hidden if row.significant
    }
    if not moved or not all(any(row.significant for row in rows[name]) for name in drawn.changed):
        return None
    if any(row.significant and row.metric in moved for name in drawn.decoys for row in rows[name]):
        return None
    target = min((row for row in hidden if row.significant), key=lambda row: row.p_holm)
    index = sim.metrics.index(target.metric)
    return {
        "target": target.metric,
        "moved": moved,
        "direction": moved[target.metric],
        "relative_change": round_statistic(target.relative_change),
        "isolating_p_holm": {name: round_statistic(row[index].p_holm) for name, row in rows.items()},
    }


def _decoy_moves_a_metric(sim: Simulation, drawn: Draw, cells: _Cells, moved: Collection[str]) -> bool:
    """A blind world's decoys must leave the metrics the hidden change moves alone on all 48 difficulty seeds
    too: on 12 a small effect can hide, and a fresh-seed recheck finds it."""
    return any(
        row.significant and row.metric in moved
        for name in drawn.decoys
        for row in compare(cells.control, cells.isolating[name], sim.metrics)
    )


def _verify(sim: Simulation, tier: Tier, drawn: Draw, cells: _Cells, sub_seed: int) -> dict[str, object] | None:
    """The ground truth of a draw, or None when the draw fails verification."""
    if tier == "blind":
        return _verify_blind(sim, drawn, cells)
    experiment = slice(0, REPLICATES)
    p_holm = _isolating_p(sim, cells, experiment, sim.target)
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


def _difficulty(sim: Simulation, drawn: Draw, cells: _Cells, metric: str, sub_seed: int) -> Difficulty:
    target = sim.metrics.index(metric)
    deltas = [cliffs_delta(cells.control[:, target], cells.isolating[name][:, target]) for name in drawn.changed]
    weakest = min(deltas, key=abs)
    power = _oracle_power(sim, cells, drawn, metric, np.random.default_rng(derive_seed(sub_seed, "oracle")))
    return Difficulty(cliffs_delta=round_statistic(weakest), oracle_power=round_statistic(power), band=band(power))


def _boundary_task(sim: Simulation, seed: int, set_name: str) -> PetriTaskSpec:
    """An L4 world: the first attempt whose shifter value gives a single crossing, found again on fresh seeds."""
    transition, base = TRANSITIONS[sim.name], dict(CALIBRATION[sim.name].base)
    width = transition.high - transition.low
    for attempt in range(MAX_ATTEMPTS):
        sub_seed = derive_seed("petri-task", "v1", sim.name, "L4", seed, attempt)
        shift = significant_digits(
            float(np.random.default_rng(sub_seed).uniform(transition.shifter_low, transition.shifter_high))
        )
        world = {**base, transition.shifter: shift}
        seeds = task_seeds(sub_seed, DIFFICULTY_SEEDS)
        value = crossing(sim, world, transition, seeds[:REPLICATES])
        fresh = crossing(sim, world, transition, seeds[REPLICATES : 2 * REPLICATES]) if value is not None else None
        if value is None or fresh is None or abs(fresh - value) > TOLERANCE * width:
            continue
        truth = BoundaryTruth(
            **transition.model_dump(exclude={"shifter", "shifter_low", "shifter_high"}),
            value=round_statistic(value),
            tolerance=round_statistic(TOLERANCE * width),
        )
        delta, power = sharpness(sim, world, truth, seeds, np.random.default_rng(derive_seed(sub_seed, "oracle")))
        ends = [
            sim.run({**world, transition.parameter: x}, seeds[:REPLICATES]) for x in (transition.low, transition.high)
        ]
        metric = sim.metrics.index(transition.metric)
        change = compare(ends[0], ends[1], sim.metrics)[metric].relative_change
        return PetriTaskSpec(
            id=f"{sim.name}-{seed}",
            set=set_name,
            tier="L4",
            simulation=sim.name,
            seed=seed,
            attempt=attempt,
            target=transition.metric,
            control=sim.resolve(base),
            candidates=[transition.parameter],
            replicate_seeds=seeds[:REPLICATES],
            changed={transition.shifter: shift},
            reference_values={},
            relative_change=round_statistic(change),
            isolating_p_holm={},
            difficulty=Difficulty(
                cliffs_delta=round_statistic(delta), oracle_power=round_statistic(power), band=band(power)
            ),
            ranges={transition.parameter: (transition.low, transition.high)},
            boundary=truth,
        )
    raise RuntimeError(f"no verified L4 task of {sim.name} from seed {seed} in {MAX_ATTEMPTS} attempts")


def generate_task(
    sim: Simulation, tier: Tier, seed: int, set_name: str = "adhoc", generation: Generation = "v1"
) -> PetriTaskSpec:
    """The task of ``sim`` at ``tier`` from ``seed``: the first attempt whose draw passes verification."""
    if tier == "L4":
        return _boundary_task(sim, seed, set_name)
    calibration = CALIBRATION[sim.name] if generation == "v1" else None
    base = dict(calibration.base) if calibration else {}
    for attempt in range(MAX_ATTEMPTS):
        if calibration is None:
            sub_seed = derive_seed("petri-task", sim.name, tier, seed, attempt)
            drawn = draw(sim, tier, np.random.default_rng(sub_seed))
        else:
            sub_seed = derive_seed("petri-task", generation, sim.name, tier, seed, attempt)
            drawn = draw_calibrated(sim, calibration, tier, np.random.default_rng(sub_seed))
        seeds = task_seeds(sub_seed, DIFFICULTY_SEEDS)
        cells = _Cells(sim, base, drawn, seeds[:REPLICATES])
        truth = _verify(sim, tier, drawn, cells, sub_seed)
        if truth is None:
            continue
        cells.extend(seeds[REPLICATES:])
        moved = truth.get("moved")
        if isinstance(moved, dict) and _decoy_moves_a_metric(sim, drawn, cells, moved):
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
                "control": sim.resolve(base),
                "candidates": sorted([*drawn.changed, *drawn.decoys]),
                "replicate_seeds": seeds[:REPLICATES],
                "changed": drawn.changed,
                "reference_values": {**drawn.changed, **drawn.decoys},
                "difficulty": _difficulty(sim, drawn, cells, str(truth.get("target", sim.target)), sub_seed),
                "ranges": calibration.ranges_of(sim, [*drawn.changed, *drawn.decoys]) if calibration else None,
                **truth,
            }
        )
    raise RuntimeError(f"no verified {tier} task of {sim.name} from seed {seed} in {MAX_ATTEMPTS} attempts")


FRESH_SEEDS = 48


def fresh_seed_problems(sim: Simulation, spec: PetriTaskSpec, count: int = FRESH_SEEDS) -> list[str]:
    """What fails when a task's ground truth is measured again on ``count`` fresh seeds (none of the task's):
    each driver's isolating experiment significant on the target (in the stated direction where there is one),
    each decoy's not (nor on any metric the hidden change moves, in a blind-metric world); at L4, the boundary
    found again within its tolerance. Empty when the ground truth holds."""
    seeds = [derive_seed("petri-fresh", spec.set, spec.id, i) for i in range(count)]
    base = spec.base(sim)
    if spec.boundary is not None:
        found = crossing(sim, {**base, **spec.changed}, TRANSITIONS[sim.name], seeds)
        if found is None or abs(found - spec.boundary.value) > spec.boundary.tolerance:
            return [f"boundary found at {found} on fresh seeds, stored {spec.boundary.value}"]
        return []
    control = sim.run(base, seeds)
    problems = []
    for name in spec.candidates:
        rows = compare(control, sim.run({**base, name: spec.reference_values[name]}, seeds), sim.metrics)
        on_target = rows[sim.metrics.index(spec.target)]
        if name in spec.changed:
            direction = "up" if on_target.relative_change > 0 else "down"
            if not on_target.significant:
                problems.append(f"driver {name} not significant (p {on_target.p_holm:.3g})")
            elif spec.direction is not None and direction != spec.direction:
                problems.append(f"driver {name} moves the target {direction}, stated {spec.direction}")
        elif on_target.significant or any(row.significant and row.metric in (spec.moved or {}) for row in rows):
            problems.append(f"decoy {name} significant")
    return problems
