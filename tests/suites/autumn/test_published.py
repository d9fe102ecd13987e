"""AutumnBench's published figures (Table E.1's per-environment scores; the paper only plots their means, so none
ships) as shipped: the file, the table's shape, and the paper's text."""

from pathlib import Path

from discogym.core.model.protocol import figures_beside
from discogym.suites.autumn import protocols
from tests.suites.published_checks import check_figures, pick

FIGURES_FILE = Path(protocols.__file__).with_name("published.json")
FIGURES = figures_beside(protocols.__file__)
KINDS = ["change detection", "masked-frame prediction", "planning"]
AGENTS = {"Claude 4 Sonnet": "text", "Gemini 2.5 Pro": "text", "o3": "text", "human": "people"}


def cells(model: str, kind: str) -> list[float]:
    """Table E.1's 43 per-environment scores of ``model`` on ``kind``."""
    return [f.value for f in FIGURES if f.model == model and f.subset.startswith(f"{kind} / ")]


def mean(model: str, kind: str) -> float:
    """The mean of Table E.1's scores of ``model`` on ``kind`` (a task type, or "" for all 129 tasks)."""
    values = [v for k in ([kind] if kind else KINDS) for v in cells(model, k)]
    return sum(values) / len(values)


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


def test_no_figure_is_a_mean_the_paper_did_not_print():
    assert all(" / " in f.subset for f in FIGURES)


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
