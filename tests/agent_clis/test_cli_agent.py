"""``--agent cli``: the real Claude Code and Codex play toy episodes under the runner, offline, against scripted
fake endpoints: each episode is scored from its log, its tokens recorded, the CLI's version in provenance; a CLI
that fails is a fault (nothing written, retried). Skipped when the CLIs are not installed (make agents-cli)."""

import contextlib
import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from discogym.agent_clis import OPTIONS, bridge
from discogym.agent_clis.agent import CliSettings
from discogym.core import AgentOptions, register_suite
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir
from tests.agent_clis.fake_endpoints import AnthropicEndpoint, ResponsesEndpoint, ScriptedEndpoint
from tests.conftest import free_port, run_discogym
from tests.core.toy_suite import suite
from tests.llm.fake_endpoint import Calls, Delay, Say, Status

DIGIT = int(suite.tasks("tiny")[0].ground_truth["digit"])
CLIS = {
    "claude-code": ("anthropic/claude-sonnet-4-5", AnthropicEndpoint, "2.1.331"),
    "codex": ("openai/gpt-5", ResponsesEndpoint, "0.169.0"),
}


def endpoint_environment(cli: str, endpoint: ScriptedEndpoint) -> dict[str, str]:
    if cli == "claude-code":
        return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": endpoint.root}
    return {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": endpoint.url}


def run_cli_agent(cli: str, endpoint: ScriptedEndpoint, out: Path, *extra: str):
    model = CLIS[cli][0]
    args = ["run", "toy", "--agent", "cli", "--agent-opt", f"cli={cli}", "--model", model, "--split", "tiny"]
    return run_discogym(
        *args, "--tasks", "tiny-00", "--out", str(out), "--json", *extra, **endpoint_environment(cli, endpoint)
    )


def test_a_cli_plays_an_episode_that_is_scored_from_its_log_with_its_tokens(cli, tmp_path):
    with CLIS[cli][1]() as endpoint:
        endpoint.script.extend(
            [Calls([("probe", json.dumps({"n": 5}))]), Calls([("submit", json.dumps({"n": DIGIT}))]), Say("done")]
        )
        done = run_cli_agent(cli, endpoint, tmp_path)
    assert done.returncode == 0, done.stderr
    (episode,) = RunDir(tmp_path).iter_episodes()
    assert [(e.call.tool, e.call.args) for e in episode.events] == [("probe", {"n": 5}), ("submit", {"n": DIGIT})]
    assert episode.score.success and episode.outcome.termination == "submitted"
    assert episode.usage().input_tokens > 0 and episode.usage().output_tokens > 0
    runtime = json.loads(RunDir(tmp_path).runtime_path(episode.key).read_text())
    events = [json.loads(line) for line in runtime["agent_output"].splitlines() if line.startswith("{")]
    assert events and all("type" in event for event in events)  # the CLI's raw event stream, beside the episode
    settings = episode.provenance.agent_settings
    assert (settings["cli"], settings["cli_version"], settings["model"]) == (cli, CLIS[cli][2], CLIS[cli][0])
    offered = json.dumps(endpoint.model_requests[0].body["tools"])
    assert "list_tasks" not in offered and "start_task" not in offered  # the episode's own tools only
    assert '"Read"' not in offered and '"Bash"' not in offered and "shell" not in offered  # no tool to read files
    seen = json.dumps([request.body for request in endpoint.requests])
    assert str(tmp_path) not in seen and "ground_truth" not in seen  # no path to the run, no hidden answer


def submit_then_stop(body: dict[str, Any]) -> Calls | Say:
    """Each CLI's script, whichever runs first: submit the answer, and stop once a tool has answered."""
    answered = "tool_result" in json.dumps(body) or "function_call_output" in json.dumps(body)
    return Say("done") if answered else Calls([("submit", json.dumps({"n": DIGIT}))])


def test_cli_episodes_play_in_worker_processes(cli, tmp_path):
    with CLIS[cli][1]() as endpoint:
        endpoint.choose = submit_then_stop
        done = run_cli_agent(cli, endpoint, tmp_path, "--repeats", "3", "--workers", "2")
    assert done.returncode == 0, done.stderr
    episodes = list(RunDir(tmp_path).iter_episodes())
    assert sorted(e.key.repeat for e in episodes) == [0, 1, 2]
    assert all(e.score.success and e.outcome.termination == "submitted" for e in episodes)


def test_a_runs_episodes_share_one_tool_server_each_at_its_own_url(claude, tmp_path, monkeypatch):
    urls: list[str] = []
    start = bridge.ToolBridge.start

    def noted_start(self: bridge.ToolBridge) -> str:
        urls.append(start(self))
        return urls[-1]

    monkeypatch.setattr(bridge.ToolBridge, "start", noted_start)
    register_suite(suite)
    agent = AgentOptions(name="cli", model=CLIS["claude-code"][0], options={"cli": "claude-code"})
    with AnthropicEndpoint() as endpoint:
        endpoint.choose = submit_then_stop
        for name, value in endpoint_environment("claude-code", endpoint).items():
            monkeypatch.setenv(name, value)
        config = RunConfig.for_suite(suite, [agent], split="tiny", tasks=["tiny-00"], repeats=2)
        summary = Runner(suite, config, tmp_path).run()
    assert summary.complete, summary.faults
    assert len(urls) == 2 and len(set(urls)) == 2
    assert len({urlsplit(url).netloc for url in urls}) == 1  # one server for the run


def test_a_cli_that_stops_without_ending_is_a_complete_episode_stopped_by_the_agent(cli, tmp_path):
    with CLIS[cli][1]() as endpoint:
        endpoint.script.extend([Calls([("probe", json.dumps({"n": 5}))]), Say("I give up")])
        done = run_cli_agent(cli, endpoint, tmp_path)
    assert done.returncode == 0, done.stderr
    (episode,) = RunDir(tmp_path).iter_episodes()
    assert [e.call.tool for e in episode.events] == ["probe"]
    assert episode.outcome.termination == "agent_stopped" and episode.score.success is False
    assert episode.outcome.final_usage is not None and episode.outcome.final_usage.input_tokens > 0


def test_a_cli_at_its_turn_limit_ends_the_episode_as_turn_limit_scored_with_its_tokens(cli, tmp_path):
    with CLIS[cli][1]() as endpoint:
        probes = [Calls([("probe", json.dumps({"n": n}))]) for n in (5, 6, 7)]
        endpoint.script.extend([*probes, Say("stopping")])
        done = run_cli_agent(cli, endpoint, tmp_path, "--agent-opt", "max_turns=2")
    assert done.returncode == 0, done.stderr
    (episode,) = RunDir(tmp_path).iter_episodes()
    assert [e.call.args for e in episode.events] == [{"n": 5}, {"n": 6}]  # Claude Code's limit or discogym's
    assert episode.outcome.termination == "turn_limit" and episode.score.success is False
    assert episode.usage().input_tokens > 0


def test_an_endpoint_that_fails_is_a_fault_and_a_rerun_completes_the_set(cli, tmp_path):
    with CLIS[cli][1]() as endpoint:
        endpoint.script.extend([Status(500)] * 20)
        failed = run_cli_agent(cli, endpoint, tmp_path)
    assert failed.returncode == 3, failed.stderr  # not finished: an infrastructure fault
    assert not list(RunDir(tmp_path).episode_paths())
    with CLIS[cli][1]() as endpoint:
        endpoint.script.extend([Calls([("submit", json.dumps({"n": DIGIT}))]), Say("done")])
        rerun = run_cli_agent(cli, endpoint, tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    (episode,) = RunDir(tmp_path).iter_episodes()
    assert episode.score.success


def test_a_missing_model_or_cli_option_is_one_line():
    no_cli = run_discogym("run", "toy", "--agent", "cli", "--model", "anthropic/claude-sonnet-4-5")
    assert no_cli.returncode == 2 and no_cli.stderr.startswith("error: agent 'cli': --agent-opt cli: ")
    wrong = run_discogym("run", "toy", "--agent", "cli", "--agent-opt", "cli=codex", "--model", "anthropic/x")
    assert wrong.returncode == 2
    assert wrong.stderr.strip() == (
        "error: agent 'cli' with cli=codex takes --model openai/NAME or openai-compatible/NAME, not anthropic/x"
    )


def test_the_registered_options_are_the_settings_fields():
    assert tuple(CliSettings.model_fields) == OPTIONS


def test_a_cli_past_its_timeout_is_killed_and_the_episode_is_a_fault(cli, tmp_path):
    with CLIS[cli][1]() as endpoint:
        endpoint.script.extend([Delay(20)] * 3)  # the model never answers in time
        done = run_cli_agent(cli, endpoint, tmp_path, "--agent-opt", "timeout_s=3")
    assert done.returncode == 3, done.stderr
    assert "ran past its timeout of 3 s" in done.stderr
    assert not list(RunDir(tmp_path).episode_paths())


def kill_the_cli_once_it_runs(within_s: float = 60) -> threading.Thread:
    """A thread that kills (SIGKILL) the first process whose command line names a CLI agent's temporary folder."""

    def kill() -> None:
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
                with contextlib.suppress(OSError):
                    if b"discogym-cli-" in cmdline.read_bytes():
                        os.kill(int(cmdline.parent.name), signal.SIGKILL)
                        return
            time.sleep(0.05)

    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


def test_a_cli_killed_mid_episode_is_a_fault_and_nothing_is_written(cli, tmp_path):
    with CLIS[cli][1]() as endpoint:
        endpoint.script.extend([Delay(20)] * 3)  # the CLI waits on its model when it is killed
        killer = kill_the_cli_once_it_runs()
        done = run_cli_agent(cli, endpoint, tmp_path)
        killer.join(timeout=5)
    assert done.returncode == 3, done.stderr
    assert not list(RunDir(tmp_path).episode_paths())


def test_a_cli_that_cannot_reach_the_episodes_tools_is_a_fault(cli, tmp_path, monkeypatch):
    closed = f"http://127.0.0.1:{free_port()}/mcp"  # nothing listens there
    monkeypatch.setattr(bridge.ToolBridge, "start", lambda self: closed)
    register_suite(suite)
    agent = AgentOptions(name="cli", model=CLIS[cli][0], options={"cli": cli})
    with CLIS[cli][1]() as endpoint:
        endpoint.script.extend([Say("I see no tools")] * 3)
        for name, value in endpoint_environment(cli, endpoint).items():
            monkeypatch.setenv(name, value)
        config = RunConfig.for_suite(suite, [agent], split="tiny", tasks=["tiny-00"])
        summary = Runner(suite, config, tmp_path).run()
    (message,) = summary.faults.values()
    assert not summary.complete and "InfrastructureError" in message, message
    assert not list(RunDir(tmp_path).episode_paths())
