"""Bounded context on long episodes: compaction, the notes tool, and every policy on every suite."""

import itertools
import json
from pathlib import Path

import pytest
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

from discogym.core import AgentOptions, Episode, MemoryEvent, Score, Termination, get_suite
from discogym.core.reporting.run_report import MEMORY_TITLE, build_report
from discogym.core.running.episode_loop import score_episode
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir
from discogym.interfaces.inspect.logs import eval_log
from discogym.interfaces.web.browse import replay_steps
from discogym.llm.context import (
    SCALE_BOUNDS,
    SUMMARY_PROMPT,
    CompactContext,
    FullContext,
    WindowContext,
    estimate_tokens,
)
from discogym.llm.notes import MAX_NOTE_ROUNDS
from tests.llm.conftest import episodes, llm_options, run_llm
from tests.llm.fake_endpoint import Calls, FakeEndpoint, Say, Status, prompt_tokens

SUMMARY = "I moved around; the blocks fall one cell per step."
WRITE = ("notes", json.dumps({"action": "write", "text": "blocks fall one cell per step"}))
MOVES = ["up", "right", "down", "left"]


def _play(
    out: Path, fake: FakeEndpoint, suite_name: str, split: str, task: str, calls: list[tuple[str, str]], **options: str
) -> Episode:
    fake.script.extend([*(Calls([call]) for call in calls), Say("done"), Say("done")])  # then a no-answer
    suite = get_suite(suite_name)
    agent = llm_options(fake)
    agent = agent.model_copy(update={"options": {**agent.options, **options}})
    config = RunConfig.for_suite(suite, [agent], split=split, tasks=[task])
    Runner(suite, config, out).run()
    (episode,) = RunDir(out).iter_episodes()
    return episode


def _reference(out: Path, suite_name: str, split: str, task: str) -> Episode:
    suite = get_suite(suite_name)
    Runner(suite, RunConfig.for_suite(suite, [AgentOptions(name="reference")], split=split, tasks=[task]), out).run()
    (episode,) = RunDir(out).iter_episodes()
    return episode


def _memory(episode: Episode, kind: str) -> list[MemoryEvent]:
    entries = [*(entry for event in episode.events for entry in event.memory), *episode.outcome.final_memory]
    return [entry for entry in entries if entry.kind == kind]


def _exploring(count: int) -> list[tuple[str, str]]:
    return [("act", json.dumps({"action": MOVES[i % 4]})) for i in range(count)]


def test_compaction_replaces_older_turns_by_the_models_summary_and_is_logged_and_billed(tmp_path, fake):
    fake.summary = SUMMARY
    calls = [*_exploring(12), ("go_to_test", "{}")]
    episode = _play(tmp_path, fake, "autumn", "mfp", "gravity-2", calls, compact_at="3000")
    compactions = _memory(episode, "compaction")
    assert compactions and all(c.text == SUMMARY and c.replaced_turns and c.usage for c in compactions)
    asked = [r for r in fake.requests if SUMMARY_PROMPT in json.dumps(r.body["messages"][-1])]
    assert len(asked) == len(compactions)
    assert all("tools" not in r.body for r in asked)  # asked with tool_choice none (Inspect drops the tools then)
    after = fake.requests[fake.requests.index(asked[0]) + 1].body["messages"]
    assert [m["role"] for m in after[:3]] == ["system", "user", "user"] and SUMMARY in after[2]["content"]
    assert [m["role"] for m in after[3:]] == ["assistant", "tool"] * 2  # the newest two turns, word for word
    assert len(after) < len(asked[0].body["messages"])
    billed = sum(prompt_tokens(r.body, "chat") for r in fake.requests)
    assert episode.usage().input_tokens == billed  # the summaries' requests are billed with the rest
    assert episode.provenance.agent_settings["context"] == "compact"
    assert episode.provenance.agent_settings["compact_at"] == 3000
    rows = {t.title: t for t in build_report(tmp_path).tables}[MEMORY_TITLE].rows
    assert rows[0][8] == len(compactions)  # compactions, after the 8 key columns (suite, set, ..., context)
    assert rows[0][6:8] == ["none", "compact"]  # the scaffold and the context policy
    step = next(s for s in replay_steps(episode) if s["memory"])
    assert step["memory"][0]["kind"] == "compaction" and step["memory"][0]["text"] == SUMMARY
    (sample,) = eval_log([episode], "2026-01-01T00:00:00+00:00").samples or []
    assert [e.event for e in sample.events] == ["compaction"] * len(compactions)
    assert (sample.events[0].metadata or {})["text"] == SUMMARY


def test_an_overflow_under_compact_forces_a_compaction_and_asks_again(tmp_path, fake):
    fake.summary = SUMMARY
    too_long = Status(400, message="too many tokens", error_code="context_length_exceeded")
    fake.script.extend([Calls([call]) for call in _exploring(4)])
    fake.script.append(too_long)  # the fifth request: refused, then a summary, then the same request shorter
    episode = _play(tmp_path, fake, "autumn", "mfp", "gravity-2", [("go_to_test", "{}")])
    (compaction,) = _memory(episode, "compaction")
    assert compaction.replaced_turns == 3  # all but the newest turn
    assert episode.outcome.termination != Termination.CONTEXT_OVERFLOW


def test_a_compaction_that_drops_turns_counts_them_with_those_it_summarised():
    said = "a result long enough to count " * 4
    messages: list[ChatMessage] = [ChatMessageSystem(content="rules"), ChatMessageUser(content="the brief")]
    for step in range(4):
        messages += [ChatMessageAssistant(content=f"call {step}"), ChatMessageUser(content=said)]
    policy = CompactContext(threshold=10, keep=1)
    policy.pin(2)
    compaction = policy.compaction(messages, [])
    assert compaction is not None and SUMMARY_PROMPT in str(compaction.request()[-1].content)
    assert compaction.drop_oldest()  # the summary request was too long: the oldest of the 3 going goes unsummarised
    assert compaction.done("the summary") == 3  # 1 dropped and 2 summarised, of 4 turns: the newest is kept
    assert str(policy.prompt(messages)[2].content).endswith("the summary") and policy.compaction(messages, []) is None
    assert FullContext().compaction(messages, []) is None and WindowContext(2).compaction(messages, []) is None


def test_the_threshold_is_met_as_the_endpoint_counts_tokens_not_as_a_quarter_of_the_characters():
    said = '[I12] 3x oak_planks, {"slot": 4} ' * 8
    messages: list[ChatMessage] = [ChatMessageSystem(content="rules"), ChatMessageUser(content="the brief")]
    for step in range(4):
        messages += [ChatMessageAssistant(content=f"call {step}"), ChatMessageUser(content=said)]
    estimated = estimate_tokens(messages, [])
    policy = CompactContext(threshold=estimated + 50, keep=1)
    policy.pin(2)
    assert policy.compaction(messages, []) is None  # by the characters, the prompt is under the threshold
    policy.counted(messages[:-2], [], 2 * estimate_tokens(messages[:-2], []))  # the server counted twice as many
    assert policy.scale == 2.0 and policy.compaction(messages, []) is not None
    policy.counted(messages, [], 10**9)  # an absurd usage report moves the estimate only so far
    assert policy.scale == SCALE_BOUNDS[1]


def test_a_prompt_that_would_not_fit_the_window_compacts_even_when_the_older_turns_are_short():
    messages: list[ChatMessage] = [ChatMessageSystem(content="rules"), ChatMessageUser(content="the brief")]
    for said in ["short", "short", "long " * 400, "long " * 400]:
        messages += [ChatMessageAssistant(content="a call"), ChatMessageUser(content=said)]
    prompt = estimate_tokens(messages, [])
    assert CompactContext(threshold=prompt // 2).compaction(messages, []) is None  # the going turns are too short
    policy = CompactContext(threshold=prompt // 2, window=prompt)
    policy.pin(2)
    compaction = policy.compaction(messages, [])
    assert compaction is not None and compaction.done("the summary") == 3  # all but the newest, as after an overflow


def test_compaction_keeps_the_cached_prefix_between_its_rare_steps(tmp_path, fake):
    fake.summary = SUMMARY
    _play(tmp_path, fake, "autumn", "mfp", "gravity-2", _exploring(12), compact_at="3000")
    sent = [r.body["messages"] for r in fake.requests if SUMMARY_PROMPT not in json.dumps(r.body["messages"][-1])]
    grows = sum(later[: len(earlier)] == earlier for earlier, later in itertools.pairwise(sent))
    assert grows >= len(sent) - 4  # every request but the few after a compaction extends the one before


def test_notes_cost_no_step_and_end_every_prompt(tmp_path, fake):
    fake.script.extend([Calls([WRITE]), Calls([WRITE, ("act", json.dumps({"action": "up"}))])])
    episode = _play(tmp_path, fake, "autumn", "mfp", "gravity-2", [], context="full")
    assert [e.call.tool for e in episode.events] == ["act"]  # the notes are no calls of the environment
    notes = [entry for entry in episode.events[0].memory]
    assert [n.action for n in notes] == ["write", "write"] and "Note 2 written." in notes[1].text
    after_act = fake.requests[2].body["messages"]
    last = after_act[-1]
    assert last["role"] == "tool" and last["content"].endswith(
        "Your notes (58 of 4,000 characters):\n1. blocks fall one cell per step\n2. blocks fall one cell per step"
    )
    assert json.dumps(after_act).count("Your notes (") == 1  # only the last message shows them
    assert "notes" in [t["function"]["name"] for t in fake.requests[0].body["tools"]]
    rows = {t.title: t for t in build_report(tmp_path).tables}[MEMORY_TITLE].rows
    assert rows[0][12] == 2  # notes written


def test_notes_are_bounded_and_their_mistakes_are_answered(tmp_path, fake):
    long_note = ("notes", json.dumps({"action": "write", "text": "x" * 200}))
    bad_delete = ("notes", json.dumps({"action": "delete", "number": 7}))
    fake.script.extend([Calls([long_note]), Calls([bad_delete])])
    episode = _play(tmp_path, fake, "autumn", "mfp", "gravity-2", [("go_to_test", "{}")], notes_chars="100")
    answers = [entry.text for entry in episode.events[0].memory]
    assert "the notes hold 100 characters in all" in answers[0]
    assert "delete needs `number`" in answers[1]


def test_a_model_that_only_keeps_notes_ends_as_a_no_answer(tmp_path, fake):
    fake.script.extend([Calls([WRITE])] * MAX_NOTE_ROUNDS)
    episode = _play(tmp_path, fake, "autumn", "mfp", "gravity-2", [])
    assert episode.outcome.termination == Termination.NO_ANSWER
    assert "used only the notes tool" in str(episode.outcome.agent_message)
    assert len(episode.outcome.final_memory) == MAX_NOTE_ROUNDS


def test_the_text_protocol_offers_the_notes_too(tmp_path, fake):
    fake.script.extend([Say(json.dumps({"tool": "notes", "args": {"action": "write", "text": "hi"}}))])
    run_llm(tmp_path, llm_options(fake, mode="text"), tasks=["tiny-00"])
    (episode,) = episodes(tmp_path)
    assert episode.events[0].memory[0].action == "write"
    assert "\n- notes: Your notes" in fake.requests[0].body["messages"][0]["content"]


def test_notes_can_be_turned_off_and_a_window_can_be_set_for_an_unknown_model(tmp_path, fake):
    run_llm(tmp_path, llm_options(fake, notes="false", context_window="32000"), tasks=["tiny-00"])
    assert "tools" in fake.requests[0].body
    assert "notes" not in [t["function"]["name"] for t in fake.requests[0].body["tools"]]
    settings = episodes(tmp_path)[0].provenance.agent_settings
    assert settings["context_window"] == 32000 and settings["compact_at"] == 16000


SUITE_TASKS = [
    ("redstone", "A", "A_simultaneous_lights_L1"),
    ("petri", "core-v1", "market-101"),
    ("crafting", "test.small", "TEST0487"),
    ("autumn", "mfp", "gravity-2"),
]
POLICIES = {"full": {"context": "full"}, "window": {"context": "window", "window_turns": "2"}, "compact": {}}


@pytest.mark.parametrize(("suite_name", "split", "task"), SUITE_TASKS, ids=[s for s, _, _ in SUITE_TASKS])
def test_every_suite_under_every_policy_scores_as_its_reference_and_rescores_from_the_file(
    tmp_path, fake, suite_name, split, task
):
    fake.summary = SUMMARY
    reference = _reference(tmp_path / "reference", suite_name, split, task)
    calls = [WRITE] + [(e.call.tool, json.dumps(e.call.args)) for e in reference.events]
    for name, policy in POLICIES.items():
        fake.script.clear()  # what the last episode left unused
        options = {**policy, "compact_at": "100"} if name == "compact" else policy
        episode = _play(tmp_path / name, fake, suite_name, split, task, calls, **options)
        assert (episode.outcome.termination, episode.score.value) == (
            reference.outcome.termination,
            reference.score.value,
        ), name
        stored = Episode.model_validate_json((RunDir(tmp_path / name).episode_paths()[0]).read_text())
        assert score_episode(get_suite(suite_name), stored.model_copy(update={"score": Score()})).score == stored.score
        assert _memory(stored, "notes")[0].action == "write"
        if name == "compact" and len(reference.events) > 2:
            assert _memory(stored, "compaction"), f"{suite_name}: no compaction under compact_at=100"
