"""Report plots (PNG), drawn with matplotlib when the ``plots`` extra is installed."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from discogym.core.episode import Episode
from discogym.core.report_tables import group_by, mean_score, standard_error

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

BAR_COLOR = "#4c72b0"


def plots_available() -> bool:
    """True when matplotlib can be imported (``pip install 'discogym[plots]'``)."""
    return importlib.util.find_spec("matplotlib") is not None


def score_scale(scores: list[float]) -> tuple[float, float]:
    """The score axis of one suite: from 0 (or the lowest score, if negative) to 1 when every score lies in
    [0, 1], to 100 when every score lies in [0, 100], otherwise to the highest score.

    Suites do not declare their scale, so it is read off the scores: 0-1 suites (success, fractions) and
    0-100 suites (petri's points) each get their whole scale on the axis, and no bar runs off it."""
    low, high = min([0.0, *scores]), max([0.0, *scores])
    return low, next((ceiling for ceiling in (1.0, 100.0) if high <= ceiling), high)


def _row_label(episode: Episode) -> str:
    key = episode.key
    return " / ".join(filter(None, [key.condition, key.agent_label(), key.model]))


def _label_bars(axes: Axes, means: list[float], errors: list[float], top: float) -> None:
    """Each bar's mean as text, past its error bar, or inside the bar near the axis' end (so a bar of 0 still
    reads as 0, not as a missing bar)."""
    for position, (mean, error) in enumerate(zip(means, errors, strict=True)):
        inside = mean + error > 0.85 * top
        axes.annotate(
            f"{mean:.3g}",
            (mean if inside else mean + error, position),
            xytext=(-4 if inside else 4, 0),
            textcoords="offset points",
            ha="right" if inside else "left",
            va="center",
            color="white" if inside else "black",
            fontsize=8,
        )


def _draw_suite(axes: Axes, suite: str, members: list[Episode]) -> None:
    """One suite's panel: a bar per (condition, agent, model) with its standard error, on the suite's scale."""
    rows = group_by(members, lambda e: (_row_label(e),))
    scores = [[float(e.score.value or 0.0) for e in group] for _, group in rows]
    means = [mean_score(group) or 0.0 for _, group in rows]
    errors = [standard_error(values) or 0.0 for values in scores]
    positions = np.arange(len(rows))
    axes.barh(positions, means, xerr=errors, color=BAR_COLOR, capsize=3)
    axes.set_yticks(positions, [f"{label} (n={len(group)})" for (label,), group in rows])
    axes.invert_yaxis()
    low, top = score_scale([value for values in scores for value in values])
    axes.set_xlim(low, top)
    _label_bars(axes, means, errors, top)
    axes.set_xlabel(f"mean score on {suite}'s scale, {low:g} to {top:g}")
    axes.set_title(suite, loc="left", fontweight="bold")


def score_figure(episodes: list[Episode]) -> Figure | None:
    """Mean score per (condition, agent, model), one panel per suite, each on its own scale, with
    standard-error bars; None if no episode has a score."""
    from matplotlib.figure import Figure

    panels = group_by((e for e in episodes if e.score.value is not None), lambda e: (e.key.suite,))
    if not panels:
        return None
    bars = [len({_row_label(e) for e in members}) for _, members in panels]
    figure = Figure(figsize=(8, 0.6 + sum(0.9 + 0.4 * count for count in bars)), layout="constrained")
    grid = figure.subplots(len(panels), 1, squeeze=False, gridspec_kw={"height_ratios": [1.5 + n for n in bars]})
    for axes, ((suite,), members) in zip(grid[:, 0], panels, strict=True):
        _draw_suite(axes, suite, members)
    figure.suptitle("Mean score by suite (bars: standard error; each suite on its own scale)")
    return figure


def score_plot(episodes: list[Episode], path: Path) -> Path | None:
    """Write :func:`score_figure` to ``path`` as PNG and return the path; None (and no file) if nothing is
    scored."""
    figure = score_figure(episodes)
    if figure is None:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110, metadata={"Software": None})
    return path
