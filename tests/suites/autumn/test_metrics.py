"""Exploration measures (Appendix D) and the random-agent baseline (Appendix C)."""

import math

import pytest

from discogym.suites.autumn.baseline import random_baseline
from discogym.suites.autumn.metrics import (
    curve_auc,
    exploration,
    normalized_perplexity,
    perplexity_curve,
    unique_fractions,
)
from discogym.suites.autumn.tasks import packaged_tasks


def test_normalized_perplexity_is_one_for_all_different_and_zero_for_one_action():
    assert normalized_perplexity(["up", "down", "left", "click 1 1"]) == pytest.approx(1.0)
    assert normalized_perplexity(["up", "up", "up"]) == 0.0
    skewed = ["up"] * 9 + ["down"]
    entropy = -(0.9 * math.log(0.9) + 0.1 * math.log(0.1))
    assert normalized_perplexity(skewed) == pytest.approx(math.exp(entropy) - 1)


def test_the_curve_its_auc_and_final_value():
    actions = [f"click {i} 0" for i in range(20)] + ["up"] * 20
    curve = perplexity_curve(actions, window=20)
    assert len(curve) == 21 and curve[0] == pytest.approx(1.0) and curve[-1] == 0.0
    assert curve_auc([1.0, 0.0]) == pytest.approx(0.5) and curve_auc([0.3]) == 0.3 and curve_auc([]) is None
    assert perplexity_curve(["up", "down"], window=20) == [pytest.approx(1.0)]  # shorter than a window


def test_unique_action_fractions_count_each_click_position_once():
    actions = ["click 1 1", "click 1 1", "click 2 2", "up", "up", "reset", "noop"]
    assert unique_fractions(actions) == {"click": 0.4, "arrow": 0.2, "reset": 0.2, "noop": 0.2}
    summary = exploration(actions)
    assert summary["unique_actions"] == 5 and summary["resets"] == 1 and summary["actions"] == 7
    assert exploration([])["perplexity_auc"] is None


def test_the_random_baseline_is_deterministic_and_in_range():
    rows = random_baseline(packaged_tasks("v1"), runs=3, timeout=150, envs=["counter", "keydoor"])
    again = random_baseline(packaged_tasks("v1"), runs=3, timeout=150, envs=["counter", "keydoor"])
    assert rows == again and [r.env for r in rows] == ["counter", "keydoor"]  # the task file's order
    for row in rows:
        assert row.p_trigger is not None and 0 <= row.p_trigger <= 1
        assert row.p_goal is not None and 0 <= row.p_goal <= 1
    assert any(row.p_goal for row in rows)
