"""What an ``llm`` run will cost, known before it is paid for: recorded calls replayed through the agent offline.

An :class:`OfflineEngine` stands in for the model: it answers each request with the next call of a recorded
trajectory (a suite's reference agent's, an earlier run's, or exploration acts then the reference's), answers a
request for a summary (``context=compact``) with a stand-in of a set length, and bills each request as the
policies estimate a prompt (:func:`~discogym.llm.context.estimate_tokens`: a quarter of the characters). The real
:class:`~discogym.llm.agent.LLMAgent` plays the episode through the project's episode driver
(:func:`~discogym.core.running.episode_loop.play_episode`), so windows, compactions and notes happen exactly as in
a run; no model is called and no key is needed.
"""

import json
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant
from inspect_ai.tool import ToolCall as InspectToolCall
from inspect_ai.tool import ToolInfo

from discogym.core import AgentOptions, Episode, Suite, ToolCall, Usage, UserError
from discogym.core.running.episode_loop import PlannedEpisode, play_episode
from discogym.core.running.planning import RunConfig, plan_episodes
from discogym.core.running.run_file import latest_record
from discogym.core.running.storage import RunDir
from discogym.llm.agent import LLMAgent, LLMSettings, llm_settings
from discogym.llm.context import CHARS_PER_TOKEN, SUMMARY_PROMPT, estimate_tokens
from discogym.llm.engine import Completion, ContextOverflow
from discogym.llm.models import ModelFacts, ModelSpec, Price, model_facts, parse_model, price_table

SUMMARY_TOKENS = 400  # the length of a stand-in summary: about what a model writes of a long exploration
EXPLORE_MOVES = ("up", "right", "down", "left", "noop")  # autumn's exploration acts, in a cycle
CACHE_MINIMUM = 1_024  # a shorter prefix is not cached (OpenAI's minimum, and Anthropic's for its larger models)
CACHE_KEPT = 8  # the earlier requests whose prefixes the cache holds
DONE = "done"  # what the stand-in model says once its trajectory is played out
CAVEAT = (
    "Estimates: tokens are a quarter of the characters sent and received (real tokenizers differ by 10-30%); "
    "the model is assumed to make the recorded calls."
)


def _same(a: ChatMessage, b: ChatMessage) -> bool:
    """Whether two messages send the same thing (a policy rebuilds some, e.g. the summary, for each request)."""
    if a is b:
        return True
    return (
        type(a) is type(b)
        and a.content == b.content
        and getattr(a, "tool_calls", None) == getattr(b, "tool_calls", None)
        and getattr(a, "tool_call_id", None) == getattr(b, "tool_call_id", None)
    )


def stand_in_summary(tokens: int) -> str:
    """A summary of about ``tokens`` tokens (by the quarter-of-characters estimate)."""
    sentence = "Tried a move and noted what changed; the rule seen so far still holds. "
    chars = tokens * CHARS_PER_TOKEN
    return (sentence * (chars // len(sentence) + 1))[:chars].strip()


class OfflineEngine:
    """A model that makes the recorded ``calls`` in order, billed offline.

    It has the interface :class:`~discogym.llm.agent.LLMAgent` uses of :class:`~discogym.llm.engine.ModelEngine`
    (:meth:`complete`, :attr:`base_url`, :meth:`default_max_tokens`). A call comes back as a native tool call, or
    as the JSON text protocol's ``{"tool": ..., "args": ...}`` when ``mode`` is ``text``. A request whose last
    message is :data:`~discogym.llm.context.SUMMARY_PROMPT` gets a summary of ``summary_tokens``. Once the calls
    are spent, the model says :data:`DONE` (which ends the episode as the model's no-answer). Each request's input
    tokens are :func:`~discogym.llm.context.estimate_tokens` of what it sends; with ``cache``, those of the longest
    prefix of messages it shares with a recent request are cached (from :data:`CACHE_MINIMUM` tokens on); output
    tokens are a quarter of the reply's characters. A prompt longer than ``context_window`` is refused
    (:class:`ContextOverflow`), as a provider
    refuses one, and not billed.
    """

    base_url = "offline-estimate"

    def __init__(
        self,
        calls: Sequence[ToolCall],
        *,
        mode: str = "native",
        cache: bool = True,
        summary_tokens: int = SUMMARY_TOKENS,
        max_tokens: int | None = None,
        context_window: int | None = None,
    ) -> None:
        if mode not in ("native", "text"):
            raise UserError(
                f"mode={mode}: an estimate replays calls natively or in the JSON text protocol only "
                "(mode=native or mode=text); a suite's own syntax cannot be written back from its calls"
            )
        self.calls = list(calls)
        self.mode = mode
        self.cache = cache
        self.summary = stand_in_summary(summary_tokens)
        self.max_tokens = max_tokens
        self.context_window = context_window
        self.made = 0  # recorded calls made so far
        self.earlier: deque[list[ChatMessage]] = deque(maxlen=CACHE_KEPT)
        self.requests = 0
        self.compactions = 0
        self.peak = 0
        self.usage = Usage()

    def default_max_tokens(self) -> int | None:
        return self.max_tokens

    def complete(
        self,
        messages: list[ChatMessage],
        tools: list[ToolInfo],
        *,
        max_tokens: int | None = None,
        text_only: bool = False,
    ) -> Completion:
        prompt = estimate_tokens(messages, tools)
        if self.context_window is not None and prompt > self.context_window:
            raise ContextOverflow(f"the prompt ({prompt:,} tokens) is longer than the window ({self.context_window:,})")
        cached = self._cached(messages, tools) if self.cache else 0
        self.earlier.append(list(messages))
        self.requests += 1
        self.peak = max(self.peak, prompt)
        last = messages[-1].content if messages else ""
        calls: list[InspectToolCall] = []
        if last == SUMMARY_PROMPT or text_only:
            self.compactions += last == SUMMARY_PROMPT
            text = self.summary
        elif self.made < len(self.calls):
            call = self.calls[self.made]
            self.made += 1
            if self.mode == "native":
                arguments = call.args if isinstance(call.args, dict) else {"input": call.args}
                calls = [InspectToolCall(id=f"call_{self.made}", function=call.tool, arguments=arguments)]
                text = ""
            else:
                text = json.dumps({"tool": call.tool, "args": call.args})
        else:
            text = DONE
        sent = len(text) + sum(len(c.function) + len(json.dumps(c.arguments)) for c in calls)
        usage = Usage(input_tokens=prompt, cached_tokens=cached, output_tokens=max(sent // CHARS_PER_TOKEN, 1))
        self.usage = self.usage + usage
        message = ChatMessageAssistant(content=text, tool_calls=calls or None, model="offline-estimate")
        return Completion(
            text=text,
            tool_calls=calls,
            reasoning=None,
            message=message,
            usage=usage,
            stop_reason="tool_calls" if calls else "stop",
        )

    def _cached(self, messages: list[ChatMessage], tools: list[ToolInfo]) -> int:
        """The tokens of the longest prefix of ``messages`` (tools first) one of the last :data:`CACHE_KEPT`
        requests also sent; none below :data:`CACHE_MINIMUM`."""
        shared = max((_shared(earlier, messages) for earlier in self.earlier), default=0)
        if shared == 0:
            return 0
        tokens = estimate_tokens(messages[:shared], tools)
        return tokens if tokens >= CACHE_MINIMUM else 0


def _shared(earlier: list[ChatMessage], messages: list[ChatMessage]) -> int:
    """How many leading messages two requests share."""
    count = 0
    for before, now in zip(earlier, messages, strict=False):
        if not _same(before, now):
            break
        count += 1
    return count


@dataclass
class TaskEstimate:
    """The estimate of one episode."""

    task: str
    condition: str
    calls: int  # recorded calls the trajectory holds
    requests: int
    compactions: int
    peak_prompt: int
    usage: Usage
    dollars: float | None
    ending: str

    def document(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "condition": self.condition,
            "calls": self.calls,
            "requests": self.requests,
            "compactions": self.compactions,
            "peak_prompt": self.peak_prompt,
            "input_tokens": self.usage.input_tokens,
            "cached_tokens": self.usage.cached_tokens,
            "output_tokens": self.usage.output_tokens,
            "dollars": self.dollars,
            "ending": self.ending,
        }


@dataclass
class Estimate:
    """The estimate of a run of one model: one row per episode, and their total."""

    suite: str
    model: str
    settings: dict[str, Any]
    trajectories: str
    price: Price | None
    rows: list[TaskEstimate] = field(default_factory=list)

    @property
    def total(self) -> Usage:
        return sum((row.usage for row in self.rows), Usage())

    @property
    def dollars(self) -> float | None:
        return None if self.price is None else self.price.cost(self.total)

    def document(self) -> dict[str, Any]:
        total = self.total
        return {
            "suite": self.suite,
            "model": self.model,
            "agent_options": self.settings,
            "trajectories": self.trajectories,
            "price_per_million_tokens": None if self.price is None else self.price.model_dump(exclude_none=True),
            "tasks": [row.document() for row in self.rows],
            "total": {
                "requests": sum(row.requests for row in self.rows),
                "compactions": sum(row.compactions for row in self.rows),
                "peak_prompt": max((row.peak_prompt for row in self.rows), default=0),
                "input_tokens": total.input_tokens,
                "cached_tokens": total.cached_tokens,
                "output_tokens": total.output_tokens,
                "dollars": self.dollars,
            },
            "note": CAVEAT,
        }


def episode_calls(episode: Episode) -> list[ToolCall]:
    """The calls an episode's agent made, in order."""
    return [event.call for event in episode.events]


def exploration(steps: int) -> list[ToolCall]:
    """``steps`` exploration acts on an autumn world: a cycle of the four moves and ``noop``."""
    return [ToolCall(tool="act", args={"action": EXPLORE_MOVES[i % len(EXPLORE_MOVES)]}) for i in range(steps)]


def reference_name(suite: Suite) -> str:
    """The suite's reference agent, whose calls an estimate replays by default."""
    own = suite.reference_agents()
    if not own:
        raise UserError(
            f"suite '{suite.name}' has no reference agent whose calls an estimate could replay; "
            "use --from RUN_DIR to replay an earlier run's calls"
        )
    return next(iter(own))


def reference_calls(suite: Suite, planned: PlannedEpisode) -> list[ToolCall]:
    """The calls of the suite's reference agent on ``planned``'s task and condition, played now."""
    reference = planned.model_copy(update={"agent": AgentOptions(name=reference_name(suite))})
    episode, _ = play_episode(suite, reference)
    if episode.outcome.status == "error":
        raise UserError(
            f"the reference agent '{reference.agent.name}' failed on task {planned.task.id}, so there are no calls "
            f"to replay: {episode.outcome.error}"
        )
    return episode_calls(episode)


def run_calls(run: Path, suite: Suite) -> dict[tuple[str, str], list[ToolCall]]:
    """The calls of an earlier run's episodes, by (task, condition); the first episode of each."""
    if not run.is_dir():
        raise UserError(f"--from {run}: no such run folder")
    found: dict[tuple[str, str], list[ToolCall]] = {}
    for episode in RunDir(run).iter_episodes():
        if episode.key.suite != suite.name:
            raise UserError(f"--from {run}: its episodes are of suite '{episode.key.suite}', not '{suite.name}'")
        found.setdefault((episode.key.task, episode.key.condition), episode_calls(episode))
    if not found:
        raise UserError(f"--from {run}: the folder holds no episodes (episodes/*.json) to replay")
    return found


def _planned(
    suite: Suite,
    agent: AgentOptions,
    split: str | None,
    tasks: list[str] | None,
    conditions: list[str] | None,
) -> list[PlannedEpisode]:
    """The episodes a run of ``agent`` would play (planned with a stand-in agent: the llm needs no key here)."""
    config = RunConfig.for_suite(suite, [AgentOptions(name="random")], split=split, tasks=tasks, conditions=conditions)
    return plan_episodes(suite, config.model_copy(update={"agents": [agent]}))


def llm_parts(agent: AgentOptions) -> tuple[ModelSpec, LLMSettings, ModelFacts]:
    """The model, settings and facts of an ``llm`` agent, checked, without its key."""
    if not agent.model:
        raise UserError("an estimate needs --model, e.g. anthropic/claude-sonnet-4-5 (see discogym models)")
    settings = llm_settings(AgentOptions(name="llm", options=agent.options))
    if settings.mode == "suite":
        raise UserError(
            "mode=suite cannot be estimated: a suite's own syntax cannot be written back from recorded calls; "
            "estimate mode=native or mode=text"
        )
    spec = parse_model(agent.model, settings.key_env)
    return spec, settings, model_facts(spec, price_table())


def estimate_run(
    suite: Suite,
    agent: AgentOptions,
    *,
    split: str | None = None,
    tasks: list[str] | None = None,
    conditions: list[str] | None = None,
    explore: int | None = None,
    from_run: Path | None = None,
    summary_tokens: int = SUMMARY_TOKENS,
    progress: Callable[[str], None] | None = None,
) -> Estimate:
    """Estimate what ``agent`` (``llm`` with a model and options) would bill on ``suite``'s tasks, replaying
    the reference agent's calls (after ``explore`` exploration acts, on autumn), or those of ``from_run``."""
    spec, settings, facts = llm_parts(agent)
    if explore is not None and suite.name != "autumn":
        raise UserError("--explore adds autumn's exploration acts: it is for suite autumn only")
    if explore is not None and from_run is not None:
        raise UserError("--explore and --from are alternatives: give one")
    recorded = run_calls(from_run, suite) if from_run is not None else None
    if recorded is not None and tasks is None:
        tasks = list(dict.fromkeys(task for task, _ in recorded))
        conditions = conditions or list(dict.fromkeys(condition for _, condition in recorded))
    if recorded is None:
        reference_name(suite)  # a clear message before anything is played
    llm = AgentOptions(name="llm", model=agent.model, options=agent.options)
    source = (
        f"the calls of {from_run}"
        if from_run is not None
        else f"{explore} exploration acts, then the calls of '{reference_name(suite)}'"
        if explore
        else f"the calls of the reference agent '{reference_name(suite)}'"
    )
    result = Estimate(suite.name, spec.id, dict(agent.options), source, facts.price)
    for planned in _planned(suite, llm, split or _run_split(from_run), tasks, conditions):
        where = (planned.task.id, planned.condition.name)
        if recorded is not None:
            if where not in recorded:
                raise UserError(f"--from {from_run}: no episode of task {where[0]} under condition {where[1]}")
            calls = recorded[where]
        else:
            if progress is not None:
                progress(f"playing the reference agent on {where[0]}")
            calls = exploration(explore or 0) + reference_calls(suite, planned)
        if progress is not None:
            progress(f"replaying {len(calls)} calls through the llm agent on {where[0]}")
        result.rows.append(estimate_episode(suite, planned, calls, spec, settings, facts, summary_tokens))
    return result


def _run_split(run: Path | None) -> str | None:
    """The split an earlier run played, if its configuration says."""
    if run is None:
        return None
    record = latest_record(RunDir(run).config_path)
    return None if record is None else record.split


def estimate_episode(
    suite: Suite,
    planned: PlannedEpisode,
    calls: Sequence[ToolCall],
    spec: ModelSpec,
    settings: LLMSettings,
    facts: ModelFacts,
    summary_tokens: int = SUMMARY_TOKENS,
) -> TaskEstimate:
    """Play ``planned`` with the llm agent and an :class:`OfflineEngine` making ``calls``; its estimate."""
    engine = OfflineEngine(
        calls,
        mode=settings.mode,
        cache=settings.cache,
        summary_tokens=summary_tokens,
        max_tokens=settings.max_tokens,
        context_window=settings.context_window or facts.context_window,
    )
    agent = LLMAgent(spec, engine, settings, facts)  # type: ignore[arg-type] # the engine's interface, offline
    episode, _ = play_episode(suite, planned, agent)
    if episode.outcome.status == "error" and episode.outcome.termination.value in ("env_error", "agent_error"):
        raise UserError(f"the estimate of task {planned.task.id} failed: {episode.outcome.error}")
    price = facts.price
    return TaskEstimate(
        task=planned.task.id,
        condition=planned.condition.name,
        calls=len(calls),
        requests=engine.requests,
        compactions=engine.compactions,
        peak_prompt=engine.peak,
        usage=engine.usage,
        dollars=None if price is None else price.cost(engine.usage),
        ending=episode.outcome.termination.value,
    )
