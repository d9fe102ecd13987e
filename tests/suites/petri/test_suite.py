"""The petri suite end to end: the reference solvers' pinned scores, audits, reproducibility, no leaks."""

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from discogym.core import Agent, AgentContext, AgentDecision, AgentOptions, Episode, Turn, get_suite
from discogym.core.model import agent as agent_module
from discogym.core.model.agent import AgentEntry
from discogym.core.running.episode_loop import play_episode
from discogym.core.running.runner import RunConfig, Runner, plan_episode
from discogym.core.running.storage import RunDir
from tests.conftest import run_discogym

# The v0 sets' L2 and L3 pins are checked from their logs in test_scoring.py.
PINNED = {"pilot-v0": 92.5, "core-v1": 92.5, "l2-v1": 92.5, "l3-v1": 87.5, "l4-v1": 87.5, "blind-v1": 90.0}


def run(out: Path, split: str, *agents: str) -> dict[tuple[str, str], Episode]:
    suite = get_suite("petri")
    Runner(suite, RunConfig.for_suite(suite, list(agents), split=split), out).run()
    return {(e.key.agent, e.key.task): e for e in RunDir(out).iter_episodes()}


@pytest.mark.parametrize("split", sorted(PINNED))
def test_ofat_earns_the_pinned_score_on_every_task_and_adaptive_at_least_as_much(tmp_path, split):
    episodes = run(tmp_path, split, "ofat", "adaptive", "guess")
    tasks = {task for _, task in episodes}
    for task in tasks:
        ofat, adaptive, guess = (episodes[(agent, task)] for agent in ("ofat", "adaptive", "guess"))
        assert ofat.score.value == PINNED[split], task
        assert (adaptive.score.value or 0.0) >= PINNED[split], task
        for solver in (ofat, adaptive):
            assert not any(solver.audit["flags"].values()), (task, solver.audit)
            assert solver.audit["support"] == ("bracketed" if split == "l4-v1" else "isolating")
        assert guess.audit["support"] != "isolating" and guess.events[0].call.tool == "submit"
        assert guess.audit["failures"]["unbacked"] and not any(guess.audit["flags"].values())


def test_reference_episodes_are_byte_identical_under_two_hash_seeds(tmp_path):
    for hash_seed in ("1", "2"):
        done = run_discogym(
            "run", "petri", "--set", "pilot-v0", "--agent", "ofat", "--agent", "ofat-rand",
            "--out", str(tmp_path / hash_seed), "--quiet", PYTHONHASHSEED=hash_seed,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    first, second = RunDir(tmp_path / "1"), RunDir(tmp_path / "2")
    assert [p.name for p in first.episode_paths()] == [p.name for p in second.episode_paths()]
    assert [p.read_bytes() for p in first.episode_paths()] == [p.read_bytes() for p in second.episode_paths()]


class Spy(Agent):
    """Records the hints it is given, then stops."""

    seen: ClassVar[list[dict[str, Any]]] = []

    def start(self, context: AgentContext) -> None:
        Spy.seen.append(context.hints)

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        return AgentDecision(message="done")


def test_only_the_suites_own_solvers_get_the_privileged_hints(monkeypatch):
    suite = get_suite("petri")
    task = suite.tasks("pilot-v0")[0]
    monkeypatch.setitem(agent_module._GENERIC_AGENTS, "spy", AgentEntry("spy", lambda o: Spy(), "test spy"))
    play_episode(suite, plan_episode("petri", task, suite.conditions()[0], AgentOptions(name="spy"), 0, 0))
    assert Spy.seen[-1] == {}
    own = {**suite.reference_agents(), "spy-solver": lambda o: Spy()}
    monkeypatch.setattr(type(suite), "reference_agents", lambda self: own)
    play_episode(suite, plan_episode("petri", task, suite.conditions()[0], AgentOptions(name="spy-solver"), 0, 0))
    assert set(Spy.seen[-1]) == {"tier", "candidates", "metrics", "boundary", "reference_values", "ranges"}
    assert Spy.seen[-1]["reference_values"] == task.ground_truth["reference_values"]


def test_the_report_has_the_papers_tables(tmp_path):
    run(tmp_path, "pilot-v0", "ofat", "guess")
    from discogym.core.reporting.run_report import build_report

    tables = {table.title: table for table in build_report(tmp_path).tables}
    tiers = tables["petri: per agent and tier"]
    overall = {row[0]: row for row in tiers.rows if row[3] == "all"}
    assert overall["ofat"][1:3] == ["-", "default"]  # agent, model, condition
    assert overall["ofat"][5] == 92.5 and overall["ofat"][7] == 1.0 and overall["ofat"][8] == 3.0
    (pair,) = tables["petri: paired comparisons (Wilcoxon signed-rank over tasks, Holm across pairs)"].rows
    assert pair[:3] == ["guess (default)", "ofat (default)", 6]
    assert float(pair[5]) == pytest.approx(0.03125, rel=0.01) and pair[6] is True
    taxonomy = tables["petri: failure taxonomy (episodes per flag)"]
    unbacked = taxonomy.columns.index("unbacked")
    assert {row[0]: row[unbacked] for row in taxonomy.rows} == {"ofat": 0, "guess": 6}
    assert tables["petri: difficulty band against outcome"].rows


def test_the_report_says_whether_the_difficulty_band_predicts_failure(tmp_path):
    from scipy.stats import spearmanr

    from discogym.core.reporting.run_report import build_report

    episodes = run(tmp_path, "core-v1", "ofat", "ofat-rand")
    table = next(t for t in build_report(tmp_path).tables if t.title.startswith("petri: does the difficulty band"))
    rows = {row[0]: row for row in table.rows}
    assert rows["ofat"][3:] == [10, *(1.0 if rated else "-" for rated in _bands_present(episodes)), "-", "-"]
    played = [e for (agent, _), e in episodes.items() if agent == "ofat-rand"]
    powers = [e.task.ground_truth["difficulty"]["oracle_power"] for e in played]
    solved = [bool(e.score.success) for e in played]
    for column, band in enumerate(("easy", "moderate", "hard"), start=4):
        in_band = [s for e, s in zip(played, solved, strict=True) if e.task.ground_truth["difficulty"]["band"] == band]
        assert rows["ofat-rand"][column] == (sum(in_band) / len(in_band) if in_band else "-")
    rho, p = spearmanr(powers, solved)
    assert rows["ofat-rand"][7:] == [f"{rho:.2f}", f"{p:.3g}"]


def _bands_present(episodes: dict[tuple[str, str], Episode]) -> list[bool]:
    bands = {e.task.ground_truth["difficulty"]["band"] for e in episodes.values()}
    return [band in bands for band in ("easy", "moderate", "hard")]
