"""Redstone's report plot: a success heatmap by family and level per (condition, agent, model)."""

import pytest

pytest.importorskip("matplotlib")

from matplotlib.image import imread

from discogym.core.reporting.report_tables import scored_episodes
from discogym.suites.redstone.plots import SUCCESS_PLOT, grid_axes, success_figure, success_grid
from discogym.suites.redstone.suite import suite
from tests.suites.plot_episodes import made_up


def episode(model: str, family: str, level: str, value: float | None):
    return made_up("redstone", value, {"family": family, "level": level}, model=model)


EPISODES = [
    episode("m1", "A", "L1", 1.0),
    episode("m1", "A", "L2", 0.0),
    episode("m1", "C", "L1", 1.0),
    episode("m2", "A", "L1", 0.0),
    episode("m2", "C", "L5", None),  # not scored: left out
]


def test_the_grid_has_the_played_families_and_every_level():
    rows, columns = grid_axes([e for e in EPISODES if e.score.value is not None])
    assert rows == ["A", "C", "all"]
    assert columns == ["L1", "L2", "L3", "L4", "L5", "all"]
    assert success_grid(EPISODES[:3], rows, columns) == [
        [1.0, 0.0, None, None, None, 0.5],
        [1.0, None, None, None, None, 1.0],
        [1.0, 0.0, None, None, None, 2 / 3],
    ]


def test_one_png_with_a_panel_per_model_and_value_labels(tmp_path):
    assert suite.plots(EPISODES, tmp_path) == [tmp_path / SUCCESS_PLOT]
    assert imread(tmp_path / SUCCESS_PLOT).shape[1] >= 600  # pixels wide
    first, second = success_figure(scored_episodes(EPISODES)).axes
    assert [first.get_title(), second.get_title()] == ["c / reference / m1 (n=3)", "c / reference / m2 (n=1)"]
    assert [t.get_text() for t in first.get_yticklabels()] == ["A", "C", "all"]
    assert [t.get_text() for t in first.get_xticklabels()] == ["L1", "L2", "L3", "L4", "L5", "all"]
    assert [t.get_text() for t in first.texts[:6]] == ["1", "0", "-", "-", "-", "0.5"]
    assert [t.get_text() for t in second.texts[:6]] == ["0", "-", "-", "-", "-", "0"]


def test_nothing_is_drawn_without_a_scored_episode(tmp_path):
    assert suite.plots([EPISODES[-1]], tmp_path / "plots") == []
    assert not (tmp_path / "plots").exists()
