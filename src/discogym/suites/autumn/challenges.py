"""WorldTest's three challenges for an Autumn environment: masked frame prediction, planning and change
detection. Each is generated from a program and a seed, verified, and scored as the spec says.

- **Masked frame prediction (MFP).** A fixed action sequence is replayed; the same rectangle is masked in every
  frame; the agent picks the masked content of the last frame among six options. The rectangle is chosen so
  that its content is the same in every one of 40 sampled realizations of the dynamics (other seeds of the
  generator) and lies at least two cells from any cell that differed between them, and the five distractors
  differ from it, so exactly one option is right whatever the randomness did (checked again with more seeds in
  the tests).
- **Planning.** A goal: some cells and their colours, taken from a frame that a seeded random trajectory
  reaches; the trajectory's prefix is stored as a verified solution. Success: the rendered grid shows the goal's
  colours on the goal's cells.
- **Change detection (CD).** A modified program: after ``guard`` steps, one rule stops working (an ``on``
  clause's effect, or a state variable's motion). The agent acts in it, signals "found the change", then picks
  the frame where the change first showed. The defect time T is the first frame at which the modified program's
  frames differ from the original's under the agent's own actions and the same seed.
"""

import math
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from discogym.suites.autumn.catalog import program_stats
from discogym.suites.autumn.interpreter import Action, Interpreter, action_text, parse_action
from discogym.suites.autumn.sexpr import AutumnError, SList, Symbol, parse, show
from discogym.suites.autumn.values import truthy

Grid = list[list[str]]
OPTIONS = 6
REALIZATIONS = 40  # seeds sampled to check an MFP answer against the randomness
GUARD_CLOCK = "cdClock"


def random_actions(rng: np.random.Generator, size: int, count: int) -> list[Action]:
    """Uniform over noop, the four arrows and a click (at a uniform cell), as the paper's random agent."""
    kinds: list[Action] = [None, "left", "right", "up", "down", "click"]
    actions: list[Action] = []
    for _ in range(count):
        kind = kinds[int(rng.integers(len(kinds)))]
        actions.append(("click", int(rng.integers(size)), int(rng.integers(size))) if kind == "click" else kind)
    return actions


def explore(source: str, seed: int, rng: np.random.Generator, count: int) -> list[Action]:
    """Actions for generating challenges: like the random agent, but half of the clicks land on an object: a
    random object type on the grid, a random object of it, a random cell of that, so that a lone switch gets
    clicked as often as a wall of many blocks."""
    interpreter = Interpreter(source, seed=seed)
    size = interpreter.grid_size
    actions: list[Action] = []
    for action in random_actions(rng, size, count):
        if isinstance(action, tuple) and rng.random() < 0.5:
            by_type: dict[str, list[tuple[int, int]]] = {}
            for obj in interpreter.objects():
                cells = [(c.position.x, c.position.y) for c in interpreter.cells_of(obj)]
                by_type.setdefault(obj.type.name, []).extend(p for p in cells if 0 <= p[0] < size and 0 <= p[1] < size)
            kinds = sorted(name for name, cells in by_type.items() if cells)
            if kinds:
                cells = by_type[kinds[int(rng.integers(len(kinds)))]]
                x, y = cells[int(rng.integers(len(cells)))]
                action = ("click", x, y)
        actions.append(action)
        interpreter.step(action)
    return actions


def play(source: str, actions: Sequence[Action], seed: int) -> list[Grid]:
    """The frames of ``source`` under ``actions``: the initial frame, then one per action."""
    interpreter = Interpreter(source, seed=seed)
    return [interpreter.frame] + [interpreter.step(action) for action in actions]


def is_stochastic(source: str, probe: Sequence[Action], seeds: Sequence[int] = (11, 12, 13)) -> bool:
    """Whether different generator seeds give different frames for the probe actions."""
    runs = [play(source, probe, seed) for seed in seeds]
    return any(run != runs[0] for run in runs[1:])


# ----------------------------------------------------------------------------------------------------------------
# Scoring


def cd_score(defect: int | None, chosen: int | None) -> float:
    """Change detection: 0 if the change never showed (``defect`` None) or no frame was chosen; f < T - 1 scores 0,
    f in {T - 1, T} scores 1, a later f scores clip(1.377 g - 1.178, 0, 1) with g = 1 / (1 - (f/T) exp(-f/T))."""
    if defect is None or chosen is None:
        return 0.0
    if chosen < defect - 1:
        return 0.0
    if chosen <= defect:
        return 1.0
    ratio = chosen / defect
    g = 1.0 / (1.0 - ratio * math.exp(-ratio))
    return float(min(1.0, max(0.0, 1.377 * g - 1.178)))


def official_change_reward(trigger: int | None, chosen: int | None) -> float:
    """The official harness's change-detection reward (MARAProtocol's CDSliderEnvironment.change_reward), with
    ``trigger`` the first test frame whose state satisfies the condition and T = ``trigger`` + 1 the harness's
    trigger time (it checks the condition on the frame before each step): -1 when the condition never held or
    the chosen frame f < T - 1; 1 for f in {T - 1, T}; a later f scores clip(1.377 g - 1.178, 0, 1) with
    g = 1 / (1 - (f/T) exp(-f/T)). No frame chosen (the signal never came) scores 0, as a run that quits."""
    if chosen is None:
        return 0.0
    if trigger is None:
        return -1.0
    start = trigger + 1
    if chosen < start - 1:
        return -1.0
    if chosen <= start:
        return 1.0
    ratio = chosen / start
    g = 1.0 / (1.0 - ratio * math.exp(-ratio))
    return float(min(1.0, max(0.0, 1.377 * g - 1.178)))


def condition_holds(world: Interpreter, condition: str) -> bool:
    """Whether the official trigger condition is true in ``world``'s state (a program error counts as false)."""
    try:
        return truthy(world.evaluate(condition))
    except AutumnError:
        return False


def goal_reached(frame: Grid, goal: Sequence[tuple[int, int, str]]) -> bool:
    """Whether the frame shows the goal's colour on each goal cell (x, y, colour)."""
    return all(0 <= y < len(frame) and 0 <= x < len(frame[y]) and frame[y][x] == colour for x, y, colour in goal)


# ----------------------------------------------------------------------------------------------------------------
# Masked frame prediction


class MfpTask(BaseModel):
    """A masked-frame-prediction challenge: the actions, the rectangle and the six options (colours row by row)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["mfp"] = "mfp"
    seed: int
    actions: list[str]
    mask: tuple[int, int, int, int]  # x, y, width, height
    options: list[list[list[str]]] = Field(min_length=OPTIONS, max_length=OPTIONS)
    answer: int = Field(ge=0, lt=OPTIONS)
    # AutumnBench's published tasks (the official split): the frames exactly as the official harness shows them,
    # masked cells "mask", instead of a replay of the actions; ``mask`` is then the masked cells' bounding box.
    frames: list[Grid] | None = None


def region(frame: Grid, mask: tuple[int, int, int, int]) -> list[list[str]]:
    """The colours inside the rectangle, row by row."""
    x, y, width, height = mask
    return [row[x : x + width] for row in frame[y : y + height]]


def masked(frame: Grid, mask: tuple[int, int, int, int], fill: str = "mask") -> Grid:
    """The frame with the rectangle covered."""
    x, y, width, height = mask
    return [
        [fill if x <= i < x + width and y <= j < y + height else c for i, c in enumerate(row)]
        for j, row in enumerate(frame)
    ]


def make_mfp(source: str, seed: int, length: int = 15, attempts: int = 8) -> MfpTask | None:
    """A masked-frame-prediction task from a seed (trying longer action sequences when nothing qualifies), or
    None."""
    lengths = [length, max(3, length // 3), 2 * length // 3, 2 * length, 3 * length, 4 * length]
    for attempt in range(attempts):
        size = lengths[attempt % len(lengths)]
        task = _try_mfp(source, seed, size, np.random.default_rng([seed, 1, attempt]))
        if task is not None:
            return task
    return None


def _try_mfp(source: str, seed: int, length: int, rng: np.random.Generator) -> MfpTask | None:
    size = Interpreter(source, seed=seed).grid_size
    actions = explore(source, seed, rng, length)
    runs = [play(source, actions, seed + k) for k in range(REALIZATIONS)]
    candidates = _boxes(runs, len(actions), size, copy_proof=False)
    if not candidates:
        return None
    box = candidates[int(rng.integers(len(candidates)))]
    truth = region(runs[0][-1], box)
    distractors = _distractors(runs[0], box, truth, rng)
    return _mfp_task(seed, actions, box, truth, distractors, rng)


def _mfp_task(
    seed: int,
    actions: Sequence[Action],
    box: tuple[int, int, int, int],
    truth: list[list[str]],
    distractors: list[list[list[str]]],
    rng: np.random.Generator,
) -> MfpTask | None:
    if len(distractors) < OPTIONS - 1:
        return None
    options = [truth, *distractors[: OPTIONS - 1]]
    order = rng.permutation(OPTIONS)
    shuffled = [options[int(i)] for i in order]
    return MfpTask(
        seed=seed,
        actions=[action_text(a) for a in actions],
        mask=box,
        options=shuffled,
        answer=int(np.where(order == 0)[0][0]),
    )


def _boxes(runs: list[list[Grid]], end: int, size: int, copy_proof: bool) -> list[tuple[int, int, int, int]]:
    """The rectangles that may be masked when the replay ends at frame ``end``: the same colours there in every
    realization, at least two cells from any cell that differed between them, changing at some point; with
    ``copy_proof``, also different from the frame before and from the first frame."""
    final = runs[0][end]
    varying = {
        (x, y) for run in runs[1:] for y, row in enumerate(run[end]) for x, c in enumerate(row) if c != final[y][x]
    }
    near_varying = {(x + dx, y + dy) for x, y in varying for dx in range(-2, 3) for dy in range(-2, 3)}
    candidates = []
    for width in (2, 3):
        for height in (2, 3):
            for x in range(size - width + 1):
                for y in range(size - height + 1):
                    box = (x, y, width, height)
                    if any((i, j) in near_varying for i in range(x, x + width) for j in range(y, y + height)):
                        continue  # within two cells of what the randomness changed in some realization
                    truth = region(final, box)
                    if copy_proof and truth in (region(runs[0][end - 1], box), region(runs[0][0], box)):
                        continue  # the frame before, or the first, shows the answer: copying it is right
                    if any(region(run[end], box) != truth for run in runs[1:]):
                        continue  # the randomness decides what is there
                    if all(region(frame, box) == truth for frame in runs[0][: end + 1]):
                        continue  # never changes: nothing to predict
                    candidates.append(box)
    return candidates


def make_mfp_v2(source: str, seed: int, length: int = 15, attempts: int = 4) -> MfpTask | None:
    """A second-generation masked-frame-prediction task: as :func:`make_mfp`, but the replay ends at a frame where
    the answer differs from the rectangle's content in the frame before and in the first frame, and both of
    those are among the options, so a guess that copies either frame picks a wrong option. A program with no
    random draw is replayed once (every generator seed gives the same frames)."""
    realizations = REALIZATIONS if program_stats(source).stochastic else 1
    for attempt in range(attempts):
        size = (length, 2 * length, 3 * length, 4 * length)[attempt % 4]
        task = _try_mfp_v2(source, seed, size, realizations, np.random.default_rng([seed, 11, attempt]))
        if task is not None:
            return task
    return None


def _try_mfp_v2(source: str, seed: int, length: int, realizations: int, rng: np.random.Generator) -> MfpTask | None:
    size = Interpreter(source, seed=seed).grid_size
    actions = explore(source, seed, rng, length)
    runs = [play(source, actions, seed + k) for k in range(realizations)]
    for end in range(length, max(2, length // 3), -1):
        candidates = _boxes(runs, end, size, copy_proof=True)
        if candidates:
            break
    else:
        return None
    box = candidates[int(rng.integers(len(candidates)))]
    frames = runs[0][: end + 1]
    truth = region(frames[-1], box)
    copies = [region(frames[-2], box), region(frames[0], box)]
    distractors = _with_first(copies, _distractors(frames, box, truth, rng))
    return _mfp_task(seed, actions[:end], box, truth, distractors, rng)


def _with_first(first: list[list[list[str]]], rest: list[list[list[str]]]) -> list[list[list[str]]]:
    """``first`` (without repeats), then the rest of ``rest``."""
    ordered: list[list[list[str]]] = []
    for candidate in [*first, *rest]:
        if candidate not in ordered:
            ordered.append(candidate)
    return ordered


def copy_guesses(source: str, task: MfpTask) -> list[int]:
    """The options a frame-copying guess picks: those equal to the rectangle's content in the frame before the
    last or in the first frame (the second generation's rule: never the answer)."""
    frames = play(source, [parse_action(a) for a in task.actions], task.seed)
    copies = [region(frames[-2], task.mask), region(frames[0], task.mask)] if len(frames) > 1 else []
    return [i for i, option in enumerate(task.options) if option in copies]


def _distractors(
    frames: list[Grid], box: tuple[int, int, int, int], truth: list[list[str]], rng: np.random.Generator
) -> list[list[list[str]]]:
    """Plausible wrong contents: the rectangle in earlier frames, shifted by one, and recoloured."""
    found: list[list[list[str]]] = []

    def add(candidate: list[list[str]]) -> None:
        if candidate != truth and candidate not in found and all(len(row) == box[2] for row in candidate):
            found.append(candidate)

    for frame in reversed(frames[:-1]):
        add(region(frame, box))
    x, y, width, height = box
    final = frames[-1]
    size = len(final)
    for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        if 0 <= x + dx <= size - width and 0 <= y + dy <= size - height:
            add(region(final, (x + dx, y + dy, width, height)))
    colours = sorted({c for row in final for c in row} | {"red", "blue", "green", "yellow", "white", "black"})
    while len(found) < OPTIONS + 3:
        cells = [list(row) for row in truth]
        j, i = int(rng.integers(height)), int(rng.integers(width))
        cells[j][i] = colours[int(rng.integers(len(colours)))]
        add(cells)
    chosen = list(found)
    rng.shuffle(chosen)
    return chosen


def verify_mfp(source: str, task: MfpTask, realizations: int = REALIZATIONS) -> bool:
    """Exactly one option matches the masked content in every sampled realization: the answer."""
    actions = [parse_action(a) for a in task.actions]
    finals = [region(play(source, actions, task.seed + k)[-1], task.mask) for k in range(realizations)]
    matching = [i for i, option in enumerate(task.options) if all(option == final for final in finals)]
    return matching == [task.answer]


# ----------------------------------------------------------------------------------------------------------------
# Planning


class PlanningTask(BaseModel):
    """A planning challenge: reach the goal cells' colours; ``solution`` is a verified action sequence."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["planning"] = "planning"
    seed: int
    goal: list[tuple[int, int, str]]
    solution: list[str]
    step_limit: int
    # Second generation: the random agent's estimated probability of reaching the goal within the step limit
    # (:func:`random_reach`, measured at generation); absent in the first.
    random_reach: float | None = None
    # The official split: the published answer's optimal_actions_count (information only; ``solution`` is empty).
    optimal_actions: int | None = None


def make_planning(source: str, seed: int, horizon: int = 30, cells: int = 4, attempts: int = 8) -> PlanningTask | None:
    """A goal from the frame a seeded exploring trajectory reaches (cells that differ from the start; longer
    trajectories when nothing changed), or None."""
    for attempt in range(attempts):
        task = _try_planning(source, seed, horizon + 20 * attempt, cells, np.random.default_rng([seed, 2, attempt]))
        if task is not None:
            return task
    return None


def _try_planning(source: str, seed: int, horizon: int, cells: int, rng: np.random.Generator) -> PlanningTask | None:
    size = Interpreter(source, seed=seed).grid_size
    actions = explore(source, seed, rng, horizon)
    frames = play(source, actions, seed)
    start = frames[0]
    for k in (int(i) for i in rng.permutation(np.arange(6, horizon + 1))):
        changed = [(x, y, frames[k][y][x]) for y in range(size) for x in range(size) if frames[k][y][x] != start[y][x]]
        if len(changed) < 1:
            continue
        picks = sorted(int(i) for i in rng.choice(len(changed), size=min(cells, len(changed)), replace=False))
        goal = [changed[i] for i in picks]
        if goal_reached(start, goal):
            continue
        solution = actions[:k]
        if not goal_reached(play(source, solution, seed)[-1], goal):
            continue
        return PlanningTask(
            seed=seed, goal=goal, solution=[action_text(a) for a in solution], step_limit=max(50, 3 * k)
        )
    return None


RANDOM_RUNS = 40  # seeded random-agent runs estimating how often luck reaches a second-generation goal
RANDOM_MAX_HITS = 1  # a goal the random agent reaches in more of them is rejected
FARTHEST = 6  # goal frames tried per trajectory (second generation)
LUCKY_RUNS = 8  # random runs whose cells a second-generation goal avoids when it can


def random_reach(
    source: str, goal: Sequence[tuple[int, int, str]], seed: int, steps: int, stop_above: int | None = None
) -> float | None:
    """The fraction of :data:`RANDOM_RUNS` runs of the paper's random agent (Appendix C: six action types, equally
    likely, a click at a uniform cell; each run its own seeded actions, the world with ``seed``) whose frames show
    the goal within ``steps`` steps; None once more than ``stop_above`` runs did (no need to go on)."""
    hits = 0
    for run in range(RANDOM_RUNS):
        world = Interpreter(source, seed=seed)
        for action in random_actions(np.random.default_rng([seed, 7, run]), world.grid_size, steps):
            try:
                if goal_reached(world.step(action), goal):
                    hits += 1
                    break
            except AutumnError:
                break
        if stop_above is not None and hits > stop_above:
            return None
    return hits / RANDOM_RUNS


def make_planning_v2(source: str, seed: int, attempts: int = 5) -> PlanningTask | None:
    """A second-generation goal: up to four cells of a frame that a seeded exploring trajectory reaches late,
    each with a colour that waiting (noops only) never shows there, nor (when there are such cells) a few seeded
    random runs (:data:`LUCKY_RUNS`). The step limit is
    the solution's length plus a quarter (at least 5), and the random agent must reach the goal within it in at
    most :data:`RANDOM_MAX_HITS` of :data:`RANDOM_RUNS` seeded runs. Longer trajectories when nothing
    qualifies; None if nothing does."""
    for attempt in range(attempts):
        task = _try_planning_v2(source, seed, 40 + 20 * attempt, np.random.default_rng([seed, 12, attempt]))
        if task is not None:
            return task
    return None


def _cells_shown(runs: Iterable[list[Grid]], start: Grid) -> set[tuple[int, int, str]]:
    """Every (x, y, colour) some frame of the runs shows that differs from ``start`` (rows equal to the start's
    are skipped whole): the only cells a goal can hold."""
    shown: set[tuple[int, int, str]] = set()
    for frames in runs:
        for frame in frames:
            for y, row in enumerate(frame):
                if row != start[y]:
                    shown.update((x, y, c) for x, c in enumerate(row) if c != start[y][x])
    return shown


def planning_limit(length: int) -> int:
    """The second generation's step limit for a solution of ``length`` actions."""
    return length + max(5, length // 4)


def _try_planning_v2(source: str, seed: int, horizon: int, rng: np.random.Generator) -> PlanningTask | None:
    actions = explore(source, seed, rng, horizon)
    frames = play(source, actions, seed)
    start = frames[0]
    limit = planning_limit(horizon)
    waited = _cells_shown([play(source, [None] * limit, seed)], start)
    runs = (
        play(source, random_actions(np.random.default_rng([seed, 14, r]), len(start), limit), seed)
        for r in range(LUCKY_RUNS)
    )
    lucky = _cells_shown(runs, start)
    for k in [int(i) for i in rng.permutation(np.arange(horizon // 2, horizon + 1))][:FARTHEST]:
        changed = [(x, y, c) for y, row in enumerate(frames[k]) for x, c in enumerate(row) if c != start[y][x]]
        unwaited = [cell for cell in changed if cell not in waited]
        # cells that neither waiting nor a few random runs show, else cells waiting never shows, when there are any
        changed = [cell for cell in unwaited if cell not in lucky] or unwaited or changed
        if not changed:
            continue
        picks = sorted(int(i) for i in rng.choice(len(changed), size=min(4, len(changed)), replace=False))
        goal = [changed[i] for i in picks]
        first = next(i for i, frame in enumerate(frames) if goal_reached(frame, goal))
        if first == 0:
            continue
        limit = planning_limit(first)
        reach = random_reach(source, goal, seed, limit, stop_above=RANDOM_MAX_HITS)
        if reach is None:
            continue
        solution = [action_text(a) for a in actions[:first]]
        return PlanningTask(seed=seed, goal=goal, solution=solution, step_limit=limit, random_reach=reach)
    return None


def verify_planning(source: str, task: PlanningTask) -> bool:
    """The stored solution reaches the goal, within the step limit, and the start does not show it."""
    frames = play(source, [parse_action(a) for a in task.solution], task.seed)
    return (
        not goal_reached(frames[0], task.goal)
        and goal_reached(frames[-1], task.goal)
        and len(task.solution) <= task.step_limit
    )


# ----------------------------------------------------------------------------------------------------------------
# Change detection


class ChangeTask(BaseModel):
    """A change-detection challenge: the modified program and how it differs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["cd"] = "cd"
    seed: int
    modified: str
    change: str  # what changes, for people reading the task file (never shown to the agent)
    guard: int  # the rule changes after this many steps
    step_limit: int
    # The official split: the published trigger condition (an Autumn predicate on the changed program's state).
    # The change counts from the first frame where it holds, and the score is the official change_reward.
    condition: str | None = None


def make_change(source: str, seed: int, guard: int | None = None) -> ChangeTask | None:
    """A modified program: after ``guard`` steps either an ``on`` clause stops having its effect or a state
    variable stops following its NEXT rule. The mutation is drawn from the seed among those that show within
    200 random steps."""
    rng = np.random.default_rng([seed, 3])
    program = parse(source)[0]
    assert isinstance(program, SList)
    statements = list(program.items[1:])
    ons = [i for i, s in enumerate(statements) if _head(s) == "on"]
    states = [i for i, s in enumerate(statements) if _head(s) == "=" and _head(s.items[2]) == "initnext"]  # type: ignore[union-attr]
    mutations = [("on", i) for i in ons] + [("freeze", i) for i in states]
    order = [mutations[int(i)] for i in rng.permutation(len(mutations))]
    after = guard if guard is not None else int(rng.integers(5, 16))
    probe = explore(source, seed, np.random.default_rng([seed, 4]), 200)
    original = play(source, probe, seed)
    for kind, index in order:
        modified, change = _mutate(statements, kind, index, after)
        if defect_time(source, modified, probe, seed, original) is not None:
            return ChangeTask(seed=seed, modified=modified, change=change, guard=after, step_limit=300)
    return None


WAIT_SEEDS = 2  # generator seeds (the task's and the next) on which waiting must not show a hidden change
# (one for a program without random draws)


def make_change_v2(source: str, seed: int) -> ChangeTask | None:
    """A second-generation change: as :func:`make_change`, but kept only if it never shows to an agent that just
    waits (noops for the whole step limit, with the task's generator seed and the next) and it does show on the
    oracle's exploring probe (so the change needs exploring, and exploring finds it)."""
    rng = np.random.default_rng([seed, 13])
    statements = _statements(source)
    ons = [i for i, s in enumerate(statements) if _head(s) == "on"]
    states = [i for i, s in enumerate(statements) if _head(s) == "=" and _head(s.items[2]) == "initnext"]
    mutations = [("on", i) for i in ons] + [("freeze", i) for i in states]
    after = int(rng.integers(5, 16))
    limit = 300
    for kind, index in [mutations[int(i)] for i in rng.permutation(len(mutations))]:
        modified, change = _mutate(statements, kind, index, after)
        if hidden_change(source, modified, seed, limit):
            return ChangeTask(seed=seed, modified=modified, change=change, guard=after, step_limit=limit)
    return None


def hidden_change(source: str, modified: str, seed: int, limit: int) -> bool:
    """The second generation's rule: waiting ``limit`` steps shows no difference (the task's seed and the next),
    and the oracle's exploring probe (:func:`oracle_probe`) does show one."""
    noops: list[Action] = [None] * limit
    seeds = WAIT_SEEDS if program_stats(source).stochastic else 1  # without random draws, every seed is the same
    if any(defect_time(source, modified, noops, seed + k) is not None for k in range(seeds)):
        return False
    return defect_time(source, modified, oracle_probe(modified, seed, limit), seed) is not None


def oracle_probe(modified: str, seed: int, limit: int) -> list[Action]:
    """The actions the oracle explores the changed world with (agents.py) until it sees the change."""
    return explore(modified, seed, np.random.default_rng([seed, 6]), limit)


def _statements(source: str) -> list[Any]:
    program = parse(source)[0]
    assert isinstance(program, SList)
    return list(program.items[1:])


def _head(expr: Any) -> str | None:
    if isinstance(expr, SList) and expr.items and isinstance(expr.items[0], Symbol):
        return expr.items[0].name
    return None


def _mutate(statements: list[Any], kind: str, index: int, after: int) -> tuple[str, str]:
    clock = f"(= {GUARD_CLOCK} (initnext 0 (+ (prev {GUARD_CLOCK}) 1)))"
    guard = f"(<= {GUARD_CLOCK} {after})"
    target = statements[index]
    texts = [show(s) for s in statements]
    if kind == "on":
        condition, body = show(target.items[1]), show(target.items[2])
        texts[index] = f"(on (& {guard} {condition}) {body})"
        change = f"after step {after}, the rule (on {condition} ...) no longer has any effect"
    else:
        name = target.items[1].name
        init, following = show(target.items[2].items[1]), show(target.items[2].items[2])
        texts[index] = f"(= {name} (initnext {init} (if {guard} then {following} else (prev {name}))))"
        change = f"after step {after}, {name} stops changing on its own"
    return "(program\n  " + "\n  ".join([clock, *texts]) + ")\n", change


def defect_time(
    source: str, modified: str, actions: Sequence[Action], seed: int, original: list[Grid] | None = None
) -> int | None:
    """The first frame at which the modified program's frames differ from the original's under the same actions
    and seed (None: they never do)."""
    reference = original if original is not None else play(source, actions, seed)
    changed = play(modified, actions, seed)
    for index, (a, b) in enumerate(zip(reference, changed, strict=True)):
        if a != b:
            return index
    return None
