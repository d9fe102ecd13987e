"""The launch specs of Claude Code and Codex, and the readers of their stdout on outputs the real CLIs printed.

The files in ``recorded/`` are the stdout of the pinned CLIs run once through :mod:`discogym.agent_clis.launch`
against the fake endpoints of ``fake_endpoints.py`` and ``discogym mcp toy --transport http`` (temporary paths,
ports and socket ids replaced): ``*_normal`` plays one toy episode to its end (5 model turns); ``*_500`` has the
endpoint answer 500 to every request; ``claude_maxturns`` runs with ``--max-turns 1``; ``claude_nomcp`` points
at a port nothing listens on; ``codex_retry`` has one 500 and then the normal script. The exit codes are
``RECORDED_EXIT``.
"""

import json
import stat
import tomllib
from pathlib import Path

import pytest

from discogym.agent_clis.install import clean_environment
from discogym.agent_clis.launch import (
    CODEX_KEY_VARIABLE,
    CliReport,
    claude_launch,
    codex_launch,
    read_claude_output,
    read_codex_output,
)

RECORDED = Path(__file__).parent / "recorded"
RECORDED_EXIT = {"claude_500": 1, "claude_maxturns": 1, "codex_500": 1}
FINAL = "I probed the digit and ended the task."
KEY = "sk-secret-key"
TOKEN = "Zq8-episode-token"
MCP_URL = f"http://127.0.0.1:8765/episodes/{TOKEN}/mcp"
CLAUDE_ENV = {
    "CLAUDE_CONFIG_DIR",
    "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
    "DISABLE_TELEMETRY",
    "DISABLE_ERROR_REPORTING",
    "DISABLE_AUTOUPDATER",
    "MCP_TIMEOUT",
    "MCP_TOOL_TIMEOUT",
    "MCP_PROTOCOL_NEGOTIATION",
    "CLAUDE_CODE_MAX_RETRIES",
}


def recorded(name: str) -> tuple[str, int]:
    """A recorded stdout and the exit code the CLI had."""
    return (RECORDED / f"{name}.jsonl").read_text(), RECORDED_EXIT.get(name, 0)


def flag(argv: list[str], name: str) -> str:
    """The value after the flag ``name`` (which must occur once)."""
    assert argv.count(name) == 1, argv
    return argv[argv.index(name) + 1]


def claude(tmp_path: Path, *, base_url: str | None = "http://127.0.0.1:9/", builtin_tools: bool = False) -> list[str]:
    """argv of a Claude Code launch in ``tmp_path``; also checks what every launch holds."""
    launch = claude_launch(
        Path("/opt/claude"), model="claude-sonnet-4-5", prompt="Play.", mcp_url=MCP_URL, home=tmp_path / "home",
        workdir=tmp_path / "work", base_url=base_url, api_key=KEY, max_turns=7, builtin_tools=builtin_tools,
    )  # fmt: skip
    assert launch.cwd == tmp_path / "work"
    assert not any(KEY in part for part in launch.argv)
    expected = (
        clean_environment(tmp_path / "home").keys() | CLAUDE_ENV | ({"ANTHROPIC_BASE_URL"} if base_url else set())
    )
    assert launch.env.keys() == expected
    assert launch.env["ANTHROPIC_API_KEY"] == KEY and launch.env["CLAUDE_CONFIG_DIR"] == str(tmp_path / "home/.claude")
    assert launch.env.get("ANTHROPIC_BASE_URL") == base_url
    return launch.argv


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty HOME (the working directory is never created: a launch must not write there)."""
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def test_claude_launch_offers_only_the_mcp_server_it_names_in_a_config_file_in_home(tmp_path: Path, home: Path):
    argv = claude(tmp_path)
    assert argv[:4] == ["/opt/claude", "-p", "Play.", "--model"] and flag(argv, "--model") == "claude-sonnet-4-5"
    assert not any(TOKEN in part for part in argv)
    config = json.loads(private_text(Path(flag(argv, "--mcp-config"))))
    assert Path(flag(argv, "--mcp-config")).parent == home
    assert config == {"mcpServers": {"discogym": {"type": "http", "url": MCP_URL}}}
    assert "--strict-mcp-config" in argv and flag(argv, "--setting-sources") == ""
    assert flag(argv, "--tools") == "" and flag(argv, "--allowedTools") == "mcp__discogym"
    assert flag(argv, "--permission-mode") == "dontAsk" and flag(argv, "--max-turns") == "7"
    assert flag(argv, "--output-format") == "stream-json" and "--verbose" in argv
    assert "--no-session-persistence" in argv
    assert not (tmp_path / "work").exists()


def test_claude_launch_with_builtin_tools_offers_and_allows_the_shell_and_file_tools(tmp_path: Path, home: Path):
    argv = claude(tmp_path, builtin_tools=True)
    assert flag(argv, "--tools") == "Bash,Read,Write,Edit,Glob,Grep"
    assert flag(argv, "--allowedTools") == "mcp__discogym,Bash,Read,Write,Edit,Glob,Grep"


def test_claude_launch_without_a_base_url_leaves_anthropic_base_url_unset(tmp_path: Path, home: Path):
    claude(tmp_path, base_url=None)


def codex(tmp_path: Path, *, builtin_tools: bool = False) -> list[str]:
    """argv of a Codex launch in ``tmp_path``; also checks what every launch holds."""
    launch = codex_launch(
        Path("/opt/codex"), model="gpt-5", prompt="Play.", mcp_url=MCP_URL, home=tmp_path / "home",
        workdir=tmp_path / "work", base_url="http://127.0.0.1:9/v1", api_key=KEY, builtin_tools=builtin_tools,
    )  # fmt: skip
    assert launch.cwd == tmp_path / "work" and (tmp_path / "home/.codex").is_dir()
    assert not any(KEY in part for part in launch.argv)
    codex_home = str(tmp_path / "home/.codex")
    assert launch.env == {**clean_environment(tmp_path / "home"), "CODEX_HOME": codex_home, CODEX_KEY_VARIABLE: KEY}
    return launch.argv


def private_text(path: Path) -> str:
    """The text of a file only its user may read or write (the test fails otherwise)."""
    assert stat.S_IMODE(path.stat().st_mode) == 0o600, oct(path.stat().st_mode)
    return path.read_text()


def disabled(argv: list[str]) -> list[str]:
    """The features a Codex argv disables."""
    return [argv[i + 1] for i, part in enumerate(argv) if part == "--disable"]


def test_codex_launch_reaches_the_model_through_a_custom_provider_and_only_the_named_mcp_server(
    tmp_path: Path, home: Path
):
    argv = codex(tmp_path)
    assert argv[:3] == ["/opt/codex", "exec", "--json"] and argv[-1] == "Play."
    assert flag(argv, "-m") == "gpt-5" and flag(argv, "-C") == str(tmp_path / "work")
    assert {"--skip-git-repo-check", "--ephemeral"} <= set(argv)
    assert "-c" not in argv and not any(TOKEN in part or "127.0.0.1" in part for part in argv)
    config = private_text(tmp_path / "home/.codex/config.toml")
    assert tomllib.loads(config)["model_providers"]["discogym"]["base_url"] == "http://127.0.0.1:9/v1"
    assert tomllib.loads(config)["mcp_servers"]["discogym"]["url"] == MCP_URL
    assert config.splitlines() == [
        'model_provider="discogym"',
        'model_providers.discogym.name="discogym"',
        'model_providers.discogym.base_url="http://127.0.0.1:9/v1"',
        'model_providers.discogym.wire_api="responses"',
        f'model_providers.discogym.env_key="{CODEX_KEY_VARIABLE}"',
        "model_providers.discogym.request_max_retries=2",
        "model_providers.discogym.stream_max_retries=2",
        f'mcp_servers.discogym.url="{MCP_URL}"',
        "mcp_servers.discogym.startup_timeout_sec=120",
        "mcp_servers.discogym.tool_timeout_sec=1800",
        "mcp_servers.discogym.required=true",
        'mcp_servers.discogym.startup_readiness="catalog"',
        'mcp_servers.discogym.default_tools_approval_mode="approve"',
        'otel.metrics_exporter="none"',
        'web_search="disabled"',
    ]
    assert disabled(argv) == ["plugins", "multi_agent", "goals", "shell_tool", "unified_exec", "view_image"]


def test_codex_launch_with_builtin_tools_keeps_the_shell_and_image_tools(tmp_path: Path, home: Path):
    assert disabled(codex(tmp_path, builtin_tools=True)) == ["plugins", "multi_agent", "goals"]


def test_claude_reader_on_a_normal_run_sums_model_usage_and_takes_the_cost_and_final_text():
    assert read_claude_output(*recorded("claude_normal")) == CliReport(
        ended="completed", input_tokens=3126 + 1040, output_tokens=44, cached_tokens=1040, cost_usd=0.01035,
        final_text=FINAL,
    )  # fmt: skip


def test_claude_reader_sums_usage_over_models_counting_cache_writes_as_input():
    usage = {
        "a": {"inputTokens": 10, "outputTokens": 2, "cacheReadInputTokens": 5, "cacheCreationInputTokens": 3},
        "b": {"inputTokens": 1, "outputTokens": 1},
    }
    result = {"type": "result", "is_error": False, "terminal_reason": "completed", "modelUsage": usage}
    report = read_claude_output(json.dumps(result), 0)
    assert (report.input_tokens, report.output_tokens, report.cached_tokens) == (19, 3, 5)
    assert report.cost_usd is None and report.ended == "completed" and report.fault is None


def test_claude_reader_makes_a_persistent_500_a_fault():
    report = read_claude_output(*recorded("claude_500"))
    assert report.ended is None and report.final_text is None
    assert report.fault is not None and report.fault.startswith(
        "Claude Code reported an error (api_error): API Error: 500"
    )
    assert "\n" not in report.fault


def test_claude_reader_takes_the_turn_limit_as_an_ending_not_a_fault():
    report = read_claude_output(*recorded("claude_maxturns"))  # is_error is true on this result line
    assert (report.ended, report.fault) == ("max_turns", None)
    assert (report.input_tokens, report.output_tokens) == (454, 7)


def test_claude_reader_takes_an_exhausted_budget_as_an_ending():
    result = {
        "type": "result",
        "subtype": "error_max_budget_usd",
        "is_error": True,
        "terminal_reason": "budget_exhausted",
    }
    assert read_claude_output(json.dumps(result), 1).ended == "budget"


def test_claude_reader_makes_an_mcp_server_that_failed_to_connect_a_fault_although_the_run_completed():
    report = read_claude_output(*recorded("claude_nomcp"))
    assert (report.ended, report.fault) == (None, "the MCP server was not reached")


def test_codex_reader_on_a_normal_run_takes_usage_and_the_last_agent_message():
    assert read_codex_output(*recorded("codex_normal")) == CliReport(
        ended="completed", input_tokens=28242, output_tokens=30, cached_tokens=7058, final_text=FINAL
    )
    assert read_codex_output(*recorded("codex_retry")).ended == "completed"  # one 500, retried


def test_codex_reader_sums_usage_over_turns():
    turn = {"type": "turn.completed", "usage": {"input_tokens": 10, "cached_input_tokens": 4, "output_tokens": 2}}
    report = read_codex_output("\n".join(json.dumps(event) for event in [{"type": "turn.started"}, turn] * 2), 0)
    assert (report.input_tokens, report.output_tokens, report.cached_tokens) == (20, 4, 8)


def test_codex_reader_makes_a_persistent_500_a_fault_after_its_reconnect_messages():
    report = read_codex_output(*recorded("codex_500"))
    assert report.ended is None
    assert (
        report.fault
        == "the Codex turn failed: We\u2019re currently experiencing high demand, which may cause temporary errors."
    )


def test_codex_reader_makes_an_error_after_the_turn_started_a_fault_but_not_one_before():
    lines = [
        {"type": "item.completed", "item": {"id": "item_0", "type": "error", "message": "Model metadata not found"}},
        {"type": "turn.started"},
        {"type": "error", "message": "Reconnecting... 1/2 (busy)"},
        {"type": "error", "message": "stream disconnected"},
        {"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 1}},
    ]
    text = "\n".join(json.dumps(line) for line in lines)
    assert read_codex_output(text, 0).fault == "Codex reported an error: stream disconnected"
    assert read_codex_output("\n".join(json.dumps(line) for line in lines[:3] + lines[4:]), 0).ended == "completed"


def test_codex_reader_makes_a_completed_turn_with_a_failing_exit_code_a_fault():
    report = read_codex_output(recorded("codex_normal")[0], 1)
    assert report.ended is None and report.fault == "Codex exited with code 1"


@pytest.mark.parametrize("text", ["", "Segmentation fault\n", "{not json\n[1, 2]\n3\n", '{"type": "result"'])
def test_readers_make_empty_or_garbage_output_a_fault(text: str):
    claude_report, codex_report = read_claude_output(text, 139), read_codex_output(text, 139)
    assert claude_report.fault == "Claude Code exited with code 139 and no result line" and claude_report.ended is None
    assert codex_report.fault == "Codex exited with code 139 before completing a turn" and codex_report.ended is None


@pytest.mark.parametrize(
    "event",
    [
        {"type": "result", "modelUsage": [1], "total_cost_usd": "x", "result": 3, "is_error": False},
        {"type": "result", "modelUsage": {"m": None, "n": {"inputTokens": "many"}}, "terminal_reason": 5},
        {"type": "system", "subtype": "init", "mcp_servers": "discogym"},
        {"type": "turn.failed", "error": None},
        {"type": "turn.completed", "usage": [3]},
        {"type": "item.completed", "item": {"type": "agent_message", "text": None}},
    ],
)
def test_readers_never_raise_on_odd_events(event: dict[str, object]):
    for read in (read_claude_output, read_codex_output):
        report = read(json.dumps(event), 0)
        assert report.input_tokens == 0 and (report.ended is None or report.fault is None)
