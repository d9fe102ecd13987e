"""The redstone suite (SciCrafter): 25 circuit-building tasks in a simulated Minecraft lab."""

import itertools
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
    UserError,
    make_rng,
)
from discogym.core.running.crosscheck import CACHE_MISMATCH, cache_mismatch
from discogym.core.running.training import parse_training_split, training_tasks
from discogym.suites.redstone import agents, protocols
from discogym.suites.redstone.env import Presentation, RedstoneEnv
from discogym.suites.redstone.self_taught import make_self_taught
from discogym.suites.redstone.tasks import (
    FAMILIES,
    LEVELS,
    TaskSpec,
    packaged_tasks,
    problem_of,
    read_task,
    task_spec,
    training_spec,
)
from discogym.suites.redstone.verdict import recompute

OFFICIAL = "official"
CONDITIONS = (
    Condition(name="baseline", description="the task file only", params=Presentation().model_dump()),
    Condition(
        name="hint",
        description="the task file and its level's hint keyword (e.g. Signal-Strength-Decay)",
        params=Presentation(hint=True).model_dump(),
    ),
    Condition(
        name="scientist",
        description="the task file and ask_scientist: a scientist sub-agent that experiments in its own lab and "
        "keeps a claim-proof-constraints-example knowledge book",
        params=Presentation(scientist=True).model_dump(),
    ),
    Condition(
        name="hint+scientist",
        description="the hint keyword and the scientist (claim-proof-constraints-example book)",
        params=Presentation(hint=True, scientist=True).model_dump(),
    ),
    Condition(
        name="hint+scientist-summary",
        description="as hint+scientist, the book a free summary (the paper's consolidation ablation)",
        params=Presentation(hint=True, scientist=True, book_format="summary").model_dump(),
    ),
    Condition(
        name="hint+scientist-finding",
        description="as hint+scientist, the book in finding-explanation-example entries",
        params=Presentation(hint=True, scientist=True, book_format="finding").model_dump(),
    ),
)


def task_of(spec: TaskSpec, split: str) -> Task:
    """A task file as a Task: the whole file is visible (the agent must know the contract); nothing is hidden."""
    return Task(
        id=spec.task_id,
        suite="redstone",
        split=split,
        brief=spec.task_name,
        params={"spec": spec.model_dump(mode="json", exclude_none=True)},
    )


@cache
def _load(split: str) -> tuple[Task, ...]:
    if split == OFFICIAL:
        specs: list[TaskSpec] = list(packaged_tasks())
    elif split in FAMILIES:
        specs = [spec for spec in packaged_tasks() if spec.family == split]
    else:
        path = Path(split)
        if path.is_dir():
            specs = [read_task(file) for file in sorted(path.glob("*.yaml"))]
        elif path.suffix in (".yaml", ".yml") and path.exists():
            specs = [read_task(path)]
        else:
            raise UserError(
                f"unknown split {split!r}; splits: {OFFICIAL}, {', '.join(FAMILIES)}, a task file (.yaml) or a "
                "folder of them"
            )
    return tuple(task_of(spec, split) for spec in specs)


class RedstoneSuite(Suite):
    """SciCrafter: build redstone circuits that light lamps in timed patterns, in a simulated lab."""

    name = "redstone"
    aliases = ("scicrafter",)
    description = "build redstone circuits that light lamps in timed patterns (SciCrafter)"
    version = "1"  # docs/redstone.md, "Versions"
    # The source document's text starts at its abstract: its full title, authors, year and address are not in it.
    papers = (Paper(key="scicrafter", title="SciCrafter"),)
    scorer_version = "1"  # raised when score() or audit() changes (docs/writing-a-suite.md)

    def splits(self) -> list[str]:
        return [OFFICIAL, *FAMILIES]

    def tasks(self, split: str) -> list[Task]:
        if (training := parse_training_split(split)) is not None:
            return training_tasks(self, *training)
        return list(_load(split))

    def training_source(self, seed: int) -> Iterator[Task]:
        """Tasks of every family with parameters drawn within the paper's levels' ranges (tasks.training_spec)."""
        rng = make_rng("redstone", "training", seed)
        for index in itertools.count():
            spec = training_spec(rng)
            yield task_of(spec.model_copy(update={"task_id": f"train{seed}-{index:06d}-{spec.task_id}"}), "training")

    def problem(self, task: Task) -> Any:
        return problem_of(task_spec(task))

    def conditions(self) -> list[Condition]:
        return list(CONDITIONS)

    def make_env(self, task: Task, condition: Condition, seed: int) -> Env:
        return RedstoneEnv(task_spec(task), Presentation.model_validate(condition.params))

    def curriculum(self, tasks: list[Task]) -> list[list[Task]]:
        """One chain per family, its levels in order (L1 to L5, then generated levels by name)."""
        chains: dict[str, list[Task]] = {}
        for task in tasks:
            chains.setdefault(task_spec(task).family, []).append(task)
        return [sorted(chain, key=_level_order) for _, chain in sorted(chains.items())]

    def carry_forward(self, episode: Episode) -> dict[str, Any]:
        return carried_from(episode)

    def protocols(self) -> list[Protocol]:
        return protocols.protocols()

    def reference_agents(self) -> dict[str, AgentFactory]:
        return {"builder": agents.make_builder, "self-taught": make_self_taught}

    def solver_hints(self, task: Task) -> dict[str, object]:
        return {"spec": task.params["spec"]}

    def score(self, episode: Episode) -> Score:
        return score(episode)

    def tables(self, episodes: list[Episode]) -> list[ReportTable]:
        from discogym.suites.redstone.report import redstone_tables

        return redstone_tables(episodes)

    def web_screens(self) -> dict[str, Path]:
        return {"redstone": Path(__file__).parent / "screens" / "redstone.js"}

    def plots(self, episodes: list[Episode], out_dir: Path) -> list[Path]:
        from discogym.suites.redstone.plots import redstone_plots

        return redstone_plots(episodes, out_dir)


def _level_order(task: Task) -> tuple[int, str]:
    level = task_spec(task).level
    return (LEVELS.index(level) if level in LEVELS else len(LEVELS), level)


EXPERIENCE_CHARS = 2000  # of the engineer's last message carried to the next level


def carried_from(episode: Episode) -> dict[str, Any]:
    """What the next level of a curriculum chain starts from: the knowledge book as this episode left it (or
    as it started, if it ended in an error) and a short note of the experience: what was submitted, the trials
    used and the engineer's last message. Nothing of the evaluator's verdict."""
    env = episode.outcome.env
    before = episode.carried or {}
    book = env.get("book_after", before.get("book"))
    lines = [
        f"Previous level ({episode.key.task}): "
        + (
            f"you submitted a device of {env.get('blocks', 0)} blocks"
            if env.get("submitted")
            else "no device submitted"
        )
        + f"; {env.get('trials', 0)} of your trials and {env.get('scientist_trials', 0)} of the scientist's were used."
    ]
    if episode.outcome.agent_message:
        lines.append(f"Your last note: {episode.outcome.agent_message[:EXPERIENCE_CHARS]}")
    return {"book": book, "experience": "\n".join(lines)} if book is not None else {"experience": "\n".join(lines)}


def score(episode: Episode) -> Score:
    """Success: the device was submitted and passes the checker, both recomputed from the log (the device rebuilt
    from the logged edits, then evaluated); ``outcome.env`` is only cross-checked. Components keep what the
    report needs."""
    spec = task_spec(episode.task)
    presentation = Presentation.model_validate(episode.condition.params)
    verdict = recompute(spec, episode.events, presentation)
    recomputed = verdict.model_dump()
    if "scientist_trials" not in episode.outcome.env and not verdict.scientist_trials:
        del recomputed["scientist_trials"]  # an episode written before the scientist existed
    components: dict[str, Any] = {
        "family": spec.family,
        "level": spec.level,
        "submitted": verdict.submitted,
        "trials": verdict.trials,
        "rebuilds": verdict.rebuilds,
        "edits": verdict.edits,
        "blocks": verdict.blocks,
        "failures": len(verdict.check["failures"]),
        "scientist_trials": verdict.scientist_trials,
        "questions": sum(event.call.tool == "ask_scientist" and event.session is not None for event in episode.events),
        CACHE_MISMATCH: cache_mismatch(recomputed, episode.outcome.env),
    }
    return Score(value=1.0 if verdict.passed else 0.0, success=verdict.passed, components=components)


suite = RedstoneSuite()
