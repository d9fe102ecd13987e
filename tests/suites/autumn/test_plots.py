"""The autumn suite's report plots: score by environment and task type, and the exploration curves."""

import pytest

pytest.importorskip("matplotlib")

from discogym.core import AgentOptions
from discogym.core.reporting.report_tables import scored_episodes
from discogym.core.running.episode_loop import play_episode
from discogym.core.running.runner import plan_episode
from discogym.suites.autumn.metrics import perplexity_curve
from discogym.suites.autumn.plots import (
    EXPLORATION_PLOT,
    POSITIONS,
    SCORES_PLOT,
    exploration_figure,
    interaction_actions,
    sampled_curve,
    scores_figure,
)
from discogym.suites.autumn.suite import suite
from tests.suites.plot_episodes import legend_texts, panels


@pytest.fixture(scope="module")
def episodes():
    tasks = suite.tasks("mfp")[:2]
    plan = [(task, agent) for agent in ("oracle", "random") for task in tasks]
    options = {agent: AgentOptions(name=agent) for agent in ("oracle", "random")}
    return [
        play_episode(suite, plan_episode("autumn", task, suite.condition("text"), options[agent], 0, 0))[0]
        for task, agent in plan
    ]


def test_the_curves_come_from_the_logged_interaction_phase(episodes):
    oracle, _, random, _ = episodes
    assert interaction_actions(oracle) == []
    actions = interaction_actions(random)
    assert len(actions) == random.score.components["actions"] > 0
    curve = sampled_curve(actions)
    assert curve is not None and len(curve) == len(POSITIONS)
    assert curve[0] == perplexity_curve(actions)[0] and curve[-1] == perplexity_curve(actions)[-1]
    assert sampled_curve([]) is None


def test_one_heatmap_per_agent_and_one_curve_per_explorer(episodes, tmp_path):
    assert suite.plots(episodes, tmp_path) == [tmp_path / SCORES_PLOT, tmp_path / EXPLORATION_PLOT]
    scored = scored_episodes(episodes)
    oracle, random = scores_figure(scored).axes
    assert [oracle.get_title(), random.get_title()] == ["text / oracle (n=2)", "text / random (n=2)"]
    assert [t.get_text() for t in oracle.get_xticklabels()] == ["mfp", "planning", "cd", "all"]
    assert [t.get_text() for t in oracle.get_yticklabels()][-1] == "all"
    assert [t.get_text() for t in oracle.texts][:4] == ["1", "-", "-", "1"]
    (axes,) = panels(exploration_figure(scored))
    assert legend_texts(axes) == ["text / random (n=2)"]  # the oracle never explores
    assert exploration_figure(scored[:2]) is None


def test_nothing_is_drawn_without_a_scored_episode(episodes, tmp_path):
    unscored = [e.model_copy(update={"score": e.score.model_copy(update={"value": None})}) for e in episodes]
    assert suite.plots(unscored, tmp_path / "plots") == []
    assert not (tmp_path / "plots").exists()
