"""Runs: the (task x condition x agent x repeat) grid, one file per episode, resumable."""

import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from discogym import __version__
from discogym.core.agent import AgentOptions, Usage, find_generic_agent
from discogym.core.agent_lookup import make_agent, resolve_agent_name
from discogym.core.episode import Episode, EpisodeKey
from discogym.core.errors import InfrastructureError, MissingCredentials, UserError
from discogym.core.play import PlannedEpisode, play_episode
from discogym.core.progress import RunListener
from discogym.core.seeding import derive_seed
from discogym.core.storage import RunDir, atomic_write
from discogym.core.suite import Suite
from discogym.core.task import Condition, Task


class RunConfig(BaseModel):
    """What a run plays. Stored as ``run.json``; a rerun must name the same suite and seed."""

    model_config = ConfigDict(extra="forbid")

    suite: str
    split: str
    tasks: list[str] | None = None
    conditions: list[str]
    agents: list[AgentOptions]
    repeats: int = Field(default=1, ge=1)
    seed: int = Field(default=0, ge=0, lt=2**63)
    discogym_version: str = __version__

    @classmethod
    def for_suite(
        cls,
        suite: Suite,
        agents: Iterable[str | AgentOptions] = ("reference",),
        *,
        split: str | None = None,
        tasks: list[str] | None = None,
        conditions: list[str] | None = None,
        repeats: int = 1,
        seed: int = 0,
        skipped: list[str] | None = None,
    ) -> "RunConfig":
        """A configuration with the suite's defaults (first split, first condition) for what is not given,
        and agent names resolved and checked."""
        requested = [AgentOptions(name=agent) if isinstance(agent, str) else agent for agent in agents]
        return cls(
            suite=suite.name,
            split=split or suite.splits()[0],
            tasks=tasks,
            conditions=conditions or [suite.conditions()[0].name],
            agents=resolve_agents(suite, requested, skipped),
            repeats=repeats,
            seed=seed,
        )


class EpisodeSummary(BaseModel):
    """The little a progress display needs to know about a finished episode."""

    key: EpisodeKey
    status: str
    score: float | None
    usage: Usage

    @classmethod
    def of(cls, episode: Episode) -> "EpisodeSummary":
        """Summarise ``episode``."""
        return cls(key=episode.key, status=episode.outcome.status, score=episode.score.value, usage=episode.usage())


@dataclass
class RunSummary:
    """What a pass over a run did."""

    run_dir: Path
    planned: int
    skipped: int = 0
    written: int = 0
    errors: int = 0
    faults: dict[str, str] = field(default_factory=dict)
    scores: list[float] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """True when every planned episode has its file."""
        return self.skipped + self.written == self.planned


def plan_episodes(suite: Suite, config: RunConfig) -> list[PlannedEpisode]:
    """The episodes of a run in a fixed order: tasks, then conditions, then agents, then repeats.

    An episode asked for twice (the same task or agent named twice, ``reference`` and the solver it
    stands for) is planned once.
    """
    tasks = suite.tasks(config.split)
    if config.tasks is not None:
        by_id = {task.id: task for task in tasks}
        missing = [task_id for task_id in config.tasks if task_id not in by_id]
        if missing:
            raise UserError(
                f"split '{config.split}' of suite '{suite.name}' has no task {', '.join(map(repr, missing))}"
            )
        tasks = [by_id[task_id] for task_id in config.tasks]
    conditions = [suite.condition(name) for name in config.conditions]
    planned = []
    seen: set[EpisodeKey] = set()
    for task in tasks:
        for condition in conditions:
            for agent in config.agents:
                for repeat in range(config.repeats):
                    item = plan_episode(suite.name, task, condition, agent, repeat, config.seed)
                    if item.key not in seen:
                        seen.add(item.key)
                        planned.append(item)
    return planned


def plan_episode(
    suite_name: str, task: Task, condition: Condition, agent: AgentOptions, repeat: int, run_seed: int
) -> PlannedEpisode:
    """One episode with its key and seeds (the runner's and every interface's way of making one)."""
    key = EpisodeKey(
        suite=suite_name,
        task=task.id,
        condition=condition.name,
        agent=agent.name,
        model=agent.model,
        agent_options=agent.options,
        token_limit=agent.token_limit,
        cost_limit=agent.cost_limit,
        repeat=repeat,
    )
    return PlannedEpisode(
        key=key,
        task=task,
        condition=condition,
        agent=agent,
        run_seed=run_seed,
        # The world's randomness depends on the repeat but not on the agent, so agents are compared on
        # the same world instances.
        env_seed=derive_seed(run_seed, "env", suite_name, task.id, condition.name, repeat),
        agent_seed=derive_seed(run_seed, "agent", key.canonical()),
    )


def resolve_agents(
    suite: Suite, agents: Iterable[AgentOptions], skipped: list[str] | None = None
) -> list[AgentOptions]:
    """Replace ``reference`` by the concrete solver name and check each agent can be built.

    A model and budgets given to an agent that takes no model are dropped. An agent whose model has no
    API key is left out, its message added to ``skipped``, when a list is given (otherwise, and when no
    agent is left, that is an error).
    """
    resolved = []
    for options in agents:
        concrete = options.model_copy(update={"name": resolve_agent_name(suite, options.name)})
        entry = find_generic_agent(concrete.name) if concrete.name not in suite.reference_agents() else None
        if entry is None or not entry.takes_model:
            concrete = concrete.model_copy(update={"model": None, "token_limit": None, "cost_limit": None})
        if concrete in resolved:
            continue
        try:
            make_agent(suite, concrete)  # raises UserError now rather than in every episode
        except MissingCredentials as err:
            if skipped is None:
                raise
            skipped.append(str(err))
            continue
        resolved.append(concrete)
    if not resolved:
        raise UserError("no agent left to run" + (f" ({'; '.join(skipped)})" if skipped else ""))
    return resolved


def play_and_write(suite: Suite, planned: PlannedEpisode, root: Path) -> EpisodeSummary:
    """Play one episode and write its file; runs in the runner's process or in a worker."""
    episode, runtime = play_episode(suite, planned)
    RunDir(root).write_episode(episode, runtime)
    return EpisodeSummary.of(episode)


_worker_suite: Suite | None = None
ORPHAN_CHECK_SECONDS = 0.5


def _exit_when_orphaned(runner_pid: int) -> None:
    while True:
        if os.getppid() != runner_pid:  # the runner was killed: nobody will read our results
            os._exit(1)
        time.sleep(ORPHAN_CHECK_SECONDS)


def _start_worker(suite: Suite, runner_pid: int) -> None:
    """Set up a worker process: the suite arrives once (not with every episode), and the worker ends
    itself if the runner dies. Ctrl-C is left to the runner, which terminates the workers, so an episode
    is written whole or not at all."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    global _worker_suite
    _worker_suite = suite
    threading.Thread(target=_exit_when_orphaned, args=(runner_pid,), daemon=True).start()


def _play_in_worker(planned: PlannedEpisode, root: Path) -> EpisodeSummary:
    assert _worker_suite is not None, "worker started without its suite"
    return play_and_write(_worker_suite, planned, root)


def _fault_message(err: BaseException) -> str:
    if isinstance(err, BrokenProcessPool):
        return "a worker process died"
    if isinstance(err, InfrastructureError | OSError):
        return f"{type(err).__name__}: {err}"
    return f"unexpected {type(err).__name__}: {err}"


class Runner:
    """Plays the episodes of a run that have no file yet, ``workers`` at a time."""

    def __init__(
        self,
        suite: Suite,
        config: RunConfig,
        out: Path,
        *,
        workers: int = 1,
        retries: int = 0,
        listener: RunListener | None = None,
    ) -> None:
        if workers < 1:
            raise UserError("--workers must be at least 1")
        if retries < 0:
            raise UserError("--retries cannot be negative")
        self.suite = suite
        self.config = config
        self.run_dir = RunDir(out)
        self.workers = workers
        self.retries = retries
        self.listener = listener or RunListener()
        self.interrupted = False
        self._queue: deque[PlannedEpisode] = deque()
        self._attempts: dict[EpisodeKey, int] = {}

    def _check_config(self) -> None:
        path = self.run_dir.config_path
        if path.exists():
            try:
                previous = RunConfig.model_validate_json(path.read_bytes())
            except ValueError:
                raise UserError(f"{path} is not a discogym run configuration; choose another --out") from None
            if (previous.suite, previous.seed) != (self.config.suite, self.config.seed):
                raise UserError(
                    f"{self.run_dir.root} holds a run of suite '{previous.suite}' with seed {previous.seed}; "
                    "resume it with the same suite and seed, or choose another --out"
                )
        atomic_write(path, self.config.model_dump_json(indent=1) + "\n")

    def run(self) -> RunSummary:
        """Play every planned episode that is not finished yet; return what happened."""
        planned = plan_episodes(self.suite, self.config)
        self._check_config()
        self.run_dir.remove_temporary_files()
        summary = RunSummary(run_dir=self.run_dir.root, planned=len(planned))
        finished = []
        for item in planned:
            episode = self.run_dir.read_episode(item.key)
            if episode is None:
                self._queue.append(item)
            else:
                finished.append(EpisodeSummary.of(episode))
        summary.skipped = len(finished)
        self.listener.started(len(planned), finished)
        for done in finished:
            if done.score is not None:
                summary.scores.append(done.score)
        try:
            if self.workers == 1:
                self._run_here(summary)
            else:
                self._run_pool(summary)
            self._stop_if_interrupted()
        finally:
            self.run_dir.remove_temporary_files()
            self.listener.close()
        return summary

    def _record(self, summary: RunSummary, done: EpisodeSummary) -> None:
        summary.written += 1
        summary.errors += done.status == "error"
        if done.score is not None:
            summary.scores.append(done.score)
        self.listener.finished(done)

    def _fault(self, summary: RunSummary, item: PlannedEpisode, err: BaseException) -> None:
        attempts = self._attempts[item.key] = self._attempts.get(item.key, 0) + 1
        retry = attempts <= self.retries
        message = _fault_message(err)
        if retry:
            self._queue.append(item)
        else:
            summary.faults[item.key.file_stem()] = message
        self.listener.fault(item.key, message, retry)

    def interrupt(self, signum: int = 0, frame: object = None) -> None:
        """A signal handler: stop the run with KeyboardInterrupt. The request is also remembered, because
        Python drops an exception raised where it cannot propagate (e.g. inside an import's lock callback
        while a worker starts); the run then stops at its next episode boundary."""
        self.interrupted = True
        raise KeyboardInterrupt

    def _stop_if_interrupted(self) -> None:
        if self.interrupted:
            raise KeyboardInterrupt

    def _run_here(self, summary: RunSummary) -> None:
        while self._queue:
            self._stop_if_interrupted()
            item = self._queue.popleft()
            try:
                done = play_and_write(self.suite, item, self.run_dir.root)
            except Exception as err:
                self._fault(summary, item, err)
            else:
                self._record(summary, done)

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            initargs=(self.suite, os.getpid()),
        )

    def _run_pool(self, summary: RunSummary) -> None:
        executor = self._new_pool()
        in_flight: dict[Future[EpisodeSummary], PlannedEpisode] = {}
        try:
            while self._queue or in_flight:
                self._stop_if_interrupted()
                # No more in flight than workers: a worker that dies takes down only the episodes running.
                while self._queue and len(in_flight) < self.workers:
                    item = self._queue.popleft()
                    in_flight[executor.submit(_play_in_worker, item, self.run_dir.root)] = item
                finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                broken = False
                for future in finished:
                    item = in_flight.pop(future)
                    try:
                        self._record(summary, future.result())
                    except BrokenProcessPool as err:
                        broken = True
                        self._fault(summary, item, err)
                    except Exception as err:
                        self._fault(summary, item, err)
                if broken:
                    for item in in_flight.values():
                        self._fault(summary, item, BrokenProcessPool())
                    in_flight.clear()
                    executor.shutdown(wait=True, cancel_futures=True)
                    executor = self._new_pool()
        except BaseException:
            _terminate(executor)
            raise
        executor.shutdown(wait=True)


def _terminate(executor: ProcessPoolExecutor) -> None:
    """Stop the workers now, abandoning the episodes they are playing (none is written half-way)."""
    processes = list(getattr(executor, "_processes", {}).values())
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(timeout=10)
    executor.shutdown(wait=False, cancel_futures=True)
