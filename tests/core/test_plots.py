"""The generic score plot: one panel per suite, each on its own scale, in one PNG."""

import pytest
from matplotlib.patches import Rectangle

from discogym.core import AgentOptions, Episode
from discogym.core.reporting.plots import LABEL_WIDTH, score_figure, score_plot, score_scale
from discogym.core.running.episode_loop import play_episode
from discogym.core.running.runner import plan_episode
from tests.core.toy_suite import suite


def play(agent: str) -> list[Episode]:
    return [
        play_episode(suite, plan_episode("toy", task, suite.condition("plain"), AgentOptions(name=agent), 0, 0))[0]
        for task in suite.tasks("dev")
    ]


def as_points_suite(episodes: list[Episode], value: float) -> list[Episode]:
    """The episodes as if a suite called ``points`` had scored them ``value`` on a 0-100 scale."""
    return [
        e.model_copy(
            update={
                "key": e.key.model_copy(update={"suite": "points"}),
                "score": e.score.model_copy(update={"value": value}),
            }
        )
        for e in episodes
    ]


@pytest.fixture(scope="module")
def two_suites() -> list[Episode]:
    wins, losses = play("bisect"), play("quitter")
    return [*wins, *losses, *as_points_suite(wins, 92.5), *as_points_suite(losses[:3], 10.0), *play("crasher")]


def test_the_scale_is_read_off_the_scores():
    assert score_scale([0.0, 0.25, 1.0]) == (0.0, 1.0)
    assert score_scale([0.0, 0.0]) == (0.0, 1.0)
    assert score_scale([92.5, 1.5]) == (0.0, 100.0)
    assert score_scale([140.0]) == (0.0, 140.0)
    assert score_scale([-0.5, 0.5]) == (-0.5, 1.0)
    assert score_scale([]) == (0.0, 1.0)


def test_each_suite_gets_its_own_panel_on_its_own_scale(two_suites):
    figure = score_figure(two_suites)
    assert figure is not None
    points, toy = figure.axes
    assert (points.get_title(loc="left"), toy.get_title(loc="left")) == ("points", "toy")
    assert points.get_xlim() == (0.0, 100.0) and toy.get_xlim() == (0.0, 1.0)
    assert "0 to 100" in points.get_xlabel() and "0 to 1" in toy.get_xlabel()
    assert [t.get_text() for t in points.get_yticklabels()] == ["plain / bisect (n=8)", "plain / quitter (n=3)"]
    assert [t.get_text() for t in toy.get_yticklabels()] == ["plain / bisect (n=8)", "plain / quitter (n=8)"]
    assert [bar.get_width() for bar in points.patches if isinstance(bar, Rectangle)] == [92.5, 10.0]
    assert [text.get_text() for text in toy.texts] == ["1", "0"]


def test_the_plot_is_one_png_and_nothing_when_nothing_is_scored(two_suites, tmp_path):
    path = score_plot(two_suites, tmp_path / "plots" / "scores.png")
    assert path == tmp_path / "plots" / "scores.png"
    assert (tmp_path / "plots" / "scores.png").read_bytes().startswith(b"\x89PNG")
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == ["scores.png"]
    crashed = [e for e in two_suites if e.score.value is None]
    assert crashed and score_figure(crashed) is None
    assert score_plot(crashed, tmp_path / "none.png") is None and not (tmp_path / "none.png").exists()


def test_one_suite_makes_one_panel(two_suites):
    figure = score_figure([e for e in two_suites if e.key.suite == "toy"])
    assert figure is not None and len(figure.axes) == 1


def test_a_suite_is_drawn_on_the_range_it_declares(monkeypatch):
    monkeypatch.setattr(type(suite), "score_range", (0.0, 10.0))
    figure = score_figure(play("bisect"))
    assert figure is not None
    (toy,) = figure.axes
    assert toy.get_xlim() == (0.0, 10.0) and "0 to 10" in toy.get_xlabel()


def test_a_local_models_long_name_is_drawn_in_lines_and_the_panel_keeps_its_width(tmp_path, recwarn):
    # issue 47: a local model's name (80 characters) cut the labels of scores.png and collapsed its panel
    long = "openai-compatible/SmolLM2-135M-Instruct-Q8_0.gguf@http://127.0.0.1:8080/v1"
    episodes = play("bisect")
    named = [e.model_copy(update={"key": e.key.model_copy(update={"model": long})}) for e in episodes]
    figure = score_figure(episodes + named)
    assert figure is not None
    (axes,) = figure.axes
    labels = [tick.get_text() for tick in axes.get_yticklabels()]
    assert labels[0] == f"plain / bisect (n={len(episodes)})"
    lines = labels[1].split("\n")
    assert len(lines) == 3 and all(len(line) <= LABEL_WIDTH for line in lines)
    assert "".join(lines) == f"plain / bisect / {long} (n={len(episodes)})"  # broken at its / and :, nothing lost
    assert score_plot(episodes + named, tmp_path / "scores.png") is not None
    figure.canvas.draw()
    assert axes.get_window_extent().width > figure.bbox.width / 3  # the labels did not squeeze the panel away
    assert not [w for w in recwarn if "layout" in str(w.message)]
