"""``discogym estimate``: recorded calls replayed offline through the llm agent, against what a run of the same calls
bills at the fake endpoint."""

import json
from pathlib import Path

import pytest

from discogym.core import AgentFactory, AgentOptions, ToolCall, UserError, get_suite
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir
from discogym.llm.context import SUMMARY_PROMPT
from discogym.llm.estimate import (
    OfflineEngine,
    estimate_episode,
    estimate_run,
    exploration,
    llm_parts,
    reference_calls,
)
from tests.conftest import run_discogym
from tests.core.toy_suite import DigitSuite
from tests.llm.conftest import llm_options
from tests.llm.fake_endpoint import Calls, FakeEndpoint, Say

# What the fake answers when asked for a summary, about 400 tokens: what the estimate's stand-in is told to be.
SUMMARY = " ".join(f"Try {i}: moving left shifted the player one cell; the blocks kept falling." for i in range(21))


def autumn_planned(agent: AgentOptions, task: str = "gravity-1"):
    suite = get_suite("autumn")
    config = RunConfig.for_suite(suite, [AgentOptions(name="random")], tasks=[task])
    from discogym.core.running.planning import plan_episodes

    (planned,) = plan_episodes(suite, config.model_copy(update={"agents": [agent]}))
    return suite, planned


def billed(calls: list[ToolCall], agent: AgentOptions, fake: FakeEndpoint, out: Path):
    """The episode of a real run making ``calls`` through the fake endpoint, and how many requests it sent."""
    suite = get_suite("autumn")
    fake.script.extend([Calls([(call.tool, json.dumps(call.args))]) for call in calls] + [Say("done")])
    Runner(suite, RunConfig.for_suite(suite, [agent], tasks=["gravity-1"]), out).run()
    (episode,) = RunDir(out).iter_episodes()
    return episode


@pytest.mark.parametrize(
    ("policy", "explore"),
    [({"context": "full"}, 0), ({"compact_at": "4000"}, 40)],
    ids=["full", "compact"],
)
def test_the_estimate_is_within_a_fifth_of_what_a_run_of_the_same_calls_bills(fake, tmp_path, policy, explore):
    fake.summary = SUMMARY
    agent = llm_options(fake, timeout_s="30", **policy)
    suite, planned = autumn_planned(agent)
    calls = exploration(explore) + reference_calls(suite, planned)
    episode = billed(calls, agent, fake, tmp_path / "run")
    spec, settings, facts = llm_parts(agent)
    row = estimate_episode(suite, planned, calls, spec, settings, facts, summary_tokens=len(SUMMARY) // 4)
    real = episode.usage()
    assert row.requests == len(fake.requests)
    assert row.ending == episode.outcome.termination.value
    compactions = sum(m.kind == "compaction" for e in episode.events for m in e.memory)
    assert row.compactions == compactions
    if "compact_at" in policy:
        assert compactions >= 3
    assert 0.8 <= row.usage.input_tokens / real.input_tokens <= 1.2
    assert 0 < row.usage.cached_tokens < row.usage.input_tokens
    assert row.usage.output_tokens > 0 and row.dollars is None  # the fake model has no price


def test_the_offline_engine_answers_calls_summaries_and_text_and_caches_the_shared_prefix():
    from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser

    engine = OfflineEngine([ToolCall(tool="act", args={"action": "up"})], summary_tokens=100)
    head: list[ChatMessage] = [ChatMessageSystem(content="s" * 4000), ChatMessageUser(content="u" * 4000)]
    first = engine.complete(head, [])
    assert first.tool_calls[0].function == "act" and first.tool_calls[0].arguments == {"action": "up"}
    assert (first.usage.input_tokens, first.usage.cached_tokens) == (2000, 0)
    second = engine.complete([*head, first.message, ChatMessageUser(content=SUMMARY_PROMPT)], [], text_only=True)
    assert abs(len(second.text) // 4 - 100) <= 1 and second.usage.cached_tokens >= 2000
    third = engine.complete(head, [])
    assert third.text == "done" and third.usage.cached_tokens == 2000
    short = OfflineEngine([])
    assert [short.complete(head[:1], []).usage.cached_tokens for _ in range(2)] == [0, 0]  # under 1,024 tokens
    assert (engine.requests, engine.compactions) == (3, 1)
    text = OfflineEngine([ToolCall(tool="act", args={"action": "up"})], mode="text").complete(head, [])
    assert json.loads(text.text) == {"tool": "act", "args": {"action": "up"}}
    with pytest.raises(UserError, match="mode=suite"):
        OfflineEngine([ToolCall(tool="act", args={})], mode="suite")


def test_the_cli_prints_a_table_with_a_total_and_json_and_run_estimate_runs_nothing(tmp_path):
    shown = run_discogym("estimate", "autumn", "--model", "openai/gpt-5", "--tasks", "gravity-1", "--explore", "20")
    assert shown.returncode == 0, shown.stderr
    assert "gravity-1" in shown.stdout and "total, expected" in shown.stdout and "$" in shown.stdout
    assert "Tokens: " in shown.stdout
    as_json = run_discogym("estimate", "autumn", "--model", "openai/gpt-5", "--tasks", "gravity-1", "--json")
    assert as_json.returncode == 0, as_json.stderr
    (estimate,) = json.loads(as_json.stdout)["estimates"]
    assert estimate["total"]["input_tokens"] == estimate["tasks"][0]["input_tokens"] > 0
    assert estimate["total"]["dollars"] > 0
    out = tmp_path / "run"
    run = run_discogym(
        "run", "autumn", "--model", "openai/gpt-5", "--tasks", "gravity-1", "--out", str(out), "--estimate",
        "--json", OPENAI_API_KEY="",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["estimates"][0]["cases"] == estimate["cases"]
    assert not out.exists()


def test_a_token_limit_reaches_the_estimate_and_the_table_shows_each_tasks_ending(tmp_path):
    # issue 47: `run --estimate` ignored --token-limit, `estimate` refused it, and the table hid the ending
    task = ("--tasks", "TEST0001", "--model", "openai/gpt-5")
    unlimited = run_discogym("estimate", "crafting", *task, "--json")
    assert unlimited.returncode == 0, unlimited.stderr
    (free,) = json.loads(unlimited.stdout)["estimates"]
    assert free["tasks"][0]["ending"] == "crafted" and free["budgets"] == {}
    limit = free["tasks"][0]["input_tokens"] // 3
    shown = run_discogym("estimate", "crafting", *task, "--token-limit", str(limit))
    assert shown.returncode == 0, shown.stderr
    assert f"token limit {limit:,}" in shown.stdout and "ending" in shown.stdout
    assert "TEST0001" in shown.stdout and "token_limit" in shown.stdout
    run = run_discogym("run", "crafting", *task, "--out", str(tmp_path / "r"), "--estimate", "--json",
                       "--token-limit", str(limit), OPENAI_API_KEY="")  # fmt: skip
    (limited,) = json.loads(run.stdout)["estimates"]
    assert limited["budgets"] == {"token_limit": limit} and limited["tasks"][0]["ending"] == "token_limit"
    assert limited["tasks"][0]["input_tokens"] < free["tasks"][0]["input_tokens"]


def test_from_replays_an_earlier_runs_calls(tmp_path):
    suite = get_suite("autumn")
    Runner(suite, RunConfig.for_suite(suite, ["oracle"], tasks=["gravity-1"]), tmp_path).run()
    (episode,) = RunDir(tmp_path).iter_episodes()
    agent = AgentOptions(name="llm", model="openai/gpt-5", options={"context": "full"})
    estimate = estimate_run(suite, agent, from_run=tmp_path)
    (row,) = estimate.rows
    assert (row.task, row.calls) == ("gravity-1", len(episode.events))
    assert row.requests == len(episode.events)  # the episode ends with the last call's result
    assert estimate.document()["total"]["input_tokens"] == row.usage.input_tokens


class NoReference(DigitSuite):
    def reference_agents(self) -> dict[str, AgentFactory]:
        return {}


def test_bad_input_gets_a_message(tmp_path):
    gpt = AgentOptions(name="llm", model="openai/gpt-5")
    with pytest.raises(UserError, match="no reference agent"):
        estimate_run(NoReference(), gpt)
    with pytest.raises(UserError, match="holds no episodes"):
        estimate_run(get_suite("autumn"), gpt, from_run=tmp_path)
    with pytest.raises(UserError, match="cannot write its call"):
        estimate_run(get_suite("petri"), gpt.model_copy(update={"options": {"mode": "suite"}}))
    with pytest.raises(UserError, match="has no task 'nosuch'"):
        estimate_run(get_suite("autumn"), gpt, tasks=["nosuch"])
    shown = run_discogym("estimate", "autumn", "--model", "openai/gpt-5", "--from", str(tmp_path / "none"))
    assert shown.returncode == 2 and "no such run folder" in shown.stderr and "Traceback" not in shown.stderr
    unpriced = run_discogym("estimate", "autumn", "--model", "vllm/my-model", "--tasks", "weave-1")
    assert unpriced.returncode == 0, unpriced.stderr
    assert "no price" in unpriced.stdout and "No price for vllm/my-model" in unpriced.stdout
    nothing = run_discogym("run", "autumn", "--agent", "oracle", "--estimate")
    assert nothing.returncode == 2 and "give --model" in nothing.stderr
