"""The random-agent baseline of WorldTest's Appendix C: per environment, the probability that uniformly random
actions (noop, four arrows, a click at a uniform cell: six types, equally likely) trigger the change-detection
task's change, and reach the planning task's goal, within a timeout, and the mean steps it takes when they do.

Each run draws its own actions and its own generator seed (task seed + run), so stochastic environments vary
between runs. A change is triggered when the changed program's frame first differs from the original's under
the same actions and seed (the defect time); a goal is reached when the frame shows it. Beside the paper's
figures, the table gives how often the goal is reached within the planning task's own step limit: the random
agent's chance of solving it.
"""

import json
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from functools import cache
from multiprocessing import get_context
from pathlib import Path
from statistics import fmean

import numpy as np

from discogym.suites.autumn.catalog import program_source
from discogym.suites.autumn.challenges import ChangeTask, PlanningTask, condition_holds, goal_reached, random_actions
from discogym.suites.autumn.interpreter import Interpreter
from discogym.suites.autumn.sexpr import AutumnError
from discogym.suites.autumn.tasks import AutumnTask, TaskSet, new_world


@dataclass(frozen=True)
class BaselineRow:
    """One environment's random-agent figures (None where nothing happened or there is no such task)."""

    env: str
    runs: int
    timeout: int
    p_trigger: float | None
    steps_to_trigger: float | None
    p_goal: float | None
    steps_to_goal: float | None
    p_goal_in_limit: float | None = None  # the goal reached within the planning task's own step limit

    def document(self) -> dict[str, object]:
        return asdict(self)


def _first_change(source: str, task: ChangeTask, rng: np.random.Generator, seed: int, timeout: int) -> int | None:
    original = Interpreter(source, seed=seed)
    changed = Interpreter(task.modified, seed=seed)
    size = original.grid_size
    for step in range(1, timeout + 1):
        (action,) = random_actions(rng, size, 1)
        try:
            if original.step(action) != changed.step(action):
                return step
        except AutumnError:
            return None
    return None


def _first_goal(source: str, task: PlanningTask, rng: np.random.Generator, seed: int, timeout: int) -> int | None:
    world = Interpreter(source, seed=seed)
    size = world.grid_size
    for step in range(1, timeout + 1):
        (action,) = random_actions(rng, size, 1)
        try:
            if goal_reached(world.step(action), task.goal):
                return step
        except AutumnError:
            return None
    return None


def baseline_envs(task_set: TaskSet, envs: list[str] | None = None) -> list[str]:
    """The environments :func:`random_baseline` measures, in the task set's order."""
    return list(dict.fromkeys(t.env for t in task_set.tasks if envs is None or t.env in envs))


def random_baseline(
    task_set: TaskSet,
    runs: int = 50,
    timeout: int = 1000,
    envs: list[str] | None = None,
    on_run: Callable[[str], None] | None = None,
    jobs: int = 1,
) -> list[BaselineRow]:
    """The table, one row per environment of the task set (in its order). ``on_run`` is told the environment
    after each of its runs (for a progress bar; with ``jobs`` > 1 processes, after each environment, once per
    run). The rows do not depend on ``jobs``."""
    names = baseline_envs(task_set, envs)
    if jobs <= 1 or len(names) <= 1:
        return [_env_row(task_set, index, name, runs, timeout, on_run) for index, name in enumerate(names)]
    rows = []
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
        count = len(names)
        for row in pool.map(_env_row, [task_set] * count, range(count), names, [runs] * count, [timeout] * count):
            rows.append(row)
            for _ in range(runs):
                if on_run is not None:
                    on_run(row.env)
    return rows


def _env_row(
    task_set: TaskSet, index: int, name: str, runs: int, timeout: int, on_run: Callable[[str], None] | None = None
) -> BaselineRow:
    """One environment's row (``index``: its place among the measured environments, which seeds its runs)."""
    source = program_source(name)
    by_kind = {t.kind: t.challenge for t in task_set.tasks if t.env == name}
    change, goal = by_kind.get("cd"), by_kind.get("planning")
    triggered: list[int | None] = []
    reached: list[int | None] = []
    for run in range(runs):
        if isinstance(change, ChangeTask):
            rng = np.random.default_rng([7, index, run, 0])
            triggered.append(_first_change(source, change, rng, change.seed + run, timeout))
        if isinstance(goal, PlanningTask):
            rng = np.random.default_rng([7, index, run, 1])
            reached.append(_first_goal(source, goal, rng, goal.seed + run, timeout))
        if on_run is not None:
            on_run(name)
    limit = goal.step_limit if isinstance(goal, PlanningTask) else timeout
    in_limit = [r if r is not None and r <= limit else None for r in reached]
    return BaselineRow(name, runs, timeout, *_rate(triggered), *_rate(reached), _rate(in_limit)[0])


def _rate(results: list[int | None]) -> tuple[float | None, float | None]:
    if not results:
        return None, None
    hits = [r for r in results if r is not None]
    return len(hits) / len(results), (fmean(hits) if hits else None)


# ----------------------------------------------------------------------------------------------------------------
# AutumnBench's published tasks (the official split) beside the paper's Appendix C table

APPENDIX_C = Path(__file__).with_name("appendix_c.json")


@cache
def appendix_c() -> dict[str, tuple[float, float]]:
    """The paper's random-agent table (Table E.3, cited in Appendix C): environment code -> (probability of
    triggering the change, probability of reaching the goal); its source is in the file."""
    document = json.loads(APPENDIX_C.read_text(encoding="utf-8"))
    return {row["env"]: (float(row["p_trigger"]), float(row["p_goal"])) for row in document["rows"]}


@dataclass(frozen=True)
class OfficialRow:
    """One published environment: the paper's figures (None when the paper has no such code) beside ours."""

    env: str
    paper_trigger: float | None
    p_trigger: float | None
    paper_goal: float | None
    p_goal: float | None

    def document(self) -> dict[str, object]:
        return asdict(self)


def official_baseline(
    tasks: Sequence[AutumnTask], runs: int = 50, timeout: int = 1000, on_run: Callable[[str], None] | None = None
) -> list[OfficialRow]:
    """Per published environment (sorted by code): how often the random agent makes the change-detection
    condition hold, and reaches the planning goal, within ``timeout`` steps, over ``runs`` seeded runs; beside
    the paper's figures for the same code."""
    paper = appendix_c()
    rows = []
    for index, env in enumerate(sorted({t.env for t in tasks})):
        by_kind = {t.kind: t for t in tasks if t.env == env}
        triggered: list[int | None] = []
        reached: list[int | None] = []
        for run in range(runs):
            if "cd" in by_kind:
                triggered.append(_official_trigger(by_kind["cd"], np.random.default_rng([8, index, run, 0]), timeout))
            if "planning" in by_kind:
                reached.append(_official_goal(by_kind["planning"], np.random.default_rng([8, index, run, 1]), timeout))
            if on_run is not None:
                on_run(env)
        known = paper.get(env)
        rows.append(
            OfficialRow(
                env,
                None if known is None else known[0],
                _rate(triggered)[0],
                None if known is None else known[1],
                _rate(reached)[0],
            )
        )
    return rows


def _official_trigger(task: AutumnTask, rng: np.random.Generator, timeout: int) -> int | None:
    challenge = task.challenge
    assert isinstance(challenge, ChangeTask) and challenge.condition is not None
    world = new_world(task, challenge.modified)
    for step in range(timeout + 1):
        if condition_holds(world, challenge.condition):
            return step
        (action,) = random_actions(rng, world.grid_size, 1)
        try:
            world.step(action)
        except AutumnError:
            return None
    return None


def _official_goal(task: AutumnTask, rng: np.random.Generator, timeout: int) -> int | None:
    challenge = task.challenge
    assert isinstance(challenge, PlanningTask)
    world = new_world(task)
    for step in range(1, timeout + 1):
        (action,) = random_actions(rng, world.grid_size, 1)
        try:
            if goal_reached(world.step(action), challenge.goal):
                return step
        except AutumnError:
            return None
    return None
