"""``discogym play``: a person's game is kept however it ends, the line syntax, usage lines, pictures as files."""

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from discogym.core import ToolCall, ToolSpec, get_suite
from discogym.core.running.storage import RunDir
from discogym.core.terminal.human import parse_tool_line, tool_line, usage_line
from tests.conftest import REPO, cli_environment, discogym_command, run_discogym


def episodes(out: Path):
    return list(RunDir(out).iter_episodes())


def read_until(process: subprocess.Popen[bytes], marker: bytes, count: int) -> bytes:
    """What ``process`` printed until ``marker`` appeared ``count`` times (the prompt, flushed by input())."""
    assert process.stdout is not None
    seen = b""
    deadline = time.monotonic() + 60
    while seen.count(marker) < count:
        assert time.monotonic() < deadline, seen
        chunk = os.read(process.stdout.fileno(), 4096)
        assert chunk, seen  # the game ended early
        seen += chunk
    return seen


def test_ctrl_c_in_play_keeps_the_episode_as_abandoned_and_says_where(tmp_path):
    process = subprocess.Popen(
        discogym_command("play", "toy", "dev-00", "--out", str(tmp_path)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_environment(),
        cwd=REPO,
    )
    assert process.stdin is not None
    read_until(process, b"> ", 1)
    process.stdin.write(b"probe 4\n")
    process.stdin.flush()
    read_until(process, b"> ", 1)  # the probe's result, then the next prompt
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    (episode,) = episodes(tmp_path)
    assert process.returncode == 0, stderr
    assert episode.outcome.termination == "abandoned" and episode.outcome.agent_message == "interrupted (Ctrl-C)"
    assert [event.call for event in episode.events] == [ToolCall(tool="probe", args={"n": 4})]
    assert episode.score.error is None  # scored from its log like any episode
    assert f"episode written to {RunDir(tmp_path).episode_path(episode.key)}" in stderr.decode()


def test_end_of_input_in_play_keeps_the_episode_as_abandoned(tmp_path):
    done = run_discogym("play", "toy", "dev-00", "--out", str(tmp_path), input="probe 4\n")
    assert done.returncode == 0, done.stderr
    (episode,) = episodes(tmp_path)
    assert episode.outcome.termination == "abandoned" and len(episode.events) == 1
    assert "abandoned); episode written to" in done.stderr


def test_the_intro_says_how_to_quit(tmp_path):
    done = run_discogym("play", "toy", "dev-00", "--out", str(tmp_path), input="quit\n")
    assert "'quit' ends the episode, and so do Ctrl-D and Ctrl-C" in done.stdout
    (episode,) = episodes(tmp_path)
    assert episode.outcome.termination == "agent_stopped"


def test_pictures_are_saved_as_files_next_to_the_episode_and_their_paths_printed(tmp_path):
    done = run_discogym(
        "play", "toy", "dev-00", "--condition", "pictures", "--out", str(tmp_path), input="probe 4\nprobe 6\nquit\n"
    )
    assert done.returncode == 0, done.stderr
    (episode,) = episodes(tmp_path)
    folder = tmp_path / "play-images" / RunDir(tmp_path).episode_path(episode.key).stem
    assert sorted(path.name for path in folder.iterdir()) == ["step-001.png", "step-002.png"]
    assert f"(picture: {folder / 'step-001.png'})" in done.stdout
    assert (folder / "step-002.png").read_bytes().startswith(b"\x89PNG")


def test_usage_lines_are_derived_from_the_json_schema():
    spec = ToolSpec(
        name="experiment",
        description="",
        parameters={
            "type": "object",
            "properties": {
                "config": {"type": "object", "additionalProperties": {"type": "number"}},
                "metric": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                "n": {"type": "integer", "minimum": 0, "maximum": 9},
                "direction": {"enum": ["up", "down"], "type": "string"},
                "cells": {"type": "array", "items": {"type": "integer"}},
            },
            "required": ["config", "n", "direction"],
        },
    )
    assert usage_line(spec) == (
        "experiment config={NAME: NUMBER, ...} [metric=TEXT] n=0..9 direction=up|down [cells=[N, ...]]"
    )


def test_the_line_syntax_reads_key_values_json_values_and_json_objects():
    assert parse_tool_line("submit parameter=mu direction=up") == ToolCall(
        tool="submit", args={"parameter": "mu", "direction": "up"}
    )
    assert parse_tool_line('experiment config_b={"mu": 0.5, "k": 2} metric=clusters') == ToolCall(
        tool="experiment", args={"config_b": {"mu": 0.5, "k": 2}, "metric": "clusters"}
    )
    assert parse_tool_line('probe {"n": 3}') == ToolCall(tool="probe", args={"n": 3})
    assert parse_tool_line("roll") == ToolCall(tool="roll", args={})
    with pytest.raises(ValueError, match="expected key=value at 'oops'"):
        parse_tool_line("probe n=3 oops")


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@given(
    name=st.from_regex(r"[a-z_]{1,8}", fullmatch=True),
    args=st.dictionaries(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True), values, max_size=4),
)
def test_a_call_written_as_a_line_reads_back_as_the_same_call(name, args):
    call = ToolCall(tool=name, args=args)
    assert parse_tool_line(tool_line(call)) == call


@pytest.mark.parametrize("suite_name", ["petri", "crafting", "redstone", "autumn"])
def test_each_suites_intro_example_is_a_valid_action_of_its_task(suite_name):
    suite = get_suite(suite_name)
    task = suite.tasks(suite.splits()[0])[0]
    env = suite.make_env(task, suite.conditions()[0], 0)
    example = env.example_action()
    assert example is not None
    call = env.parse_text_action(example) if env.text_prompt() is not None else parse_tool_line(example)
    result = env.call(call.tool, call.args)
    assert result.ok, result.text
