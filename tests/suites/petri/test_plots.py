"""petri's report plots: score by tier with per-pass ranges, and the failure taxonomy, per agent and model."""

import pytest

pytest.importorskip("matplotlib")

from discogym.core.reporting.report_tables import scored_episodes
from discogym.suites.petri.plots import TAXONOMY_PLOT, TIERS_PLOT, pass_range, taxonomy_figure, tiers_figure
from discogym.suites.petri.suite import suite
from tests.suites.plot_episodes import legend_texts, made_up, panels


def episode(model: str, tier: str, value: float, repeat: int = 0, wrong: bool = False):
    audit = {"failures": {"wrong_parameter": wrong}, "flags": {"p_hacking": False}}
    return made_up("petri", value, {"calls": 3}, model=model, repeat=repeat, params={"tier": tier}, audit=audit)


EPISODES = [
    episode("m1", "L1", 90.0),
    episode("m1", "L1", 70.0, repeat=1),
    episode("m1", "L2", 20.0, wrong=True),
    episode("m2", "L1", 10.0, wrong=True),
]


def test_the_per_pass_range_is_the_lowest_and_highest_pass_mean():
    assert pass_range(EPISODES[:3]) == (55.0, 70.0)  # pass 0: 90 and 20; pass 1: 70
    assert pass_range([]) is None


def test_tiers_keep_models_apart_on_the_0_to_100_scale(tmp_path):
    assert suite.plots(EPISODES, tmp_path) == [tmp_path / TIERS_PLOT, tmp_path / TAXONOMY_PLOT]
    assert all(path.stat().st_size > 0 for path in tmp_path.iterdir())
    (axes,) = tiers_figure(scored_episodes(EPISODES)).axes
    assert [t.get_text() for t in axes.get_yticklabels()] == ["L1", "L2", "all"]
    assert axes.get_xlim() == (0.0, 100.0)
    assert legend_texts(axes) == [
        "c / reference / m1 (n=3)",
        "c / reference / m2 (n=1)",
    ]
    assert [t.get_text() for t in axes.texts] == ["80", "20", "60", "10", "10", "-"]  # m2 played no L2


def test_the_taxonomy_counts_episodes_per_failure_and_flag():
    failures, flags = panels(taxonomy_figure(scored_episodes(EPISODES)))
    assert [t.get_text() for t in failures.get_yticklabels()] == ["wrong_parameter"]
    assert [t.get_text() for t in flags.get_yticklabels()] == ["p_hacking"]
    assert [t.get_text() for t in failures.texts] == ["1", "1"]
    assert taxonomy_figure(scored_episodes([made_up("petri", 5.0, {"calls": 1}, params={"tier": "L1"})])) is None


def test_nothing_is_drawn_without_a_scored_episode(tmp_path):
    assert suite.plots([made_up("petri", None, {}, params={"tier": "L1"})], tmp_path / "plots") == []
    assert not (tmp_path / "plots").exists()
