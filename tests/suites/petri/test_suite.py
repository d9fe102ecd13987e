"""The petri suite end to end: the reference solvers' pinned scores, audits, reproducibility, no leaks."""

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from discogym.core import Agent, AgentContext, AgentDecision, AgentOptions, Episode, Turn, get_suite
from discogym.core import agent as agent_module
from discogym.core.agent import AgentEntry
from discogym.core.episode_loop import play_episode
from discogym.core.runner import RunConfig, Runner, plan_episode
from discogym.core.storage import RunDir
from tests.conftest import run_discogym

PINNED = {"pilot-v0": 92.5, "l2-v0": 92.5, "l3-v0": 87.5}


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
            assert solver.audit["support"] == "isolating"
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
    assert set(Spy.seen[-1]) == {"tier", "candidates", "reference_values", "ranges"}
    assert Spy.seen[-1]["reference_values"] == task.ground_truth["reference_values"]


def test_the_report_has_the_papers_tables(tmp_path):
    run(tmp_path, "pilot-v0", "ofat", "guess")
    from discogym.core.run_report import build_report

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
