"""The report helpers every suite shares, and the generic table's count, standard error and Wilson interval,
checked against known values and against scipy."""

import math

import pytest
from scipy.stats import binomtest, sem

from discogym.core import AgentOptions, Episode
from discogym.core.reporting.report_tables import (
    agent_rows,
    by_agent,
    component_mean,
    component_value,
    format_cell,
    group_by,
    mean_score,
    present_mean,
    scored_episodes,
    standard_error,
    success_interval,
    success_rate,
    table_html,
    table_markdown,
    wilson_interval,
)
from discogym.core.reporting.run_report import GENERIC_COLUMNS, generic_table
from discogym.core.running.episode_loop import play_episode
from discogym.core.running.runner import plan_episode
from tests.core.toy_suite import suite


def play(agent: str, split: str = "dev") -> list[Episode]:
    """``agent`` on every toy task of ``split`` (plain condition, repeat 0)."""
    return [
        play_episode(suite, plan_episode("toy", task, suite.condition("plain"), AgentOptions(name=agent), 0, 0))[0]
        for task in suite.tasks(split)
    ]


@pytest.fixture(scope="module")
def wins() -> list[Episode]:
    return play("bisect")


@pytest.fixture(scope="module")
def losses() -> list[Episode]:
    return play("quitter")


@pytest.fixture(scope="module")
def crashes() -> list[Episode]:
    return play("crasher")


def relabel(episodes: list[Episode], agent: str) -> list[Episode]:
    return [e.model_copy(update={"key": e.key.model_copy(update={"agent": agent})}) for e in episodes]


def carrying(episode: Episode, components: dict[str, object]) -> Episode:
    return episode.model_copy(update={"score": episode.score.model_copy(update={"components": components})})


# Known 95% Wilson intervals (no continuity correction), e.g. Brown, Cai & DasGupta (2001) and any table of them.
@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [(0, 10, 0.0, 0.2775), (10, 10, 0.7225, 1.0), (3, 10, 0.1078, 0.6032), (1, 1, 0.2065, 1.0)],
)
def test_the_wilson_interval_has_the_known_values(successes, trials, low, high):
    interval = wilson_interval(successes, trials)
    assert interval == pytest.approx((low, high), abs=5e-5)
    reference = binomtest(successes, trials).proportion_ci(confidence_level=0.95, method="wilson")
    assert interval == pytest.approx((reference.low, reference.high), abs=1e-12)


def test_the_wilson_interval_narrows_with_confidence_and_refuses_impossible_counts():
    wide, narrow = wilson_interval(3, 10, 0.99), wilson_interval(3, 10, 0.80)
    assert wide is not None and narrow is not None
    assert wide[0] < narrow[0] < 0.3 < narrow[1] < wide[1]
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError, match="between 0 and trials"):
        wilson_interval(11, 10)
    with pytest.raises(ValueError, match="confidence"):
        wilson_interval(3, 10, 1.0)


def test_the_standard_error_is_the_sample_sd_over_root_n():
    assert standard_error([2.0, 4.0, 4.0, 5.0]) == pytest.approx(math.sqrt(4.75 / 3) / 2)
    values = [92.5, 95.0, 10.0, 0.0, 55.5]
    assert standard_error(values) == pytest.approx(float(sem(values)))
    assert standard_error([1.0, 1.0, 1.0]) == 0.0
    assert standard_error([0.7]) is None and standard_error([]) is None


def test_means_leave_out_what_is_missing():
    assert present_mean([1.0, None, 2.0]) == 1.5
    assert present_mean([None, None]) is None and present_mean([]) is None


def test_rates_and_scores_over_episodes(wins, losses, crashes):
    mixed = wins[:3] + losses[:7] + crashes[:2]
    assert mean_score(mixed) == pytest.approx(0.3) and success_rate(mixed) == pytest.approx(0.3)
    assert success_interval(mixed) == pytest.approx(wilson_interval(3, 10))
    assert mean_score(crashes) is None and success_rate(crashes) is None and success_interval(crashes) is None
    assert scored_episodes(mixed) == wins[:3] + losses[:7]


def test_component_values_are_numbers_or_the_fallback(wins):
    episode = carrying(wins[0], {"calls": 4, "flag": True, "name": "x", "none": None})
    assert component_value(episode, "calls") == 4.0 and component_value(episode, "flag") == 1.0
    assert component_value(episode, "name") is None and component_value(episode, "none", 0.0) == 0.0
    assert component_value(episode, "absent") is None and component_value(episode, "absent", 0.0) == 0.0
    other = carrying(wins[1], {"calls": 1})
    assert component_mean([episode, other], "calls") == 2.5
    assert component_mean([episode, other], "flag") == 1.0
    assert component_mean([episode, other], "flag", missing=0.0) == 0.5
    assert component_mean([], "calls") is None


def test_a_scored_episode_has_value_verdict_and_components(wins):
    bare = wins[0].model_copy(update={"score": wins[0].score.model_copy(update={"components": {}})})
    unjudged = wins[1].model_copy(update={"score": wins[1].score.model_copy(update={"success": None})})
    assert scored_episodes([bare, unjudged, wins[2]]) == [wins[2]]


def test_grouping_sorts_the_keys_and_keeps_the_episode_order(wins, losses):
    episodes = relabel(wins[:2], "zeta") + relabel(losses[:1], "alpha") + relabel(wins[2:3], "zeta")
    groups = group_by(episodes, lambda e: (e.key.agent,))
    assert [key for key, _ in groups] == [("alpha",), ("zeta",)]
    assert groups[1][1] == [episodes[0], episodes[1], episodes[3]]
    assert [key for key, _ in by_agent(episodes)] == [("alpha", "-", "plain"), ("zeta", "-", "plain")]
    assert agent_rows(episodes, lambda members: [len(members)]) == [
        ["alpha", "-", "plain", 1],
        ["zeta", "-", "plain", 3],
    ]


def test_an_interval_cell_reads_as_a_bracketed_pair():
    assert format_cell([0.1078, 0.6032]) == "[0.108, 0.603]"
    assert format_cell([1, 2]) == "[1, 2]" and format_cell(None) == "-" and format_cell(0.5) == "0.500"


def generic_rows(episodes: list[Episode]) -> dict[str, dict[str, object]]:
    table = generic_table(episodes)
    assert table.columns == GENERIC_COLUMNS
    return {str(row[4]): dict(zip(table.columns, row, strict=True)) for row in table.rows}


def test_the_generic_table_counts_n_and_gives_a_standard_error_and_a_wilson_interval(wins, losses, crashes):
    mixed = relabel(wins[:3] + losses[:7] + crashes[:2], "mixed")
    rows = generic_rows([*mixed, *wins, *crashes])
    row = rows["mixed"]
    assert (row["episodes"], row["errors"], row["scored"]) == (12, 2, 10)
    assert row["mean score"] == pytest.approx(0.3) and row["success rate"] == pytest.approx(0.3)
    assert row["score SE"] == pytest.approx(math.sqrt(0.7 / 30))  # sd sqrt(7/30), over sqrt(10)
    assert row["success 95% CI"] == pytest.approx([0.1078, 0.6032], abs=5e-5)
    perfect = rows["bisect"]
    assert (perfect["scored"], perfect["score SE"], perfect["success rate"]) == (8, 0.0, 1.0)
    assert perfect["success 95% CI"] == pytest.approx(list(wilson_interval(8, 8) or ()))
    broken = rows["crasher"]
    assert (broken["errors"], broken["scored"], broken["mean score"]) == (8, 0, None)
    assert broken["score SE"] is None and broken["success 95% CI"] is None


def test_the_generic_table_reads_in_markdown_and_html(wins, losses):
    table = generic_table(relabel(wins[:3] + losses[:7], "mixed"))
    markdown = table_markdown(table)
    assert "| score SE | success rate | success 95% CI | scored |" in markdown
    assert "| 0.300 | 0.153 | 0.300 | [0.108, 0.603] | 10 |" in markdown
    assert "<td>[0.108, 0.603]</td>" in table_html(table)
    assert table.model_dump(mode="json")["rows"][0][13] == pytest.approx([0.1078, 0.6032], abs=5e-5)
