"""Exploration behaviour (WorldTest's Appendix D) from an episode's interaction-phase actions.

- Unique actions: every distinct click position and each direction count once; the fractions of the unique
  actions that are clicks, arrows, reset and noop.
- Normalized perplexity over a sliding window of :data:`WINDOW` actions: with H the entropy of the window's
  empirical action distribution and K the number of distinct actions in it, NP = (exp(H) - 1) / (K - 1), 0 when
  K = 1. It is 1 when the window's actions are all different or equally frequent, and falls as the actions
  concentrate. Sequences shorter than the window have one window, the whole sequence.
- Its area under the curve over the normalized position (0 to 1, trapezoids; one window: its value) and its
  final value (the last window).

The paper's formulas for NP, the AUC and the window size are not legible in our copy of it; these are the
readings we chose (docs/autumn.md).
"""

import math
from collections import Counter
from collections.abc import Sequence
from itertools import pairwise

WINDOW = 20
CATEGORIES = ("click", "arrow", "reset", "noop")


def category(action: str) -> str:
    """click, arrow, reset or noop."""
    if action.startswith("click"):
        return "click"
    if action in ("up", "down", "left", "right"):
        return "arrow"
    return "reset" if action == "reset" else "noop"


def unique_fractions(actions: Sequence[str]) -> dict[str, float | None]:
    """The fraction of the distinct actions that fall in each category (None without actions)."""
    distinct = set(actions)
    counts = Counter(category(action) for action in distinct)
    return {name: (counts[name] / len(distinct) if distinct else None) for name in CATEGORIES}


def normalized_perplexity(window: Sequence[str]) -> float:
    """(exp(H) - 1) / (K - 1) for the window's empirical distribution; 0 for one distinct action."""
    counts = Counter(window)
    if len(counts) <= 1:
        return 0.0
    total = len(window)
    entropy = -sum(c / total * math.log(c / total) for c in counts.values())
    return (math.exp(entropy) - 1) / (len(counts) - 1)


def perplexity_curve(actions: Sequence[str], window: int = WINDOW) -> list[float]:
    """Normalized perplexity of each window (sliding by one action)."""
    if not actions:
        return []
    if len(actions) <= window:
        return [normalized_perplexity(actions)]
    return [normalized_perplexity(actions[i : i + window]) for i in range(len(actions) - window + 1)]


def curve_auc(curve: Sequence[float]) -> float | None:
    """The area under the curve over positions normalized to [0, 1] (trapezoids)."""
    if not curve:
        return None
    if len(curve) == 1:
        return curve[0]
    step = 1 / (len(curve) - 1)
    return sum((a + b) / 2 * step for a, b in pairwise(curve))


def exploration(actions: Sequence[str], window: int = WINDOW) -> dict[str, float | int | None]:
    """All the exploration measures of one interaction phase."""
    curve = perplexity_curve(actions, window)
    fractions = unique_fractions(actions)
    return {
        "actions": len(actions),
        "unique_actions": len(set(actions)),
        "resets": sum(1 for action in actions if action == "reset"),
        **{f"unique_{name}": value for name, value in fractions.items()},
        "perplexity_auc": curve_auc(curve),
        "perplexity_final": curve[-1] if curve else None,
    }
