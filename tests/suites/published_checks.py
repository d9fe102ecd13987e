"""Checks every suite's published figures must pass (the file's schema, names, scale and uniqueness), and lookups
the per-suite tests share."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from discogym.core.model.protocol import FigureFile, PublishedFigure
from discogym.core.model.suite import get_suite


def check_figures(
    figures: Sequence[PublishedFigure], *, suite: str, paper: str, protocols: set[str], path: Path
) -> None:
    """Assert what holds for every figure of ``suite``: a known protocol, a condition the suite has (with an optional
    ``@curriculum``), a value on the suite's scale and within its range, no duplicate, the file's paper key."""
    assert figures, "no figures"
    assert FigureFile.model_validate(json.loads(path.read_text(encoding="utf-8"))).paper == paper
    the_suite = get_suite(suite)
    conditions = {c.name for c in the_suite.conditions()}
    lowest, highest = the_suite.score_range
    for f in figures:
        where = f"{f.source.table} / {f.source.row} / {f.source.column}"
        assert f.protocol in protocols, where
        assert f.condition.removesuffix("@curriculum") in conditions, (f.condition, where)
        assert f.printed and f.model and f.source.table and f.source.row and f.source.column, where
        top = 1.0 if f.metric == "success_rate" else highest
        bottom = 0.0 if f.metric == "success_rate" else lowest
        for number in (f.value, f.low, f.high):
            assert number is None or bottom <= number <= top, (number, where)
        assert (f.low is None) == (f.high is None), where
        if f.low is not None and f.high is not None:
            assert f.low <= f.value <= f.high, where
        assert all("/" in i for i in f.model_ids), where
    keys = Counter(
        (f.protocol, f.model, f.condition, f.metric, f.subset, f.source.table, f.source.row, f.source.column)
        for f in figures
    )
    assert [k for k, n in keys.items() if n > 1] == []


def pick(figures: Sequence[PublishedFigure], **match: str) -> PublishedFigure:
    """The one figure whose fields (``table`` for the source's table, ``column`` for its column) are ``match``."""
    found = [f for f in figures if all(_field(f, name) == value for name, value in match.items())]
    assert len(found) == 1, (match, len(found))
    return found[0]


def _field(f: PublishedFigure, name: str) -> str:
    """A figure's field by name; ``table``, ``row`` and ``column`` are its source's."""
    if name in ("table", "row", "column"):
        return str(getattr(f.source, name))
    return str(getattr(f, name))
