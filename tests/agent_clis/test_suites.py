"""Each agent CLI plays a task of every suite under the runner to a scored episode with its tokens, and cannot
read the run directory or a task file. Skipped when the CLIs are not installed (make agents-cli)."""

import json
from pathlib import Path
from typing import Any

import pytest

from discogym.core import get_suite
from discogym.core.running.storage import RunDir
from tests.agent_clis.test_cli_agent import CLIS, endpoint_environment
from tests.conftest import run_discogym
from tests.llm.fake_endpoint import Calls, Say

# suite: (split, task, the calls that play it to the end, each valid)
EPISODES: dict[str, tuple[str, str, list[tuple[str, dict[str, Any]]]]] = {
    "petri": (
        "pilot-v0",
        "market-1",
        [("experiment", {}), ("submit", {"parameter": "price_impact", "direction": "up"})],
    ),
    "crafting": ("test", "TEST0000", [("think", {"thought": "no diorite"}), ("impossible", {"reason": "no diorite"})]),
    "redstone": (
        "official",
        "A_simultaneous_lights_L1",
        [("set_block", {"x": 0, "y": 4, "z": 0, "block": "minecraft:stone"}), ("submit", {})],
    ),
    "autumn": ("mfp", "gravity-2", [("act", {"action": "left"}), ("go_to_test", {}), ("answer", {"index": 0})]),
}


def play(cli: str, suite: str, out: Path, script: list[Any], *extra: str):
    """``discogym run SUITE --agent cli`` on the suite's task of EPISODES against a fake endpoint playing
    ``script``; the finished process and the endpoint."""
    split, task, _ = EPISODES[suite]
    model, endpoint_class, _ = CLIS[cli]
    with endpoint_class() as endpoint:
        endpoint.script.extend(script)
        done = run_discogym(
            "run", suite, "--agent", "cli", "--agent-opt", f"cli={cli}", "--model", model, "--split", split,
            "--tasks", task, "--out", str(out), "--json", *extra, **endpoint_environment(cli, endpoint),
        )  # fmt: skip
    return done, endpoint


@pytest.mark.parametrize("suite", sorted(EPISODES))
def test_a_cli_plays_a_task_of_each_suite_to_a_scored_episode_with_its_tokens(cli, suite, tmp_path):
    calls = EPISODES[suite][2]
    script = [Calls([(tool, json.dumps(args))]) for tool, args in calls]
    done, _ = play(cli, suite, tmp_path, [*script, Say("done")])
    assert done.returncode == 0, done.stderr
    (episode,) = RunDir(tmp_path).iter_episodes()
    assert [(e.call.tool, e.call.args) for e in episode.events] == calls
    assert all(e.result.ok for e in episode.events), [e.result.text for e in episode.events]
    assert episode.events[-1].result.done and episode.outcome.termination not in ("agent_stopped", "turn_limit")
    assert episode.score == get_suite(suite).score(episode)  # the score is the log's
    assert episode.usage().input_tokens > 0 and episode.usage().output_tokens > 0


TASK_FILE = Path(__file__).parents[2] / "src/discogym/suites/petri/tasks/pilot-v0.json"  # holds market-1's answer


def read_attempts(cli: str, secret: Path) -> list[Calls]:
    """The model's calls of the CLI's own tools that would read ``secret`` and petri's task file (without
    builtin_tools the CLI has no such tools)."""
    if cli == "claude-code":
        calls = [("builtin:Read", {"file_path": str(secret)}), ("builtin:Bash", {"command": f"cat {TASK_FILE}"})]
    else:
        calls = [("builtin:exec_command", {"cmd": f"cat {path}"}) for path in (secret, TASK_FILE)]
    return [Calls([(tool, json.dumps(args))]) for tool, args in calls]


@pytest.mark.parametrize("builtin_tools", [False, True])
def test_a_cli_cannot_read_the_run_directory_or_a_task_file_unless_its_own_tools_are_allowed(
    cli, builtin_tools, tmp_path
):
    """The model asks the CLI to read a file in the run directory and the task file with the CLI's own tools:
    refused, and neither file's text reaches the model, unless ``builtin_tools=true`` (the control: then both
    do)."""
    out = tmp_path / "run"
    out.mkdir()
    secret = out / "ground-truth.txt"
    secret.write_text("the hidden answer is 4242-SECRET\n")
    submit = Calls([(tool, json.dumps(args)) for tool, args in EPISODES["petri"][2][-1:]])
    opts = ["--agent-opt", f"builtin_tools={str(builtin_tools).lower()}"]
    done, endpoint = play(cli, "petri", out, [*read_attempts(cli, secret), submit, Say("done")], *opts)
    assert done.returncode == 0, done.stderr
    (episode,) = RunDir(out).iter_episodes()
    assert [e.call.tool for e in episode.events] == ["submit"]  # the attempts never reached the episode
    sent = json.dumps([request.body for request in endpoint.model_requests])
    assert "isolating_p_holm" in TASK_FILE.read_text()
    assert ("4242-SECRET" in sent, "isolating_p_holm" in sent) == (builtin_tools, builtin_tools)


def test_a_cli_engineer_asks_a_scientist_played_by_the_same_cli(cli, tmp_path):
    """redstone's scientist condition: the engineer's ask_scientist runs a second CLI process (the sub-agent) on
    the lab while the engineer's call waits; both sessions are in the one episode, with tokens."""
    report = {part: "x" for part in ("research_question", "hypothesis", "design", "steps", "record", "results")}
    report |= {"analysis": "x", "next_steps": "x"}
    claim = {"title": "t", "claim": "c", "proof": "p", "constraints": "k", "example": "e"}
    scientist = [
        Calls(
            [
                (
                    "set_block",
                    json.dumps({"x": 0, "y": 4, "z": 0, "block": "stone_button", "properties": {"face": "floor"}}),
                )
            ]
        ),
        Calls([("activate_button", "{}")]),
        Calls([("write_report", json.dumps(report))]),
        Calls([("update_claims", json.dumps({"entries": [claim]}))]),
        Calls([("answer", json.dumps({"answer": "20 game ticks"}))]),
        Say("answered"),
    ]
    script = [Calls([("ask_scientist", json.dumps({"question": "How long is a button on?"}))]), *scientist]
    script += [Calls([("submit", "{}")]), Say("done")]
    done, _ = play(cli, "redstone", tmp_path, script, "--condition", "scientist")
    assert done.returncode == 0, done.stderr
    (episode,) = RunDir(tmp_path).iter_episodes()
    ask, submit = episode.events
    assert ask.session is not None and ask.session.termination == "answered"
    assert [e.call.tool for e in ask.session.events] == [
        "set_block",
        "activate_button",
        "write_report",
        "update_claims",
        "answer",
    ]
    assert all(e.result.ok for e in ask.session.events), [e.result.text for e in ask.session.events]
    assert "20 game ticks" in ask.result.text and submit.call.tool == "submit"
    assert ask.session.usage().input_tokens > 0 and episode.outcome.env["scientist_trials"] == 1
    printed = json.loads(RunDir(tmp_path).runtime_path(episode.key).read_text())["agent_output"]
    engineer, scientist = printed.split("\n[scientist session 1]\n")
    assert engineer.lstrip().startswith("{") and scientist.lstrip().startswith("{")  # both CLIs' event streams
