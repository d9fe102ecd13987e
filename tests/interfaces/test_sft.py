"""discogym export-sft: each suite's reference episodes as conversations that replay, in a fresh environment, to
the same observations and the same end; reruns give the same bytes; what cannot be written is named."""

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from discogym.core import get_suite
from discogym.core.terminal.human import parse_tool_line
from tests.conftest import run_discogym

SPLITS = {
    "crafting": "test.small",
    "redstone": "training:3:12",
    "autumn": "gravity",  # training challenges take seconds each to make: the packaged ones here
    "petri": "training:3:1",
}


def export(suite: str, split: str, tmp_path: Path, *more: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    out = tmp_path / f"{suite}.jsonl"
    args = ["export-sft", suite, "--split", split, "--out", str(out), "--runs", str(tmp_path / "runs"), "--json"]
    done = run_discogym(*args, *more)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return lines, json.loads(done.stdout)


@pytest.mark.parametrize("suite_name", sorted(SPLITS))
def test_every_conversation_replays_to_the_same_observations_and_the_episodes_end(suite_name, tmp_path):
    suite = get_suite(suite_name)
    split = SPLITS[suite_name]
    lines, summary = export(suite_name, split, tmp_path)
    tasks = {task.id: task for task in suite.tasks(split)}
    assert summary["left_out"] == [] and [line["id"] for line in lines] == sorted(tasks)
    condition = suite.conditions()[0]
    for line in lines:
        messages = line["messages"]
        roles = [message["role"] for message in messages]
        assert roles[:2] == ["system", "user"] and roles[-1] == "assistant" and line["split"] == split
        assert all(a != b for a, b in pairwise(roles))  # user and assistant alternate
        # the world of the run's episode: seeds as the run made them (run seed 0, repeat 0)
        episode_file = next((tmp_path / "runs" / "episodes").glob(f"{line['id']}_*.json"))
        env_seed = json.loads(episode_file.read_text())["provenance"]["env_seed"]
        env = suite.make_env(tasks[line["id"]], condition, env_seed)
        parse = env.parse_text_action if env.text_prompt() is not None else parse_tool_line
        assert messages[1]["content"] == env.brief()
        for index, message in enumerate(messages[2:], start=2):
            if message["role"] == "user":
                continue
            assert not env.done, (line["id"], index)
            call = parse(message["content"])
            result = env.call(call.tool, call.args)
            if index + 1 < len(messages):  # the next user turn is what the environment answered
                assert messages[index + 1]["content"] == result.text, (line["id"], message["content"])
        assert env.done, line["id"]
        env.close()


def test_reruns_are_byte_identical_and_a_second_export_resumes_the_run(tmp_path):
    first, _ = export("crafting", "training:0:40", tmp_path)
    again, summary = export("crafting", "training:0:40", tmp_path)
    assert first == again and len(first) == 40 and summary["conversations"] == 40
    other = tmp_path / "other"
    other.mkdir()
    elsewhere, _ = export("crafting", "training:0:40", other)
    assert (other / "crafting.jsonl").read_bytes() == (tmp_path / "crafting.jsonl").read_bytes() and elsewhere


def test_an_export_holds_only_its_own_split_though_the_folder_holds_others(tmp_path):
    # an evaluation split exported into the shared folder must not reach a later training export, nor the rest of
    # a longer training split a shorter one
    export("crafting", "test.small", tmp_path)
    export("crafting", "training:0:12", tmp_path)
    shorter, summary = export("crafting", "training:0:5", tmp_path)
    assert len(list((tmp_path / "runs" / "episodes").glob("*.json"))) > 12  # the folder holds all three
    wanted = sorted(task.id for task in get_suite("crafting").tasks("training:0:5"))
    assert [line["id"] for line in shorter] == wanted and summary["conversations"] == 5
    assert all(line["split"].startswith("training:0:") for line in shorter)  # played for the longer split: kept


def test_what_cannot_be_a_text_conversation_is_left_out_and_named(tmp_path):
    # ms has no `impossible`: the planner cannot end an impossible task there, which is no success
    lines, summary = export("crafting", "test.small", tmp_path, "--condition", "ms")
    impossible = {task.id for task in get_suite("crafting").tasks("test.small") if task.ground_truth["impossible"]}
    assert impossible and not impossible & {line["id"] for line in lines}
    assert len(summary["left_out"]) == len(impossible)
    assert all("not a success" in reason for reason in summary["left_out"])
    (tmp_path / "pictures").mkdir()
    pictures, summary = export("crafting", "test.small.easy", tmp_path / "pictures", "--condition", "image-high")
    assert pictures == [] and summary["left_out"] and all("picture" in why for why in summary["left_out"])


def test_bad_options_fail_with_one_line(tmp_path):
    cases = [
        (["--split", "nope"], "nope"),
        (["--split", "training:1"], "training:SEED:COUNT"),
        (["--condition", "nope"], "nope"),
        (["--out", str(tmp_path)], str(tmp_path)),
    ]
    for args, expected in cases:
        done = run_discogym("export-sft", "crafting", "--out", str(tmp_path / "x.jsonl"), *args)
        assert done.returncode == 2 and expected in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)
