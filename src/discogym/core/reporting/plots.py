"""Report plots (PNG), drawn with matplotlib when the ``plots`` extra is installed."""

from __future__ import annotations

import importlib.util
import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from discogym.core.model.episode import Episode
from discogym.core.model.errors import UserError
from discogym.core.model.suite import get_suite
from discogym.core.reporting.report_tables import group_by, mean_score, standard_error

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

BAR_COLOR = "#4c72b0"


def plots_available() -> bool:
    """True when matplotlib can be imported (``pip install 'discogym[plots]'``)."""
    return importlib.util.find_spec("matplotlib") is not None


def suite_scale(suite: str, scores: list[float]) -> tuple[float, float]:
    """The score axis of one suite: the range it declares (:attr:`Suite.score_range`), or, for a suite this
    installation does not have (a log of someone else's), the range read off the scores (:func:`score_scale`)."""
    try:
        return get_suite(suite).score_range
    except UserError:
        return score_scale(scores)


def score_scale(scores: list[float]) -> tuple[float, float]:
    """A score axis read off the scores, for a suite whose declared range is not at hand: from 0 (or the lowest
    score, if negative) to 1 when every score lies in [0, 1], to 100 when every score lies in [0, 100], otherwise
    to the highest score."""
    low, high = min([0.0, *scores]), max([0.0, *scores])
    return low, next((ceiling for ceiling in (1.0, 100.0) if high <= ceiling), high)


LABEL_WIDTH = 44  # characters of a plot's label on one line (a local model's name runs to 80 and more)
BREAKS = re.compile(r"[^ /@:_-]+[ /@:_-]*|[ /@:_-]+")  # runs of a label, each ending where a line may break


def row_label(episode: Episode) -> str:
    """``condition / agent / model``: one bar, line or panel of a plot, in lines of :data:`LABEL_WIDTH` at most
    (:func:`wrapped`). Plots never merge two of these."""
    key = episode.key
    return wrapped(" / ".join(filter(None, [key.condition, key.agent_label(), key.model])))


def wrapped(label: str, width: int = LABEL_WIDTH) -> str:
    """``label`` in lines of at most ``width`` characters, broken after a space, ``/``, ``@``, ``:``, ``_`` or
    ``-`` (a run longer than a line is cut where the line ends)."""
    lines = [""]
    for run in BREAKS.findall(label):
        while len(lines[-1]) + len(run) > width:
            if lines[-1].strip():
                lines.append("")
                continue
            lines[-1], run = run[:width], run[width:]
            lines.append("")
        lines[-1] += run
    return "\n".join(line.rstrip() for line in lines if line.strip())


def by_row(episodes: Iterable[Episode]) -> list[tuple[str, list[Episode]]]:
    """The episodes grouped by :func:`row_label`, in sorted order."""
    return [(label, members) for (label,), members in group_by(episodes, lambda e: (row_label(e),))]


def _label_bars(
    axes: Axes,
    positions: Sequence[float],
    means: Sequence[float],
    reaches: Sequence[float],
    top: float,
    texts: Sequence[str] | None = None,
) -> None:
    """Each bar's value as text (``texts``, or the mean), past the end of its error bar (``reaches``), or
    inside the bar near the axis' end (so a bar of 0 still reads as 0, not as a missing bar)."""
    texts = texts if texts is not None else [f"{mean:.3g}" for mean in means]
    for position, mean, reach, text in zip(positions, means, reaches, texts, strict=True):
        inside = reach > 0.85 * top
        axes.annotate(
            text,
            (mean if inside else reach, position),
            xytext=(-4 if inside else 4, 0),
            textcoords="offset points",
            ha="right" if inside else "left",
            va="center",
            color="white" if inside else "black",
            fontsize=8,
        )


def _draw_suite(axes: Axes, suite: str, members: list[Episode]) -> None:
    """One suite's panel: a bar per (condition, agent, model) with its standard error, on the suite's scale."""
    rows = by_row(members)
    scores = [[float(e.score.value or 0.0) for e in group] for _, group in rows]
    means = [mean_score(group) or 0.0 for _, group in rows]
    errors = [standard_error(values) or 0.0 for values in scores]
    positions = np.arange(len(rows))
    axes.barh(positions, means, xerr=errors, color=BAR_COLOR, capsize=3)
    axes.set_yticks(positions, [f"{label} (n={len(group)})" for label, group in rows])
    axes.invert_yaxis()
    low, top = suite_scale(suite, [value for values in scores for value in values])
    axes.set_xlim(low, top)
    _label_bars(axes, positions.tolist(), means, [m + e for m, e in zip(means, errors, strict=True)], top)
    axes.set_xlabel(f"mean score on {suite}'s scale, {low:g} to {top:g}")
    axes.set_title(suite, loc="left", fontweight="bold")


def score_figure(episodes: list[Episode]) -> Figure | None:
    """Mean score per (condition, agent, model), one panel per suite, each on its own scale, with
    standard-error bars; None if no episode has a score."""
    from matplotlib.figure import Figure

    panels = group_by((e for e in episodes if e.score.value is not None), lambda e: (e.key.suite,))
    if not panels:
        return None
    # a bar's height grows with its label's lines
    bars = [sum(max(1.0, 0.6 * (label.count("\n") + 1)) for label, _ in by_row(members)) for _, members in panels]
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
    return save_figure(figure, path, dpi=110)


# ------------------------------------------------------------------------------------ helpers for suites' plots

PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c")
Value = float | None


def save_figure(figure: Figure, path: Path, dpi: int = 100) -> Path:
    """Write ``figure`` to ``path`` as PNG (the same figure always gives the same bytes) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=dpi, metadata={"Software": None})
    return path


def save_figures(figures: dict[str, Figure | None], out_dir: Path) -> list[Path]:
    """Write each figure that is not None to ``out_dir`` under its file name; return the paths written."""
    return [save_figure(figure, out_dir / name) for name, figure in figures.items() if figure is not None]


def panel_grid(count: int, columns: int, size: tuple[float, float], title: str) -> tuple[Figure, list[Axes]]:
    """A titled figure of ``count`` panels, ``columns`` to a row, each ``size`` inches; unused cells removed."""
    from matplotlib.figure import Figure

    columns = max(1, min(columns, count))
    rows = math.ceil(count / columns)
    # at least 6.4 inches wide, so that the title fits above a single narrow panel
    figure = Figure(figsize=(max(6.4, size[0] * columns), 0.5 + size[1] * rows), layout="constrained")
    grid = figure.subplots(rows, columns, squeeze=False)
    cells = [axes for row in grid for axes in row]
    for unused in cells[count:]:
        unused.remove()
    figure.suptitle(title)
    return figure, cells[:count]


def bar_groups(
    axes: Axes,
    categories: Sequence[str],
    series: Sequence[tuple[str, Sequence[Value]]],
    scale: tuple[float, float],
    *,
    ranges: Sequence[Sequence[tuple[float, float] | None]] | None = None,
    texts: Sequence[Sequence[str]] | None = None,
) -> None:
    """Horizontal bars: a group per category (top to bottom), in it a bar per series (its label, its value
    per category), coloured by series and named in a legend on the right. ``ranges`` (low, high) per bar draw
    an interval around it; a missing value (None) is no bar and a dash, so 0 and "not run" differ. Each bar
    carries its value (or its ``texts``) as text; the axis spans ``scale``."""
    count = max(1, len(series))
    height = 0.8 / count
    for index, (label, values) in enumerate(series):
        offsets = np.arange(len(categories)) + (index - (count - 1) / 2) * height
        shown = [(i, value) for i, value in enumerate(values) if value is not None]
        spans = [ranges[index][i] if ranges is not None else None for i, _ in shown]
        positions = [float(offsets[i]) for i, _ in shown]
        means = [value for _, value in shown]
        errors = np.array(
            [[mean - span[0], span[1] - mean] if span else [0.0, 0.0] for mean, span in zip(means, spans, strict=True)]
        ).reshape(-1, 2)
        colour = PALETTE[index % len(PALETTE)] if count > 1 else BAR_COLOR
        axes.barh(positions, means, height=height * 0.9, color=colour, label=label,
                  xerr=errors.T if ranges is not None else None, capsize=2)  # fmt: skip
        reaches = [mean + float(error[1]) for mean, error in zip(means, errors, strict=True)]
        shown_texts = [texts[index][i] for i, _ in shown] if texts is not None else None
        _label_bars(axes, positions, means, reaches, scale[1], shown_texts)
        for i, value in enumerate(values):
            if value is None:
                axes.annotate("-", (scale[0], offsets[i]), xytext=(4, 0), textcoords="offset points",
                              va="center", fontsize=8, color="grey")  # fmt: skip
    axes.set_yticks(np.arange(len(categories)), list(categories))
    axes.set_ylim(len(categories) - 0.5, -0.5)
    axes.set_xlim(*scale)
    if series:  # outside, on the right: bars may run to the axis' end
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)


def heatmap(
    axes: Axes,
    values: Sequence[Sequence[Value]],
    rows: Sequence[str],
    columns: Sequence[str],
    scale: tuple[float, float],
    *,
    totals: bool = False,
) -> None:
    """A grid of coloured cells (rows top to bottom, columns left to right) on ``scale``, each with its value
    as text; a missing value (None) is a blank cell with a dash. ``totals``: the last row and column are
    totals, set off by a white line."""
    grid = np.array([[np.nan if v is None else v for v in row] for row in values], dtype=float).reshape(
        len(rows), len(columns)
    )
    axes.imshow(np.ma.masked_invalid(grid), cmap="viridis", vmin=scale[0], vmax=scale[1], aspect="auto")
    axes.set_facecolor("#eeeeee")
    axes.set_xticks(np.arange(len(columns)), list(columns))
    axes.set_yticks(np.arange(len(rows)), list(rows))
    axes.tick_params(length=0)
    middle = (scale[0] + scale[1]) / 2
    for (row, column), value in np.ndenumerate(grid):
        missing = bool(np.isnan(value))
        colour = "grey" if missing else "black" if value > middle else "white"
        axes.text(column, row, "-" if missing else f"{value:.3g}", ha="center", va="center", fontsize=9, color=colour)
    if totals:
        axes.axhline(len(rows) - 1.5, color="white", linewidth=3)
        axes.axvline(len(columns) - 1.5, color="white", linewidth=3)
