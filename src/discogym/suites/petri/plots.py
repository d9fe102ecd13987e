"""petri's report plots: the score by tier with the range of per-pass means, and the failure taxonomy, with a
bar per (condition, agent, model). Episodes that ended in an error are left out, as in the report's tables."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from statistics import fmean
from typing import TYPE_CHECKING

from discogym.core import Episode
from discogym.core.reporting.plots import Value, bar_groups, by_row, panel_grid, save_figures
from discogym.core.reporting.report_tables import mean_score, scored_episodes
from discogym.suites.petri.verdict import SCORE_RANGE

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ALL = "all"
TIERS_PLOT = "petri-tiers.png"
TAXONOMY_PLOT = "petri-taxonomy.png"
AUDIT_GROUPS = (("failures", "failures (episodes with each)"), ("flags", "behaviour flags (episodes with each)"))


def pass_range(members: list[Episode]) -> tuple[float, float] | None:
    """The lowest and highest mean score over the episodes of one pass (repeat); None without episodes."""
    by_pass: dict[int, list[float]] = defaultdict(list)
    for episode in members:
        by_pass[episode.key.repeat].append(float(episode.score.value or 0.0))
    means = [fmean(scores) for scores in by_pass.values()]
    return (min(means), max(means)) if means else None


def _tier(episode: Episode) -> str:
    return str(episode.task.params.get("tier"))


def _series(groups: list[tuple[str, list[Episode]]], values: list[list[Value]]) -> list[tuple[str, list[Value]]]:
    """Each row's label with its episode count, and its values."""
    return [(f"{label} (n={len(members)})", row) for (label, members), row in zip(groups, values, strict=True)]


def _band_size(categories: int, series: int) -> float:
    """Inches of figure height for a panel of horizontal bar groups."""
    return 0.9 + categories * (0.15 * series + 0.15)


def tiers_figure(scored: list[Episode]) -> Figure:
    """Mean score per tier (and over all), with the per-pass range as an interval."""
    tiers = [*sorted({_tier(e) for e in scored}), ALL]
    groups = by_row(scored)
    cells = [[[e for e in members if tier in (ALL, _tier(e))] for tier in tiers] for _, members in groups]
    scale = SCORE_RANGE
    figure, (axes,) = panel_grid(1, 1, (8.0, _band_size(len(tiers), len(groups))), "petri: mean score by tier")
    means = [[mean_score(cell) for cell in row] for row in cells]
    ranges = [[pass_range(cell) for cell in row] for row in cells]
    bar_groups(axes, tiers, _series(groups, means), scale, ranges=ranges)
    axes.set_xlabel(f"mean score, {scale[0]:g} to {scale[1]:g} (interval: lowest to highest per-pass mean)")
    return figure


def audit_names(scored: list[Episode], group: str) -> list[str]:
    """The names under the audit's ``group`` (failures or flags), in the order they first appear."""
    names: dict[str, None] = {}
    for episode in scored:
        names.update(dict.fromkeys(dict(episode.audit.get(group) or {})))
    return list(names)


def _marked(members: list[Episode], group: str, name: str) -> int:
    return sum(bool(dict(e.audit.get(group) or {}).get(name)) for e in members)


def taxonomy_figure(scored: list[Episode]) -> Figure | None:
    """The share of each row's episodes with each failure and each behaviour flag; None if the audits name none."""
    panels = [(group, title, names) for group, title in AUDIT_GROUPS if (names := audit_names(scored, group))]
    if not panels:
        return None
    groups = by_row(scored)
    heights = [_band_size(len(names), len(groups)) for *_, names in panels]
    figure, cells = panel_grid(len(panels), 1, (8.0, max(heights)), "petri: failure taxonomy")
    for axes, (group, title, names) in zip(cells, panels, strict=True):
        counts = [[_marked(members, group, name) for name in names] for _, members in groups]
        shares: list[list[Value]] = [[k / len(m) for k in row] for row, (_, m) in zip(counts, groups, strict=True)]
        texts = [[str(k) for k in row] for row in counts]
        bar_groups(axes, names, _series(groups, shares), (0.0, 1.0), texts=texts)
        axes.set_title(title, loc="left", fontsize=10)
        axes.set_xlabel("share of the row's episodes, 0 to 1 (text: episodes)")
    return figure


def petri_plots(episodes: list[Episode], out_dir: Path) -> list[Path]:
    """Every petri plot written; none if no episode was scored."""
    scored = scored_episodes(episodes)
    if not scored:
        return []
    return save_figures({TIERS_PLOT: tiers_figure(scored), TAXONOMY_PLOT: taxonomy_figure(scored)}, out_dir)
