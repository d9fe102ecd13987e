"""petri-bench's published figures (section 7.2, sweep v1) as shipped: the file, its rows against their neighbours
(the overall against the tiers, the per-pass ranges against the means), and the paper's own text where it restates a
figure."""

from pathlib import Path

import pytest

from discogym.core.model.protocol import figures_beside
from discogym.suites.petri import protocols
from tests.suites.published_checks import check_figures, pick

FIGURES_FILE = Path(protocols.__file__).with_name("published.json")
FIGURES = figures_beside(protocols.__file__)
MODELS = ["glm-5.1", "opus-4.8", "haiku-4.5", "codex-gpt-5.5", "sonnet-4.6", "gemini-3.1-pro"]
REFERENCES = ["adaptive", "ofat", "ofat-rand", "random"]
TIERS = ["tier L1", "tier L2", "tier L3"]


def score(model: str, subset: str = "") -> float:
    """The table's mean score of ``model`` (overall, or on a tier)."""
    return pick(
        FIGURES, model=model, subset=subset, metric="mean_score", column=subset.removeprefix("tier ") or "Overall"
    ).value


def solve_rate(model: str) -> float:
    """The table's solve rate of ``model``, a fraction."""
    return pick(FIGURES, model=model, metric="success_rate").value


def test_the_file_loads_and_every_figure_is_well_formed():
    check_figures(
        FIGURES, suite="petri", paper="sozudogru2026petribench", protocols={"petri-sweep-v1"}, path=FIGURES_FILE
    )
    assert {f.model for f in FIGURES} == {*MODELS, *REFERENCES}
    assert {f.condition for f in FIGURES} == {"default"}
    for f in FIGURES:
        if f.metric == "success_rate":
            assert f.printed == f"{round(f.value * 100)}%" and f.subset == ""
        else:
            assert f.printed.split(" ")[0] == f"{f.value:.1f}"


def test_every_row_has_its_tiers_overall_and_solve_rate():
    for model in [*MODELS, *REFERENCES]:
        assert {f.subset for f in FIGURES if f.model == model and f.source.table != "Section 7.2 text"} == {"", *TIERS}
        assert len([f for f in FIGURES if f.model == model and f.subset == ""]) == 2  # overall and solve rate
    # the models' tier cells carry the three passes' range, the reference rows none
    for f in FIGURES:
        if f.subset in TIERS:
            assert (f.low is not None) == (f.model in MODELS), f.model


def test_the_overall_is_the_mean_of_the_tiers():
    # each tier holds 10 of the 30 tasks, so the overall (over 90 episodes) is the tiers' mean; the printed one-decimal
    # roundings leave up to 0.1 between them (opus-4.8: 61.77 from its tiers, printed 61.7)
    for model in [*MODELS, *REFERENCES]:
        tiers = [score(model, t) for t in TIERS]
        assert sum(tiers) / 3 == pytest.approx(score(model), abs=0.1), model


def test_the_per_pass_ranges_fit_their_means():
    # the three per-pass means average to the cell: the middle pass, 3 x mean - low - high, lies within the range
    for f in FIGURES:
        if f.low is not None and f.high is not None and f.subset in TIERS:
            middle = 3 * f.value - f.low - f.high
            assert f.low - 0.15 <= middle <= f.high + 0.15, (f.model, f.subset, middle)
            assert f.printed == f"{f.value:.1f} ({f.low:.1f}-{f.high:.1f})"


def test_the_solve_rates_are_counts_of_episodes():
    # 90 episodes per model (30 tasks x 3 passes): each printed percent is some k/90 rounded
    for model in MODELS:
        assert any(round(100 * k / 90) == round(100 * solve_rate(model)) for k in range(91)), model


def test_the_figures_the_brief_names():
    opus = pick(FIGURES, model="opus-4.8", subset="", metric="mean_score")
    assert (opus.value, opus.printed, opus.source.column) == (61.7, "61.7", "Overall")


def test_the_texts_restatements():
    overall = {m: score(m) for m in MODELS}
    # the six models span 4.4 points overall (57.3-61.7)
    assert (min(overall.values()), max(overall.values())) == (57.3, 61.7)
    assert max(overall.values()) - min(overall.values()) == pytest.approx(4.4)
    # the reference sweep outscores every frontier model by 29 points or more
    assert score("ofat") - max(overall.values()) >= 29
    # solves 100% of tasks, and no model solves above 50% (best: gemini, 45/90 episodes)
    assert solve_rate("ofat") == solve_rate("adaptive") == 1.0
    assert max(solve_rate(m) for m in MODELS) == solve_rate("gemini-3.1-pro") == 0.5 == 45 / 90
    # the ablation collapses the score from 90.8 to 40.5, below every model
    assert (score("ofat"), score("ofat-rand")) == (90.8, 40.5)
    assert all(score("ofat-rand") < v for v in overall.values())
    # three draw seeds score 40.5, 47.5 and 47.7 (mean 45.2); every model's mean exceeds the best draw (57.3 vs 47.7,
    # a 9.6-point floor)
    draws = pick(FIGURES, model="ofat-rand", subset="mean of 3 value draws")
    assert (draws.value, draws.low, draws.high) == (45.2, 40.5, 47.7)
    assert abs((40.5 + 47.5 + 47.7) / 3 - draws.value) < 0.05
    assert min(overall.values()) - 47.7 == pytest.approx(9.6)
    # opus-4.8 the best L1 mean (72.3), gemini-3.1-pro the best L2 (65.5), haiku-4.5 the best L3 (60.8)
    for tier, model, value in (
        ("tier L1", "opus-4.8", 72.3),
        ("tier L2", "gemini-3.1-pro", 65.5),
        ("tier L3", "haiku-4.5", 60.8),
    ):
        assert score(model, tier) == value == max(score(m, tier) for m in MODELS)
    # gemini swings 23 points between tiers; its L3 (42.0) is last by 11 points; its single-pass floor was 29.0
    gemini = [score("gemini-3.1-pro", t) for t in TIERS]
    assert 23 <= max(gemini) - min(gemini) < 24  # 65.5 - 42.0 = 23.5
    assert round(sorted(score(m, "tier L3") for m in MODELS)[1] - score("gemini-3.1-pro", "tier L3")) == 11
    assert pick(FIGURES, model="gemini-3.1-pro", subset="tier L3").low == 29.0
    # per-pass spans: haiku's L3 3 points (59.1-62.1), opus's L3 20 (45.3-65.7), gemini's L1 22 (52.3-74.5)
    for model, tier, span, low, high in (
        ("haiku-4.5", "tier L3", 3, 59.1, 62.1),
        ("opus-4.8", "tier L3", 20, 45.3, 65.7),
        ("gemini-3.1-pro", "tier L1", 22, 52.3, 74.5),
    ):
        f = pick(FIGURES, model=model, subset=tier)
        assert (f.low, f.high) == (low, high) and round(high - low) == span
    # gemini-3.1-pro has the highest solve rate (50%) and the lowest overall; haiku-4.5 the lowest solve rate (37%)
    assert overall["gemini-3.1-pro"] == min(overall.values())
    assert min(solve_rate(m) for m in MODELS) == solve_rate("haiku-4.5") == 0.37
