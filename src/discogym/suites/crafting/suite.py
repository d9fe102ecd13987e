"""The crafting suite (Plancraft): the official splits or generated task files, five tool sets, text or
pictures, the planner as reference agent, and Plancraft's metrics."""

from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from discogym.core import AgentFactory, Condition, Env, Episode, Paper, Protocol, ReportTable, Score, Suite, Task
from discogym.core.running.crosscheck import CACHE_MISMATCH, cache_mismatch
from discogym.core.running.training import parse_training_split, training_tasks
from discogym.suites.crafting import agents, data, protocols
from discogym.suites.crafting.env import CraftingEnv, Presentation
from discogym.suites.crafting.recipes import recipe_book
from discogym.suites.crafting.tasks import slots_of, task_of
from discogym.suites.crafting.verdict import recompute

# Tool sets as in the paper: M(ove) S(melt) T(hink) SE(arch) I(mpossible). The first is the default.
TOOL_SETS: dict[str, tuple[str, ...]] = {
    "mst-se-i": ("move", "smelt", "think", "search", "impossible"),
    "ms": ("move", "smelt"),
    "mst": ("move", "smelt", "think"),
    "mst-se": ("move", "smelt", "think", "search"),
    "mst-i": ("move", "smelt", "think", "impossible"),
}
RESOLUTIONS = ("high", "medium", "low")


def _conditions() -> list[Condition]:
    conditions = [
        Condition(
            name=name,
            description=f"tools {', '.join(tools)}; text observations",
            params=Presentation(tools=tools).model_dump(mode="json"),
        )
        for name, tools in TOOL_SETS.items()
    ]
    conditions.append(
        Condition(
            name="wiki",
            description="tools move, smelt, think, search, impossible; search is BM25 over generated recipe pages "
            "(the top 3 pages' text); text observations",
            params=Presentation(retrieval="wiki").model_dump(mode="json"),
        )
    )
    conditions += [
        Condition(
            name=f"image-{resolution}",
            description=f"all tools; the table as a {resolution}-resolution picture, the objective as text",
            params=Presentation(observation="image", resolution=resolution).model_dump(mode="json"),
        )
        for resolution in RESOLUTIONS
    ]
    conditions += [
        Condition(
            name="image+perception" + ("" if resolution == "high" else f"-{resolution}"),
            description=f"all tools; the table as a {resolution}-resolution picture and as the perception module "
            "reads it from the picture (text in Plancraft's format), the objective as text",
            params=Presentation(observation="image+perception", resolution=resolution).model_dump(mode="json"),
        )
        for resolution in RESOLUTIONS
    ]
    return conditions


@cache
def _load_tasks(split: str) -> tuple[Task, ...]:
    if split.endswith(".json"):
        from discogym.suites.crafting.generate import read_task_file

        return tuple(task_of(example, split) for example in read_task_file(Path(split)))
    return tuple(task_of(example, split) for example in data.load_split(split))


class CraftingSuite(Suite):
    """Plancraft: craft a Minecraft item in the crafting GUI, or say it cannot be done."""

    name = "crafting"
    aliases = ("plancraft",)
    description = "craft a Minecraft item through the crafting GUI (Plancraft), or recognise that it is impossible"
    version = "1"  # docs/crafting.md, "Versions"
    papers = (
        Paper(
            key="dagan-plancraft",
            title="Plancraft: an evaluation dataset for planning with LLM agents",
            authors=("Gautier Dagan", "Frank Keller", "Alex Lascarides"),
            url="https://github.com/gautierdag/plancraft",
        ),
    )
    scorer_version = "1"  # raised when score() or audit() changes (docs/writing-a-suite.md)

    def splits(self) -> list[str]:
        return list(data.SPLITS)

    def tasks(self, split: str) -> list[Task]:
        if (training := parse_training_split(split)) is not None:
            return training_tasks(self, *training)
        return list(_load_tasks(split))

    def training_source(self, seed: int) -> Iterator[Task]:
        """Tasks generated as ``discogym crafting generate`` makes them (generate.training_examples)."""
        from discogym.suites.crafting.generate import training_examples

        return (task_of(example, "training") for example in training_examples(seed))

    def problem(self, task: Task) -> Any:
        from discogym.suites.crafting.generate import problem_of

        return problem_of(data.Example.model_validate(task.ground_truth))

    def evaluation_splits(self) -> list[str]:
        return [split for split in data.SPLITS if split != "train"]  # Plancraft's train split is training data

    def task_count(self, split: str) -> int | None:
        if split not in data.SPLITS:  # a generated task file
            return super().task_count(split)
        return data.split_size(split) if data.find_wheel() is not None else None  # never fetches the data

    def conditions(self) -> list[Condition]:
        return _conditions()

    def make_env(self, task: Task, condition: Condition, seed: int) -> Env:
        presentation = Presentation.model_validate(condition.params)
        return CraftingEnv(recipe_book(), str(task.params["target"]), slots_of(task), presentation, seed)

    def protocols(self) -> list[Protocol]:
        return protocols.protocols()

    def reference_agents(self) -> dict[str, AgentFactory]:
        return {
            "planner": agents.make_planner,
            "optimizer": agents.make_optimizer,
            "wiki-planner": agents.make_wiki_planner,
        }

    def solver_hints(self, task: Task) -> dict[str, object]:
        return {"target": task.params["target"], "slots": task.params["slots"]}

    def score(self, episode: Episode) -> Score:
        return score(episode)

    def tables(self, episodes: list[Episode]) -> list[ReportTable]:
        from discogym.suites.crafting.report import crafting_tables

        return crafting_tables(episodes)

    def web_screens(self) -> dict[str, Path]:
        return {"crafting": Path(__file__).parent / "screens" / "crafting.js"}

    def plots(self, episodes: list[Episode], out_dir: Path) -> list[Path]:
        from discogym.suites.crafting.plots import crafting_plots

        return crafting_plots(episodes, out_dir)


def score(episode: Episode) -> Score:
    """Success as in Plancraft (crafted a possible target, or called impossible on an impossible one) and the
    counts the report needs, recomputed by replaying the logged calls on the task's table; ``outcome.env`` is only
    cross-checked (component ``cache_mismatch``)."""
    task = episode.task
    truth = task.ground_truth
    impossible = bool(truth["impossible"])
    target, seed = str(task.params["target"]), episode.provenance.env_seed
    verdict = recompute(recipe_book(), target, slots_of(task), episode.condition, seed, episode.events)
    success = verdict.declared_impossible if impossible else verdict.crafted
    counts = verdict.counts
    components: dict[str, Any] = {
        "impossible": impossible,
        "crafted": verdict.crafted,
        "declared_impossible": verdict.declared_impossible,
        "difficulty": truth["complexity_split"],  # the dataset's: easy = bins 0-1, medium = 2, hard = 3-4
        "recipe_type": truth.get("recipe_type"),
        "steps": verdict.steps,
        "actions": counts.get("move", 0) + counts.get("smelt", 0),
        "planner_actions": None if impossible else planner_actions(task),
        "planner_recipes": truth.get("optimal_path_length"),
        **{f"{name}_count": counts.get(name, 0) for name in ("think", "search", "impossible", "invalid", "no_effect")},
        CACHE_MISMATCH: cache_mismatch(verdict.model_dump(), episode.outcome.env),
    }
    return Score(value=1.0 if success else 0.0, success=success, components=components)


@cache
def _planner_actions(task_json: str) -> int | None:
    from discogym.suites.crafting.planner import make_plan

    task = Task.model_validate_json(task_json)
    plan = make_plan(recipe_book(), str(task.params["target"]), slots_of(task))
    return None if plan is None else len(plan.actions)


def planner_actions(task: Task) -> int | None:
    """How many environment actions the planner's plan for the task takes."""
    return _planner_actions(task.model_dump_json())


suite = CraftingSuite()
