"""``--agent cli``: an agent CLI (Claude Code or Codex) plays the episode, one process per episode.

The runner plays a CLI episode like any other: this agent starts the CLI with an MCP configuration naming only
a :class:`~discogym.agent_clis.bridge.ToolBridge` of the episode's own tools, hands each tool call the CLI
makes to the episode loop (which runs it on the environment and logs it), and sends the result back. When the
CLI exits, its own report says how it ended and what it spent. A CLI that fails (its endpoint, the MCP
connection, a crash, the wall-clock timeout) is an infrastructure fault: the episode is not written and is
retried.

The CLI runs with a fresh HOME, an empty working directory it cannot write to, an environment holding only
what it needs, and none of its own tools (``--agent-opt builtin_tools=true`` allows them); it is given no path
to the run directory or the task files.
"""

import functools
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from discogym.agent_clis.bridge import ToolBridge
from discogym.agent_clis.install import CLIS, cli_version, find_cli
from discogym.agent_clis.launch import (
    CliReport,
    Launch,
    claude_launch,
    codex_launch,
    read_claude_output,
    read_codex_output,
)
from discogym.agent_clis.meter import Meter
from discogym.core import (
    Agent,
    AgentContext,
    AgentDecision,
    AgentOptions,
    InfrastructureError,
    Termination,
    ToolResult,
    Turn,
    Usage,
    UserError,
)
from discogym.core.model.errors import MissingCredentials
from discogym.llm.models import ModelSpec, Price, find_price, parse_model, price_table

POLL_S = 0.1  # how often the agent looks at the CLI process while it waits for its next call
FINISH_S = 60.0  # how long a CLI may take to end by itself once the environment has ended the episode
OPENAI_URL = "https://api.openai.com/v1"
ANTHROPIC_URL = "https://api.anthropic.com"
# How a CLI that ended by itself ended, as the episode's termination.
ENDINGS = {
    "completed": Termination.AGENT_STOPPED,
    "max_turns": Termination.TURN_LIMIT,
    "budget": Termination.COST_LIMIT,
}
OVER = "the episode is over; stop"
PROVIDERS = {"claude-code": ("anthropic",), "codex": ("openai", "openai-compatible")}


class CliSettings(BaseModel):
    """The ``--agent-opt`` settings of the ``cli`` agent."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cli: Literal["claude-code", "codex"]
    builtin_tools: bool = False
    timeout_s: float = Field(default=1800.0, gt=0)
    max_turns: int = Field(default=200, ge=1)


OPTIONS = tuple(CliSettings.model_fields)


class CliAgent(Agent):
    """One episode played by an agent CLI process (see the module's description)."""

    def __init__(
        self,
        settings: CliSettings,
        spec: ModelSpec,
        key: str,
        executable: Path,
        price: Price | None,
        budget: AgentOptions | None = None,
    ):
        self.cli = settings
        self.spec = spec
        self.key = key
        self.executable = executable
        self.version = _version(executable)
        self.price = price
        self.budget = budget
        self.meter: Meter | None = None  # between the CLI and its endpoint when the episode has a budget
        self.bridge: ToolBridge | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.folder: tempfile.TemporaryDirectory[str] | None = None
        self.deadline = 0.0
        self.calls_made = 0  # tool calls the CLI made, for the turn limit of a CLI that has none

    def settings(self) -> dict[str, Any]:
        return {
            "cli": self.cli.cli,
            "cli_version": self.version,
            "model": self.spec.id,
            "base_url": self.spec.base_url,
            "builtin_tools": self.cli.builtin_tools,
            "max_turns": self.cli.max_turns,
            "timeout_s": self.cli.timeout_s,
            "usage_from": "meter" if self._metered else "cli",
        }

    @property
    def _metered(self) -> bool:
        """Whether a :class:`Meter` counts the episode's tokens and enforces its budget."""
        return self.budget is not None and (self.budget.token_limit is not None or self.budget.cost_limit is not None)

    def start(self, context: AgentContext) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="discogym-cli-")
        root = Path(self.folder.name)
        home, workdir = root / "home", root / "work"
        home.mkdir()
        workdir.mkdir()
        workdir.chmod(0o555)  # empty, and not the CLI's to write in
        self.bridge = ToolBridge(context.tools, instructions=context.system_prompt or "")
        launch = self._launch(self.bridge.start(), prompt(context), home, workdir)
        with open(root / "stdout.jsonl", "wb") as out, open(root / "stderr.txt", "wb") as err:
            self.process = subprocess.Popen(
                launch.argv,
                env=launch.env,
                cwd=launch.cwd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,  # its own process group: a timeout kills everything it started
            )
        self.deadline = time.monotonic() + self.cli.timeout_s

    def _launch(self, mcp_url: str, text: str, home: Path, workdir: Path) -> Launch:
        common: dict[str, Any] = {
            "model": self.spec.name,
            "prompt": text,
            "mcp_url": mcp_url,
            "home": home,
            "workdir": workdir,
            "api_key": self.key,
            "builtin_tools": self.cli.builtin_tools,
            "tool_timeout_s": self.cli.timeout_s,
        }
        if self.cli.cli == "claude-code":
            base_url = self.spec.base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
            if self._metered:
                base_url = self._start_meter(base_url or ANTHROPIC_URL)
            budget = self.budget.cost_limit if self.budget is not None else None
            return claude_launch(
                self.executable, base_url=base_url, max_turns=self.cli.max_turns, max_budget_usd=budget, **common
            )
        base_url = self.spec.base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL
        if self._metered:
            base_url = self._start_meter(base_url)
        return codex_launch(self.executable, base_url=base_url, **common)

    def _start_meter(self, upstream: str) -> str:
        """Start the episode's metering proxy in front of ``upstream``; the base URL the CLI is to use."""
        assert self.budget is not None
        self.meter = Meter(upstream, self.budget, self.price).start()
        return self.meter.url

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        assert self.bridge is not None and self.process is not None, "start() comes first"
        if history:
            self.bridge.answer(history[-1].result)
        while True:
            call = self.bridge.next_call(POLL_S)
            if call is not None and self.calls_made >= self.cli.max_turns and self.cli.cli == "codex":
                return self._turn_limit()
            if call is not None:
                self.calls_made += 1
                return AgentDecision(call=call)
            if self.process.poll() is not None:
                return self._ended(self.process.returncode)
            if time.monotonic() > self.deadline:
                self._stop_process()
                raise InfrastructureError(f"{self.label} ran past its timeout of {self.cli.timeout_s:g} s")

    def settle(self, history: Sequence[Turn]) -> Usage | None:
        """The environment ended the episode: give the CLI the last result, let it end by itself (answering
        any further call with an error: the episode is over), and return what it spent: the meter's count when
        it ran, else the CLI's report, None when the CLI does not end in time or says nothing readable (the
        episode itself is complete either way)."""
        assert self.bridge is not None
        self.bridge.answer(history[-1].result)
        return self._spent(self._let_it_end())

    def _turn_limit(self) -> AgentDecision:
        """The CLI asked for a tool call past ``max_turns`` (Codex, which has no turn limit of its own): refuse
        it, let the CLI end by itself, and end the episode as ``turn_limit``."""
        assert self.bridge is not None
        self.bridge.answer(ToolResult.failure(f"the limit of {self.cli.max_turns} tool calls is reached: {OVER}"))
        return AgentDecision(usage=self._spent(self._let_it_end()), termination=Termination.TURN_LIMIT)

    def _let_it_end(self) -> CliReport | None:
        """Wait for the CLI to end by itself, answering any further call with an error (the episode is over);
        its report, None if it does not end in time."""
        assert self.bridge is not None and self.process is not None
        deadline = min(self.deadline, time.monotonic() + FINISH_S)
        while self.process.poll() is None and time.monotonic() < deadline:
            if self.bridge.next_call(POLL_S) is not None:
                self.bridge.answer(ToolResult.failure(OVER))
        return self._report(self.process.returncode) if self.process.poll() is not None else None

    def _spent(self, report: CliReport | None) -> Usage | None:
        """What the episode spent: the meter's count when it ran, else the report of a CLI that ended well,
        else unknown (None)."""
        if self.meter is not None:
            return self._usage(report or CliReport())
        return None if report is None or report.fault is not None else self._usage(report)

    @property
    def label(self) -> str:
        return CLIS[self.cli.cli].label

    def _ended(self, exit_code: int) -> AgentDecision:
        """The decision that ends the episode once the CLI has exited, or an InfrastructureError if it failed.
        A CLI the meter refused a model request (the budget is spent) reports an API error: that is the
        budget's termination, not a fault."""
        assert self.bridge is not None
        report = self._report(exit_code)
        exhausted = self.meter.exhausted if self.meter is not None else None
        if report.fault is not None and exhausted is None:
            raise InfrastructureError(f"{self.label}: {report.fault}")
        if not self.bridge.tools_listed:
            raise InfrastructureError(f"{self.label} exited without connecting to the episode's tools")
        return AgentDecision(
            message=report.final_text,
            usage=self._usage(report),
            termination=exhausted or ENDINGS.get(report.ended or "", Termination.AGENT_STOPPED),
        )

    def _report(self, exit_code: int) -> CliReport:
        """What the exited CLI printed, read."""
        reader = read_claude_output if self.cli.cli == "claude-code" else read_codex_output
        return reader(self.output() or "", exit_code)

    def _usage(self, report: CliReport) -> Usage:
        """The episode's tokens (the meter's count when it ran, else the CLI's report), priced with discogym's
        table (the CLI's own dollar figure when the table has no price for the model)."""
        usage = Usage(
            input_tokens=report.input_tokens, output_tokens=report.output_tokens, cached_tokens=report.cached_tokens
        )
        if self.meter is not None:
            usage = self.meter.usage
        cost = self.price.cost(usage) if self.price is not None else report.cost_usd or 0.0
        return usage.model_copy(update={"cost_usd": cost})

    def _stop_process(self) -> None:
        if self.process is not None and self.process.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def output(self) -> str | None:
        """The CLI's raw JSON event stream (its standard output), kept in the episode's runtime sidecar."""
        if self.folder is None:
            return None
        return (Path(self.folder.name) / "stdout.jsonl").read_text(encoding="utf-8", errors="replace")

    def close(self) -> None:
        self._stop_process()
        if self.bridge is not None:
            self.bridge.close()
        if self.meter is not None:
            self.meter.close()
        if self.folder is not None:
            (Path(self.folder.name) / "work").chmod(0o755)
            self.folder.cleanup()


@functools.cache
def _version(executable: Path) -> str:
    """The CLI's version, asked once per process (each episode makes an agent)."""
    return cli_version(executable)


def prompt(context: AgentContext) -> str:
    """What the CLI is asked: the suite's instructions, the brief, and how to act."""
    parts = [context.system_prompt or "", context.brief.strip()]
    parts.append(
        "Act only through the tools of the MCP server 'discogym'. The episode ends when a tool result says it is "
        "over; then stop."
    )
    return "\n\n".join(part for part in parts if part)


def cli_settings(options: AgentOptions) -> CliSettings:
    """The agent's ``--agent-opt`` settings, or a UserError naming the one that is wrong."""
    try:
        return CliSettings.model_validate(options.options)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "cli"
        raise UserError(
            f"agent 'cli': --agent-opt {where}: {first['msg']} (options: {', '.join(OPTIONS)}; "
            "cli=claude-code or cli=codex is required)"
        ) from None


def make_cli_agent(options: AgentOptions) -> Agent:
    """The ``cli`` agent for one episode, or a UserError (a missing CLI, model or key) before anything runs."""
    settings = cli_settings(options)
    if not options.model:
        raise UserError("agent 'cli' needs --model (anthropic/NAME for claude-code, openai/NAME for codex)")
    spec = parse_model(options.model)
    if spec.provider not in PROVIDERS[settings.cli]:
        accepted = " or ".join(f"{provider}/NAME" for provider in PROVIDERS[settings.cli])
        raise UserError(f"agent 'cli' with cli={settings.cli} takes --model {accepted}, not {options.model}")
    price = find_price(spec, price_table())
    if options.cost_limit is not None and price is None:
        raise UserError(
            f"--cost-limit needs a price for {spec.id}: add one with a DISCOGYM_PRICES file (see docs/llm.md)"
        )
    key = spec.api_key()
    if not key:
        raise MissingCredentials(f"{options.model}: no API key; set {spec.key_variable} to run it")
    executable = find_cli(settings.cli)
    return CliAgent(settings, spec, key, executable, price, options)
