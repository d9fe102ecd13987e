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


def first_task(suite: str) -> str:
    listed = subprocess.run(
        [sys.executable, "-m", "discogym", "list", suite, "--json"], capture_output=True, text=True, check=True
    )
    return str(json.loads(listed.stdout)["tasks"][0]["id"])


def play(suite: str, server: Server, out: Path, *options: str) -> Episode:
    """One episode of ``suite``'s first task against ``server``; the episode written."""
    command = [sys.executable, "-m", "discogym", "run", suite, "--tasks", first_task(suite), "--out", str(out)]
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
    if mode == "native":  # the tools went to the server as tools, and the template took them
        assert all(body.get("tools") for body in server.bodies)
    else:
        assert not any(body.get("tools") for body in server.bodies)


def test_a_real_reply_that_is_no_call_is_the_agents_no_answer_quoted(server, tmp_path):
    server.clear()
    episode = play("petri", server, tmp_path, "--agent-opt", "max_tokens=4")  # too short to be a call
    outcome = episode.outcome
    assert outcome.termination == Termination.NO_ANSWER
    assert "last reply: " in str(outcome.agent_message) and len(server.usages) == 2  # and one retry in protocol
    reply = server.bodies[-1]["messages"][-2]  # the model's first reply, sent back with the retry
    assert reply["role"] == "assistant" and str(reply.get("content") or "")[:8] in str(outcome.agent_message)


def test_overflowing_the_servers_real_window_is_a_context_overflow(small_server, tmp_path):
    small_server.clear()
    episode = play("crafting", small_server, tmp_path, "--agent-opt", "context=full", "--agent-opt", "mode=text")
    assert episode.outcome.termination == Termination.CONTEXT_OVERFLOW, episode.outcome
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
