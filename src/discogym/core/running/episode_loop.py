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
from discogym.core.model.agent import Agent, AgentContext, AgentDecision, AgentOptions, MemoryEvent, Turn, Usage
from discogym.core.model.env import Env
from discogym.core.model.episode import (
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
from discogym.core.model.errors import InfrastructureError, ToolError, UserError
from discogym.core.model.jsonsafe import json_safe
from discogym.core.model.seeding import derive_seed
from discogym.core.model.suite import Suite
from discogym.core.model.task import Condition, Task
from discogym.core.model.termination import Termination
from discogym.core.model.tools import ToolCall, ToolImage, ToolResult, ToolSpec
from discogym.core.running.agent_lookup import make_agent
from discogym.core.running.process import deferring_raised
from discogym.core.running.provenance import git_commit, platform_name, python_version
from discogym.core.running.versions import task_hash

_T = TypeVar("_T")


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


class _Blamed(Exception):
    """A failure already put down to the environment or the agent, on its way to the episode that records it: an
    environment method the agent called (valid_calls, parse_text_action), or a sub-agent's session."""

    def __init__(self, termination: Termination, err: BaseException, where: str = "") -> None:
        super().__init__(f"{where}{_describe(err)}")
        self.termination = termination


def _guard_env_callback(method: Callable[..., _T]) -> Callable[..., _T]:
    def guarded(*args: Any) -> _T:
        try:
            return method(*args)
        except (InfrastructureError, ToolError):
            raise
        except Exception as err:
            raise _Blamed(Termination.ENV_ERROR, err) from err

    return guarded


class EpisodeStopped(Exception):
    """The episode ended with an error of the environment or agent, already recorded."""


class _Driver:
    """What an episode and a sub-agent's session share: an environment, an agent told about it, every call logged
    with its result and cost, blame for failures, and one ending (:class:`Termination`)."""

    def __init__(self, agent_options: AgentOptions, agent_seed: int) -> None:
        self.agent_options = agent_options
        self.agent_seed = agent_seed
        self.suite_name: str | None = None  # told to the agent (AgentContext.suite)
        self.env: Env | None = None
        self.events: list[Event] = []
        self.timings: list[StepTiming] = []
        self.brief = ""
        self.tools: list[ToolSpec] = []
        self.brief_images: list[ToolImage] = []
        self.termination: Termination | None = None
        self.error: str | None = None
        self.trace: str | None = None
        self.agent_message: str | None = None
        self.final_usage: Usage | None = None
        self.final_reasoning: str | None = None
        self.final_memory: list[MemoryEvent] = []
        self._in_flight: Usage | None = None  # the cost of the call being run, before its event is logged

    # Blame

    @contextmanager
    def blame(self, termination: Termination, *, starting: bool = False) -> Iterator[None]:
        """Record an exception in the block as a bug of the environment or agent, and stop the episode
        (:class:`EpisodeStopped`). Infrastructure faults pass through: the episode is then abandoned. While
        ``starting``, a :class:`UserError` (a task, an option or a key the environment or agent refuses) is the
        run's configuration error, not a bug of either."""
        try:
            yield
        except InfrastructureError:
            raise
        except _Blamed as err:
            self._fail(err.termination, err.__cause__ or err, str(err))
        except Exception as err:
            refused = starting and isinstance(err, UserError)
            self._fail(Termination.CONFIG_ERROR if refused else termination, err)

    def _fail(self, termination: Termination, err: BaseException, description: str | None = None) -> None:
        self.termination = termination
        self.error = description or _describe(err)
        self.trace = "".join(traceback.format_exception(err))
        raise EpisodeStopped(self.error) from err

    # State

    @property
    def over(self) -> bool:
        """True once the episode has ended, by the environment, the agent, a limit or an error."""
        return self.termination is not None

    @property
    def spent(self) -> Usage:
        """Tokens and dollars spent so far: the logged calls (with their sub-agents' sessions), the agent's cost
        after its last decision, and the cost of the call being run."""
        total = (self.final_usage or Usage()) + (self._in_flight or Usage())
        for event in self.events:
            total = total + event.total_usage()
        return total

    def budget_spent(self) -> Usage:
        """What counts against the agent's budget (a session spends from its episode's)."""
        return self.spent

    def _env(self) -> Env:
        if self.env is None:
            raise RuntimeError("the episode's environment is not open yet")
        return self.env

    def _read_start(self) -> None:
        """Read the environment's brief, its pictures and its tools."""
        env = self._env()
        with self.blame(Termination.ENV_ERROR):
            self.brief = env.brief()
            self.brief_images = env.brief_images()
            self.tools = env.tool_specs()

    # The agent

    def context(self, *, role: str | None = None, seed: int | None = None) -> AgentContext:
        """What an agent is told at the start: the brief, the tools, its seed and the suite's text syntax. The only
        place an :class:`AgentContext` is made."""
        env = self._env()
        with self.blame(Termination.ENV_ERROR):
            text_prompt = env.text_prompt()
            system_prompt = env.system_prompt()
            example_dialogue = env.example_dialogue()
        return AgentContext(
            brief=self.brief,
            brief_images=self.brief_images,
            tools=self.tools,
            seed=self.agent_seed if seed is None else seed,
            valid_calls=_guard_env_callback(env.valid_calls),
            parse_text_action=_guard_env_callback(env.parse_text_action),
            example_action=_guard_env_callback(env.example_action),
            text_prompt=text_prompt,
            system_prompt=system_prompt,
            role=role,
            suite=self.suite_name,
            example_dialogue=example_dialogue,
        )

    def decide(self, agent: Agent, history: list[Turn]) -> AgentDecision:
        """The agent's next decision (its failure is the agent's error)."""
        with self.blame(Termination.AGENT_ERROR):
            decision = agent.act(history)
            if not isinstance(decision, AgentDecision):
                raise TypeError(f"act() returned {type(decision).__name__}, not AgentDecision")
        return decision

    def over_budget(self) -> bool:
        """Stop the episode if the agent's token or dollar budget is spent; True if it was."""
        budget = self.agent_options
        if budget.token_limit is None and budget.cost_limit is None:
            return False
        spent = self.budget_spent()
        exhausted = budget.over_budget(spent)
        if exhausted is not None:
            self.stop(exhausted, f"{exhausted} reached: {_spent(spent)}")
        return exhausted is not None

    def apply(self, decision: AgentDecision, *, agent_s: float = 0.0) -> ToolResult | None:
        """Carry out the agent's decision: its call's result, or None when it ended the episode."""
        if decision.call is None:
            ending = decision.termination or Termination.AGENT_STOPPED
            self.stop(ending, decision.message, decision.usage, reasoning=decision.reasoning, memory=decision.memory)
            return None
        return self.call(
            decision.call,
            message=decision.message,
            usage=decision.usage,
            reasoning=decision.reasoning,
            memory=decision.memory,
            agent_s=agent_s,
        )

    def play(self, agent: Agent, *, max_calls: int | None = None) -> None:
        """Ask the started agent for calls until the environment, the agent, a budget or ``max_calls`` ends the
        episode, then let the agent settle what it spent after its last decision.

        The budget is checked before each decision, so an episode may overshoot it by one decision's cost.
        """
        history: list[Turn] = []
        while not self.over:
            if self.over_budget():
                return
            if max_calls is not None and len(history) >= max_calls:
                message = f"the conformance check stops episodes after {max_calls} calls"
                self.stop(Termination.CONFORMANCE_STEP_CAP, message)
                return
            started = time.perf_counter()
            decision = self.decide(agent, history)
            if decision.call is None:
                self.apply(decision)
                return
            agent_s = time.perf_counter() - started
            result = self.apply(decision, agent_s=agent_s)
            assert result is not None, "a decision with a call has a result"
            history.append(Turn(call=decision.call, result=result))
        with self.blame(Termination.AGENT_ERROR):  # the environment ended the episode
            self.settle(agent.settle(history))

    # Calls and endings

    def call(
        self,
        call: ToolCall,
        *,
        message: str | None = None,
        usage: Usage | None = None,
        reasoning: str | None = None,
        memory: list[MemoryEvent] | None = None,
        agent_s: float = 0.0,
    ) -> ToolResult:
        """Run one tool call and log it with the agent's message, cost, reasoning, memory and thinking time."""
        started = time.perf_counter()
        self._in_flight = usage  # counted first: a sub-agent the call runs spends from what is left
        try:
            with self.blame(Termination.ENV_ERROR):
                result = self._env().call(call.tool, call.args)
        finally:
            self._in_flight = None
        self.events.append(
            Event(
                step=len(self.events) + 1,
                call=call,
                result=result,
                agent_message=message,
                usage=usage,
                reasoning=reasoning,
                memory=memory or [],
                session=self._session_of_last_call(),
            )
        )
        self.timings.append(StepTiming(agent_s=agent_s, env_s=time.perf_counter() - started))
        if self.env is not None and self.env.termination is not None and self.termination is None:
            self.termination = self.env.termination
        return result

    def _session_of_last_call(self) -> SubSession | None:
        return None

    def credit(self, step: int, message: str | None, usage: Usage | None) -> None:
        """Book an agent's message and cost on the logged call ``step`` (1-based): an agent whose calls are run
        outside this driver (an Inspect model) and whose turn's cost is known only after them."""
        event = self.events[step - 1]
        self.events[step - 1] = event.model_copy(update={"agent_message": message, "usage": usage})

    def stop(
        self,
        termination: Termination,
        message: str | None = None,
        usage: Usage | None = None,
        *,
        reasoning: str | None = None,
        memory: list[MemoryEvent] | None = None,
    ) -> None:
        """End the episode for a reason outside the environment (the agent stopped, a budget ran out)."""
        self.termination = termination
        self.agent_message = message
        self.final_usage = usage
        self.final_reasoning = reasoning
        self.final_memory = memory or []

    def settle(self, usage: Usage | None) -> None:
        """Book what the agent spent after its last decision (:meth:`Agent.settle`)."""
        if usage is not None:
            self.final_usage = usage


class EpisodeRecorder(_Driver):
    """The episode driver: one episode being played, its environment, its log and how it ended.

    Every way an episode is played goes through it: the runner's agent loop (:func:`play_episode`), sub-agent
    sessions (:class:`SessionDriver`, a child of the episode's driver), the conformance check, sessions whose agent
    acts from outside the process (:mod:`discogym.core.running.session`: MCP clients, the web app), the Inspect solver
    and provider, and Inspect log replay. So every episode is started, logged, blamed, scored and stored the same way.
    The environment is closed exactly once: by :meth:`record`, or by :meth:`abandon`.
    """

    def __init__(self, suite: Suite, planned: PlannedEpisode) -> None:
        super().__init__(planned.agent, planned.agent_seed)
        self.suite = suite
        self.suite_name = suite.name
        self.planned = planned
        self.started_at = datetime.now(UTC).isoformat(timespec="seconds")
        self._clock = time.perf_counter()
        self._env_closed = False
        self.agent_settings: dict[str, Any] = {}
        self.agent_output: str | None = None
        self.sub_agents: _SubAgentRunner | None = None
        self.sub_agent_outputs: list[str] = []
        self.session_timings: list[list[StepTiming]] = []

    def open(self) -> Env:
        """Make the environment and read its brief and tools."""
        with self.blame(Termination.ENV_ERROR, starting=True), deferring_raised():  # made whole, so closed after
            self.env = self.suite.make_env(self.planned.task, self.planned.condition, self.planned.env_seed)
            if self.planned.carried is not None:
                self.env.continue_from(self.planned.carried)
        self._read_start()
        return self.env

    def make_agent(self, agent: Agent | None = None) -> Agent:
        """The episode's agent (``agent``, or the one the plan names), its settings recorded."""
        with self.blame(Termination.AGENT_ERROR, starting=True):
            if agent is None:
                agent = make_agent(self.suite, self.planned.agent)
            self.agent_settings = json_safe(dict(agent.settings()))
        return agent

    def start_agent(self, agent: Agent) -> Agent:
        """Tell the agent the episode's context; a suite's own solvers also get the suite's hints."""
        context = self.context()
        if self.planned.agent.name in self.suite.reference_agents():
            with self.blame(Termination.ENV_ERROR):
                context.hints = json_safe(dict(self.suite.solver_hints(self.planned.task)))
        with self.blame(Termination.AGENT_ERROR, starting=True):
            agent.start(context)
        return agent

    def lend_sub_agents(self) -> None:
        """Let the environment's tools run sub-agents of the episode's own agent kind and model (an episode
        the runner plays; an outside client's episode has none)."""
        self.sub_agents = _SubAgentRunner(self)
        self._env().lend_sub_agents(self.sub_agents)

    def _session_of_last_call(self) -> SubSession | None:
        return self.sub_agents.take() if self.sub_agents is not None else None

    def _read_outcome(self) -> dict[str, Any]:
        """The environment's summary of the end, or {} when the episode ended with an error."""
        if self.error is not None or self.env is None:
            return {}
        try:
            with self.blame(Termination.ENV_ERROR):
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
        with deferring_raised():  # an abandoned episode's close is not cut short either
            self._env_closed = True
            _close(self, self.env, blamed=blamed)

    def abandon(self) -> None:
        """The episode will not be written (an infrastructure fault, an interrupt, a client gone): close the
        environment, ignoring its errors, which would only hide why the episode was abandoned."""
        self._close_env(blamed=False)

    def record(self) -> tuple[Episode, EpisodeRuntime]:
        """Close the environment and return the scored, storable episode and its runtime sidecar."""
        if self.termination is None:
            raise RuntimeError("record() before the episode ended: stop() it first")
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
            sessions=self.session_timings,
            traceback=self.trace,
            agent_output="\n".join(filter(None, [self.agent_output, *self.sub_agent_outputs])) or None,
        )
        return episode, runtime

    def _episode(self, env_outcome: dict[str, Any]) -> Episode:
        planned = self.planned
        assert self.termination is not None
        outcome = Outcome(
            status="error" if self.error else "completed",
            termination=self.termination,
            error=self.error,
            agent_message=self.agent_message,
            final_usage=self.final_usage,
            final_reasoning=self.final_reasoning,
            final_memory=self.final_memory,
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


def _close(driver: _Driver, env: Env, *, blamed: bool) -> None:
    """Close ``env``: a failure is the driver's environment error when ``blamed`` (and it has none yet), and
    ignored otherwise."""
    if blamed and driver.error is None:
        with suppress(EpisodeStopped), driver.blame(Termination.ENV_ERROR):
            env.close()
    else:
        with suppress(Exception):
            env.close()


class SessionDriver(_Driver):
    """A sub-agent's session inside one tool call of an episode (SciCrafter's scientist answering the engineer):
    a child of the episode's driver, on the environment the tool made. Its budget is the episode's; a failure of
    its environment or agent is the episode's environment or agent error; its environment is closed when it
    ends, however it ends."""

    def __init__(self, parent: EpisodeRecorder, env: Env, role: str, seed: int) -> None:
        super().__init__(parent.agent_options, seed)
        self.parent = parent
        self.suite_name = parent.suite_name
        self.role = role
        self.env = env

    def budget_spent(self) -> Usage:
        return self.parent.spent + self.spent

    def _fail(self, termination: Termination, err: BaseException, description: str | None = None) -> None:
        self.termination, self.error = termination, description or _describe(err)
        raise _Blamed(termination, err, f"in the {self.role}'s session: ") from err

    def run(self, agent: Agent) -> SubSession:
        """Play the session to its end with the (not yet started) ``agent``; close its environment."""
        env = self._env()
        try:
            self._read_start()
            context = self.context(role=self.role)
            with self.blame(Termination.AGENT_ERROR):
                agent.start(context)
            self.play(agent)
        except BaseException:
            _close(self, env, blamed=False)
            raise
        finally:
            self.parent.session_timings.append(self.timings)
        _close(self, env, blamed=True)
        assert self.termination is not None
        return SubSession(
            role=self.role,
            brief=self.brief,
            events=self.events,
            termination=self.termination,
            agent_message=self.agent_message,
            final_usage=self.final_usage,
        )


class _SubAgentRunner:
    """Plays sub-agent sessions for an episode's tools (:meth:`Env.run_sub_agent`): each a :class:`SessionDriver`
    with a new agent made from the episode's agent options; the episode logs the session with the call that ran
    it."""

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
        recorder = self.recorder
        self.count += 1
        driver = SessionDriver(recorder, env, role, derive_seed("sub-agent", recorder.planned.agent_seed, self.count))
        try:
            with driver.blame(Termination.AGENT_ERROR):
                agent = make_agent(recorder.suite, recorder.planned.agent)
        except BaseException:
            _close(driver, env, blamed=False)
            raise
        try:
            session = driver.run(agent)
        finally:
            with suppress(Exception):  # what it printed is kept beside the episode, as the agent's own is
                if (printed := agent.output()) is not None:
                    recorder.sub_agent_outputs.append(f"[{role} session {self.count}]\n{printed}")
            with suppress(Exception):
                agent.close()
        self.finished = session
        return session


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
    termination, kept = Termination.ENV_ERROR, list(episode.events)
    for index, event in enumerate(episode.events):
        if (in_call := _unstorable(event.call)) is not None:
            termination, problem, kept = Termination.AGENT_ERROR, in_call, kept[:index]
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


def preflight(suite: Suite, planned: list[PlannedEpisode]) -> None:
    """Raise a :class:`UserError` for a setting the first episode of each (agent, condition) would refuse as it
    starts: an environment that refuses the task or condition, an agent that refuses the suite or its options
    (:meth:`Agent.preflight`). No agent acts, no model is called and nothing is written; any other failure is
    left to the episode, which records it as the environment's or agent's error."""
    firsts: dict[tuple[str, str], PlannedEpisode] = {}
    for item in planned:
        firsts.setdefault((item.agent.model_dump_json(), item.condition.name), item)
    for item in firsts.values():
        recorder = EpisodeRecorder(suite, item)
        try:
            recorder.open()
            make_agent(suite, item.agent).preflight(recorder.context())  # never started, so not closed either
        except EpisodeStopped as stopped:
            if recorder.termination is Termination.CONFIG_ERROR:
                raise UserError(f"task {item.task.id}, condition {item.condition.name}: {stopped.__cause__}") from None
        except UserError:
            raise
        except Exception:  # a bug or a fault here is the episode's to record, as it plays
            pass
        finally:
            recorder.abandon()


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
            player = recorder.make_agent(agent)
            try:
                recorder.play(recorder.start_agent(player))
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
            recorder.stop(Termination.ABANDONED, "interrupted (Ctrl-C)")
        return recorder.record()
    except BaseException as err:
        if isinstance(err, InfrastructureError):
            err.add_spent(recorder.spent)  # the calls logged before the fault: no episode file will hold them
        recorder.abandon()
        raise
