"""What an ``llm`` run will cost, known before it is paid for: the calls a model is expected to make, played through
the agent offline.

An :class:`OfflineEngine` stands in for the model: it answers each request with the next call of a trajectory, with
a stand-in of the model's own words beside it (its thought or text, kept in the conversation as a reply is), answers a
request for a summary (``context=compact``) with a stand-in of a set length, and bills each request with a
:class:`~discogym.llm.tokens.TokenCounter` (the model's own tokenizer where one works offline, else a quarter of the
characters). The real :class:`~discogym.llm.agent.LLMAgent` plays the episode through the project's episode driver
(:func:`~discogym.core.running.episode_loop.play_episode`), so windows, compactions and notes happen exactly as in a
run; no model is called and no key is needed.

Each task is estimated three times (:data:`CASES`): ``low``, the reference agent's calls alone with nothing written
beside them; ``expected``, the calls the suite expects of a model (:meth:`~discogym.core.Suite.model_calls`: autumn's
interaction phase to its step cap, then the test; elsewhere the reference's calls) with :data:`EXPECTED_WORDS`
tokens of words per reply; ``high``, the suite's high trajectory (twice the reference's steps outside autumn) with
:data:`HIGH_WORDS` per reply.
"""

import json
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ContentReasoning, ContentText
from inspect_ai.tool import ToolCall as InspectToolCall
from inspect_ai.tool import ToolInfo

from discogym.core import AgentOptions, Episode, Suite, ToolCall, Usage, UserError
from discogym.core.running.episode_loop import PlannedEpisode, play_episode
from discogym.core.running.planning import RunConfig, plan_episodes
from discogym.core.running.run_file import latest_record
from discogym.core.running.storage import RunDir
from discogym.llm.agent import LLMAgent, LLMSettings, llm_settings
from discogym.llm.context import CHARS_PER_TOKEN, SUMMARY_PROMPT
from discogym.llm.engine import Completion, ContextOverflow
from discogym.llm.models import ModelFacts, ModelSpec, Price, model_facts, parse_model, price_table
from discogym.llm.scaffolds import scaffold
from discogym.llm.tokens import TokenCounter, token_counter

SUMMARY_TOKENS = 400  # the length of a stand-in summary: about what a model writes of a long exploration
EXPLORE_MOVES = ("up", "right", "down", "left", "noop")  # autumn's exploration acts, in a cycle
CACHE_MINIMUM = 1_024  # a shorter prefix is not cached (OpenAI's minimum, and Anthropic's for its larger models)
CACHE_KEPT = 8  # the earlier requests whose prefixes the cache holds
DONE = "done"  # what the stand-in model says once its trajectory is played out
# The model's own words beside each call (a thought, or a sentence of text): an assumption, not a measurement.
EXPECTED_WORDS = 150  # a short paragraph of thought per step
HIGH_WORDS = 1_000  # a model that reasons at length before every step (or its reasoning budget, if larger)
CAVEAT = (
    "Estimates: no model was called. Each case replays a trajectory of calls through the llm agent (its context "
    "policy, compactions and notes as in a run), and a real model may take other steps; repeats of a task replay the "
    "same calls, so --repeats multiplies."
)


@dataclass(frozen=True)
class Case:
    """One of an estimate's three cases: which trajectory is replayed, and the words of each reply."""

    name: str
    words: int  # tokens of the model's own words in each reply, beside its call
    trajectory: str  # "reference", "model" or "model-high" (see :meth:`discogym.core.Suite.model_calls`)


CASES = (Case("low", 0, "reference"), Case("expected", EXPECTED_WORDS, "model"), Case("high", HIGH_WORDS, "model-high"))


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
    """A text of about ``tokens`` tokens (by the quarter-of-characters estimate): a summary, or a reply's words."""
    sentence = "Tried a step and noted what changed; the rule seen so far still holds. "
    chars = tokens * CHARS_PER_TOKEN
    return (sentence * (chars // len(sentence) + 1))[:chars].strip()


class OfflineEngine:
    """A model that makes the recorded ``calls`` in order, billed offline.

    It is an :class:`~discogym.llm.engine.Engine`, as :class:`~discogym.llm.engine.ModelEngine` is. A call comes
    back as a native tool call, as the JSON text protocol's ``{"tool": ..., "args": ...}`` when ``mode`` is
    ``text``, or as ``texts`` (the calls written in the suite's own syntax, words included where the scaffold puts
    them) when ``mode`` is ``suite``. Each
    reply carries ``words`` (a stand-in of the model's thought) as reasoning (none when ``texts`` hold them). A request
    whose last message is :data:`~discogym.llm.context.SUMMARY_PROMPT` gets a summary of ``summary_tokens``. Once
    the calls are spent, the model says :data:`DONE` (which ends the episode as the model's no-answer). Each
    request's input tokens are ``counter``'s count of what it sends; with ``cache``, those of the longest prefix of
    messages it shares with a recent request are cached (from :data:`CACHE_MINIMUM` tokens on); output tokens are
    the count of the reply. A prompt longer than ``context_window`` is refused (:class:`ContextOverflow`), as a
    provider refuses one, and not billed.
    """

    @property
    def base_url(self) -> str:
        return "offline-estimate"

    def __init__(
        self,
        calls: Sequence[ToolCall],
        *,
        mode: str = "native",
        cache: bool = True,
        summary_tokens: int = SUMMARY_TOKENS,
        max_tokens: int | None = None,
        context_window: int | None = None,
        words: int = 0,
        texts: Sequence[str] | None = None,
        counter: TokenCounter | None = None,
    ) -> None:
        if mode not in ("native", "text", "suite"):
            raise UserError(f"mode={mode}: the modes are native, text and suite")
        if mode == "suite" and (texts is None or len(texts) != len(calls)):
            raise UserError("mode=suite: an estimate needs each call written in the suite's own syntax")
        self.calls = list(calls)
        self.texts = list(texts) if texts is not None else None
        self.mode = mode
        self.cache = cache
        self.summary = stand_in_summary(summary_tokens)
        self.words = stand_in_summary(words) if words else ""
        self.max_tokens = max_tokens
        self.context_window = context_window
        self.counter = counter or TokenCounter()
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
        prompt = self.counter.prompt(messages, tools)
        if self.context_window is not None and prompt > self.context_window:
            raise ContextOverflow(f"the prompt ({prompt:,} tokens) is longer than the window ({self.context_window:,})")
        cached = self._cached(messages, tools) if self.cache else 0
        self.earlier.append(list(messages))
        self.requests += 1
        self.peak = max(self.peak, prompt)
        last = messages[-1].content if messages else ""
        calls: list[InspectToolCall] = []
        reasoning = ""
        if last == SUMMARY_PROMPT or text_only:
            self.compactions += last == SUMMARY_PROMPT
            text = self.summary
        elif self.made < len(self.calls):
            call = self.calls[self.made]
            self.made += 1
            reasoning = self.words
            if self.texts is not None:
                text = self.texts[self.made - 1]
            elif self.mode == "native":
                arguments = call.args if isinstance(call.args, dict) else {"input": call.args}
                calls = [InspectToolCall(id=f"call_{self.made}", function=call.tool, arguments=arguments)]
                text = ""
            else:
                text = json.dumps({"tool": call.tool, "args": call.args})
        else:
            text = DONE
        sent = self.counter.text(text) + self.counter.text(reasoning)
        sent += sum(self.counter.text(c.function) + self.counter.text(json.dumps(c.arguments)) for c in calls)
        usage = Usage(input_tokens=prompt, cached_tokens=cached, output_tokens=max(sent, 1))
        self.usage = self.usage + usage
        content: Any = [ContentReasoning(reasoning=reasoning), ContentText(text=text)] if reasoning else text
        message = ChatMessageAssistant(content=content, tool_calls=calls or None, model="offline-estimate")
        return Completion(
            text=text,
            tool_calls=calls,
            reasoning=reasoning or None,
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
        tokens = self.counter.prompt(messages[:shared], tools)
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
    calls: int  # calls the trajectory holds
    requests: int
    compactions: int
    peak_prompt: int
    usage: Usage
    dollars: float | None
    ending: str

    def document(self) -> dict[str, Any]:
        """The row as JSON."""
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


def _totals(rows: list[TaskEstimate], repeats: int, price: Price | None) -> dict[str, Any]:
    """The sum of ``rows``, each played ``repeats`` times."""
    usage = Usage.total(row.usage for row in rows for _ in range(repeats))
    return {
        "requests": sum(row.requests for row in rows) * repeats,
        "compactions": sum(row.compactions for row in rows) * repeats,
        "peak_prompt": max((row.peak_prompt for row in rows), default=0),
        "input_tokens": usage.input_tokens,
        "cached_tokens": usage.cached_tokens,
        "output_tokens": usage.output_tokens,
        "dollars": None if price is None else price.cost(usage),
    }


@dataclass
class Estimate:
    """The estimate of a run of one model on one suite: per case (low, expected, high) one row per episode; the
    expected rows are :attr:`rows`. Totals count each task ``repeats`` times."""

    suite: str
    model: str
    settings: dict[str, Any]
    trajectories: str  # what the expected case replays
    price: Price | None
    rows: list[TaskEstimate] = field(default_factory=list)
    low: list[TaskEstimate] = field(default_factory=list)
    high: list[TaskEstimate] = field(default_factory=list)
    assumptions: dict[str, str] = field(default_factory=dict)  # what each case assumes, by case name
    repeats: int = 1
    tokenizer: str = TokenCounter.name
    tokenizer_reason: str = ""
    budgets: dict[str, float] = field(default_factory=dict)  # the episode's token_limit and cost_limit, when given

    def case_rows(self, case: str) -> list[TaskEstimate]:
        """The rows of ``case`` (low, expected or high)."""
        return {"low": self.low, "expected": self.rows, "high": self.high}[case]

    def totals(self, case: str = "expected") -> dict[str, Any]:
        """Requests, tokens and dollars of ``case`` over every task and repeat."""
        return _totals(self.case_rows(case), self.repeats, self.price)

    @property
    def total(self) -> Usage:
        """The expected case's tokens, every repeat included."""
        return Usage.total(row.usage for row in self.rows for _ in range(self.repeats))

    def document(self) -> dict[str, Any]:
        """The estimate as JSON: the expected rows, each case's total and what it assumes, the tokenizer."""
        return {
            "suite": self.suite,
            "model": self.model,
            "agent_options": self.settings,
            "budgets": self.budgets,
            "trajectories": self.trajectories,
            "repeats": self.repeats,
            "tokenizer": self.tokenizer,
            "tokenizer_reason": self.tokenizer_reason,
            "price_per_million_tokens": None if self.price is None else self.price.model_dump(exclude_none=True),
            "tasks": [row.document() for row in self.rows],
            "total": self.totals("expected"),
            "cases": {
                case.name: {**self.totals(case.name), "assumes": self.assumptions.get(case.name, "")} for case in CASES
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
    spec = parse_model(agent.model, settings.key_env)
    return spec, settings, model_facts(spec, price_table())


def case_words(case: Case, settings: LLMSettings) -> int:
    """The tokens of words each reply carries in ``case``: the high case's at least the reasoning budget; never
    more than the reply's output cap leaves beside the action."""
    words = max(case.words, settings.reasoning_tokens or 0) if case.name == "high" else case.words
    if settings.max_tokens is not None:
        words = min(words, max(settings.max_tokens - 32, 0))
    return words


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
    repeats: int = 1,
    progress: Callable[[str], None] | None = None,
) -> Estimate:
    """Estimate what ``agent`` (``llm`` with a model and options) would bill on ``suite``'s tasks, ``repeats``
    times each: the three :data:`CASES` of each task. With ``explore`` (autumn) or ``from_run``, every case replays
    those calls instead (``explore`` exploration acts then the reference's, or the earlier run's), and the cases
    differ only in the words of each reply."""
    spec, settings, facts = llm_parts(agent)
    if repeats < 1:
        raise UserError("--repeats must be 1 or more")
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
    counter, reason = token_counter(spec)
    llm = AgentOptions(
        name="llm",
        model=agent.model,
        options=agent.options,
        token_limit=agent.token_limit,
        cost_limit=agent.cost_limit,
    )  # the budgets end an estimated episode as they would end a real one
    result = Estimate(
        suite.name,
        spec.id,
        dict(agent.options),
        "",
        facts.price,
        repeats=repeats,
        tokenizer=counter.name,
        tokenizer_reason=reason,
        budgets={
            name: value
            for name, value in (("token_limit", agent.token_limit), ("cost_limit", agent.cost_limit))
            if value is not None
        },
    )
    for planned in _planned(suite, llm, split or _run_split(from_run), tasks, conditions):
        where = (planned.task.id, planned.condition.name)
        trajectories = _trajectories(suite, planned, recorded, from_run, explore, progress)
        for case in CASES:
            calls, source = trajectories[case.trajectory]
            words = case_words(case, settings)
            result.assumptions[case.name] = f"{source}; {words:,} tokens of the model's own words per reply"
            if progress is not None:
                progress(f"replaying {len(calls)} calls through the llm agent on {where[0]} ({case.name})")
            row = estimate_episode(suite, planned, calls, spec, settings, facts, summary_tokens, words, counter)
            result.case_rows(case.name).append(row)
        result.trajectories = trajectories["model"][1]
    return result


def _trajectories(
    suite: Suite,
    planned: PlannedEpisode,
    recorded: dict[tuple[str, str], list[ToolCall]] | None,
    from_run: Path | None,
    explore: int | None,
    progress: Callable[[str], None] | None,
) -> dict[str, tuple[list[ToolCall], str]]:
    """The calls each case replays on ``planned``, and what they are, by :attr:`Case.trajectory`."""
    where = (planned.task.id, planned.condition.name)
    if recorded is not None:
        if where not in recorded:
            raise UserError(f"--from {from_run}: no episode of task {where[0]} under condition {where[1]}")
        given = (recorded[where], f"the calls of {from_run}")
        return dict.fromkeys(("reference", "model", "model-high"), given)
    if progress is not None:
        progress(f"playing the reference agent on {where[0]}")
    reference = reference_calls(suite, planned)
    own = (reference, f"the calls of the reference agent '{reference_name(suite)}'")
    if explore is not None:
        given = (exploration(explore) + reference, f"{explore} exploration acts, then {own[1]}")
        return dict.fromkeys(("reference", "model", "model-high"), given)
    return {
        "reference": own,
        "model": suite.model_calls(planned.task, planned.condition, reference),
        "model-high": suite.model_calls(planned.task, planned.condition, reference, high=True),
    }


def _run_split(run: Path | None) -> str | None:
    """The split an earlier run played, if its configuration says."""
    if run is None:
        return None
    record = latest_record(RunDir(run).config_path)
    return None if record is None else record.split


def suite_texts(
    suite: Suite, planned: PlannedEpisode, calls: Sequence[ToolCall], settings: LLMSettings, words: int
) -> tuple[list[str], bool]:
    """``calls`` as the replies of ``mode=suite``: each written in the suite's own syntax, in the scaffold's reply
    format with ``words`` of thought where it has one; and whether the words are in them (else they go as
    reasoning)."""
    env = suite.make_env(planned.task, planned.condition, planned.env_seed)
    preset = scaffold(settings.scaffold)
    thought = stand_in_summary(words) if words else ""
    texts: list[str] = []
    placed = False
    try:
        for call in calls:
            action = env.format_text_action(call)
            if action is None:
                raise UserError(
                    f"mode=suite: suite '{suite.name}' cannot write its call {call.tool} in its own syntax, so this "
                    "trajectory cannot be estimated in mode=suite; estimate mode=native or mode=text"
                )
            written = preset.reply(action, thought) if preset is not None else None
            placed = written is not None
            texts.append(written if written is not None else action)
    finally:
        env.close()
    return texts, placed


def estimate_episode(
    suite: Suite,
    planned: PlannedEpisode,
    calls: Sequence[ToolCall],
    spec: ModelSpec,
    settings: LLMSettings,
    facts: ModelFacts,
    summary_tokens: int = SUMMARY_TOKENS,
    words: int = 0,
    counter: TokenCounter | None = None,
) -> TaskEstimate:
    """Play ``planned`` with the llm agent and an :class:`OfflineEngine` making ``calls``, each reply with ``words``
    tokens of the model's own words, counted by ``counter`` (a quarter of the characters by default)."""
    texts, placed = suite_texts(suite, planned, calls, settings, words) if settings.mode == "suite" else (None, False)
    engine = OfflineEngine(
        calls,
        mode=settings.mode,
        cache=settings.cache,
        summary_tokens=summary_tokens,
        max_tokens=settings.max_tokens,
        context_window=settings.context_window or facts.context_window,
        words=0 if placed else words,
        texts=texts,
        counter=counter,
    )
    agent = LLMAgent(spec, engine, settings, facts)
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


def estimate_suites(
    suites: Sequence[Suite],
    agents: Sequence[AgentOptions],
    *,
    repeats: int = 1,
    split: str | None = None,
    tasks: list[str] | None = None,
    conditions: list[str] | None = None,
    summary_tokens: int = SUMMARY_TOKENS,
    progress: Callable[[str], None] | None = None,
    skipped: list[str] | None = None,
) -> list[Estimate]:
    """The estimates of every ``llm`` agent among ``agents`` on every suite (each suite's default split and first
    condition unless told), ``repeats`` times each task: what ``discogym estimate SUITE...`` and a sweep's estimate
    print, with one total (:func:`grand_total`). A suite without a reference agent is left out, with a line in
    ``skipped`` when given (else a UserError)."""
    models = [agent for agent in agents if agent.name == "llm"]
    if not models:
        raise UserError("an estimate is of language-model agents: give --model (and --agent llm, if --agent is given)")
    if len(suites) > 1 and (split or tasks or conditions):
        raise UserError("--split, --tasks and --condition name one suite's: give them with a single suite")
    estimates = []
    for suite in suites:
        if not suite.reference_agents():
            if skipped is None:
                reference_name(suite)  # its message
            else:
                skipped.append(f"{suite.name}: no reference agent whose calls could be replayed; not estimated")
            continue
        for agent in models:
            estimates.append(
                estimate_run(
                    suite,
                    agent,
                    split=split,
                    tasks=tasks,
                    conditions=conditions,
                    summary_tokens=summary_tokens,
                    repeats=repeats,
                    progress=progress,
                )
            )
    return estimates


def grand_total(estimates: Sequence[Estimate]) -> dict[str, dict[str, Any]]:
    """Each case's requests, tokens and dollars summed over ``estimates`` (dollars None if any has no price)."""
    totals: dict[str, dict[str, Any]] = {}
    for case in CASES:
        parts = [estimate.totals(case.name) for estimate in estimates]
        summed: dict[str, Any] = {
            key: sum(part[key] for part in parts)
            for key in ("requests", "compactions", "input_tokens", "cached_tokens", "output_tokens")
        }
        summed["peak_prompt"] = max((part["peak_prompt"] for part in parts), default=0)
        priced = [part["dollars"] for part in parts]
        summed["dollars"] = None if not priced or None in priced else sum(priced)
        totals[case.name] = summed
    return totals
