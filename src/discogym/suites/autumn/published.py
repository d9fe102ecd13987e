"""The figures the suite's paper published (AutumnBench's Table E.1, with its means), as data:
``published.json`` beside this module, a :class:`discogym.core.model.protocol.FigureFile`."""

from __future__ import annotations

import functools
from pathlib import Path

from discogym.core.model.protocol import PublishedFigure, load_figures

FIGURES_FILE = Path(__file__).with_name("published.json")


@functools.cache
def published_figures() -> tuple[PublishedFigure, ...]:
    """Every published figure of the suite's paper, read once from ``published.json``."""
    return tuple(load_figures(FIGURES_FILE))
