"""The fine-tuning export round-trips: each conversation's actions, read back with the suite's own parser, solve
its task in a fresh environment; reruns give the same bytes; bad options fail with one clear line."""

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from discogym.interfaces.cli import app
from discogym.suites.crafting.env import CraftingEnv
from discogym.suites.crafting.recipes import RecipeBook
from discogym.suites.crafting.sft import export, text_condition
from discogym.suites.crafting.suite import suite

SPLIT = "test.small"


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_exported_conversation_replays_to_success(book: RecipeBook, tmp_path: Path) -> None:
    out = tmp_path / "sft.jsonl"
    written, skipped = export(SPLIT, out)
    tasks = {task.id: task for task in suite.tasks(SPLIT)}
    assert skipped == [] and written == len(tasks)
    lines = read_lines(out)
    assert [line["id"] for line in lines] == sorted(tasks)
    condition = text_condition(None)
    impossible_seen = 0
    for line in lines:
        task = tasks[line["id"]]
        env = suite.make_env(task, condition, 0)
        assert isinstance(env, CraftingEnv)
        messages = line["messages"]
        roles = [message["role"] for message in messages]
        assert roles[:2] == ["system", "user"] and roles[-1] == "assistant"
        assert all(a != b for a, b in pairwise(roles))  # user and assistant alternate
        assert messages[0]["content"] == env.text_prompt()
        assert messages[1]["content"] == env.brief()
        for index, message in enumerate(messages[2:], start=2):
            if message["role"] == "user":
                continue
            assert not env.done
            call = env.parse_text_action(message["content"])
            result = env.call(call.tool, call.args)
            assert result.ok, (task.id, message["content"])
            if index + 1 < len(messages):  # the next user turn is what the environment answered
                assert messages[index + 1]["content"] == result.text
        if task.ground_truth["impossible"]:
            impossible_seen += 1
            assert messages[-1]["content"].startswith("impossible: ")
            assert env.termination == "declared_impossible"
        else:
            assert env.termination == "crafted" and env.outcome()["crafted"], task.id
    assert 0 < impossible_seen < len(lines)


def test_reruns_are_byte_identical(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    export("train", first, limit=40)
    export("train", second, limit=40)
    assert first.read_bytes() == second.read_bytes()
    assert len(read_lines(first)) == 40


def test_a_condition_without_impossible_leaves_impossible_examples_out(tmp_path: Path) -> None:
    out = tmp_path / "ms.jsonl"
    written, skipped = export(SPLIT, out, "ms")
    impossible = {task.id for task in suite.tasks(SPLIT) if task.ground_truth["impossible"]}
    assert set(skipped) == impossible and written == len(suite.tasks(SPLIT)) - len(impossible)
    assert all("impossible" not in line["messages"][-1]["content"] for line in read_lines(out))


def test_bad_options_fail_with_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    cases = [
        (["--split", "nope", "--out", str(tmp_path / "x.jsonl")], "no split 'nope'"),
        (["--split", SPLIT, "--out", str(tmp_path / "missing" / "x.jsonl")], "missing"),
        (["--split", SPLIT, "--out", str(tmp_path)], str(tmp_path)),
        (["--split", SPLIT, "--condition", "image-high", "--out", str(tmp_path / "x.jsonl")], "text condition"),
    ]
    for args, expected in cases:
        ran = runner.invoke(app, ["crafting", "export-sft", *args])
        assert ran.exit_code != 0, args
        assert expected in ran.output, (args, ran.output)
        assert "Traceback" not in ran.output
    ran = runner.invoke(
        app, ["crafting", "export-sft", "--split", SPLIT, "--limit", "3", "--out", str(tmp_path / "ok")]
    )
    assert ran.exit_code == 0, ran.output
    assert "3 conversations written" in ran.output
