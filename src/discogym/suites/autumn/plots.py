"""The autumn suite's report plots, per (condition, agent, model): the mean score by environment and task type
(a heatmap each), and the exploration curves: normalized perplexity over the interaction phase
(:mod:`discogym.suites.autumn.metrics`), the median over episodes with the interquartile band. Episodes that ended
in an error are left out, as in the report's tables."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from discogym.core import Episode
from discogym.core.reporting.plots import PALETTE, Value, by_row, heatmap, panel_grid, save_figures
from discogym.core.reporting.report_tables import mean_score, scored_episodes
from discogym.suites.autumn.env import INTERACTION, Presentation
from discogym.suites.autumn.metrics import WINDOW, perplexity_curve
from discogym.suites.autumn.tasks import KINDS, source_of, task_spec
from discogym.suites.autumn.verdict import WorldTestWalk

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ALL = "all"
SCORES_PLOT = "autumn-scores.png"
EXPLORATION_PLOT = "autumn-exploration.png"
POSITIONS = np.linspace(0.0, 1.0, 51)  # the interaction phase's normalized position, where curves are sampled


def score_grid(members: list[Episode], envs: list[str], kinds: list[str]) -> list[list[Value]]:
    """The mean score of each (environment, task type) cell; None where no episode was played."""

    def cell(env: str, kind: str) -> Value:
        components = [(e, e.score.components) for e in members]
        return mean_score(e for e, c in components if env in (ALL, c.get("env")) and kind in (ALL, c.get("kind")))

    return [[cell(env, kind) for kind in kinds] for env in envs]


def scores_figure(scored: list[Episode]) -> Figure:
    """Mean score by environment (rows) and task type (columns), 0 to 1, one heatmap per row label."""
    envs = [*sorted({str(e.score.components.get("env")) for e in scored}), ALL]
    kinds = [*KINDS, ALL]
    groups = by_row(scored)
    size = (0.7 * len(kinds) + 2.0, 0.3 * len(envs) + 1.1)
    figure, panels = panel_grid(len(groups), 3, size, "autumn: mean score by environment and task type (0 to 1)")
    for axes, (label, members) in zip(panels, groups, strict=True):
        heatmap(axes, score_grid(members, envs, kinds), envs, kinds, (0.0, 1.0), totals=True)
        axes.set_title(f"{label} (n={len(members)})", fontsize=10)
    return figure


def interaction_actions(episode: Episode) -> list[str]:
    """The interaction phase's actions, read from the logged calls as the scorer reads them."""
    challenge = task_spec(episode.task)
    walk = WorldTestWalk(challenge, source_of(challenge), Presentation.model_validate(episode.condition.params))
    for event in episode.events:
        if walk.verdict.phase != INTERACTION:
            break
        walk.apply(event.call)
    return walk.verdict.interaction_actions


def sampled_curve(actions: list[str]) -> np.ndarray | None:
    """The episode's perplexity curve at :data:`POSITIONS` (linear between windows); None without actions."""
    curve = perplexity_curve(actions)
    if not curve:
        return None
    return np.interp(POSITIONS, np.linspace(0.0, 1.0, len(curve)), curve)


def exploration_figure(scored: list[Episode]) -> Figure | None:
    """The median normalized perplexity over the interaction phase per row label, with the band of its middle
    half of episodes; None if no episode took an interaction action."""
    curves = []
    for label, members in by_row(scored):
        found = [c for c in (sampled_curve(interaction_actions(e)) for e in members) if c is not None]
        if found:
            curves.append((label, np.array(found)))
    if not curves:
        return None
    figure, (axes,) = panel_grid(
        1, 1, (8.0, 4.2), "autumn: exploration, normalized perplexity over the interaction phase"
    )
    for index, (label, sampled) in enumerate(curves):
        colour = PALETTE[index % len(PALETTE)]
        low, high = np.percentile(sampled, [25, 75], axis=0)
        axes.fill_between(POSITIONS, low, high, color=colour, alpha=0.2, linewidth=0)
        axes.plot(POSITIONS, np.median(sampled, axis=0), color=colour, label=f"{label} (n={len(sampled)})")
    axes.set_xlim(0.0, 1.0)
    axes.set_ylim(0.0, 1.05)
    axes.set_xlabel(f"position in the interaction phase, 0 (start) to 1 (end); windows of {WINDOW} actions")
    axes.set_ylabel("normalized perplexity, 0 to 1")
    axes.legend(
        loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False, title="median; band: middle half"
    )
    return figure


def autumn_plots(episodes: list[Episode], out_dir: Path) -> list[Path]:
    """Every autumn plot written; none if no episode was scored."""
    scored = scored_episodes(episodes)
    if not scored:
        return []
    return save_figures({SCORES_PLOT: scores_figure(scored), EXPLORATION_PLOT: exploration_figure(scored)}, out_dir)
