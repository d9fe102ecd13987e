"""AutumnBench's published tasks as the suite's tasks: the ``official`` split.

Each cached task (:mod:`discogym.suites.autumn.official_data`) becomes an :class:`AutumnTask` posed as the official
harness poses it, played by our interpreter with the official semantics (seed 0, the official evaluation order and
standard library: :data:`~discogym.suites.autumn.tasks.OFFICIAL_WORLD`):

- masked frame prediction: the published frames (masked cells ``mask``), the actions that made them, the six
  published choices; the answer is ``correct_idx``;
- planning: the goal grid's colours on the cells the mask selects (the harness's ``check_grid_same``);
- change detection: the published wrong program; the change counts from the first frame where the published
  condition holds, and the score is the harness's ``change_reward``.

A task whose program our interpreter cannot run (or whose files do not fit together) is refused with its reason,
which ``discogym autumn data`` lists. The oracle's helpers (a search for the planning goal, probes for the
change's trigger, the MFP realization) are here too.
"""

import heapq
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ValidationError

from discogym.core import UserError
from discogym.suites.autumn.challenges import (
    ChangeTask,
    MfpTask,
    PlanningTask,
    condition_holds,
    explore,
    goal_reached,
    random_actions,
    region,
)
from discogym.suites.autumn.interpreter import Action, Interpreter, action_text, parse_action
from discogym.suites.autumn.official_data import (
    CD,
    KIND_FILES,
    MFP,
    PLANNING,
    WRONG_SUFFIX,
    ChangeAnswer,
    ChangePrompt,
    MfpAnswer,
    MfpPrompt,
    PlanningAnswer,
    PlanningPrompt,
    check_cache,
    colour_name,
    data_dir,
    get_help,
)
from discogym.suites.autumn.sexpr import AutumnError
from discogym.suites.autumn.tasks import OFFICIAL_WORLD, AutumnTask, new_world, task_id, task_numbers

OFFICIAL_SPLIT = "official"
OFFICIAL_SEED = 0  # the harness's default seed (every random draw is 0)
# The harness caps a whole episode at 501 steps (evaluation_controller.run_environment); after its 200-step
# interaction phase (conf/experiment/full_evaluation.yaml) that leaves 301 for the test.
TEST_STEPS = 301
Grid = list[list[str]]


@dataclass(frozen=True)
class Refusal:
    """A published task the suite does not pose, and why."""

    task: str
    env: str
    kind: str
    reason: str


@dataclass(frozen=True)
class OfficialSet:
    """The cached release as tasks: the tasks we pose (sorted by id) and the ones we refuse."""

    tasks: tuple[AutumnTask, ...]
    refused: tuple[Refusal, ...]
    environments: tuple[str, ...]


def official_available(folder: Path | None = None) -> bool:
    """Whether a release is cached."""
    return check_cache(folder) is not None


def load_official(folder: Path | None = None) -> OfficialSet:
    """The cached release's tasks; UserError (one line saying how to get them) when nothing is cached."""
    root = folder or data_dir()
    checked = check_cache(root)
    if checked is None:
        raise UserError(get_help())
    return _load(str(root), tuple(sorted(checked.files.items())))


@cache
def _load(root: str, files: tuple[tuple[str, str], ...]) -> OfficialSet:
    folder = Path(root)
    names = [rel.split("/", 1)[1].removesuffix(".sexp") for rel, _ in files if rel.startswith("programs/")]
    programs = sorted(name for name in names if not name.endswith(WRONG_SUFFIX))
    tasks: list[AutumnTask] = []
    refused: list[Refusal] = []
    for program in programs:
        made, refusals = _env_tasks(folder, program)
        tasks += made
        refused += refusals
    return OfficialSet(tuple(tasks), tuple(refused), tuple(programs))


def _env_tasks(folder: Path, program: str) -> tuple[list[AutumnTask], list[Refusal]]:
    source = (folder / "programs" / f"{program}.sexp").read_text(encoding="utf-8")
    numbers = task_numbers(program, OFFICIAL_SEED)
    problem = _program_problem(source)
    tasks, refused = [], []
    for kind, (ours, prompt_suffix, _) in KIND_FILES.items():
        if not (folder / "prompts" / f"{program}{prompt_suffix}.json").is_file():
            continue
        number = task_id(program, numbers[ours])
        try:
            if problem is not None:
                raise UserError(f"our interpreter cannot run the program: {problem}")
            challenge = BUILDERS[kind](folder, program, source)
        except (UserError, ValidationError) as err:  # a cached file edited since it was checked, too
            refused.append(Refusal(number, program, ours, str(err).splitlines()[0]))
            continue
        tasks.append(AutumnTask(id=number, env=program, challenge=challenge, program=source, semantics="official"))
    return sorted(tasks, key=lambda t: t.id), sorted(refused, key=lambda r: r.task)


def _program_problem(source: str, probe: Sequence[Action] = (None, "left", "down", ("click", 0, 0))) -> str | None:
    """Why our interpreter cannot load or step the program (None: it can)."""
    try:
        world = Interpreter(source, seed=OFFICIAL_SEED, **OFFICIAL_WORLD)
        for action in probe:
            world.step(action)
    except AutumnError as err:
        return err.describe()
    return None


def _grid_size(source: str) -> int:
    return Interpreter(source, seed=OFFICIAL_SEED, **OFFICIAL_WORLD).grid_size


def _read(folder: Path, relative: str, model: type[BaseModel]) -> BaseModel:
    return model.model_validate_json((folder / relative).read_bytes())


def _check_square(grid: list[list[int]], size: int, what: str) -> None:
    if len(grid) != size or any(len(row) != size for row in grid):
        raise UserError(f"{what} is not {size} x {size} (the program's grid)")


def _mfp(folder: Path, program: str, source: str) -> MfpTask:
    prompt = _read(folder, f"prompts/{program}_mfp.json", MfpPrompt)
    answer = _read(folder, f"answers/{program}_mfp.json", MfpAnswer)
    assert isinstance(prompt, MfpPrompt) and isinstance(answer, MfpAnswer)
    size = _grid_size(source)
    for index, observation in enumerate(prompt.observations):
        _check_square(observation.masked_grid, size, f"MFP frame {index}")
    last = prompt.observations[-1].masked_grid
    hidden = [(x, y) for y, row in enumerate(last) for x, c in enumerate(row) if c == 0]
    if not hidden:
        raise UserError("the last MFP frame has no masked cell")
    xs, ys = [x for x, _ in hidden], [y for _, y in hidden]
    box = (min(xs), min(ys), max(xs) - min(xs) + 1, max(ys) - min(ys) + 1)
    options = [[[colour_name(c, "mask") for c in row] for row in choice] for choice in prompt.choices]
    for index, option in enumerate(options):
        if len(option) != box[3] or any(len(row) != box[2] for row in option):
            raise UserError(f"MFP choice {index} is not {box[2]} x {box[3]} (the masked cells' bounding box)")
    actions = []
    for index, observation in enumerate(prompt.observations[1:], start=1):
        if observation.action is None:
            raise UserError(f"MFP frame {index} has no action")
        actions.append(observation.action.text())
    frames = [[[colour_name(c, "mask") for c in row] for row in o.masked_grid] for o in prompt.observations]
    return MfpTask(
        seed=OFFICIAL_SEED, actions=actions, mask=box, options=options, answer=answer.correct_idx, frames=frames
    )


def _planning(folder: Path, program: str, source: str) -> PlanningTask:
    prompt = _read(folder, f"prompts/{program}_planning.json", PlanningPrompt)
    assert isinstance(prompt, PlanningPrompt)
    size = _grid_size(source)
    _check_square(prompt.goal, size, "the planning goal")
    _check_square(prompt.mask, size, "the planning mask")
    goal = [(x, y, colour_name(prompt.goal[y][x])) for y in range(size) for x in range(size) if prompt.mask[y][x]]
    if not goal:
        raise UserError("the planning mask selects no cell")
    answer_path = folder / "answers" / f"{program}_planning.json"
    optimal = None
    if answer_path.is_file():
        answer = PlanningAnswer.model_validate_json(answer_path.read_bytes())
        optimal = answer.optimal_actions_count
    return PlanningTask(seed=OFFICIAL_SEED, goal=goal, solution=[], step_limit=TEST_STEPS, optimal_actions=optimal)


def _change(folder: Path, program: str, source: str) -> ChangeTask:
    prompt = _read(folder, f"prompts/{program}_cd.json", ChangePrompt)
    answer = _read(folder, f"answers/{program}_change_detection.json", ChangeAnswer)
    assert isinstance(prompt, ChangePrompt) and isinstance(answer, ChangeAnswer)
    wrong = (folder / "programs" / f"{program}{WRONG_SUFFIX}.sexp").read_text(encoding="utf-8")
    problem = _program_problem(wrong)
    if problem is not None:
        raise UserError(f"our interpreter cannot run the wrong program: {problem}")
    try:
        Interpreter(wrong, seed=OFFICIAL_SEED, **OFFICIAL_WORLD).evaluate(answer.condition)
    except AutumnError as err:
        raise UserError(f"our interpreter cannot evaluate the condition: {err.describe()}") from None
    return ChangeTask(
        seed=OFFICIAL_SEED,
        modified=wrong,
        change=f"AutumnBench's wrong program for {program}; the change shows when {answer.condition}",
        guard=0,
        step_limit=TEST_STEPS,
        condition=answer.condition,
    )


BUILDERS = {MFP: _mfp, PLANNING: _planning, CD: _change}


# ----------------------------------------------------------------------------------------------------------------
# Scoring


def trigger_frame(task: AutumnTask, actions: Sequence[Action]) -> int | None:
    """The first test frame (0: the start, k: after k actions) at which the changed program's state satisfies the
    task's condition, under ``actions`` (None: it never does)."""
    challenge = task.challenge
    assert isinstance(challenge, ChangeTask) and challenge.condition is not None
    world = new_world(task, challenge.modified)
    for index in range(len(actions) + 1):
        if condition_holds(world, challenge.condition):
            return index
        if index < len(actions):
            with suppress(AutumnError):  # a program error: the frame stays, as in the environment
                world.step(actions[index])
    return None


# ----------------------------------------------------------------------------------------------------------------
# The oracle's helpers


def mfp_answer(task: AutumnTask) -> int:
    """The option our interpreter predicts: the masked content of the first realization (the official semantics,
    then ours, then other seeds) whose frames agree with every unmasked published cell; else the option closest to
    the first one's."""
    challenge = task.challenge
    assert isinstance(challenge, MfpTask) and challenge.frames is not None
    actions = [parse_action(a) for a in challenge.actions]
    runs = [_frames(task, actions, OFFICIAL_WORLD, OFFICIAL_SEED), _frames(task, actions, {}, OFFICIAL_SEED)]
    runs += [_frames(task, actions, OFFICIAL_WORLD, seed) for seed in range(1, 9)]
    for frames in runs:
        if frames is not None and _agrees(frames, challenge.frames):
            truth = region(frames[-1], challenge.mask)
            if truth in challenge.options:
                return challenge.options.index(truth)
    first = next((frames for frames in runs if frames is not None), None)
    if first is None:
        return 0
    truth = region(first[-1], challenge.mask)
    return max(range(len(challenge.options)), key=lambda i: _alike(challenge.options[i], truth))


def _frames(task: AutumnTask, actions: list[Action], options: dict[str, object], seed: int) -> list[Grid] | None:
    try:
        world = Interpreter(task.program or "", seed=seed, **options)  # type: ignore[arg-type]
        return [world.frame] + [world.step(action) for action in actions]
    except AutumnError:
        return None


def _agrees(frames: list[Grid], published: list[Grid]) -> bool:
    return len(frames) == len(published) and all(
        c == "mask" or c == mine for frame, shown in zip(frames, published, strict=True)
        for row, shown_row in zip(frame, shown, strict=True) for mine, c in zip(row, shown_row, strict=True)
    )  # fmt: skip


def _alike(option: Grid, truth: Grid) -> int:
    return sum(a == b for row, other in zip(option, truth, strict=False) for a, b in zip(row, other, strict=False))


def plan_search(task: AutumnTask, budget: int = 3000) -> list[str] | None:
    """Actions that reach the planning goal: best-first over action sequences (fewest wrong goal cells first,
    then fewest actions), frames seen before skipped, at most ``budget`` simulated steps; None if none found."""
    challenge = task.challenge
    assert isinstance(challenge, PlanningTask)
    start = new_world(task)
    if goal_reached(start.frame, challenge.goal):
        return []
    queue: list[tuple[int, int, int, list[Action]]] = [(_wrong(start.frame, challenge.goal), 0, 0, [])]
    seen = {_key(start.frame)}
    counter, spent = 0, 0
    while queue and spent < budget:
        _, _, _, path = heapq.heappop(queue)
        if len(path) >= challenge.step_limit:
            continue
        for action in _candidates(_replay(start, path), challenge.goal):
            child = _replay(start, path)
            spent += len(path) + 1
            try:
                frame = child.step(action)
            except AutumnError:
                continue
            if goal_reached(frame, challenge.goal):
                return [action_text(a) for a in [*path, action]]
            if _key(frame) not in seen:
                seen.add(_key(frame))
                counter += 1
                heapq.heappush(queue, (_wrong(frame, challenge.goal), len(path) + 1, counter, [*path, action]))
    return None


def _replay(world: Interpreter, path: list[Action]) -> Interpreter:
    """``world`` restarted, then stepped through ``path``."""
    world.restart()
    for action in path:
        world.step(action)
    return world


def _key(frame: Grid) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(row) for row in frame)


def _wrong(frame: Grid, goal: Sequence[tuple[int, int, str]]) -> int:
    return sum(not (0 <= y < len(frame) and 0 <= x < len(frame[y]) and frame[y][x] == c) for x, y, c in goal)


def _candidates(world: Interpreter, goal: Sequence[tuple[int, int, str]]) -> list[Action]:
    """The moves, then clicks: on each goal cell that is wrong (at most eight), on the first cell of each colour
    shown, and on one background cell."""
    frame = world.frame
    actions: list[Action] = [None, "left", "right", "up", "down"]
    cells = [(x, y) for x, y, c in goal if 0 <= y < len(frame) and 0 <= x < len(frame[y]) and frame[y][x] != c][:8]
    firsts: dict[str, tuple[int, int]] = {}
    for y, row in enumerate(frame):
        for x, colour in enumerate(row):
            firsts.setdefault(colour, (x, y))
    for x, y in [*cells, *(firsts[c] for c in sorted(firsts))]:
        if ("click", x, y) not in actions:
            actions.append(("click", x, y))
    return actions


def _random(source: str, seed: int, rng: np.random.Generator, count: int) -> list[Action]:
    return random_actions(rng, Interpreter(source, seed=seed).grid_size, count)


def trigger_probe(task: AutumnTask, probes: int = 12) -> list[Action] | None:
    """Actions after whose last one the condition holds (from the first of the seeded probes, exploring and
    random ones in turn, each up to the step limit, that makes it hold), or None."""
    challenge = task.challenge
    assert isinstance(challenge, ChangeTask)
    for probe in range(probes):
        rng = np.random.default_rng([challenge.seed, 21, probe])
        size = new_world(task).grid_size
        try:
            explored = probe % 2 == 0
            actions = (explore if explored else _random)(challenge.modified, challenge.seed, rng, challenge.step_limit)
        except AutumnError:
            actions = random_actions(rng, size, challenge.step_limit)
        found = trigger_frame(task, actions)
        if found is not None:
            return actions[:found]
    return None
