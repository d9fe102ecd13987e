"""The crafting suite's report plots, with a bar, or a set of points, per (condition, agent, model): success by
difficulty and by recipe type, and each solved task's plan length against the planner's. Episodes that ended in
an error are left out, as in the report's tables."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from discogym.core import Episode
from discogym.core.reporting.plots import PALETTE, Value, bar_groups, by_row, panel_grid, save_figures
from discogym.core.reporting.report_tables import component_value, scored_episodes, success_rate
from discogym.suites.crafting.report import DIFFICULTIES, RECIPE_TYPES

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ALL = "all"
SUCCESS_PLOT = "crafting-success.png"
PLAN_PLOT = "crafting-plan-length.png"
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def _rates(members: list[Episode], component: str, names: tuple[str, ...]) -> list[Value]:
    """The success rate of each bin of ``component`` (None for an empty bin), then over all of ``members``."""
    bins = [success_rate(e for e in members if e.score.components.get(component) == name) for name in names]
    return [*bins, success_rate(members)]


def success_figure(scored: list[Episode]) -> Figure:
    """Success rate by difficulty and by recipe type (possible tasks only), 0 to 1."""
    groups = by_row(scored)
    panels = [
        ("difficulty", DIFFICULTIES, "by difficulty", groups),
        ("recipe_type", RECIPE_TYPES, "by recipe type (possible tasks)", [(k, _possible(m)) for k, m in groups]),
    ]
    figure, cells = panel_grid(2, 1, (8.0, 1.0 + 5 * (0.15 * len(groups) + 0.15)), "crafting: success rate")
    for axes, (component, names, title, rows) in zip(cells, panels, strict=True):
        series = [(f"{label} (n={len(m)})", _rates(m, component, names)) for label, m in rows]
        bar_groups(axes, [*names, ALL], series, (0.0, 1.0))
        axes.set_title(title, loc="left", fontsize=10)
        axes.set_xlabel("success rate, 0 to 1")
    return figure


def _possible(scored: list[Episode]) -> list[Episode]:
    return [e for e in scored if not e.score.components.get("impossible")]


def solved_with_plan(scored: list[Episode]) -> list[Episode]:
    """Successful episodes on possible tasks with the planner's length to compare against."""
    return [e for e in _possible(scored) if e.score.success and component_value(e, "planner_actions") is not None]


def plan_points(members: list[Episode]) -> Counter[tuple[int, int]]:
    """How many episodes took each (planner actions, agent actions)."""
    return Counter(
        (int(component_value(e, "planner_actions", 0.0)), int(component_value(e, "actions", 0.0))) for e in members
    )


def plan_figure(scored: list[Episode]) -> Figure | None:
    """The agent's actions against the planner's on each solved possible task, a point per (planner, agent)
    length sized by its episodes; None if no episode solved a possible task."""
    groups = by_row(solved_with_plan(scored))
    if not groups:
        return None
    figure, (axes,) = panel_grid(1, 1, (7.5, 5.0), "crafting: plan length against the planner's (solved tasks)")
    top = 1
    for index, (label, members) in enumerate(groups):
        points = sorted(plan_points(members).items())
        xs, ys, sizes = ([p[0][0] for p in points], [p[0][1] for p in points], [p[1] for p in points])
        top = max(top, *xs, *ys)
        axes.scatter(
            xs,
            ys,
            s=[10 + 20 * math.sqrt(n) for n in sizes],
            facecolors="none",
            label=f"{label} (n={len(members)})",
            marker=MARKERS[index % len(MARKERS)],
            edgecolors=PALETTE[index % len(PALETTE)],
        )
    axes.plot([0, top + 1], [0, top + 1], color="grey", linewidth=1, linestyle="--", label="as long as the planner")
    axes.set_xlim(0, top + 1)
    axes.set_ylim(0, top + 1)
    axes.set_xlabel("planner's actions (move and smelt)")
    axes.set_ylabel("agent's actions (move and smelt)")
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False, title="point size: episodes")
    return figure


def crafting_plots(episodes: list[Episode], out_dir: Path) -> list[Path]:
    """Every crafting plot written; none if no episode was scored."""
    scored = scored_episodes(episodes)
    if not scored:
        return []
    return save_figures({SUCCESS_PLOT: success_figure(scored), PLAN_PLOT: plan_figure(scored)}, out_dir)
