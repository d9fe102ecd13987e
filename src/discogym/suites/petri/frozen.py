"""The frozen task sets: what each holds, their committed JSON files, and checking them against regeneration."""

import itertools
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from discogym.core import UserError, make_rng
from discogym.suites.petri.generate import STATISTIC_DIGITS, STATISTICS, generate_task
from discogym.suites.petri.sims.registry import get_simulation
from discogym.suites.petri.tasks import Generation, PetriTaskSpec, Tier

TASKS_DIR = Path(__file__).resolve().parent / "tasks"
SIMS = ("market", "swarm", "origin", "morph", "social")

# Two stored statistics agree when they differ by at most one unit in their last stored digit.
STATISTIC_TOLERANCE = 10.0 ** (1 - STATISTIC_DIGITS)

# (tier, simulation, seed) of every task of every frozen set; a task's id is SIMULATION-SEED. A set's suffix is
# the generation that made it; the first set is the default.
FROZEN_SETS: dict[str, list[tuple[Tier, str, int]]] = {
    "core-v1": [("L1", sim, seed) for sim in SIMS for seed in (101, 102)],
    "l2-v1": [("L2", sim, seed) for sim in SIMS for seed in (201, 202)],
    "l3-v1": [("L3", sim, seed) for sim in SIMS for seed in (301, 302)],
    "l4-v1": [("L4", sim, seed) for sim in SIMS for seed in (401, 402)],
    "blind-v1": [("blind", sim, seed) for sim in SIMS for seed in (501, 502)],
    "pilot-v0": [("L1", sim, 1) for sim in SIMS] + [("L1", "market", 2)],
    "core-v0": [("L1", sim, seed) for sim in SIMS for seed in (101, 102)],
    "l2-v0": [("L2", sim, seed) for sim in SIMS for seed in (201, 202)],
    "l3-v0": [("L3", sim, seed) for sim in SIMS for seed in (301, 302)],
}


class FrozenSet(BaseModel):
    """The file of one frozen set."""

    name: str
    tasks: list[PetriTaskSpec]


def set_path(name: str) -> Path:
    """Where the frozen set ``name`` is committed."""
    return TASKS_DIR / f"{name}.json"


def set_names() -> list[str]:
    """The frozen sets, in their documented order."""
    return list(FROZEN_SETS)


def _check_name(name: str) -> None:
    if name not in FROZEN_SETS:
        raise UserError(f"unknown task set '{name}'; sets: {', '.join(FROZEN_SETS)}")


def generation(name: str) -> Generation:
    """The generation that made the set ``name``."""
    return "v0" if name.endswith("-v0") else "v1"


def generate_set(name: str) -> FrozenSet:
    """Generate every task of the set ``name`` from its seeds."""
    _check_name(name)
    made_by = generation(name)
    tasks = [generate_task(get_simulation(sim), tier, seed, name, made_by) for tier, sim, seed in FROZEN_SETS[name]]
    return FrozenSet(name=name, tasks=tasks)


def _split_statistics(task: PetriTaskSpec) -> tuple[dict[str, Any], dict[str, Any]]:
    """A task's JSON in two parts: everything compared exactly, and the statistics (by path)."""
    exact = task.model_dump(mode="json")
    statistics = {}
    for path in STATISTICS:
        *parents, leaf = path.split(".")
        holder = exact
        for parent in parents:
            holder = holder.get(parent) or {}  # an L4 task's boundary; absent elsewhere
        statistics[path] = holder.pop(leaf, None)
    return exact, statistics


def _close(old: Any, new: Any) -> bool:
    """Statistics (numbers, None, or dicts of numbers) equal to :data:`STATISTIC_TOLERANCE`, relative."""
    if isinstance(old, dict) and isinstance(new, dict):
        return old.keys() == new.keys() and all(_close(old[key], new[key]) for key in old)
    if isinstance(old, float | int) and isinstance(new, float | int):
        return math.isclose(old, new, rel_tol=STATISTIC_TOLERANCE, abs_tol=1e-12)
    return bool(old == new)


def same_task(old: PetriTaskSpec, new: PetriTaskSpec) -> bool:
    """True when two tasks have the same ground truth, decisions and seeds exactly, and the same statistics to
    their stored precision."""
    old_exact, old_statistics = _split_statistics(old)
    new_exact, new_statistics = _split_statistics(new)
    return old_exact == new_exact and all(_close(old_statistics[key], new_statistics[key]) for key in STATISTICS)


def render(frozen: FrozenSet) -> str:
    """The canonical text of a frozen set's file: sorted keys, one-space indent, a final newline."""
    return json.dumps(frozen.model_dump(mode="json"), sort_keys=True, indent=1) + "\n"


def load_set(name: str) -> FrozenSet:
    """The committed frozen set ``name``."""
    _check_name(name)
    path = set_path(name)
    try:
        return FrozenSet.model_validate_json(path.read_bytes())
    except OSError as err:
        raise UserError(f"frozen set {name} is missing ({path}: {err.strerror}); run discogym petri freeze") from None
    except ValidationError as err:
        raise UserError(f"{path} is not a valid frozen set ({err.error_count()} problems)") from None


def freeze(name: str) -> Path:
    """Regenerate the set ``name`` and write its file."""
    path = set_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(generate_set(name)), encoding="utf-8")
    return path


def verify(name: str) -> list[str]:
    """Regenerate the set ``name`` and compare it with the committed file: ground truth, decisions and seeds
    exactly, statistics to their stored precision (:func:`same_task`). Return the ids of the tasks that differ
    (all of them when the tasks differ in number), or the set's name when only the file's layout is not the
    canonical one."""
    committed = load_set(name)
    regenerated = generate_set(name)
    if len(committed.tasks) != len(regenerated.tasks):
        return [task.id for task in regenerated.tasks]
    differing = [new.id for old, new in zip(committed.tasks, regenerated.tasks, strict=True) if not same_task(old, new)]
    if not differing and set_path(name).read_text(encoding="utf-8") != render(committed):
        return [name]
    return differing


TRAINING_TIERS: tuple[Tier, ...] = ("L1", "L2", "L3", "L4", "blind")
TRAINING_SEEDS = 10**6  # training worlds' seeds are drawn from [10**6, 2 * 10**6): the frozen sets' are below 600


def training_specs(seed: int) -> Iterator[PetriTaskSpec]:
    """Endless v1 tasks for training: each of a tier and simulation drawn from ``seed``, from a world seed of its
    own drawn above every frozen set's, verified as the frozen sets' tasks are; ids ``train{SEED}-{N}-{SIM}``."""
    rng = make_rng("petri", "training", seed)
    for index in itertools.count():
        tier = TRAINING_TIERS[int(rng.integers(len(TRAINING_TIERS)))]
        sim = SIMS[int(rng.integers(len(SIMS)))]
        world_seed = TRAINING_SEEDS + int(rng.integers(TRAINING_SEEDS))
        spec = generate_task(get_simulation(sim), tier, world_seed, f"training:{seed}")
        yield spec.model_copy(update={"id": f"train{seed}-{index:06d}-{sim}"})


def problem_of(spec: PetriTaskSpec) -> dict[str, Any]:
    """What makes a task the problem it is: the world and its hidden change (not its id, set or seeds)."""
    fields = {"tier", "simulation", "target", "control", "candidates", "changed", "boundary"}
    return spec.model_dump(mode="json", include=fields)
