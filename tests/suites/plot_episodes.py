"""Made-up scored episodes for the suites' plot tests: a toy episode with another suite's key, task params,
score and audit (the plots read nothing else, except autumn's exploration curves, which read the log)."""

from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from discogym.core import AgentOptions, Episode, Score
from discogym.core.running.episode_loop import play_episode
from discogym.core.running.runner import plan_episode
from tests.core.toy_suite import suite as toy

BASE = play_episode(
    toy, plan_episode("toy", toy.tasks("dev")[0], toy.condition("plain"), AgentOptions(name="bisect"), 0, 0)
)[0]


def made_up(
    suite: str,
    value: float | None,
    components: dict[str, Any],
    *,
    agent: str = "reference",
    model: str | None = None,
    repeat: int = 0,
    params: dict[str, Any] | None = None,
    audit: dict[str, Any] | None = None,
) -> Episode:
    """An episode of ``suite`` scored ``value`` (success when it is 1), condition ``c``."""
    key = BASE.key.model_copy(
        update={"suite": suite, "agent": agent, "model": model, "condition": "c", "repeat": repeat, "agent_options": {}}
    )
    score = Score(value=value, success=None if value is None else value == 1.0, components=components)
    task = BASE.task.model_copy(update={"params": params or {}})
    return BASE.model_copy(update={"key": key, "task": task, "score": score, "audit": audit or {}})


def legend_texts(axes: Axes) -> list[str]:
    """The labels of the legend of ``axes`` (which must have one)."""
    legend = axes.get_legend()
    assert legend is not None
    return [text.get_text() for text in legend.get_texts()]


def panels(figure: Figure | None) -> list[Axes]:
    """The axes of a figure that must have been drawn."""
    assert figure is not None
    return list(figure.axes)
