"""Human baselines in `discogym report`: people's episodes (agent human, one participant id each) give each
problem a baseline, the suite's percentile of their first scores, beside every agent's mean on the problem."""

from pathlib import Path

import numpy as np

from discogym.core import ReportTable, Termination, register_suite
from discogym.core.reporting.human_baselines import human_baseline_table
from discogym.core.reporting.run_report import build_report
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.session import ExternalEpisodes
from discogym.core.running.storage import RunDir
from tests.core.toy_suite import suite

TASK = suite.tasks("tiny")[0]
DIGIT = int(TASK.ground_truth["digit"])


def people_play(out: Path, guesses: dict[str, list[int]]) -> None:
    """Each participant submits their guesses, one episode each, in order."""
    host = ExternalEpisodes(suite, out, agent="human", split="tiny")
    for person, tries in guesses.items():
        session = host.session(person)
        for guess in tries:
            session.start(TASK.id)
            session.call("submit", {"n": guess})


def rows_of(table: ReportTable) -> dict[tuple[str, str], list[object]]:
    return {(row[3], row[4]): row[5:10] for row in table.rows}


def test_a_folder_report_puts_people_and_agents_on_one_table(tmp_path):
    register_suite(suite)
    right, wrong = DIGIT, (DIGIT + 1) % 10
    # p1-p4 right first; p5 and p6 wrong first (p6 right on a second try, which does not count)
    guesses = {f"p{i}": [right] for i in range(1, 5)} | {"p5": [wrong], "p6": [wrong, right]}
    people_play(tmp_path / "runs" / "web" / "toy", guesses)
    config = RunConfig.for_suite(suite, ["bisect", "quitter"], split="tiny", tasks=[TASK.id])
    Runner(suite, config, tmp_path / "runs" / "toy").run()
    report = build_report(tmp_path / "runs", min_people=5)
    table = next(t for t in report.tables if t.title == "human baselines")
    rows = rows_of(table)
    median = float(np.percentile([1, 1, 1, 1, 0, 0], 50))
    assert rows[("human", "-")] == [6, 4 / 6, 50.0, median, None]
    assert rows[("bisect", "-")] == [1, 1.0, 50.0, median, 1.0 - median]
    assert rows[("quitter", "-")] == [1, 0.0, 50.0, median, -median]
    too_few = build_report(tmp_path / "runs", min_people=7)
    rows = rows_of(next(t for t in too_few.tables if t.title == "human baselines"))
    assert rows[("human", "-")][3] is None and rows[("bisect", "-")][4] is None  # no baseline below 7 people


def test_the_suites_percentile_is_the_baseline_and_runs_without_people_have_no_such_table(tmp_path):
    register_suite(suite)
    people_play(tmp_path, {f"p{i}": [DIGIT if i < 3 else (DIGIT + 1) % 10] for i in range(10)})
    episodes = list(RunDir(tmp_path).iter_episodes())
    table = human_baseline_table(episodes, lambda _: 80.0, min_people=5)
    assert table is not None
    (human,) = table.rows
    assert human[5:9] == [10, 0.3, 80.0, float(np.percentile([1] * 3 + [0] * 7, 80))]
    assert human_baseline_table([e for e in episodes if e.key.agent != "human"], lambda _: 80.0) is None


def test_people_whose_first_game_was_abandoned_or_empty_are_left_out_and_counted_apart(tmp_path):
    register_suite(suite)
    right, wrong = DIGIT, (DIGIT + 1) % 10
    people_play(tmp_path, {"p1": [right], "p2": [wrong], "p3": [right]})
    host = ExternalEpisodes(suite, tmp_path, agent="human", split="tiny")
    left = host.session("p4")  # one probe, then gone: abandoned, and not replaced by the right answer after
    left.start(TASK.id)
    left.call("probe", {"n": 2})
    left.leave()
    people_play(tmp_path, {"p4": [right]})
    idle = host.session("p5")  # not one action before ending the game: empty
    idle.start(TASK.id)
    idle.end("the person ended the game")
    cut = host.session("p6")  # the server stopped in the middle: left out too, not replaced by a later try
    cut.start(TASK.id)
    cut.call("probe", {"n": 2})
    cut.end("the server stopped", Termination.SERVER_STOPPED)
    people_play(tmp_path, {"p6": [right]})
    episodes = list(RunDir(tmp_path).iter_episodes())
    table = human_baseline_table(iter(episodes), lambda _: 50.0, min_people=1)
    assert table is not None and table.columns[-2:] == ["left out: abandoned", "left out: empty"]
    assert "given when at least 1 person played it" in table.notes[0]
    (human,) = table.rows
    assert human[5:] == [3, 2 / 3, 50.0, 1.0, None, 2, 1]
