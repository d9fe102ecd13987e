"""Report plots (PNG), drawn with matplotlib when the ``plots`` extra is installed."""

import importlib.util
from collections import defaultdict
from pathlib import Path

import numpy as np

from discogym.core.episode import Episode


def plots_available() -> bool:
    """True when matplotlib can be imported (``pip install 'discogym[plots]'``)."""
    return importlib.util.find_spec("matplotlib") is not None


def score_plot(episodes: list[Episode], path: Path) -> Path | None:
    """Mean score per (suite, condition, agent, model) with standard-error bars; None if nothing is scored."""
    from matplotlib.figure import Figure

    groups: dict[str, list[float]] = defaultdict(list)
    for episode in episodes:
        if episode.score.value is not None:
            key = episode.key
            label = " / ".join(filter(None, [key.suite, key.condition, key.agent_label(), key.model]))
            groups[label].append(episode.score.value)
    if not groups:
        return None
    labels = sorted(groups)
    means = [float(np.mean(groups[label])) for label in labels]
    errors = [
        float(np.std(groups[label], ddof=1) / np.sqrt(len(groups[label]))) if len(groups[label]) > 1 else 0.0
        for label in labels
    ]
    figure = Figure(figsize=(8, 1.2 + 0.45 * len(labels)), layout="constrained")
    axes = figure.add_subplot()
    positions = np.arange(len(labels))
    axes.barh(positions, means, xerr=errors, color="#4c72b0", capsize=3)
    axes.set_yticks(positions, [f"{label} (n={len(groups[label])})" for label in labels])
    axes.invert_yaxis()
    axes.set_xlabel("mean score (bars: standard error)")
    axes.set_title("Scores by suite / condition / agent / model")
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110, metadata={"Software": None})
    return path
