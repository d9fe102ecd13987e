"""AutumnBench's published figures (Table E.1's per-environment scores, and their means per task type and over all
129 tasks, which the paper only plots) as shipped: the file, the means against the cells, and the paper's text."""

import pytest

from discogym.suites.autumn.published import FIGURES_FILE, published_figures
from tests.suites.published_checks import check_figures, pick

FIGURES = published_figures()
KINDS = ["change detection", "masked-frame prediction", "planning"]
AGENTS = {"Claude 4 Sonnet": "text", "Gemini 2.5 Pro": "text", "o3": "text", "human": "people"}


def cells(model: str, kind: str) -> list[float]:
    """Table E.1's 43 per-environment scores of ``model`` on ``kind``."""
    return [f.value for f in FIGURES if f.model == model and f.subset.startswith(f"{kind} / ")]


def mean(model: str, subset: str) -> float:
    """The figure of ``model`` over ``subset`` (a task type, or "" for all 129 tasks)."""
    return pick(FIGURES, model=model, subset=subset).value


def test_the_file_loads_and_every_figure_is_well_formed():
    check_figures(
        FIGURES,
        suite="autumn",
        paper="worldtest-autumnbench",
        protocols={"autumnbench-official"},
        path=FIGURES_FILE,
    )
    assert {f.metric for f in FIGURES} == {"mean_score"}
    assert {(f.model, f.condition) for f in FIGURES} == set(AGENTS.items())
    assert not any(f.source.table == "Table E.3" for f in FIGURES)  # the random agent is transcribed elsewhere


def test_table_e1_is_complete():
    envs = {f.source.row for f in FIGURES if "/" in f.subset}
    assert len(envs) == 43  # AutumnBench's 43 environments, 129 tasks
    for model in AGENTS:
        for kind in KINDS:
            assert len(cells(model, kind)) == 43, (model, kind)
    for f in FIGURES:
        if "/" in f.subset:
            assert f.value == float(f.printed)
            assert f.subset == f"{f.subset.split(' / ')[0]} / {f.source.row}"


def test_the_means_are_those_of_the_cells():
    for model in AGENTS:
        for kind in KINDS:
            figure = pick(FIGURES, model=model, subset=kind)
            assert figure.value == pytest.approx(sum(cells(model, kind)) / 43, abs=1e-6)  # stored to six decimals
            assert figure.printed == f"{figure.value:.2f}" and "Not printed in the paper" in figure.note
        every = [v for kind in KINDS for v in cells(model, kind)]
        assert mean(model, "") == pytest.approx(sum(every) / 129, abs=1e-6)
        assert mean(model, "") == pytest.approx(sum(mean(model, k) for k in KINDS) / 3, abs=1e-6)


def test_masked_frame_and_planning_are_right_or_wrong_for_the_models():
    # a model's masked-frame prediction picks one of six options and its plan reaches the goal or not: 0 or 1
    for model in ("Claude 4 Sonnet", "Gemini 2.5 Pro", "o3"):
        for kind in ("masked-frame prediction", "planning"):
            assert set(cells(model, kind)) <= {0.0, 1.0}, (model, kind)


def test_the_texts_restatements():
    # Section 4.2 and 5: humans outperform all reasoning models across all task types, and achieve near-optimal
    # scores while the models frequently fail
    for kind in [*KINDS, ""]:
        assert all(mean("human", kind) > mean(model, kind) for model in AGENTS if model != "human"), kind
    assert mean("human", "") > 0.85
    assert all(mean(model, "") < 0.35 for model in AGENTS if model != "human")
    # Table E.1's first row, S2KT7: human change detection 0.86, every agent's masked-frame prediction 1.0
    assert pick(FIGURES, model="human", subset="change detection / S2KT7").printed == "0.86"
    assert all(pick(FIGURES, model=m, subset="masked-frame prediction / S2KT7").value == 1.0 for m in AGENTS)
