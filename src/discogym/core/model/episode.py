"""Episodes: the self-contained record of one (task, condition, agent, model, repeat)."""

import hashlib
import json
import re
from typing import Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from discogym.core.model.agent import MemoryEvent, Usage
from discogym.core.model.jsonsafe import JsonDict
from discogym.core.model.task import Condition, Task
from discogym.core.model.termination import Termination
from discogym.core.model.tools import ToolCall, ToolResult, ToolSpec

EPISODE_FORMAT_VERSION = 1
CANONICAL_JSON = orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_LEADING_DOTS = re.compile(r"^\.+")


class EpisodeKey(BaseModel):
    """What identifies an episode within a run. ``agent_options`` are the ``--agent-opt`` settings:
    the same agent with other options (another transcript, say) makes other episodes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    suite: str
    task: str
    condition: str
    agent: str
    model: str | None = None
    agent_options: dict[str, str] = Field(default_factory=dict)
    token_limit: int | None = None
    cost_limit: float | None = None
    repeat: int = Field(default=0, ge=0)
    # How the task was played: None for on its own, "curriculum" for a link of a chain (a suite's levels in
    # order, each starting from what the one before left). Left out of the key when None, so keys of runs
    # before settings existed are unchanged.
    setting: str | None = Field(default=None, exclude_if=lambda setting: setting is None)

    def __hash__(self) -> int:
        return hash(self.canonical())

    def canonical(self) -> str:
        """A stable JSON encoding of the key."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))

    def condition_label(self) -> str:
        """The condition, with the setting when there is one: ``hint+scientist@curriculum``."""
        return self.condition if self.setting is None else f"{self.condition}@{self.setting}"

    def agent_label(self) -> str:
        """The agent's name, with its ``--agent-opt`` settings and budgets if any: ``replay[transcript=a.json]``."""
        settings = [f"{k}={v}" for k, v in sorted(self.agent_options.items())]
        if self.token_limit is not None:
            settings.append(f"token_limit={self.token_limit}")
        if self.cost_limit is not None:
            settings.append(f"cost_limit={self.cost_limit:g}")
        return f"{self.agent}[{','.join(settings)}]" if settings else self.agent

    def file_stem(self) -> str:
        """A readable, filesystem-safe, unique name: the key's parts plus a digest of the whole key."""
        parts = [self.task, self.condition, self.agent, self.model or "-", f"r{self.repeat}"]
        if self.setting is not None:
            parts.append(self.setting)
        readable = _UNSAFE.sub("_", "~".join(parts))[:120]
        # A leading dot would hide the file (dotfiles are atomic_write's temporaries, skipped by readers).
        readable = _LEADING_DOTS.sub(lambda dots: "_" * len(dots.group()), readable)
        digest = hashlib.sha256(self.canonical().encode("utf-8")).hexdigest()[:12]
        return f"{readable}-{digest}"


class Event(BaseModel):
    """One step of the log: the agent's call, the environment's result, and the agent's cost (with a model's
        ``reasoning`` before the call, left out of the file when it showed none, and its ``memory``: compactions
    and notes on the way to the call, left out when none). ``session`` is
        the sub-agent's session the call ran, if it ran one (SciCrafter's scientist answering the engineer);
        left out of the file otherwise."""

    step: int
    call: ToolCall
    result: ToolResult
    agent_message: str | None = None
    usage: Usage | None = None
    reasoning: str | None = Field(default=None, exclude_if=lambda reasoning: reasoning is None)
    memory: list[MemoryEvent] = Field(default_factory=list, exclude_if=lambda memory: not memory)
    session: "SubSession | None" = Field(default=None, exclude_if=lambda session: session is None)

    def total_usage(self) -> Usage:
        """The call's cost with its sub-agent session's."""
        return Usage.total([self.usage, self.session.usage() if self.session is not None else None])

    def usage_part(self) -> Usage | None:
        """What the call adds to its episode's total: :meth:`total_usage`, or None when it cost nothing."""
        return self.usage if self.session is None else self.total_usage()


class SubSession(BaseModel):
    """A sub-agent's session inside one tool call: the agent the harness made for ``role`` (the same kind and
    model as the episode's agent), its calls on the environment the tool opened for it, and how it ended."""

    role: str
    brief: str
    events: list[Event]
    termination: Termination
    agent_message: str | None = None
    final_usage: Usage | None = None

    def usage(self) -> Usage:
        """Tokens and cost of the session."""
        return Usage.total([self.final_usage, *(event.usage_part() for event in self.events)])


Event.model_rebuild()


Status = Literal["completed", "error"]


class Outcome(BaseModel):
    """How the episode ended.

    ``status`` is ``completed`` when the episode ran to an end (whatever the agent achieved) and
    ``error`` when a bug in the environment or agent stopped it; ``termination`` says which end
    (:class:`~discogym.core.model.termination.Termination`: ``submitted``, ``step_limit``, ``agent_stopped``,
    ``env_error``, ...), and its ``kind`` what ended it.
    """

    status: Status
    termination: Termination
    error: str | None = None
    agent_message: str | None = None
    final_usage: Usage | None = None
    final_reasoning: str | None = Field(default=None, exclude_if=lambda reasoning: reasoning is None)
    final_memory: list[MemoryEvent] = Field(default_factory=list, exclude_if=lambda memory: not memory)
    env: JsonDict = Field(default_factory=dict)


class Score(BaseModel):
    """A suite's score for one episode, computed from the episode alone."""

    value: float | None = None
    success: bool | None = None
    components: JsonDict = Field(default_factory=dict)
    error: str | None = None


class Provenance(BaseModel):
    """Where an episode came from. Contains nothing that changes between identical reruns.

    ``suite_version`` is the suite's :attr:`~discogym.core.model.suite.Suite.version` and ``task_hash`` the
    SHA-256 of the task's canonical JSON, ground truth included (:func:`discogym.core.running.versions.task_hash`).
    """

    discogym_version: str
    git_commit: str | None
    python: str
    platform: str
    run_seed: int
    env_seed: int
    agent_seed: int
    model: str | None = None
    agent_settings: JsonDict = Field(default_factory=dict)
    # None in episodes written before versions were recorded.
    suite_version: str | None = None
    task_hash: str | None = None


class Episode(BaseModel):
    """Everything about one episode: the task (with its hidden ground truth), what the agent saw,
    every call and result, the outcome, the score, the audit and the provenance."""

    format_version: int = EPISODE_FORMAT_VERSION
    key: EpisodeKey
    task: Task
    condition: Condition
    brief: str
    tools: list[ToolSpec]
    events: list[Event]
    outcome: Outcome
    score: Score = Field(default_factory=Score)
    audit: JsonDict = Field(default_factory=dict)
    provenance: Provenance
    # What the episode started from, carried from the one before it in a curriculum chain (e.g. a knowledge
    # book); left out of the file when None.
    carried: JsonDict | None = Field(default=None, exclude_if=lambda carried: carried is None)

    def usage(self) -> Usage:
        """Tokens and cost summed over the episode, its sub-agents' sessions included."""
        return Usage.total([self.outcome.final_usage, *(event.usage_part() for event in self.events)])

    def to_json(self) -> bytes:
        """The canonical file content: sorted keys, so the bytes depend only on the content."""
        return orjson.dumps(self.model_dump(mode="json"), option=CANONICAL_JSON)


class StepTiming(BaseModel):
    """Wall-clock seconds one step took."""

    agent_s: float
    env_s: float


class EpisodeRuntime(BaseModel):
    """What changes between identical reruns (wall-clock times, tracebacks), kept beside the episode so
    that the episode file itself stays byte-reproducible."""

    key: EpisodeKey
    started_at: str
    total_s: float
    steps: list[StepTiming]
    sessions: list[list[StepTiming]] = Field(default_factory=list)  # each sub-agent session's steps, in order
    traceback: str | None = None
    agent_output: str | None = None  # what the agent printed, if it keeps any (an agent CLI's raw event stream)
    # A person's game at a frame rate (the web app): seconds between the frames the server ran, each held back to
    # the frame rate; longer ones are frames the person's page sent late.
    frame_intervals_s: list[float] | None = Field(default=None, exclude_if=lambda intervals: intervals is None)
