"""``discogym estimate``'s three cases, repeats, several suites, the papers' scaffolds and the tokenizer it names."""

import json

import pytest
from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser

from discogym.core import AgentOptions, ToolCall, get_suite
from discogym.llm.context import estimate_tokens
from discogym.llm.estimate import (
    CASES,
    EXPECTED_WORDS,
    OfflineEngine,
    estimate_run,
    estimate_suites,
    grand_total,
    reference_calls,
)
from discogym.llm.models import parse_model
from discogym.llm.tokens import MESSAGE_TOKENS, TiktokenCounter, TokenCounter, shipped_o200k, token_counter
from tests.conftest import run_discogym
from tests.core.closing_suite import suite as closing
from tests.core.toy_suite import DigitSuite
from tests.llm.test_estimate import NoReference, autumn_planned

SONNET = AgentOptions(name="llm", model="anthropic/claude-sonnet-4-5")


def petri_task() -> str:
    """The first task of petri's default set."""
    petri = get_suite("petri")
    return petri.tasks(petri.splits()[0])[0].id


@pytest.fixture(scope="module")
def gravity():
    """The estimate of Claude Sonnet 4.5 on autumn's gravity-1 at the default settings."""
    return estimate_run(get_suite("autumn"), SONNET, tasks=["gravity-1"])


def test_autumns_expected_case_explores_to_the_step_cap_then_takes_the_test(gravity):
    suite, planned = autumn_planned(SONNET)
    oracle = reference_calls(suite, planned)
    (low,), (expected,), (high,) = gravity.low, gravity.rows, gravity.high
    assert low.calls == len(oracle)  # the oracle goes to the test at once
    test_calls = [call for call in oracle if call.tool != "go_to_test"]
    assert expected.calls == high.calls == 200 + len(test_calls)  # the text condition's cap
    assert expected.requests >= 200 + len(test_calls) and expected.compactions > 0
    assert expected.usage.input_tokens >= 1_000_000 > low.usage.input_tokens
    assert "200 exploration acts" in gravity.document()["cases"]["expected"]["assumes"]


def test_low_expected_high_are_in_order(gravity):
    petri = estimate_run(get_suite("petri"), SONNET, tasks=[petri_task()])
    for estimate in (gravity, petri):
        cases = [estimate.totals(case.name) for case in CASES]
        for key in ("input_tokens", "output_tokens", "requests", "dollars"):
            low, expected, high = (case[key] for case in cases)
            assert low <= expected <= high, (estimate.suite, key)
        assert cases[0]["dollars"] < cases[2]["dollars"]
    (low,), (high,) = petri.low, petri.high
    assert high.calls == 2 * low.calls - 1  # twice the reference's steps, then its last call


def test_repeats_multiply_the_totals_and_say_so():
    suite = get_suite("petri")
    task = [petri_task()]
    once = estimate_run(suite, SONNET, tasks=task)
    thrice = estimate_run(suite, SONNET, tasks=task, repeats=3)
    assert [row.usage for row in thrice.rows] == [row.usage for row in once.rows]  # a row is one play
    for case in CASES:
        one, three = once.totals(case.name), thrice.totals(case.name)
        for key in ("input_tokens", "cached_tokens", "output_tokens", "requests"):
            assert three[key] == 3 * one[key]
        assert three["dollars"] == pytest.approx(3 * one["dollars"])
    shown = run_discogym(
        "estimate", "petri", "--model", "anthropic/claude-sonnet-4-5", "--tasks", task[0], "--repeats", "2"
    )
    assert shown.returncode == 0, shown.stderr
    assert "2 repeats" in shown.stdout and "replays the same calls" in shown.stdout


def test_several_suites_get_one_total_and_a_suite_without_a_reference_is_skipped():
    skipped: list[str] = []
    estimates = estimate_suites([DigitSuite(), NoReference(), closing], [SONNET], skipped=skipped)
    assert [estimate.suite for estimate in estimates] == ["toy", "closing"]
    assert len(skipped) == 1 and "no reference agent" in skipped[0]
    total = grand_total(estimates)
    for case in CASES:
        assert total[case.name]["input_tokens"] == sum(e.totals(case.name)["input_tokens"] for e in estimates)
        assert total[case.name]["dollars"] == pytest.approx(sum(e.totals(case.name)["dollars"] for e in estimates))
    both = {"DISCOGYM_SUITES": "tests.core.toy_suite:suite,tests.core.closing_suite:suite"}
    shown = run_discogym("estimate", "toy", "closing", "--model", "anthropic/claude-sonnet-4-5", "--json", **both)
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    assert [e["suite"] for e in document["estimates"]] == ["toy", "closing"]
    assert document["total"]["expected"]["input_tokens"] == sum(
        e["cases"]["expected"]["input_tokens"] for e in document["estimates"]
    )
    refused = run_discogym("estimate", "toy", "closing", "--model", "openai/gpt-5", "--tasks", "x", **both)
    assert refused.returncode == 2 and "single suite" in refused.stderr


def test_the_papers_scaffolds_estimate_in_their_own_syntax(gravity):
    bench = estimate_run(
        get_suite("autumn"), SONNET.model_copy(update={"options": {"scaffold": "autumnbench"}}), tasks=["gravity-1"]
    )
    (native,), (scaffolded,) = gravity.rows, bench.rows
    # Every reply was read as an action (an unreadable one would be asked again, and end the episode early).
    assert scaffolded.ending == native.ending and scaffolded.requests == scaffolded.calls
    assert scaffolded.compactions == 0 and scaffolded.peak_prompt > native.peak_prompt  # the whole history
    crafting = get_suite("crafting")
    planned = next(
        task.id for task in crafting.tasks(crafting.splits()[0])[:40] if not task.ground_truth.get("impossible")
    )
    plancraft = SONNET.model_copy(update={"options": {"scaffold": "plancraft"}})
    estimate = estimate_run(crafting, plancraft, tasks=[planned])
    (low,), (expected,) = estimate.low, estimate.rows
    assert low.calls > 1 and low.requests == low.calls and low.ending == expected.ending
    assert expected.usage.output_tokens > low.usage.output_tokens  # the words went with each reply


def test_the_tokenizer_named_is_the_one_that_counted(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    spec = parse_model("openai/gpt-5", None)
    counter, _ = token_counter(spec)
    messages: list[ChatMessage] = [
        ChatMessageSystem(content="red blue red " * 50),
        ChatMessageUser(content="frame 0: black"),
    ]
    if shipped_o200k() is None:
        assert counter.name == "characters/4"
    else:
        assert isinstance(counter, TiktokenCounter) and counter.name == "tiktoken o200k_base"
        expected = sum(len(counter.encoding.encode(m.text)) + MESSAGE_TOKENS for m in messages)
        assert counter.prompt(messages, []) == expected != estimate_tokens(messages, [])
    engine = OfflineEngine([ToolCall(tool="act", args={"action": "up"})], counter=counter)
    assert engine.complete(messages, []).usage.input_tokens == counter.prompt(messages, [])
    claude, reason = token_counter(parse_model("anthropic/claude-sonnet-4-5", None))
    assert type(claude) is TokenCounter and claude.name == "characters/4" and "anthropic" in reason
    shown = run_discogym(
        "estimate", "petri", "--model", "openai/gpt-5", "--tasks", petri_task(),
        "--json", TIKTOKEN_CACHE_DIR=str(tmp_path),
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    (document,) = json.loads(shown.stdout)["estimates"]
    assert document["tokenizer"] == counter.name


def test_each_reply_carries_the_models_words():
    engine = OfflineEngine([ToolCall(tool="act", args={"action": "up"})], words=EXPECTED_WORDS)
    reply = engine.complete([ChatMessageUser(content="go")], [])
    assert reply.tool_calls and reply.reasoning is not None
    assert abs(reply.usage.output_tokens - EXPECTED_WORDS) <= 10
