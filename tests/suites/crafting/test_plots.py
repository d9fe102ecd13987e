"""The crafting suite's report plots: success by difficulty and recipe type, plan length against the planner's."""

import pytest

pytest.importorskip("matplotlib")

from discogym.core.reporting.report_tables import scored_episodes
from discogym.suites.crafting.plots import PLAN_PLOT, SUCCESS_PLOT, plan_figure, plan_points, success_figure
from discogym.suites.crafting.suite import suite
from tests.suites.plot_episodes import legend_texts, made_up, panels


def episode(agent: str, value: float, difficulty: str, actions: int | None = None, planner: int | None = None):
    recipe = "impossible" if difficulty == "impossible" else "shaped"
    components = {"difficulty": difficulty, "recipe_type": recipe, "impossible": difficulty == "impossible",
                  "actions": actions, "planner_actions": planner}  # fmt: skip
    return made_up("crafting", value, components, agent=agent)


EPISODES = [
    episode("planner", 1.0, "easy", 3, 3),
    episode("planner", 1.0, "impossible"),
    episode("random", 1.0, "easy", 9, 3),
    episode("random", 0.0, "hard", 12, 5),
]


def test_success_by_difficulty_and_recipe_type_per_agent(tmp_path):
    assert suite.plots(EPISODES, tmp_path) == [tmp_path / SUCCESS_PLOT, tmp_path / PLAN_PLOT]
    difficulty, recipes = success_figure(scored_episodes(EPISODES)).axes
    assert [t.get_text() for t in difficulty.get_yticklabels()] == ["easy", "medium", "hard", "impossible", "all"]
    assert [t.get_text() for t in recipes.get_yticklabels()] == ["smelting", "shapeless", "shaped", "mixed", "all"]
    assert difficulty.get_xlim() == (0.0, 1.0)
    assert [t.get_text() for t in difficulty.texts] == ["1", "1", "1", "-", "-", "1", "0", "0.5", "-", "-"]
    assert legend_texts(recipes) == ["c / planner (n=1)", "c / random (n=2)"]


def test_plan_length_points_only_for_solved_possible_tasks():
    assert plan_points(EPISODES[:1]) == {(3, 3): 1}
    (axes,) = panels(plan_figure(scored_episodes(EPISODES)))
    labels = legend_texts(axes)
    assert labels == ["c / planner (n=1)", "c / random (n=1)", "as long as the planner"]
    assert plan_figure(scored_episodes(EPISODES[1:2])) is None


def test_nothing_is_drawn_without_a_scored_episode(tmp_path):
    assert suite.plots([made_up("crafting", None, {})], tmp_path / "plots") == []
    assert not (tmp_path / "plots").exists()
