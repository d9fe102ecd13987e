"""The autumn suite (WorldTest / AutumnBench): explore a grid world without reward, then pass a test of one of
three kinds. Tasks: three per environment, frozen in two set versions: tasks/tasks.json (v1, the first 15
environments) and tasks/tasks-v2.json (v2, the default: challenges that discriminate)."""

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
from discogym.suites.autumn import agents, protocols
from discogym.suites.autumn.catalog import env_info, program_source
from discogym.suites.autumn.challenges import ChangeTask, MfpTask, PlanningTask, cd_score, defect_time
from discogym.suites.autumn.env import TASK_BRIEF, Presentation, WorldTestEnv
from discogym.suites.autumn.interpreter import parse_action
from discogym.suites.autumn.metrics import exploration
from discogym.suites.autumn.tasks import (
    DEFAULT_VERSION,
    KINDS,
    VERSIONS,
    AutumnTask,
    packaged_tasks,
    read_tasks,
    task_spec,
)
from discogym.suites.autumn.verdict import recompute

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
        ground_truth={"task": task.model_dump(mode="json", exclude_none=True), "category": env_info(task.env).category},
    )


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
    frame_rate_play = True  # the paper's GUI runs at the environment's frame rate, with automatic noops
    people_condition = "people"
    human_percentile = 80.0  # the paper's human baseline: the 80th percentile of people's scores per problem

    def splits(self) -> list[str]:
        older = [v for v in VERSIONS if v != DEFAULT_VERSION]
        return [ALL, *KINDS, *older, *(f"{kind}-{v}" for v in older for kind in KINDS)]

    def tasks(self, split: str) -> list[Task]:
        return list(_load(split))

    def conditions(self) -> list[Condition]:
        return list(CONDITIONS)

    def make_env(self, task: Task, condition: Condition, seed: int) -> Env:
        challenge = task_spec(task)
        return WorldTestEnv(challenge, program_source(challenge.env), Presentation.model_validate(condition.params))

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
        return {"task": challenge.model_dump(mode="json", exclude_none=True), "program": program_source(challenge.env)}

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
    (:mod:`discogym.suites.autumn.verdict`); ``outcome.env`` is only cross-checked (component ``cache_mismatch``)."""
    task = task_spec(episode.task)
    source = program_source(task.env)
    verdict = recompute(task, source, Presentation.model_validate(episode.condition.params), episode.events)
    challenge = task.challenge
    components: dict[str, Any] = {
        "kind": task.kind,
        "env": task.env,
        **exploration(verdict.interaction_actions),
    }
    if isinstance(challenge, MfpTask):
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


suite = AutumnSuite()
