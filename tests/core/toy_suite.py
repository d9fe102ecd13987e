"""A small suite for the harness tests: find a hidden digit by probing it.

Importable as ``tests.core.toy_suite:suite`` through ``DISCOGYM_SUITES`` so that CLI tests in
subprocesses can run it.
"""

import os
import re
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from discogym.core import (
    Agent,
    AgentContext,
    AgentDecision,
    AgentFactory,
    AgentOptions,
    Condition,
    Env,
    Episode,
    FigureSource,
    InfrastructureError,
    Limits,
    NoArgs,
    Protocol,
    ProtocolPart,
    PublishedFigure,
    ReportTable,
    Score,
    Suite,
    Task,
    Termination,
    ToolArgs,
    ToolCall,
    ToolError,
    ToolImage,
    ToolResult,
    Turn,
    UserError,
    make_rng,
    tool,
    with_options,
)

TEXT_PROMPT = "You play the digit game. Answer with one line: 'probe N' to compare digit N, or 'submit N'."
TEXT_ACTION = re.compile(r"(probe|submit) ([0-9])")
PICTURE = b"\x89PNG\r\n\x1a\n not really a picture"


class DigitArgs(ToolArgs):
    n: int = Field(ge=0, le=9, description="a digit from 0 to 9")


class DigitEnv(Env):
    limits = Limits(max_steps=20)

    def __init__(self, task: Task, condition: Condition, seed: int) -> None:
        self.task_id = task.id
        self._hidden = int(task.ground_truth["digit"])
        self._delay = float(condition.params.get("delay_s", 0.0))
        self._buggy = bool(condition.params.get("buggy", False))
        self._pictures = bool(condition.params.get("pictures", False))
        self._rng = np.random.default_rng(seed)
        self.submitted: int | None = None
        self._stash: ToolResult | None = None

    def brief(self) -> str:
        return "A digit from 0 to 9 is hidden. Probe digits to learn whether it is higher or lower, then submit it."

    def tools(self) -> list[Any]:
        return [t for t in super().tools() if self._buggy or t.name not in ("explode", "garble", "stash")]

    def _pause(self) -> None:
        if self._delay:
            time.sleep(self._delay)

    @tool(DigitArgs)
    def probe(self, args: DigitArgs) -> ToolResult:
        """Compare a digit with the hidden one."""
        self._pause()
        relation = "equal to" if args.n == self._hidden else ("higher than" if self._hidden > args.n else "lower than")
        images = [ToolImage.from_bytes(PICTURE)] if self._pictures else []
        return ToolResult(
            text=f"the hidden digit is {relation} {args.n}", data={"relation": relation.split()[0]}, images=images
        )

    @tool(NoArgs)
    def roll(self, args: NoArgs) -> ToolResult:
        """Roll the environment's die (uses its seeded generator)."""
        value = self._rng.integers(1, 7)  # a numpy integer, and a set below: both must be stored exactly
        faces = {"one", "two", "three", "four", "five", "six"}
        return ToolResult(text=f"rolled {value}", data={"value": value, "faces": faces})

    @tool(DigitArgs)
    def submit(self, args: DigitArgs) -> ToolResult:
        """Submit your answer; ends the episode."""
        self._pause()
        if self.submitted is not None:
            raise ToolError("already submitted")
        self.submitted = args.n
        self.finish(Termination.SUBMITTED)
        return ToolResult(text=f"submitted {args.n}", data={"submitted": args.n})

    @tool(NoArgs)
    def explode(self, args: NoArgs) -> ToolResult:
        """A tool with a bug (only in the 'buggy' condition)."""
        raise RuntimeError("the explode tool is broken")

    @tool(NoArgs)
    def stash(self, args: NoArgs) -> ToolResult:
        """Returns data that it spoils on the next call (only in the 'buggy' condition)."""
        if self._stash is not None:
            self._stash.data["spoiled"] = object()
        self._stash = ToolResult(text="stashed", data={"fresh": True})
        return self._stash

    @tool(NoArgs)
    def garble(self, args: NoArgs) -> ToolResult:
        """A tool whose data cannot be stored (only in the 'buggy' condition)."""
        return ToolResult(text="garbled", data={"thing": object()})

    def text_prompt(self) -> str | None:
        return TEXT_PROMPT

    def parse_text_action(self, text: str) -> ToolCall:
        match = TEXT_ACTION.fullmatch(text.strip())
        if match is None:
            raise ToolError("answer with one line: 'probe N' or 'submit N', N a digit")
        return ToolCall(tool=match.group(1), args={"n": int(match.group(2))})

    def valid_calls(self) -> list[ToolCall]:
        if self._buggy:
            raise LookupError("valid_calls is broken in the buggy condition")
        return super().valid_calls()

    def outcome(self) -> dict[str, Any]:
        return {"submitted": self.submitted}


class Bisect(Agent):
    """Binary search with probes, then submit."""

    def __init__(self) -> None:
        self.low, self.high = 0, 9

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        if history and history[-1].call.tool == "probe" and history[-1].result.ok:
            probed = int(history[-1].call.args["n"])
            relation = history[-1].result.data["relation"]
            if relation == "equal":
                self.low = self.high = probed
            elif relation == "higher":
                self.low = probed + 1
            else:
                self.high = probed - 1
        if self.low == self.high:
            return AgentDecision(call=ToolCall(tool="submit", args={"n": self.low}))
        return AgentDecision(call=ToolCall(tool="probe", args={"n": (self.low + self.high) // 2}))


MALFORMED_CALLS = [
    ToolCall(tool="teleport", args={}),
    ToolCall(tool="probe", args="not json"),
    ToolCall(tool="probe", args=[1, 2]),
    ToolCall(tool="probe", args={"n": "seven"}),
    ToolCall(tool="probe", args={"n": 42}),
    ToolCall(tool="probe", args={"n": 3, "extra": True}),
    ToolCall(tool="probe", args={}),
]


class Sloppy(Bisect):
    """Sends malformed calls first, then plays like Bisect."""

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        if len(history) < len(MALFORMED_CALLS):
            return AgentDecision(call=MALFORMED_CALLS[len(history)])
        return super().act(history[len(MALFORMED_CALLS) :])


FLAKY_FAULT = "model endpoint unavailable (simulated)"


class Flaky(Bisect):
    """Bisect whose first attempt at each episode fails after one call: with an infrastructure fault,
    or (``--agent-opt fault=die``) by killing its own process.

    It remembers failed attempts as marker files in ``--agent-opt fail_dir=DIR``; ``--agent-opt message=TEXT``
    is the fault's message (an endpoint's error body, say).
    """

    def __init__(self, fail_dir: Path, fault: str, message: str) -> None:
        super().__init__()
        self.fail_dir = fail_dir
        self.fault = fault
        self.message = message
        self.marker = fail_dir / "unset"

    def start(self, context: AgentContext) -> None:
        self.marker = self.fail_dir / f"failed-{context.seed}"

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        if len(history) == 1 and not self.marker.exists():
            self.fail_dir.mkdir(parents=True, exist_ok=True)
            self.marker.touch()
            if self.fault == "die":
                os.kill(os.getpid(), signal.SIGKILL)
            raise InfrastructureError(self.message)
        return super().act(history)


class Crasher(Agent):
    """An agent with a bug."""

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        raise ValueError("the crasher agent always fails")


class Mute(Agent):
    """An agent with a bug: returns nothing."""

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        return None  # type: ignore[return-value]


class Quitter(Agent):
    """Gives up at once."""

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        return AgentDecision(message="I give up")


def _flaky(options: AgentOptions) -> Agent:
    get = options.options.get
    return Flaky(Path(get("fail_dir", "flaky-markers")), get("fault", "raise"), get("message", FLAKY_FAULT))


class DigitSuite(Suite):
    name = "toy"
    aliases = ("digits",)
    description = "find a hidden digit (harness tests only)"

    def splits(self) -> list[str]:
        return ["dev", "tiny"]

    def tasks(self, split: str) -> list[Task]:
        count = {"dev": 8, "tiny": 2}.get(split)
        if count is None:
            raise UserError(f"toy has no split '{split}'")
        rng = make_rng("toy", split)
        digits = rng.integers(0, 10, size=count)
        return [
            Task(
                id=f"{split}-{i:02d}", suite="toy", split=split, brief="find the digit", ground_truth={"digit": int(d)}
            )
            for i, d in enumerate(digits)
        ]

    def conditions(self) -> list[Condition]:
        return [
            Condition(name="plain"),
            Condition(name="slow", params={"delay_s": 0.05}),
            Condition(name="buggy", params={"buggy": True}),
            Condition(name="pictures", params={"pictures": True}),
        ]

    def make_env(self, task: Task, condition: Condition, seed: int) -> Env:
        return DigitEnv(task, condition, seed)

    def protocols(self) -> list[Protocol]:
        return [TOY_PROTOCOL]

    def reference_agents(self) -> dict[str, AgentFactory]:
        return {
            "bisect": lambda options: Bisect(),
            "sloppy": lambda options: Sloppy(),
            "flaky": with_options(_flaky, "fail_dir", "fault", "message"),
            "crasher": lambda options: Crasher(),
            "quitter": lambda options: Quitter(),
            "mute": lambda options: Mute(),
        }

    def score(self, episode: Episode) -> Score:
        submitted = episode.outcome.env.get("submitted")
        success = submitted == episode.task.ground_truth["digit"]
        return Score(value=float(success), success=success, components={"calls": len(episode.events)})

    def tables(self, episodes: list[Episode]) -> list[ReportTable]:
        rows = [[e.key.task, e.key.agent, e.score.value] for e in episodes]
        return [ReportTable(title="toy: episodes", columns=["task", "agent", "score"], rows=rows)]


def _figure(model: str, value: float, ids: tuple[str, ...] = ()) -> PublishedFigure:
    source = FigureSource(table="Table 9", row=model, column="solved")
    return PublishedFigure(
        protocol="toy-paper",
        model=model,
        model_ids=ids,
        condition="plain",
        metric="success_rate",
        value=value,
        printed=f"{value:.2f}",
        source=source,
    )


TOY_PROTOCOL = Protocol(
    name="toy-paper",
    suite="toy",
    title="the toy paper's headline experiment",
    paper="toy",
    section="Section 9",
    tables=("Table 9",),
    parts=(
        ProtocolPart(name="twice", split="tiny", conditions=("plain",), repeats=2, llm_options={"mode": "text"}),
        ProtocolPart(name="pictures", split="tiny", conditions=("plain", "pictures")),
    ),
    differences=("the toy paper guessed digits by hand",),
    figures=(_figure("digit-model-a", 0.5, ("openai/digit-a",)), _figure("digit-model-b", 0.9)),
)

suite = DigitSuite()
