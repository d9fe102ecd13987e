"""The crafting verdict recomputed from an episode's log: replay the table.

A fresh environment is made from the task's starting slots, its condition's tools and the episode's environment
seed (``provenance.env_seed``, which only the ``search`` tool's shuffling uses), and every logged call is made
again in order until the environment ends the episode, so moves, smelts, ``impossible``, refused and unreadable
calls and the step limit count exactly as they did. The replay shows the table as text whatever the condition
(pictures change nothing the verdict reads and are slow to draw). The final table says whether the target was
crafted.
"""

from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from discogym.core import Condition, Event
from discogym.suites.crafting.env import CraftingEnv, Presentation
from discogym.suites.crafting.recipes import RecipeBook
from discogym.suites.crafting.state import Stack


class CraftingVerdict(BaseModel):
    """The fields of the environment's outcome, recomputed from the log."""

    crafted: bool
    declared_impossible: bool
    steps: int
    counts: dict[str, int]


def replay(
    book: RecipeBook, target: str, slots: Mapping[int, Stack], condition: Condition, seed: int, events: Sequence[Event]
) -> CraftingEnv:
    """The environment after the logged calls, replayed from the starting ``slots``."""
    presentation = Presentation.model_validate(condition.params).model_copy(update={"observation": "text"})
    env = CraftingEnv(book, target, slots, presentation, seed)
    for event in events:
        if env.done:
            break
        env.call(event.call.tool, event.call.args)
    return env


def recompute(
    book: RecipeBook, target: str, slots: Mapping[int, Stack], condition: Condition, seed: int, events: Sequence[Event]
) -> CraftingVerdict:
    """Whether the replayed table holds the target, whether the agent declared the task impossible, and the step
    and call counts."""
    return CraftingVerdict.model_validate(replay(book, target, slots, condition, seed, events).outcome())
