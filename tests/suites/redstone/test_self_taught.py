"""The self-taught reference: an engineer with no knowledge of redstone timing that asks the scientist (the same
agent as a sub-agent, measuring in its lab) and builds from the knowledge book alone; curriculum runs that carry
the book from level to level, and resume mid-chain."""

from collections.abc import Sequence
from pathlib import Path

import pytest

from discogym.core import Agent, AgentDecision, AgentOptions, ReportTable, ToolCall, Turn
from discogym.core.running.episode_loop import play_episode
from discogym.core.running.planning import Setting, plan_episode
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir
from discogym.suites.redstone.book import BookEntry, KnowledgeBook
from discogym.suites.redstone.facts import FACTS, MINECRAFT, NEEDED
from discogym.suites.redstone.suite import suite

SELF_TAUGHT = AgentOptions(name="self-taught")


def run(out: Path, *, setting: Setting = "curriculum", condition: str = "scientist", split: str = "official"):
    config = RunConfig.for_suite(suite, [SELF_TAUGHT], split=split, conditions=[condition], setting=setting)
    return Runner(suite, config, out).run()


def test_it_passes_all_25_tasks_in_the_curriculum_within_the_budget(tmp_path):
    summary = run(tmp_path)
    assert (summary.written, summary.faults) == (25, {})
    episodes = list(RunDir(tmp_path).iter_episodes())
    assert all(e.score.success for e in episodes)
    for episode in episodes:
        components = episode.score.components
        assert components["trials"] + components["scientist_trials"] <= 50
        questions = [e.call.args["question"] for e in episode.events if e.call.tool == "ask_scientist"]
        needed = [FACTS[name].question for name in NEEDED[components["family"]]]
        assert questions == (needed if components["level"] == "L1" else [])  # L2-L5 read the carried book
    first_e = next(e for e in episodes if e.key.task == "E_pulse_shaping_L1")
    claims = [entry["claim"] for entry in first_e.outcome.env["book_after"]["entries"]]
    assert claims == [FACTS[name].state(getattr(MINECRAFT, name)) for name in NEEDED["E"]]  # measured, not given


def test_without_the_scientist_it_learns_nothing_and_builds_nothing(tmp_path):
    summary = run(tmp_path, condition="hint", split="C")
    assert summary.written == 5
    for episode in RunDir(tmp_path).iter_episodes():
        assert not episode.score.success and episode.outcome.termination == "agent_stopped"
        assert "no scientist to ask" in (episode.outcome.agent_message or "")


def wrong_book(fact: str, value: int) -> dict[str, object]:
    """A book stating every fact right except ``fact``."""
    entries = [
        BookEntry(title=name, claim=FACTS[name].state(value if name == fact else getattr(MINECRAFT, name)))
        for name in NEEDED["E"]  # E's design uses every fact a design uses
    ]
    return KnowledgeBook(format="claim", entries=entries).model_dump(mode="json")


@pytest.mark.parametrize(
    ("fact", "value", "failing"),
    [("repeater_delay", 1, {"C", "E"}), ("lamp_off_delay", 2, {"E"}), ("torch_delay", 4, {"E"})],
)
def test_a_wrong_fact_in_the_book_fails_exactly_the_families_whose_designs_use_it(fact, value, failing):
    condition = suite.condition("scientist")
    passed = {}
    for task in suite.tasks("official"):
        if not task.id.endswith("_L2"):
            continue
        planned = plan_episode("redstone", task, condition, SELF_TAUGHT, 0, 0, "curriculum")
        planned = planned.model_copy(update={"carried": {"book": wrong_book(fact, value)}})
        episode, _ = play_episode(suite, planned)
        assert not any(e.call.tool == "ask_scientist" for e in episode.events)  # it trusts the book
        passed[episode.score.components["family"]] = episode.score.success
    assert {family for family, ok in passed.items() if not ok} == failing


def test_a_curriculum_killed_after_l2_resumes_at_l3_with_the_l2_book_and_ends_as_an_uninterrupted_run(tmp_path):
    whole, resumed = tmp_path / "whole", tmp_path / "resumed"
    run(whole, split="E")
    run(resumed, split="E")
    store = RunDir(resumed)
    kept = {}
    for path in sorted(store.episode_paths()):
        if "_L1" in path.name or "_L2" in path.name:
            kept[path.name] = path.read_bytes()
        else:
            path.unlink()  # what a kill after L2 leaves: L1 and L2 written whole, nothing after
    summary = run(resumed, split="E")
    assert (summary.skipped, summary.written) == (2, 3)
    by_task = {episode.key.task: episode for episode in store.iter_episodes()}
    l2, l3 = by_task["E_pulse_shaping_L2"], by_task["E_pulse_shaping_L3"]
    assert l3.carried is not None and l3.carried["book"] == l2.outcome.env["book_after"]
    assert not any(e.call.tool == "ask_scientist" for e in l3.events)  # the L2 book answers what it needs
    files = {path.name: path.read_bytes() for path in RunDir(whole).episode_paths()}
    assert {path.name: path.read_bytes() for path in store.episode_paths()} == files
    assert all(files[name] == data for name, data in kept.items())


def table(tables: list[ReportTable], title: str) -> list[list[object]]:
    return next(t.rows for t in tables if t.title == title)


def test_the_report_decomposes_the_gaps_and_counts_the_trials_per_family(tmp_path):
    conditions = ["baseline", "hint", "hint+scientist", "hint+scientist-summary"]
    settings: list[Setting] = ["independent", "curriculum"]
    for setting in settings:
        config = RunConfig.for_suite(suite, [SELF_TAUGHT], split="C", conditions=conditions, repeats=2, setting=setting)
        Runner(suite, config, tmp_path / setting).run()
    episodes = [e for setting in ("independent", "curriculum") for e in RunDir(tmp_path / setting).iter_episodes()]
    tables = suite.tables(episodes)
    gaps = {(row[2], row[3]): row[4:] for row in table(tables, "redstone: gap decomposition (SciCrafter Table 1)")}
    assert gaps[("curriculum", "baseline")] == [0.0, None, [0.0, 0.0], 2]
    assert gaps[("curriculum", "discovery gap (hint+scientist - hint)")][0] == 1.0
    assert gaps[("curriculum", "application gap (1 - hint+scientist)")][0] == 0.0
    assert gaps[("independent", "consolidation gap (claim - summary book)")][0] == 0.0
    assert ("curriculum", "w/ scientist alone") not in gaps  # that condition was not run
    per_pass = {row[2]: row[7] for row in table(tables, "redstone: trials by family")}
    # C's design needs the repeater delay: 12 presses to measure, 1 to check each device.
    assert per_pass["hint+scientist@curriculum"] == 12 + 5 and per_pass["hint+scientist"] == 5 * (12 + 1)


class Asker(Agent):
    """An engineer that asks the questions no design needs, then stops."""

    QUESTIONS = (FACTS["dust_decay"].question, FACTS["repeater_locking"].question, "What colour is the sky?")

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        if len(history) < len(self.QUESTIONS):
            return AgentDecision(call=ToolCall(tool="ask_scientist", args={"question": self.QUESTIONS[len(history)]}))
        return AgentDecision(message="thanks")


def test_the_scientist_also_measures_dust_decay_and_repeater_locking_and_says_what_it_cannot_answer():
    task = suite.tasks("official")[0]
    planned = plan_episode("redstone", task, suite.condition("scientist"), SELF_TAUGHT, 0, 0)
    episode, _ = play_episode(suite, planned, Asker())
    decay, locking, sky = (event.result.text for event in episode.events)
    assert FACTS["dust_decay"].read(decay) == 1 and FACTS["repeater_locking"].read(locking) == 3
    assert "I can investigate only these questions" in sky
    assert episode.outcome.env["scientist_trials"] == 3 + 6  # three presses for decay; three unlocked, three locked
