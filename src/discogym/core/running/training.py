"""Training tasks, kept apart from the evaluation tasks.

Each suite with a training source (:meth:`Suite.training_source`) makes endless new tasks from a seed with its own
generator. :func:`training_tasks` takes as many as asked and proves each one is no evaluation task: a task whose
*problem* (:meth:`Suite.problem`: what makes it the problem it is, without its id, split or the seed it was drawn
with) has the digest of a task of any of the suite's evaluation sets is left out, counted, and the next one taken.

A training set is the split ``training:SEED:COUNT``: every interface that takes a split (``discogym run --split``,
``gymnasium.make(..., split=...)``, ``discogym export-sft``) plays it, and the same seed and count always give the
same tasks.
"""

import hashlib
import re
from collections.abc import Iterator

import orjson
from pydantic import BaseModel, ConfigDict

from discogym.core.model.errors import UserError
from discogym.core.model.suite import Suite
from discogym.core.model.task import Task
from discogym.core.running.versions import rounded

TRAINING_SPLIT = re.compile(r"training:(\d{1,18}):(\d{1,7})")
MAX_TRAINING_TASKS = 1_000_000
MAX_LEFT_OUT = 1_000  # a source that keeps making evaluation tasks is broken: stop and say so


def training_split(seed: int, count: int) -> str:
    """The split name of ``count`` training tasks made from ``seed``."""
    return f"training:{seed}:{count}"


def parse_training_split(split: str) -> tuple[int, int] | None:
    """``(seed, count)`` of a ``training:SEED:COUNT`` split, None for any other split."""
    found = TRAINING_SPLIT.fullmatch(split)
    if found is None:
        if split.startswith("training:"):
            raise UserError(f"a training split is training:SEED:COUNT (two whole numbers), not {split!r}")
        return None
    seed, count = int(found[1]), int(found[2])
    if not 1 <= count <= MAX_TRAINING_TASKS:
        raise UserError(f"a training split holds 1 to {MAX_TRAINING_TASKS:,} tasks, not {count:,}")
    return seed, count


def problem_digest(suite: Suite, task: Task) -> str:
    """The SHA-256 (hex) of the task's problem as canonical JSON (sorted keys, floats to 12 significant digits)."""
    canonical = orjson.dumps(rounded(suite.problem(task)), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canonical).hexdigest()


class EvaluationSet(BaseModel):
    """One evaluation set the guard compared with: its name and how many tasks it has, or why it could not."""

    model_config = ConfigDict(frozen=True)

    split: str
    tasks: int = 0
    unavailable: str | None = None


class GuardedTasks(BaseModel):
    """Training tasks and what the guard did: the sets compared with and the tasks left out as evaluation tasks."""

    model_config = ConfigDict(frozen=True)

    suite: str
    split: str
    tasks: list[Task]
    compared: list[EvaluationSet]
    left_out: list[str]  # "training id = split/evaluation id"


class EvaluationDigests:
    """The problem digests of every task of a suite's evaluation sets (:meth:`Suite.evaluation_splits`)."""

    def __init__(self, suite: Suite) -> None:
        self.suite = suite
        self.owner: dict[str, str] = {}  # digest -> "split/id" of its first task
        self.compared: list[EvaluationSet] = []
        for split in suite.evaluation_splits():
            try:
                tasks = suite.tasks(split)
            except UserError as err:  # data that is fetched, not packaged, and is not here
                self.compared.append(EvaluationSet(split=split, unavailable=str(err)))
                continue
            self.compared.append(EvaluationSet(split=split, tasks=len(tasks)))
            for task in tasks:
                self.owner.setdefault(problem_digest(suite, task), f"{split}/{task.id}")

    def match(self, task: Task) -> str | None:
        """The evaluation task ``task`` is (``split/id``), or None."""
        return self.owner.get(problem_digest(self.suite, task))


_made: dict[tuple[str, str, int, int], GuardedTasks] = {}


def guarded_training_tasks(suite: Suite, seed: int, count: int) -> GuardedTasks:
    """The first ``count`` tasks of the suite's training source for ``seed`` that are no evaluation task, ids
    unique, each listed in the split ``training:SEED:COUNT`` (made once per process)."""
    key = (suite.name, suite.version, seed, count)
    if key not in _made:
        _made[key] = _guarded(suite, seed, count)
    return _made[key]


def training_tasks(suite: Suite, seed: int, count: int) -> list[Task]:
    """The tasks of :func:`guarded_training_tasks`."""
    return guarded_training_tasks(suite, seed, count).tasks


def _guarded(suite: Suite, seed: int, count: int) -> GuardedTasks:
    split = training_split(seed, count)
    evaluation = EvaluationDigests(suite)
    tasks: list[Task] = []
    ids: set[str] = set()
    left_out: list[str] = []
    source: Iterator[Task] = suite.training_source(seed)
    while len(tasks) < count:
        task = next(source, None)
        if task is None:
            raise UserError(f"{suite.name}'s training source for seed {seed} ran out after {len(tasks)} tasks")
        if task.id in ids:
            raise RuntimeError(f"{suite.name}'s training source made the id {task.id} twice")
        owner = evaluation.match(task)
        if owner is not None:
            left_out.append(f"{task.id} = {owner}")
            if len(left_out) > MAX_LEFT_OUT:
                raise RuntimeError(f"{suite.name}'s training source keeps making evaluation tasks ({left_out[:3]})")
            continue
        ids.add(task.id)
        tasks.append(task.model_copy(update={"split": split}))
    return GuardedTasks(suite=suite.name, split=split, tasks=tasks, compared=evaluation.compared, left_out=left_out)


__all__ = [
    "EvaluationDigests",
    "EvaluationSet",
    "GuardedTasks",
    "guarded_training_tasks",
    "parse_training_split",
    "problem_digest",
    "training_split",
    "training_tasks",
]
