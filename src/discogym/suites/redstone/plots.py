"""The redstone suite's report plot: success by family and level, one heatmap per (condition, agent, model).

Every panel has the same rows (the families played, then ``all``) and columns (L1-L5, ``other`` for generated
levels if any was played, then ``all``), so panels compare cell by cell. Episodes that ended in an error are left
out, as in the report's tables."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from discogym.core import Episode
from discogym.core.reporting.plots import Value, by_row, heatmap, panel_grid, save_figures
from discogym.core.reporting.report_tables import scored_episodes, success_rate
from discogym.suites.redstone.tasks import FAMILIES, LEVELS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

OTHER, ALL = "other", "all"
SUCCESS_PLOT = "redstone-success.png"


def _level(episode: Episode) -> str:
    level = episode.score.components.get("level")
    return level if level in LEVELS else OTHER


def grid_axes(scored: list[Episode]) -> tuple[list[str], list[str]]:
    """The heatmaps' rows (families played, then ``all``) and columns (levels, ``other`` if played, ``all``)."""
    families = {e.score.components.get("family") for e in scored}
    levels = [*LEVELS, OTHER] if any(_level(e) == OTHER for e in scored) else list(LEVELS)
    return [f for f in FAMILIES if f in families] + [ALL], [*levels, ALL]


def success_grid(members: list[Episode], rows: list[str], columns: list[str]) -> list[list[Value]]:
    """The success rate of each (family, level) cell of ``members``; None where no episode was played."""

    def cell(family: str, level: str) -> Value:
        return success_rate(
            e for e in members if family in (ALL, e.score.components.get("family")) and level in (ALL, _level(e))
        )

    return [[cell(family, level) for level in columns] for family in rows]


def success_figure(scored: list[Episode]) -> Figure:
    """The success heatmaps of the scored episodes, a panel per row label."""
    rows, columns = grid_axes(scored)
    groups = by_row(scored)
    figure, panels = panel_grid(
        len(groups), 2, (0.55 * len(columns) + 1.6, 0.42 * len(rows) + 1.1),
        "redstone: success rate by family and level (0 to 1)",
    )  # fmt: skip
    for axes, (label, members) in zip(panels, groups, strict=True):
        heatmap(axes, success_grid(members, rows, columns), rows, columns, (0.0, 1.0), totals=True)
        axes.set_title(f"{label} (n={len(members)})", fontsize=10)
    return figure


def redstone_plots(episodes: list[Episode], out_dir: Path) -> list[Path]:
    """Every redstone plot written to ``out_dir``; none if no episode was scored."""
    scored = scored_episodes(episodes)
    return save_figures({SUCCESS_PLOT: success_figure(scored)}, out_dir) if scored else []
