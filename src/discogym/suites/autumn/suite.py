"""The autumn suite (WorldTest / AutumnBench): explore a grid world without reward, then pass a test of one of
three kinds. Tasks: three per environment, frozen in two set versions: tasks/tasks.json (v1, the first 15
environments) and tasks/tasks-v2.json (v2, the default: challenges that discriminate)."""

from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from discogym.core import (
    AgentFactory,
    Condition,
    Env,
    Episode,
    Paper,
    Protocol,
    ReportTable,
    Score,
    Suite,
    Task,
    ToolCall,
    UserError,
)
from discogym.core.running.crosscheck import CACHE_MISMATCH, cache_mismatch
from discogym.core.running.training import parse_training_split, training_tasks
from discogym.suites.autumn import agents, protocols
from discogym.suites.autumn import tasks as tasks_module
from discogym.suites.autumn.catalog import env_info
from discogym.suites.autumn.challenges import (
    ChangeTask,
    MfpTask,
    PlanningTask,
    cd_score,
    defect_time,
    official_change_reward,
)
from discogym.suites.autumn.env import TASK_BRIEF, Presentation, WorldTestEnv
from discogym.suites.autumn.interpreter import parse_action
from discogym.suites.autumn.metrics import exploration
from discogym.suites.autumn.official import OFFICIAL_SPLIT, load_official, official_available, trigger_frame
from discogym.suites.autumn.tasks import (
    DEFAULT_VERSION,
    KINDS,
    VERSIONS,
    AutumnTask,
    packaged_tasks,
    read_tasks,
    source_of,
    task_spec,
)
from discogym.suites.autumn.verdict import AutumnVerdict, recompute

ALL = "all"
EXPLORE_CYCLE = ("up", "right", "down", "left", "noop")  # a model's exploration, as a cost estimate plays it
# The paper puts no limit on people's exploration; the environment's 2,000 calls must leave room for the test.
PEOPLE_INTERACTION_STEPS = 1500
CONDITIONS = (
    Condition(name="text", description="the grid as text, 200 interaction steps", params=Presentation().model_dump()),
    Condition(
        name="framestack",
        description="as text, each action followed by FRAME_RATE - 1 noops, every frame shown",
        params=Presentation(frame_stacking=True).model_dump(),
    ),
    Condition(
        name="people",
        description="for people in the web app: 1,500 interaction steps (about 3 minutes at 8 frames a second)",
        params=Presentation(interaction_steps=PEOPLE_INTERACTION_STEPS).model_dump(),
    ),
)


def task_of(task: AutumnTask, split: str) -> Task:
    """The agent sees the task's id (the environment and a number) and a brief that names neither the rules nor
    the test; the challenge (its kind included) and the environment's category are ground truth."""
    return Task(
        id=task.id,
        suite="autumn",
        split=split,
        brief=TASK_BRIEF,
        params={"env": task.env},
        ground_truth={"task": task.model_dump(mode="json", exclude_none=True), "category": _category(task)},
    )


def _category(task: AutumnTask) -> str:
    """The catalogue's category; AutumnBench's published environments have none here ("official")."""
    return OFFICIAL_SPLIT if task.semantics == "official" else env_info(task.env).category


@cache
def _load(split: str) -> tuple[Task, ...]:
    if Path(split).suffix == ".json":
        return tuple(task_of(task, split) for task in read_tasks(Path(split)).tasks)
    chosen, version = parse_split(split)
    tasks = packaged_tasks(version).tasks
    if chosen in KINDS:
        tasks = [t for t in tasks if t.kind == chosen]
    elif chosen != ALL:
        tasks = [t for t in tasks if t.env == chosen]
    return tuple(task_of(task, split) for task in tasks)


def parse_split(split: str) -> tuple[str, str]:
    """A split's selection (all, a kind or an environment) and set version: ``NAME`` picks from the default set
    (the newest), ``NAME-v1`` or ``NAME-v2`` from that version, ``v1`` or ``v2`` alone is all of it."""
    if split in VERSIONS:
        return ALL, split
    name, _, version = split.rpartition("-")
    if not name or version not in VERSIONS:
        name, version = split, DEFAULT_VERSION
    envs = {t.env for t in packaged_tasks(version).tasks}
    if name != ALL and name not in KINDS and name not in envs:
        raise UserError(
            f"unknown split {split!r}: all, mfp, planning, cd or an environment's name of the set, optionally "
            f"followed by a set version ({', '.join(f'-{v}' for v in VERSIONS)}; default {DEFAULT_VERSION}), "
            "a version alone, or a task file (.json)"
        )
    return name, version


class AutumnSuite(Suite):
    """WorldTest on our Autumn environments."""

    name = "autumn"
    aliases = ("autumnbench", "worldtest")
    description = "explore a grid world without reward, then pass a test it did not know about (AutumnBench)"
    version = "2"  # docs/autumn.md, "Versions"
    # The source document names no authors, year or address.
    papers = (Paper(key="worldtest-autumnbench", title="Benchmarking World-Model Learning (WorldTest, AutumnBench)"),)
    scorer_version = "1"  # raised when score() or audit() changes (docs/writing-a-suite.md)
    # Our own sets score 0-1; AutumnBench's published tasks (--split official) are scored as its harness rewards
    # them, -1 for a wrong masked-frame choice or a change flagged before it happened (docs/autumn-official.md).
    score_range = (-1.0, 1.0)
    frame_rate_play = True  # the paper's GUI runs at the environment's frame rate, with automatic noops
    people_condition = "people"
    human_percentile = 80.0  # the paper's human baseline: the 80th percentile of people's scores per problem

    def splits(self) -> list[str]:
        older = [v for v in VERSIONS if v != DEFAULT_VERSION]
        return [ALL, *KINDS, *older, *(f"{kind}-{v}" for v in older for kind in KINDS), OFFICIAL_SPLIT]

    def tasks(self, split: str) -> list[Task]:
        if (training := parse_training_split(split)) is not None:
            return training_tasks(self, *training)
        if split == OFFICIAL_SPLIT:  # AutumnBench's published tasks, from the user cache (never packaged)
            return [task_of(task, split) for task in load_official().tasks]
        return list(_load(split))

    def training_source(self, seed: int) -> Iterator[Task]:
        """Challenges of every kind in the catalogue's environments, from seeds above the packaged sets'
        (tasks.training_tasks)."""
        return (task_of(task, "training") for task in tasks_module.training_tasks(seed))

    def problem(self, task: Task) -> Any:
        return tasks_module.problem_of(task_spec(task))

    def task_count(self, split: str) -> int | None:
        """The official split's size when it is cached (None when not); the packaged sets' sizes."""
        if split == OFFICIAL_SPLIT:
            return len(load_official().tasks) if official_available() else None
        return super().task_count(split)

    def conditions(self) -> list[Condition]:
        return list(CONDITIONS)

    def make_env(self, task: Task, condition: Condition, seed: int) -> Env:
        challenge = task_spec(task)
        return WorldTestEnv(challenge, source_of(challenge), Presentation.model_validate(condition.params))

    def protocols(self) -> list[Protocol]:
        return protocols.protocols()

    def reference_agents(self) -> dict[str, AgentFactory]:
        return {"oracle": agents.make_oracle}

    def model_calls(
        self, task: Task, condition: Condition, reference: list[ToolCall], *, high: bool = False
    ) -> tuple[list[ToolCall], str]:
        """The interaction phase to the condition's step cap (a cycle of moves and noop), then the oracle's test
        calls: AutumnBench's agents explore until the cap ends the phase, while the oracle goes to the test at once.
        The cap bounds the exploration, so ``high`` changes nothing here."""
        cap = Presentation.model_validate(condition.params).interaction_steps
        exploring = [ToolCall(tool="act", args={"action": EXPLORE_CYCLE[i % len(EXPLORE_CYCLE)]}) for i in range(cap)]
        test = [call for call in reference if call.tool != "go_to_test"]
        return exploring + test, f"{cap} exploration acts (the condition's step cap), then the oracle's test calls"

    def solver_hints(self, task: Task) -> dict[str, object]:
        challenge = task_spec(task)
        return {"task": challenge.model_dump(mode="json", exclude_none=True), "program": source_of(challenge)}

    def score(self, episode: Episode) -> Score:
        return score(episode)

    def tables(self, episodes: list[Episode]) -> list[ReportTable]:
        from discogym.suites.autumn.report import autumn_tables

        return autumn_tables(episodes)

    def web_screens(self) -> dict[str, Path]:
        return {"grid": Path(__file__).parent / "screens" / "grid.js"}

    def plots(self, episodes: list[Episode], out_dir: Path) -> list[Path]:
        from discogym.suites.autumn.plots import autumn_plots

        return autumn_plots(episodes, out_dir)


def score(episode: Episode) -> Score:
    """MFP: the chosen option is the answer. Planning: the goal was reached. Change detection: the spec's formula
    on the chosen frame, with the defect time recomputed from the test's actions. All read from the logged calls
    (:mod:`discogym.suites.autumn.verdict`); ``outcome.env`` is only cross-checked (component ``cache_mismatch``).
    AutumnBench's published tasks (the official split) score as the official harness rewards them
    (:func:`official_value`)."""
    task = task_spec(episode.task)
    source = source_of(task)
    verdict = recompute(task, source, Presentation.model_validate(episode.condition.params), episode.events)
    challenge = task.challenge
    components: dict[str, Any] = {
        "kind": task.kind,
        "env": task.env,
        **exploration(verdict.interaction_actions),
    }
    if task.semantics == "official":
        value, official = official_value(task, verdict)
        components |= official
    elif isinstance(challenge, MfpTask):
        value = float(verdict.mfp_choice == challenge.answer)
    elif isinstance(challenge, PlanningTask):
        value = float(verdict.reached_at is not None)
    else:
        assert isinstance(challenge, ChangeTask)
        actions = [parse_action(a) for a in verdict.test_actions]
        defect = defect_time(source, challenge.modified, actions, challenge.seed)
        chosen = verdict.chosen_frame
        value = cd_score(defect, chosen)
        components |= {"defect_frame": defect, "chosen_frame": chosen, "signalled_at": verdict.signalled_at}
    components[CACHE_MISMATCH] = cache_mismatch(verdict.model_dump(), episode.outcome.env)
    return Score(value=value, success=value == 1.0, components=components)


def official_value(task: AutumnTask, verdict: AutumnVerdict) -> tuple[float, dict[str, Any]]:
    """The official harness's reward: MFP 1 for the right choice, -1 for a wrong one (0 for none); planning 1 when
    the goal was reached; change detection its change_reward on the chosen frame, the trigger frame recomputed
    from the test's actions (:func:`~discogym.suites.autumn.official.trigger_frame`)."""
    challenge = task.challenge
    if isinstance(challenge, MfpTask):
        choice = verdict.mfp_choice
        return (0.0 if choice is None else 1.0 if choice == challenge.answer else -1.0), {"mfp_choice": choice}
    if isinstance(challenge, PlanningTask):
        return float(verdict.reached_at is not None), {"reached_at": verdict.reached_at}
    actions = [parse_action(a) for a in verdict.test_actions]
    trigger = trigger_frame(task, actions)
    chosen = verdict.chosen_frame
    parts = {"trigger_frame": trigger, "chosen_frame": chosen, "signalled_at": verdict.signalled_at}
    return official_change_reward(trigger, chosen), parts


suite = AutumnSuite()
