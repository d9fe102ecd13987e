"""A real model end to end: SmolLM2-135M-Instruct served by llama.cpp's server (conftest.py), one episode per
suite in native tool calling and in text mode through ``--model openai-compatible/NAME@URL``, as a user runs it.

What only a real server shows: its chat template and its reading of tool calls, its own usage (equal to what the
episodes record), its real context window (asked of it, and overflowing it), and real replies that are no call.
The model is too small to play well; every check holds whatever it answers.
"""

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import messages_from_openai
from inspect_ai.tool import ToolInfo

from discogym.core import EndingKind, Episode, Termination, Usage
from discogym.core.running.storage import RunDir
from discogym.llm.models import parse_model
from discogym.llm.tokens import LlamaCppCounter, token_counter
from tests.real_model.conftest import Server

SUITES = ["crafting", "redstone", "petri", "autumn"]
# a slow CPU answers a 256-token reply in some 10 s; each episode stops at its token budget
AGENT = ["--agent-opt", "max_tokens=256", "--agent-opt", "timeout_s=600", "--token-limit", "6000"]


# native tool calling as a model this small manages it: the server's grammar makes every reply end in a call (text
# may come first, often long: hence the room), sampled hot enough to leave the loops it falls into
CALLING = [*("--agent-opt", "tool_choice=required", "--agent-opt", "notes=false"), "--agent-opt", "temperature=1.0"]
# crafting's tasks played in turn until the model has done what a check needs (it makes no call in some episodes:
# it may write text until its cap, twice, and end as no_answer); seven of the first eight are spares
CALLING_TASKS = [f"TEST{number:04d}" for number in range(8)]


def first_task(suite: str) -> str:
    listed = subprocess.run(
        [sys.executable, "-m", "discogym", "list", suite, "--json"], capture_output=True, text=True, check=True
    )
    return str(json.loads(listed.stdout)["tasks"][0]["id"])


def play(suite: str, server: Server, out: Path, *options: str, task: str | None = None) -> Episode:
    """One episode of ``suite``'s ``task`` (its first by default) against ``server``; the episode written."""
    command = [sys.executable, "-m", "discogym", "run", suite, "--tasks", task or first_task(suite), "--out", str(out)]
    ran = subprocess.run(
        [*command, "--model", server.model, *AGENT, *options, "--json"], capture_output=True, text=True, timeout=1800
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert json.loads(ran.stdout)["written"] == 1
    (episode,) = RunDir(out).iter_episodes()
    return episode


def recorded(episode: Episode) -> Usage:
    return episode.usage()


def billed(usages: list[dict[str, Any]]) -> tuple[int, int]:
    """The input and output tokens the server reported, summed."""
    return sum(u["prompt_tokens"] for u in usages), sum(u["completion_tokens"] for u in usages)


@pytest.mark.parametrize("mode", ["native", "text"])
@pytest.mark.parametrize("suite", SUITES)
def test_an_episode_records_exactly_what_the_server_billed(server, tmp_path, suite, mode):
    server.clear()
    episode = play(suite, server, tmp_path, "--agent-opt", f"mode={mode}")
    assert episode.outcome.termination.kind is not EndingKind.ERROR, episode.outcome
    spent = recorded(episode)
    assert len(server.usages) >= 1 and all(server.usages)  # the server reported usage for every request
    assert (spent.input_tokens, spent.output_tokens) == billed(server.usages)
    settings = episode.provenance.agent_settings
    assert settings["context_window"] == server.window  # asked of the server, not guessed
    assert settings["context_window_source"] == "the server's /props (llama.cpp's n_ctx)"
    if mode == "native":  # the tools went to the server as tools
        assert all(body.get("tools") for body in server.bodies)
    else:
        assert not any(body.get("tools") for body in server.bodies)


def test_a_real_reply_that_is_no_call_is_the_agents_no_answer_quoted(server, tmp_path):
    server.clear()
    episode = play("petri", server, tmp_path, "--agent-opt", "max_tokens=4", "--agent-opt", "mode=text")  # too short
    outcome = episode.outcome
    assert outcome.termination == Termination.NO_ANSWER
    assert "last reply: " in str(outcome.agent_message) and len(server.usages) == 2  # and one retry in protocol
    assert f"last reply: {server.answers[-1]['content']!r}" in str(outcome.agent_message)  # the server's, quoted


def test_overflowing_the_servers_real_window_is_a_context_overflow(small_server, tmp_path):
    small_server.clear()
    episode = play("crafting", small_server, tmp_path, "--agent-opt", "context=full", "--agent-opt", "mode=text")
    assert episode.outcome.termination == Termination.CONTEXT_OVERFLOW, episode.outcome
    assert "exceeds the available context size (1024 tokens)" in str(episode.outcome.agent_message)
    spent = recorded(episode)
    assert (spent.input_tokens, spent.output_tokens) == billed(small_server.usages)  # the refused request: none


@pytest.mark.parametrize("mode", ["native", "text"])
def test_the_estimate_counts_a_prompt_as_the_server_does(server, tmp_path, mode):
    server.clear()
    play("petri", server, tmp_path / "run", "--agent-opt", f"mode={mode}")
    counter, why = token_counter(parse_model(server.model, None))
    assert isinstance(counter, LlamaCppCounter) and "llama.cpp server" in why
    for body, usage in zip(server.bodies, server.usages, strict=True):  # the same requests, counted both ways
        tools = [ToolInfo.model_validate(tool["function"]) for tool in body.get("tools") or []]
        counted = counter.prompt(asyncio.run(messages_from_openai(body["messages"])), tools)
        assert abs(counted - usage["prompt_tokens"]) <= usage["prompt_tokens"] / 10, (counted, usage)
    command = [sys.executable, "-m", "discogym", "estimate", "petri", "--tasks", first_task("petri")]
    estimated = subprocess.run([*command, "--model", server.model, "--json"], capture_output=True, text=True)
    assert estimated.returncode == 0, estimated.stderr[-2000:]
    assert json.loads(estimated.stdout)["estimates"][0]["tokenizer"] == LlamaCppCounter.name


def calls_answered(server: Server) -> list[tuple[str, str]]:
    """The tool calls the server read in the model's replies, in order: name and arguments as it sent them."""
    found = [call["function"] for answer in server.answers for call in answer.get("tool_calls") or []]
    return [(call["name"], call["arguments"]) for call in found]


def test_the_calls_a_real_server_reads_are_the_episodes_calls(server, tmp_path):
    made = 0
    for task in CALLING_TASKS:
        server.clear()
        episode = play("crafting", server, tmp_path / task, *CALLING, "--agent-opt", "max_tokens=384", task=task)
        assert episode.provenance.agent_settings["tool_choice"] == "required"
        assert all(body["tool_choice"] == "required" for body in server.bodies)  # what the option asks of it
        answered = calls_answered(server)
        assert len(episode.events) <= len(answered)  # a limit may end the episode before its last calls
        for event, (name, arguments) in zip(episode.events, answered, strict=False):
            assert event.call.tool == name
            if isinstance(event.call.args, dict):
                assert event.call.args == json.loads(arguments)
            else:  # cut short by max_tokens: the suite's feedback, never a crash
                assert event.result is not None and not event.result.ok
        made += len(episode.events)
        if made:
            break
    assert made > 0, f"SmolLM2 made no call in {len(CALLING_TASKS)} episodes: the checks above saw nothing"


def test_the_default_policy_compacts_before_the_servers_real_window_overflows(compacting_server, tmp_path):
    server = compacting_server
    compactions = 0
    for task in CALLING_TASKS:
        server.clear()
        episode = play(
            "crafting",
            server,
            tmp_path / task,
            *CALLING,
            "--agent-opt",
            "max_tokens=384",
            "--token-limit",
            "15000",
            task=task,
        )
        assert episode.outcome.termination.kind is not EndingKind.ERROR
        assert episode.outcome.termination != Termination.CONTEXT_OVERFLOW, episode.outcome
        assert len(server.usages) == len(server.bodies)  # no request was refused for its length
        memory = [m for event in episode.events for m in event.memory] + episode.outcome.final_memory
        compactions += sum(m.kind == "compaction" for m in memory)
        if compactions:
            break
    assert compactions > 0, f"none of {len(CALLING_TASKS)} episodes outgrew the window: the model ended each early"
