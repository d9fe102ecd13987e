"""Playing one episode: agent and environment in a loop, then scoring and auditing from the log."""

import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict

from discogym import __version__
from discogym.core.agent import Agent, AgentContext, AgentDecision, AgentOptions, Turn, Usage
from discogym.core.agent_lookup import make_agent
from discogym.core.env import Env
from discogym.core.episode import (
    Episode,
    EpisodeKey,
    EpisodeRuntime,
    Event,
    Outcome,
    Provenance,
    Score,
    StepTiming,
    SubSession,
)
from discogym.core.errors import InfrastructureError, ToolError
from discogym.core.human import ABANDONED
from discogym.core.jsonsafe import json_safe
from discogym.core.provenance import git_commit, platform_name, python_version
from discogym.core.seeding import derive_seed
from discogym.core.suite import Suite
from discogym.core.task import Condition, Task
from discogym.core.tools import ToolCall, ToolImage, ToolResult, ToolSpec
from discogym.core.versions import task_hash

_T = TypeVar("_T")

AGENT_STOPPED = "agent_stopped"
AGENT_ERROR = "agent_error"
ENV_ERROR = "env_error"


class PlannedEpisode(BaseModel):
    """Everything needed to play one episode, in any process."""

    model_config = ConfigDict(frozen=True)

    key: EpisodeKey
    task: Task
    condition: Condition
    agent: AgentOptions
    run_seed: int
    env_seed: int
    agent_seed: int
    after: EpisodeKey | None = None  # the episode before it in its curriculum chain
    carried: dict[str, Any] | None = None  # what that episode left for this one (set when it is queued)


def _describe(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}"


class _EnvCallbackError(Exception):
    """An environment method that the agent called (valid_calls, parse_text_action) failed."""


def _guard_env_callback(method: Callable[..., _T]) -> Callable[..., _T]:
    def guarded(*args: Any) -> _T:
        try:
            return method(*args)
        except (InfrastructureError, ToolError):
            raise
        except Exception as err:
            raise _EnvCallbackError(_describe(err)) from err

    return guarded


class _SubAgentFailed(Exception):
    """A sub-agent failed (a bug in it, not an infrastructure fault): the episode's agent error."""


class EpisodeStopped(Exception):
    """The episode ended with an error of the environment or agent, already recorded."""


class EpisodeRecorder:
    """One episode being played: its environment, its log, and how it ended.

    The runner's agent loop (:func:`play_episode`) drives it, and so do sessions whose agent acts from
    outside the process (:mod:`discogym.core.session`), so every episode is logged, scored and stored the
    same way. The environment is closed exactly once: by :meth:`finish`, or by :meth:`abandon`.
    """

    def __init__(self, suite: Suite, planned: PlannedEpisode) -> None:
        self.suite = suite
        self.planned = planned
        self.started_at = datetime.now(UTC).isoformat(timespec="seconds")
        self._clock = time.perf_counter()
        self.env: Env | None = None
        self._env_closed = False
        self.events: list[Event] = []
        self.timings: list[StepTiming] = []
        self.brief = ""
        self.tools: list[ToolSpec] = []
        self.brief_images: list[ToolImage] = []
        self.agent_settings: dict[str, Any] = {}
        self.termination: str | None = None
        self.error: str | None = None
        self.trace: str | None = None
        self.agent_message: str | None = None
        self.final_usage: Usage | None = None
        self.agent_output: str | None = None
        self.spent = Usage()
        self.sub_agents: _SubAgentRunner | None = None
        self.sub_agent_outputs: list[str] = []

    @contextmanager
    def blame(self, termination: str) -> Iterator[None]:
        """Record an exception in the block as a bug of the environment or agent, and stop the episode
        (:class:`EpisodeStopped`). Infrastructure faults pass through: the episode is then abandoned."""
        try:
            yield
        except InfrastructureError:
            raise
        except _EnvCallbackError as err:
            self._fail(ENV_ERROR, err.__cause__ or err)
        except _SubAgentFailed as err:
            self._fail(AGENT_ERROR, err.__cause__ or err)
        except Exception as err:
            self._fail(termination, err)

    def _fail(self, termination: str, err: BaseException) -> None:
        self.termination = termination
        self.error = _describe(err)
        self.trace = "".join(traceback.format_exception(err))
        raise EpisodeStopped(self.error) from err

    @property
    def over(self) -> bool:
        """True once the episode has ended, by the environment, the agent or an error."""
        return self.termination is not None or (self.env is not None and self.env.done)

    def open(self) -> Env:
        """Make the environment and read its brief and tools."""
        with self.blame(ENV_ERROR):
            self.env = self.suite.make_env(self.planned.task, self.planned.condition, self.planned.env_seed)
            if self.planned.carried is not None:
                self.env.continue_from(self.planned.carried)
            self.brief = self.env.brief()
            self.brief_images = self.env.brief_images()
            self.tools = self.env.tool_specs()
        return self.env

    def context(self) -> AgentContext:
        """What an agent is told at the start: the brief, the tools, its seed and the suite's text syntax."""
        env = self._env()
        with self.blame(ENV_ERROR):
            text_prompt = env.text_prompt()
            system_prompt = env.system_prompt()
        return AgentContext(
            brief=self.brief,
            brief_images=self.brief_images,
            tools=self.tools,
            seed=self.planned.agent_seed,
            valid_calls=_guard_env_callback(env.valid_calls),
            parse_text_action=_guard_env_callback(env.parse_text_action),
            example_action=_guard_env_callback(env.example_action),
            text_prompt=text_prompt,
            system_prompt=system_prompt,
        )

    def _env(self) -> Env:
        if self.env is None:
            raise RuntimeError("the episode's environment is not open yet")
        return self.env

    def call(
        self, call: ToolCall, *, message: str | None = None, usage: Usage | None = None, agent_s: float = 0.0
    ) -> ToolResult:
        """Run one tool call and log it with the agent's message, cost and thinking time."""
        started = time.perf_counter()
        if usage is not None:  # counted first: a sub-agent the call runs spends from what is left
            self.spent = self.spent + usage
        with self.blame(ENV_ERROR):
            result = self._env().call(call.tool, call.args)
        session = self.sub_agents.take() if self.sub_agents is not None else None
        if session is not None:
            self.spent = self.spent + session.usage()
        self.events.append(
            Event(
                step=len(self.events) + 1, call=call, result=result, agent_message=message, usage=usage, session=session
            )
        )
        self.timings.append(StepTiming(agent_s=agent_s, env_s=time.perf_counter() - started))
        return result

    def lend_sub_agents(self) -> None:
        """Let the environment's tools run sub-agents of the episode's own agent kind and model (an episode
        the runner plays; an outside client's episode has none)."""
        self.sub_agents = _SubAgentRunner(self)
        self._env().lend_sub_agents(self.sub_agents)

    def stop(self, termination: str, message: str | None = None, usage: Usage | None = None) -> None:
        """End the episode for a reason outside the environment (the agent stopped, a budget ran out)."""
        self.termination = termination
        self.agent_message = message
        self.final_usage = usage
        if usage is not None:
            self.spent = self.spent + usage

    def settle(self, usage: Usage | None) -> None:
        """Add what the agent spent after its last decision (:meth:`Agent.finish`) to the episode's cost."""
        if usage is not None:
            self.final_usage = usage
            self.spent = self.spent + usage

    def _read_outcome(self) -> dict[str, Any]:
        """The environment's summary of the end, or {} when the episode ended with an error."""
        if self.error is not None or self.env is None:
            return {}
        if self.termination is None:
            self.termination = self.env.termination
        try:
            with self.blame(ENV_ERROR):
                outcome = self.env.outcome()
                if not isinstance(outcome, dict):
                    raise TypeError(f"outcome() returned {type(outcome).__name__}, not dict")
                safe: dict[str, Any] = json_safe(outcome)
                return safe
        except EpisodeStopped:
            return {}

    def _close_env(self, *, blamed: bool) -> None:
        """Close the environment, once. When ``blamed``, a failure is the episode's environment error
        (unless it already has an error); otherwise it is ignored."""
        if self.env is None or self._env_closed:
            return
        self._env_closed = True
        if blamed and self.error is None:
            with suppress(EpisodeStopped), self.blame(ENV_ERROR):
                self.env.close()
        else:
            with suppress(Exception):
                self.env.close()

    def abandon(self) -> None:
        """The episode will not be written (an infrastructure fault, an interrupt, a client gone): close the
        environment, ignoring its errors, which would only hide why the episode was abandoned."""
        self._close_env(blamed=False)

    def finish(self) -> tuple[Episode, EpisodeRuntime]:
        """Close the environment and return the scored, storable episode and its runtime sidecar."""
        env_outcome = self._read_outcome()
        self._close_env(blamed=True)
        if self.error is not None:  # closing failed
            env_outcome = {}
        episode = storable(score_episode(self.suite, self._episode(env_outcome)))
        runtime = EpisodeRuntime(
            key=self.planned.key,
            started_at=self.started_at,
            total_s=time.perf_counter() - self._clock,
            steps=self.timings,
            traceback=self.trace,
            agent_output="\n".join(filter(None, [self.agent_output, *self.sub_agent_outputs])) or None,
        )
        return episode, runtime

    def _episode(self, env_outcome: dict[str, Any]) -> Episode:
        planned = self.planned
        outcome = Outcome(
            status="error" if self.error else "completed",
            termination=self.termination or "unknown",
            error=self.error,
            agent_message=self.agent_message,
            final_usage=self.final_usage,
            env=env_outcome,
        )
        provenance = Provenance(
            discogym_version=__version__,
            git_commit=git_commit(),
            python=python_version(),
            platform=platform_name(),
            run_seed=planned.run_seed,
            env_seed=planned.env_seed,
            agent_seed=planned.agent_seed,
            model=planned.agent.model,
            agent_settings=self.agent_settings,
            suite_version=self.suite.version,
            task_hash=task_hash(planned.task),
        )
        return Episode(
            key=planned.key,
            task=planned.task,
            condition=planned.condition,
            brief=self.brief,
            tools=self.tools,
            events=self.events,
            outcome=outcome,
            provenance=provenance,
            carried=planned.carried,
        )


class _SubAgentRunner:
    """Plays sub-agent sessions for an episode's tools (:meth:`Env.run_sub_agent`): each with a new agent made
    from the episode's agent options, on the environment the tool gives, until it ends; the recorder logs the
    session with the call that ran it."""

    def __init__(self, recorder: EpisodeRecorder) -> None:
        self.recorder = recorder
        self.count = 0
        self.finished: SubSession | None = None

    def take(self) -> SubSession | None:
        """The session the last call ran, if any."""
        session, self.finished = self.finished, None
        return session

    def run(self, env: Env, role: str) -> SubSession:
        if self.finished is not None:
            raise RuntimeError("a tool call may run one sub-agent session")
        recorder, planned = self.recorder, self.recorder.planned
        self.count += 1
        try:
            agent = make_agent(recorder.suite, planned.agent)
            try:
                session = self._play(agent, env, role, derive_seed("sub-agent", planned.agent_seed, self.count))
            finally:
                with suppress(Exception):  # what it printed is kept beside the episode, as the agent's own is
                    if (printed := agent.output()) is not None:
                        recorder.sub_agent_outputs.append(f"[{role} session {self.count}]\n{printed}")
                agent.close()
        except (InfrastructureError, KeyboardInterrupt, EpisodeStopped):
            raise
        except Exception as err:
            raise _SubAgentFailed(_describe(err)) from err
        self.finished = session
        return session

    def _play(self, agent: Agent, env: Env, role: str, seed: int) -> SubSession:
        brief = env.brief()
        agent.start(
            AgentContext(
                brief=brief,
                tools=env.tool_specs(),
                seed=seed,
                valid_calls=env.valid_calls,
                parse_text_action=env.parse_text_action,
                text_prompt=env.text_prompt(),
                system_prompt=env.system_prompt(),
                example_action=env.example_action,
                role=role,
            )
        )
        budget = self.recorder.planned.agent
        events: list[Event] = []
        history: list[Turn] = []
        spent = Usage()
        while not env.done:
            exhausted = budget.over_budget(self.recorder.spent + spent)
            if exhausted is not None:
                return SubSession(role=role, brief=brief, events=events, termination=exhausted)
            decision = agent.act(history)
            if decision.call is None:
                return SubSession(
                    role=role,
                    brief=brief,
                    events=events,
                    termination=decision.termination or AGENT_STOPPED,
                    agent_message=decision.message,
                    final_usage=decision.usage,
                )
            result = env.call(decision.call.tool, decision.call.args)
            events.append(
                Event(
                    step=len(events) + 1,
                    call=decision.call,
                    result=result,
                    agent_message=decision.message,
                    usage=decision.usage,
                )
            )
            spent = spent + (decision.usage or Usage())
            history.append(Turn(call=decision.call, result=result))
        termination = env.termination or "unknown"
        return SubSession(
            role=role, brief=brief, events=events, termination=termination, final_usage=agent.finish(history)
        )


def _make_agent(recorder: EpisodeRecorder, agent: Agent | None = None) -> Agent:
    with recorder.blame(AGENT_ERROR):
        if agent is None:
            agent = make_agent(recorder.suite, recorder.planned.agent)
        recorder.agent_settings = json_safe(dict(agent.settings()))
    return agent


def _start_agent(recorder: EpisodeRecorder, agent: Agent) -> Agent:
    context = recorder.context()
    if recorder.planned.agent.name in recorder.suite.reference_agents():
        with recorder.blame(ENV_ERROR):
            context.hints = json_safe(dict(recorder.suite.solver_hints(recorder.planned.task)))
    with recorder.blame(AGENT_ERROR):
        agent.start(context)
    return agent


def _decide(recorder: EpisodeRecorder, agent: Agent, history: list[Turn]) -> AgentDecision:
    with recorder.blame(AGENT_ERROR):
        decision = agent.act(history)
        if not isinstance(decision, AgentDecision):
            raise TypeError(f"act() returned {type(decision).__name__}, not AgentDecision")
    return decision


def _agent_loop(recorder: EpisodeRecorder, agent: Agent) -> None:
    """Ask the agent for calls until the environment, the agent or the budget ends the episode.

    The budget is checked before each decision, so an episode may overshoot it by one decision's cost.
    """
    history: list[Turn] = []
    budget = recorder.planned.agent
    while not recorder.over:
        exhausted = budget.over_budget(recorder.spent)
        if exhausted is not None:
            recorder.stop(exhausted, f"{exhausted} reached: {_spent(recorder.spent)}")
            return
        started = time.perf_counter()
        decision = _decide(recorder, agent, history)
        if decision.call is None:
            recorder.stop(decision.termination or AGENT_STOPPED, decision.message, decision.usage)
            return
        result = recorder.call(
            decision.call, message=decision.message, usage=decision.usage, agent_s=time.perf_counter() - started
        )
        history.append(Turn(call=decision.call, result=result))
    with recorder.blame(AGENT_ERROR):  # the environment ended the episode
        recorder.settle(agent.finish(history))


def _spent(usage: Usage) -> str:
    return f"{usage.input_tokens + usage.output_tokens} tokens, ${usage.cost_usd:.4f}"


def score_episode(suite: Suite, episode: Episode) -> Episode:
    """Attach the suite's score and audit, computed from the episode alone.

    An episode that ended in an error is not scored; a scorer or auditor that fails (or returns
    something else than a score) leaves its message in the episode instead of stopping the run. An
    infrastructure fault in them (a judge model's endpoint down) propagates, so the episode is retried.
    """
    if episode.outcome.status == "error":
        return episode.model_copy(update={"score": _not_scored(), "audit": {}})
    try:
        score = Score.model_validate(suite.score(episode))
    except InfrastructureError:
        raise
    except Exception as err:
        score = Score(error=f"scorer failed: {_describe(err)}")
    try:
        audit = json_safe(dict(suite.audit(episode)))
    except InfrastructureError:
        raise
    except Exception as err:
        audit = {"error": f"audit failed: {_describe(err)}"}
    return episode.model_copy(update={"score": score, "audit": audit})


def _unstorable(value: BaseModel) -> Exception | None:
    try:
        orjson.dumps(value.model_dump(mode="json"))
    except (TypeError, ValueError) as err:
        return err
    return None


def storable(episode: Episode) -> Episode:
    """``episode`` if it can be written; otherwise an error episode whose log stops before the first step
    that cannot be (an environment or agent that changed a value after handing it over)."""
    problem = _unstorable(episode)
    if problem is None:
        return episode
    termination, kept = ENV_ERROR, list(episode.events)
    for index, event in enumerate(episode.events):
        if (in_call := _unstorable(event.call)) is not None:
            termination, problem, kept = AGENT_ERROR, in_call, kept[:index]
            break
        if (in_result := _unstorable(event.result)) is not None:
            problem, kept = in_result, kept[:index]
            break
    outcome = Outcome(
        status="error", termination=termination, error=f"the episode could not be stored: {_describe(problem)}"
    )
    return episode.model_copy(update={"events": kept, "outcome": outcome, "score": _not_scored(), "audit": {}})


def _not_scored() -> Score:
    return Score(error="not scored: the episode ended with an error")


def play_episode(
    suite: Suite, planned: PlannedEpisode, agent: Agent | None = None, *, keep_interrupted: bool = False
) -> tuple[Episode, EpisodeRuntime]:
    """Play, score and audit one episode. Raises only InfrastructureError (and KeyboardInterrupt); the
    environment is closed whatever happens.

    ``agent`` plays instead of the one ``planned`` names (made with settings only the caller knows, e.g. where
    a person's pictures go). With ``keep_interrupted``, Ctrl-C does not drop the episode: it ends as
    ``abandoned`` and is scored from its log like any other (``discogym play``, where a person's game is kept).
    """
    recorder = EpisodeRecorder(suite, planned)
    try:
        try:
            recorder.open()
            recorder.lend_sub_agents()
            player = _make_agent(recorder, agent)
            try:
                _agent_loop(recorder, _start_agent(recorder, player))
            finally:
                with suppress(Exception):  # keeping what the agent printed, or releasing what it holds, never
                    recorder.agent_output = player.output()  # costs the episode
                with suppress(Exception):
                    player.close()
        except EpisodeStopped:
            pass
        except KeyboardInterrupt:
            if not keep_interrupted:
                raise
            recorder.stop(ABANDONED, "interrupted (Ctrl-C)")
        return recorder.finish()
    except BaseException:
        recorder.abandon()
        raise
