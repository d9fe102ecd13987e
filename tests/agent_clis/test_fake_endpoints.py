"""The real Claude Code and Codex binaries play a toy episode offline: a scripted fake model endpoint on one side,
``discogym mcp toy --transport http`` on the other. Skipped when the CLIs are not installed (make agents-cli)."""

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from discogym.agent_clis.install import clean_environment
from discogym.core.running.storage import RunDir
from tests.agent_clis.conftest import McpServer, Sandbox
from tests.agent_clis.fake_endpoints import MCP_PREFIX, AnthropicEndpoint, ResponsesEndpoint, ScriptedEndpoint
from tests.llm.fake_endpoint import Calls, Say

PROMPT = "Play one task of the discogym MCP server to its end."
FINAL = "I probed the digit and ended the task."
TOY_TOOLS = ("end_task", "list_tasks", "probe", "roll", "start_task", "submit")


def script_one_episode(endpoint: ScriptedEndpoint) -> None:
    """The model lists the tasks, starts one, probes once, ends the task and says so."""
    endpoint.script.extend(
        [
            Calls([("list_tasks", "{}")]),
            Calls([("start_task", json.dumps({"task_id": "tiny-00"}))]),
            Calls([("probe", json.dumps({"n": 5}))]),
            Calls([("end_task", "{}")]),
            Say(FINAL),
        ]
    )


def assert_one_episode_played(server: McpServer, client: str) -> None:
    """The MCP server wrote one episode of tiny-00 holding the probe, ended by the client."""
    (episode,) = RunDir(server.out).iter_episodes()
    assert (episode.key.task, episode.key.agent_options) == ("tiny-00", {"client": client})
    assert [event.call.tool for event in episode.events] == ["probe"]
    assert episode.events[0].call.args == {"n": 5}
    assert episode.outcome.termination == "agent_stopped"


def run_cli(argv: list[str], sandbox: Sandbox, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run a CLI to its end in the sandbox with only ``env`` (plus HOME, PATH, locale); also its wall time."""
    started = time.monotonic()
    done = subprocess.run(
        argv,
        cwd=sandbox.work,
        env={**clean_environment(sandbox.home), **env},
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    return done, time.monotonic() - started


def json_lines(output: str) -> list[dict[str, Any]]:
    """The JSON objects a CLI printed one a line."""
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def test_claude_code_plays_an_episode_against_the_fake_anthropic_endpoint(
    claude: Path, mcp_server: McpServer, sandbox: Sandbox, tmp_path: Path
) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"discogym": {"type": "http", "url": mcp_server.url}}}))
    with AnthropicEndpoint() as endpoint:
        script_one_episode(endpoint)
        env = {
            "CLAUDE_CONFIG_DIR": str(sandbox.home / ".claude"),
            "ANTHROPIC_BASE_URL": endpoint.root,
            "ANTHROPIC_API_KEY": "dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_AUTOUPDATER": "1",
            "MCP_TIMEOUT": "120000",
            "MCP_PROTOCOL_NEGOTIATION": "legacy",
            "CLAUDE_CODE_MAX_RETRIES": "2",
        }
        argv = [
            str(claude), "-p", PROMPT, "--model", "claude-sonnet-4-5",
            "--mcp-config", str(config), "--strict-mcp-config", "--setting-sources", "",
            "--tools", "", "--allowedTools", "mcp__discogym", "--permission-mode", "dontAsk",
            "--max-turns", "50", "--no-session-persistence", "--output-format", "stream-json", "--verbose",
        ]  # fmt: skip
        done, wall_s = run_cli(argv, sandbox, env)
    print(f"claude episode wall time: {wall_s:.1f} s")
    assert done.returncode == 0, done.stderr + done.stdout
    events = json_lines(done.stdout)
    result = events[-1]
    assert result["type"] == "result" and not result["is_error"], result
    assert result["num_turns"] == 5 and result["result"] == FINAL
    (usage,) = result["modelUsage"].values()
    assert usage["inputTokens"] > 0 and usage["outputTokens"] > 0
    offered = [tool["name"] for tool in endpoint.model_requests[0].body["tools"]]
    assert offered == [f"{MCP_PREFIX}__{name}" for name in TOY_TOOLS]  # the MCP tools and none of Claude Code's own
    assert len(endpoint.requests) == 5 and all(r.body["stream"] for r in endpoint.requests)
    assert_one_episode_played(mcp_server, "claude-code")


def codex_arguments(endpoint: ResponsesEndpoint, mcp_url: str, work: Path) -> list[str]:
    """``codex exec`` flags: the fake as a custom Responses provider, the MCP server over HTTP, its own tools off."""
    provider = "model_providers.fake"
    server = "mcp_servers.discogym"
    settings = [
        "model_provider=fake",
        f'{provider}.name="fake"',
        f'{provider}.base_url="{endpoint.url}"',
        f'{provider}.wire_api="responses"',
        f'{provider}.env_key="FAKE_API_KEY"',
        f'{server}.url="{mcp_url}"',
        f"{server}.startup_timeout_sec=120",
        f"{server}.required=true",
        f'{server}.startup_readiness="catalog"',
        f'{server}.default_tools_approval_mode="approve"',
        'otel.metrics_exporter="none"',
        'web_search="disabled"',
    ]
    disabled = ["plugins", "shell_tool", "unified_exec", "multi_agent", "goals", "view_image"]
    return [
        "exec", "--json", "--skip-git-repo-check", "--ephemeral", "-C", str(work), "-m", "gpt-5",
        *[part for setting in settings for part in ("-c", setting)],
        *[part for feature in disabled for part in ("--disable", feature)],
    ]  # fmt: skip


def test_codex_plays_an_episode_against_the_fake_responses_endpoint(
    codex: Path, mcp_server: McpServer, sandbox: Sandbox
) -> None:
    with ResponsesEndpoint() as endpoint:
        script_one_episode(endpoint)
        env = {"CODEX_HOME": str(sandbox.home / ".codex"), "FAKE_API_KEY": "dummy"}
        (sandbox.home / ".codex").mkdir()
        argv = [str(codex), *codex_arguments(endpoint, mcp_server.url, sandbox.work), PROMPT]
        done, wall_s = run_cli(argv, sandbox, env)
    print(f"codex episode wall time: {wall_s:.1f} s")
    assert done.returncode == 0, done.stderr + done.stdout
    events = json_lines(done.stdout)
    assert events[0]["type"] == "thread.started"
    # Codex warns, as an error item, that it has no metadata for a model it does not know; it runs on.
    errors = [event["item"]["message"] for event in events if event.get("item", {}).get("type") == "error"]
    assert len(errors) == 1 and errors[0].startswith("Model metadata for `gpt-5` not found. Defaulting to fallback")
    assert events[-1]["type"] == "turn.completed" and events[-1]["usage"]["input_tokens"] > 0, events
    calls = [
        event["item"]["tool"]
        for event in events
        if event["type"] == "item.completed" and event["item"]["type"] == "mcp_tool_call"
    ]
    assert calls == ["list_tasks", "start_task", "probe", "end_task"]
    assert events[-2]["item"] == {"id": events[-2]["item"]["id"], "type": "agent_message", "text": FINAL}
    offered = {tool["name"]: tool for tool in endpoint.model_requests[0].body["tools"]}
    assert [tool["name"] for tool in offered[MCP_PREFIX]["tools"]] == list(TOY_TOOLS)
    # Codex's own tools left on: MCP resources (of this one server) and questions to the user (Plan mode only).
    assert set(offered) == {
        MCP_PREFIX,
        "list_mcp_resources",
        "list_mcp_resource_templates",
        "read_mcp_resource",
        "request_user_input",
    }
    assert_one_episode_played(mcp_server, "codex-mcp-client")
