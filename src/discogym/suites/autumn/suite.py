"""The autumn suite (WorldTest / AutumnBench): explore a grid world without reward, then pass a test of one of
three kinds. Tasks: three per environment, frozen in tasks/tasks.json."""

from functools import cache
from pathlib import Path
from typing import Any

from discogym.core.agent import AgentFactory
from discogym.core.env import Env
from discogym.core.episode import Episode, Score
from discogym.core.errors import UserError
from discogym.core.report import ReportTable
from discogym.core.suite import Suite
from discogym.core.task import Condition, Task
from discogym.suites.autumn import agents
from discogym.suites.autumn.catalog import CATALOG, env_info, program_source
from discogym.suites.autumn.challenges import ChangeTask, MfpTask, PlanningTask, cd_score, defect_time
from discogym.suites.autumn.env import Presentation, WorldTestEnv
from discogym.suites.autumn.interpreter import parse_action
from discogym.suites.autumn.metrics import exploration
from discogym.suites.autumn.tasks import KINDS, AutumnTask, packaged_tasks, read_tasks

ALL = "all"
CONDITIONS = (
    Condition(name="text", description="the grid as text, 200 interaction steps", params=Presentation().model_dump()),
    Condition(
        name="framestack",
        description="as text, each action followed by FRAME_RATE - 1 noops, every frame shown",
        params=Presentation(frame_stacking=True).model_dump(),
    ),
)


def task_of(task: AutumnTask, split: str) -> Task:
    """The agent sees the environment's name, description and grid size; the challenge is ground truth."""
    info = env_info(task.env)
    return Task(
        id=task.id,
        suite="autumn",
        split=split,
        brief=f"{task.env}: {info.description}",
        params={"env": task.env, "category": info.category},
        ground_truth={"task": task.model_dump(mode="json")},
    )


@cache
def _load(split: str) -> tuple[Task, ...]:
    if split == ALL:
        tasks = packaged_tasks().tasks
    elif split in KINDS:
        tasks = [t for t in packaged_tasks().tasks if t.kind == split]
    elif split in {info.name for info in CATALOG}:
        tasks = [t for t in packaged_tasks().tasks if t.env == split]
    elif Path(split).suffix == ".json":
        tasks = read_tasks(Path(split)).tasks
    else:
        raise UserError(f"unknown split {split!r}: all, mfp, planning, cd, an environment's name or a task file")
    return tuple(task_of(task, split) for task in tasks)


def autumn_task(task: Task) -> AutumnTask:
    return AutumnTask.model_validate(task.ground_truth["task"])


class AutumnSuite(Suite):
    """WorldTest on our Autumn environments."""

    name = "autumn"
    aliases = ("autumnbench", "worldtest")
    description = "explore a grid world without reward, then pass a test it did not know about (AutumnBench)"

    def splits(self) -> list[str]:
        return [ALL, *KINDS]

    def tasks(self, split: str) -> list[Task]:
        return list(_load(split))

    def conditions(self) -> list[Condition]:
        return list(CONDITIONS)

    def make_env(self, task: Task, condition: Condition, seed: int) -> Env:
        challenge = autumn_task(task)
        info = env_info(challenge.env)
        return WorldTestEnv(
            challenge, program_source(challenge.env), info.description, Presentation.model_validate(condition.params)
        )

    def reference_agents(self) -> dict[str, AgentFactory]:
        return {"oracle": agents.make_oracle}

    def solver_hints(self, task: Task) -> dict[str, object]:
        challenge = autumn_task(task)
        return {"task": challenge.model_dump(mode="json"), "program": program_source(challenge.env)}

    def score(self, episode: Episode) -> Score:
        return score(episode)

    def report(self, episodes: list[Episode]) -> list[ReportTable]:
        from discogym.suites.autumn.report import autumn_tables

        return autumn_tables(episodes)


def score(episode: Episode) -> Score:
    """MFP: the chosen option is the answer. Planning: the goal was reached. Change detection: the spec's formula
    on the chosen frame, with the defect time recomputed from the test's actions."""
    task = autumn_task(episode.task)
    outcome: dict[str, Any] = episode.outcome.env
    challenge = task.challenge
    components: dict[str, Any] = {
        "kind": task.kind,
        "env": task.env,
        **exploration([str(a) for a in outcome.get("interaction_actions", [])]),
    }
    if isinstance(challenge, MfpTask):
        value = float(outcome.get("mfp_choice") == challenge.answer)
    elif isinstance(challenge, PlanningTask):
        value = float(outcome.get("reached_at") is not None)
    else:
        assert isinstance(challenge, ChangeTask)
        actions = [parse_action(a) for a in outcome.get("test_actions", [])]
        defect = defect_time(program_source(task.env), challenge.modified, actions, challenge.seed)
        chosen = outcome.get("chosen_frame")
        value = cd_score(defect, chosen)
        components |= {"defect_frame": defect, "chosen_frame": chosen, "signalled_at": outcome.get("signalled_at")}
    return Score(value=value, success=value == 1.0, components=components)


suite = AutumnSuite()
