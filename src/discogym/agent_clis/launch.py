"""How to start Claude Code and Codex headless for one episode, and how to read what they report on stdout.

The ``*_launch`` functions build the command line, the environment and the working directory of one CLI process
(the flags verified in docs/agent-clis.md); they write the CLI's config files into ``home``, never into the
working directory. Whatever holds a secret (the episode's MCP URL with its token, the metering proxy's URL with
its secret) goes into a file only the user can read (:func:`write_private`) or the CLI's environment, never
onto its command line, which ``ps`` shows to every local user.

The ``read_*_output`` functions turn the CLI's JSON lines into a :class:`CliReport`: how the
run ended, whether it failed for infrastructure reasons, its tokens and the final text. They never raise on
malformed output: output they cannot read is a fault.
"""

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discogym.agent_clis.install import clean_environment

MCP_SERVER = "discogym"  # the name both CLIs know discogym's MCP server by; its tools are mcp__discogym__<tool>
# Claude Code's own tools offered and allowed when builtin_tools is on: the shell and the local files. Listed
# rather than left at the default set, which adds web, sub-agent, cron and worktree tools and hides the MCP tools
# behind a tool search.
CLAUDE_BUILTIN_TOOLS = ("Bash", "Read", "Write", "Edit", "Glob", "Grep")
CODEX_PROVIDER = "discogym"  # the custom Responses-API provider Codex reaches the model endpoint through
CODEX_KEY_VARIABLE = "DISCOGYM_MODEL_API_KEY"  # the variable the provider reads its key from (env_key)
# Codex features that are never wanted (side traffic, sub-agents, long-running goals) ...
CODEX_ALWAYS_DISABLED = ("plugins", "multi_agent", "goals")
# ... and Codex's own tools of the machine, kept only when builtin_tools is on.
CODEX_BUILTIN_FEATURES = ("shell_tool", "unified_exec", "view_image")
CODEX_RETRYING = "Reconnecting..."  # an error event Codex sends before retrying a request: not yet a failure
CLAUDE_ENDINGS = {"completed": "completed", "max_turns": "max_turns", "budget_exhausted": "budget"}


@dataclass(frozen=True)
class Launch:
    """One CLI process to start: its argv (the executable first), its whole environment and its working
    directory. Run it with stdin from /dev/null and stdout captured: the readers below parse stdout."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path


@dataclass
class CliReport:
    """What a CLI said about its run.

    ``ended``: how the CLI ended by itself (``completed``, ``max_turns``, ``budget``), None when unknown or when
    there is a fault. ``fault``: one line when the run failed for infrastructure reasons (API error, MCP server
    not reached, crash with no result, unreadable output), else None. Tokens: ``input_tokens`` counts cached ones too.
    ``cost_usd``: the CLI's own figure when it reports one (Claude Code), else None.
    ``final_text``: the model's last message, if any.
    """

    ended: str | None = None
    fault: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float | None = None
    final_text: str | None = None


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable and writable by this user only (mode 0600, also when it existed)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(descriptor, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(text)


def claude_launch(
    exe: Path,
    *,
    model: str,
    prompt: str,
    mcp_url: str,
    home: Path,
    workdir: Path,
    base_url: str | None,
    api_key: str,
    max_turns: int,
    builtin_tools: bool,
    max_budget_usd: float | None = None,
    tool_timeout_s: float = 1800.0,
) -> Launch:
    """``claude -p`` for one episode: only the MCP server at ``mcp_url`` (config written to ``home/mcp.json``),
    no settings, no session files, stream-json on stdout. Without ``builtin_tools`` the model is offered the MCP
    tools only (``--tools ""``); with it also Claude Code's shell and file tools, :data:`CLAUDE_BUILTIN_TOOLS`.
    ``base_url`` None means Anthropic's own API; ``max_budget_usd`` is Claude Code's own dollar limit."""
    config = home / "mcp.json"
    write_private(config, json.dumps({"mcpServers": {MCP_SERVER: {"type": "http", "url": mcp_url}}}))
    allowed = [f"mcp__{MCP_SERVER}", *(CLAUDE_BUILTIN_TOOLS if builtin_tools else ())]
    argv = [
        str(exe), "-p", prompt, "--model", model,
        "--mcp-config", str(config), "--strict-mcp-config", "--setting-sources", "",
        "--tools", ",".join(CLAUDE_BUILTIN_TOOLS if builtin_tools else ()),
        "--allowedTools", ",".join(allowed), "--permission-mode", "dontAsk",
        "--max-turns", str(max_turns), "--no-session-persistence", "--output-format", "stream-json", "--verbose",
    ]  # fmt: skip
    if max_budget_usd is not None:
        argv += ["--max-budget-usd", f"{max_budget_usd:g}"]
    env = {
        **clean_environment(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "ANTHROPIC_API_KEY": api_key,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "MCP_TIMEOUT": "120000",
        "MCP_TOOL_TIMEOUT": str(int(tool_timeout_s * 1000)),  # a tool call may run a scientist's whole session
        "MCP_PROTOCOL_NEGOTIATION": "legacy",
        "CLAUDE_CODE_MAX_RETRIES": "2",
    }
    if base_url is not None:
        env["ANTHROPIC_BASE_URL"] = base_url
    return Launch(argv, env, workdir)


def codex_launch(
    exe: Path,
    *,
    model: str,
    prompt: str,
    mcp_url: str,
    home: Path,
    workdir: Path,
    base_url: str,
    api_key: str,
    builtin_tools: bool,
    tool_timeout_s: float = 1800.0,
) -> Launch:
    """``codex exec --json`` for one episode: the model through a custom Responses-API provider at ``base_url``
    (key in :data:`CODEX_KEY_VARIABLE`), the MCP server at ``mcp_url`` with its tool calls pre-approved, nothing
    saved, no telemetry or web search. Without ``builtin_tools`` the shell and image tools are disabled; with it
    Codex keeps them (:data:`CODEX_BUILTIN_FEATURES`). The settings (both URLs among them) go into
    ``home/.codex/config.toml``, mode 0600, which Codex reads from its CODEX_HOME."""
    codex_home = home / ".codex"
    codex_home.mkdir(mode=0o700, exist_ok=True)
    lines = codex_settings(base_url, mcp_url, tool_timeout_s)
    write_private(codex_home / "config.toml", "".join(f"{line}\n" for line in lines))
    disabled = [*CODEX_ALWAYS_DISABLED, *(() if builtin_tools else CODEX_BUILTIN_FEATURES)]
    argv = [
        str(exe), "exec", "--json", "--skip-git-repo-check", "--ephemeral", "-C", str(workdir), "-m", model,
        *[part for feature in disabled for part in ("--disable", feature)],
        prompt,
    ]  # fmt: skip
    env = {**clean_environment(home), "CODEX_HOME": str(codex_home), CODEX_KEY_VARIABLE: api_key}
    return Launch(argv, env, workdir)


def codex_settings(base_url: str, mcp_url: str, tool_timeout_s: float) -> list[str]:
    """The lines of Codex's config.toml for one episode (TOML dotted keys; strings quoted as JSON, which TOML
    reads alike for the URLs and names here)."""
    provider, server = f"model_providers.{CODEX_PROVIDER}", f"mcp_servers.{MCP_SERVER}"
    return [
        f"model_provider={json.dumps(CODEX_PROVIDER)}",
        f"{provider}.name={json.dumps(CODEX_PROVIDER)}",
        f"{provider}.base_url={json.dumps(base_url)}",
        f'{provider}.wire_api="responses"',
        f"{provider}.env_key={json.dumps(CODEX_KEY_VARIABLE)}",
        f"{provider}.request_max_retries=2",
        f"{provider}.stream_max_retries=2",
        f"{server}.url={json.dumps(mcp_url)}",
        f"{server}.startup_timeout_sec=120",
        f"{server}.tool_timeout_sec={tool_timeout_s:g}",  # a tool call may run a scientist's whole session
        f"{server}.required=true",
        f'{server}.startup_readiness="catalog"',
        f'{server}.default_tools_approval_mode="approve"',
        'otel.metrics_exporter="none"',
        'web_search="disabled"',
    ]


def json_events(text: str) -> list[dict[str, Any]]:
    """The JSON objects among ``text``'s lines; other lines (warnings, garbage) are skipped."""
    events = []
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def _int(value: Any) -> int:
    """A token count as the CLI wrote it, 0 when missing or not a number."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _one_line(text: Any) -> str:
    """A CLI's message squeezed onto one line."""
    return " ".join(str(text).split())


def read_claude_output(text: str, exit_code: int) -> CliReport:
    """Read Claude Code's ``--output-format stream-json`` stdout: the init event's MCP status and the last
    ``result`` line (ending, fault, tokens summed over ``modelUsage``, ``total_cost_usd``, final text)."""
    events = json_events(text)
    report = CliReport()
    init = next((e for e in events if e.get("type") == "system" and e.get("subtype") == "init"), None)
    servers = init.get("mcp_servers") if init else None
    for server in servers if isinstance(servers, list) else []:
        if isinstance(server, dict) and server.get("name") == MCP_SERVER and server.get("status") == "failed":
            report.fault = "the MCP server was not reached"
    result = next((e for e in reversed(events) if e.get("type") == "result"), None)
    if result is None:
        report.fault = report.fault or f"Claude Code exited with code {exit_code} and no result line"
        return report
    _read_claude_usage(result, report)
    final = result.get("result")
    report.final_text = final if isinstance(final, str) else None
    reason = result.get("terminal_reason")
    report.ended = CLAUDE_ENDINGS.get(reason) if isinstance(reason, str) else None
    # A turn or budget limit is reported as an error too (is_error, subtype error_max_turns): not a fault.
    if reason == "api_error" or (result.get("is_error") and report.ended in (None, "completed")):
        said = _one_line(final or result.get("subtype") or "")
        report.fault = report.fault or f"Claude Code reported an error ({reason or 'no reason'}): {said}"[:500]
        report.final_text = None  # the error message, not the model's
    if report.fault is not None:
        report.ended = None
    return report


def _read_claude_usage(result: dict[str, Any], report: CliReport) -> None:
    """Tokens summed over the models of ``modelUsage`` (cache reads and writes count as input) and the cost."""
    usage = result.get("modelUsage")
    for model in usage.values() if isinstance(usage, dict) else []:
        if not isinstance(model, dict):
            continue
        cached = _int(model.get("cacheReadInputTokens"))
        report.input_tokens += _int(model.get("inputTokens")) + cached + _int(model.get("cacheCreationInputTokens"))
        report.output_tokens += _int(model.get("outputTokens"))
        report.cached_tokens += cached
    cost = result.get("total_cost_usd")
    report.cost_usd = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None


def read_codex_output(text: str, exit_code: int) -> CliReport:
    """Read ``codex exec --json`` stdout: usage of every ``turn.completed`` summed, the last agent message as the
    final text, ``turn.failed`` or an error after ``turn.started`` as a fault. Harmless: an error item before the
    first turn (Codex warning it has no metadata for the model) and ``Reconnecting... N/M`` errors (retries)."""
    report = CliReport()
    started = completed = False
    for event in json_events(text):
        kind, item = event.get("type"), event.get("item")
        item = item if isinstance(item, dict) else {}
        if kind == "turn.started":
            started = True
        elif kind == "turn.completed":
            completed = True
            _add_codex_usage(event.get("usage"), report)
        elif kind == "turn.failed":
            error = event.get("error")
            said = error.get("message") if isinstance(error, dict) else error
            report.fault = f"the Codex turn failed: {_one_line(said)}"[:500]
        elif started and (kind == "error" or item.get("type") == "error") and report.fault is None:
            said = _one_line(event.get("message") or item.get("message"))
            if not said.startswith(CODEX_RETRYING):
                report.fault = f"Codex reported an error: {said}"[:500]
        if kind == "item.completed" and item.get("type") == "agent_message" and isinstance(item.get("text"), str):
            report.final_text = item["text"]
    if report.fault is None and completed and exit_code == 0:
        report.ended = "completed"
    elif report.fault is None:
        report.fault = f"Codex exited with code {exit_code}" + ("" if completed else " before completing a turn")
    return report


def _add_codex_usage(usage: Any, report: CliReport) -> None:
    """Add one turn's usage (``input_tokens`` already counts the cached ones)."""
    if isinstance(usage, dict):
        report.input_tokens += _int(usage.get("input_tokens"))
        report.output_tokens += _int(usage.get("output_tokens"))
        report.cached_tokens += _int(usage.get("cached_input_tokens"))
