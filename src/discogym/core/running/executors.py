"""Executors: where a run's episodes are played.

The runner plans the episodes, skips the finished ones, and owns retries, faults, progress and interrupts;
an executor only takes planned episodes, plays each, writes its file, and reports it as played or faulted.
Three ship with discogym, chosen by ``--workers W`` and ``--concurrency N``: :class:`InProcessExecutor` (one
episode at a time in the runner's process), :class:`ThreadedExecutor` (``N`` at a time in its threads) and
:class:`ThreadedWorkerPoolExecutor` (``W`` spawned processes, ``N`` episodes each in threads, one by default).
Another backend (Ray, agents run as outside programs) is another :class:`Executor`, with no change to the runner.

The worker processes talk to the runner through pipes only. concurrent.futures' process pool, used before, made
five named semaphores (its queues' locks), which the runner unlinks when it ends; a runner killed with SIGKILL
could not, and multiprocessing's resource tracker then cleaned them up and warned "There appear to be 5 leaked
semaphore objects to clean up at shutdown". Pipes need no such cleanup, so a killed run leaves no warning.
"""

import contextlib
import functools
import itertools
import multiprocessing
import os
import queue
import signal
import threading
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as wait_for_any
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from discogym.core.model.agent import Usage, generic_agents
from discogym.core.model.episode import Episode, EpisodeKey
from discogym.core.model.errors import InfrastructureError
from discogym.core.model.suite import Suite
from discogym.core.running.agent_lookup import make_agent
from discogym.core.running.crosscheck import made_as_planned
from discogym.core.running.episode_loop import PlannedEpisode, play_episode
from discogym.core.running.process import raise_in_thread
from discogym.core.running.storage import RunDir, UnwritableRun

WORKER_DIED = "a worker process died"


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


class RunListener:
    """Told what a run does; the default listens silently."""

    def started(self, total: int, finished: list[EpisodeSummary]) -> None:
        """The run has ``total`` episodes, of which ``finished`` were already written."""

    def finished(self, done: EpisodeSummary) -> None:
        """An episode was written."""

    def fault(self, key: EpisodeKey, message: str, will_retry: bool) -> None:
        """An episode was interrupted by an infrastructure fault and not written."""

    def close(self) -> None:
        """The run has stopped."""


@dataclass(frozen=True)
class Played:
    """An episode that was played to its end and written."""

    planned: PlannedEpisode
    summary: EpisodeSummary


@dataclass(frozen=True)
class Faulted:
    """An episode abandoned unwritten because of an infrastructure fault; ``message`` says which, ``spent`` what
    the episode had cost by then (None: not known, e.g. its worker died with it)."""

    planned: PlannedEpisode
    message: str
    spent: Usage | None = None

    @classmethod
    def of(cls, planned: PlannedEpisode, err: BaseException) -> "Faulted":
        """The report of ``planned`` abandoned by ``err``."""
        return cls(planned, describe_fault(err), spent_of(err))


ExecutorReport = Played | Faulted


def play_and_write(suite: Suite, planned: PlannedEpisode, root: Path) -> EpisodeSummary:
    """Play one episode and write its file under the run directory ``root``; what every executor runs."""
    run_dir = RunDir(root)
    with run_dir.claimed(planned.key):  # no other process (play, serve, mcp) writes this episode meanwhile
        episode = written_meanwhile(run_dir, planned)
        if episode is None:
            episode, runtime = play_episode(suite, planned)
            run_dir.write_episode(episode, runtime)
    return EpisodeSummary.of(episode)


def written_meanwhile(run_dir: RunDir, planned: PlannedEpisode) -> Episode | None:
    """The episode, if another process (``play``, ``serve``, ``mcp``: same key, same plan) wrote it after the
    runner found it missing; called under the episode's claim, so that it is kept, not played and overwritten."""
    episode = run_dir.read_episode(planned.key)
    return episode if episode is not None and made_as_planned(episode, planned) else None


def spent_of(err: BaseException) -> Usage | None:
    """What the episode a fault abandoned had cost, as far as known (:attr:`InfrastructureError.spent`)."""
    return err.spent if isinstance(err, InfrastructureError) else None


def describe_fault(err: BaseException) -> str:
    """How a fault reads in the run's summary: the error's type and message."""
    if isinstance(err, InfrastructureError | OSError):
        return f"{type(err).__name__}: {err}"
    return f"unexpected {type(err).__name__}: {err}"


class Executor(ABC):
    """Plays planned episodes and reports each one as it ends."""

    @abstractmethod
    def play(self, suite: Suite, root: Path, pending: deque[PlannedEpisode]) -> Generator[ExecutorReport, None, None]:
        """Play the episodes of ``pending``, taken from its left, and yield one report for each.

        Each episode is played with :func:`play_and_write` (its file written under ``root``) before it is
        reported :class:`Played`; an episode that raised is reported :class:`Faulted` and not retried here,
        except for :class:`~discogym.core.running.storage.UnwritableRun` (a full disk, say), which ends the iterator:
        every later episode would be played for nothing.
        The caller may append to ``pending`` while it reads the reports (its retries); the iterator ends
        when ``pending`` is empty and no episode is in flight. An exception (KeyboardInterrupt included)
        or closing the iterator early abandons the episodes in flight: none is written half-way.
        """


class InProcessExecutor(Executor):
    """One episode at a time, in the runner's own process."""

    def play(self, suite: Suite, root: Path, pending: deque[PlannedEpisode]) -> Generator[ExecutorReport, None, None]:
        while pending:
            planned = pending.popleft()
            try:
                summary = play_and_write(suite, planned, root)
            except UnwritableRun:
                raise
            except Exception as err:
                yield Faulted.of(planned, err)
            else:
                yield Played(planned, summary)


# Many episodes at once in one process (``--concurrency N``): each episode in a daemon thread of its own, so a
# process whose episodes wait on a model holds many in flight; CPU-bound suites scale with --workers instead.

WRITE_WAIT_SECONDS = 10.0  # how long stopping waits for episode files being written (written whole, not cut)
ABANDON_GRACE_SECONDS = 1.0  # how long stopping waits for abandoned episodes to close their environments

ThreadOutcome = tuple[EpisodeSummary | None, BaseException | None]


class _EpisodeAbandoned(BaseException):
    """Raised into an episode's thread when its run stops, so the episode closes its environment and ends
    unwritten (a BaseException: no agent or environment code catches it as an error of its own)."""


class _EpisodeThreads:
    """Episodes played side by side in daemon threads of this process, each written by its own thread.

    :meth:`abandon` stops them all: after it returns no episode file is written (one being written is finished
    first, so every file is whole), and every episode still playing has :class:`_EpisodeAbandoned` raised into
    its thread, so it closes its environment and ends unwritten. A thread blocked on a model's reply ends
    when the reply comes; being a daemon thread, it never keeps the process from exiting meanwhile.
    """

    def __init__(self, suite: Suite, root: Path) -> None:
        self.suite = suite
        self.root = root
        self._state = threading.Condition()  # guards the three fields below
        self._playing: dict[int, threading.Thread] = {}  # the threads inside play_episode, by ident
        self._writing = 0  # threads writing an episode's files
        self._abandoned = False
        self._agents_made: set[str] = set()
        generic_agents()  # the agent plugins are found once here, not by episodes racing to find them

    def _make_agent_once(self, planned: PlannedEpisode) -> None:
        """Build the episode's kind of agent once in this thread, as planning does to check it, so that what it
        imports (a model SDK: a second or more) is imported once, not by many episode threads at a time."""
        kind = planned.agent.model_dump_json()
        if kind not in self._agents_made:
            self._agents_made.add(kind)
            with contextlib.suppress(Exception):  # an agent that cannot be built fails in its episode, as ever
                make_agent(self.suite, planned.agent)

    def start(self, planned: PlannedEpisode, report: Callable[[ThreadOutcome], None]) -> None:
        """Play ``planned`` in a new thread, then call ``report`` there with its summary or its exception
        (``report`` is not called if the episode is abandoned)."""
        self._make_agent_once(planned)
        name = f"episode {planned.key.file_stem()}"
        threading.Thread(target=self._run, args=(planned, report), name=name, daemon=True).start()

    def _run(self, planned: PlannedEpisode, report: Callable[[ThreadOutcome], None]) -> None:
        try:
            outcome = self._play(planned)
            if outcome is not None:
                report(outcome)
        except _EpisodeAbandoned:  # raised between the episode and its report: the run has stopped
            pass

    def _play(self, planned: PlannedEpisode) -> ThreadOutcome | None:
        me = threading.get_ident()
        with self._state:
            if self._abandoned:
                return None
            self._playing[me] = threading.current_thread()
        run_dir = RunDir(self.root)
        try:
            with run_dir.claimed(planned.key):  # as in play_and_write
                written = written_meanwhile(run_dir, planned)
                if written is not None:
                    return EpisodeSummary.of(written), None
                episode, runtime = play_episode(self.suite, planned)
                with self._state:  # from playing to writing at once: abandon() sees one or the other
                    del self._playing[me]
                    if self._abandoned:
                        return None
                    self._writing += 1
                try:
                    run_dir.write_episode(episode, runtime)
                finally:
                    with self._state:
                        self._writing -= 1
                        self._state.notify_all()
            return EpisodeSummary.of(episode), None
        except _EpisodeAbandoned:
            raise
        except BaseException as err:  # a fault, a full disk, or an interrupt the agent raised: the caller decides
            return None, err
        finally:
            with self._state:
                self._playing.pop(me, None)

    def abandon(self) -> None:
        """Stop every episode in flight, unwritten, and wait up to :data:`ABANDON_GRACE_SECONDS` for them to close
        their environments (threads still waiting on a model then are left to end on their own)."""
        with self._state:
            self._abandoned = True
            playing = list(self._playing.items())
            for ident, _ in playing:
                raise_in_thread(ident, _EpisodeAbandoned)
            self._state.wait_for(lambda: self._writing == 0, timeout=WRITE_WAIT_SECONDS)
        deadline = time.monotonic() + ABANDON_GRACE_SECONDS
        for _, thread in playing:
            thread.join(max(0.0, deadline - time.monotonic()))


def _is_fatal(err: BaseException) -> bool:
    """True for what must stop the run rather than fault one episode: a full disk, or an interrupt."""
    return isinstance(err, UnwritableRun) or not isinstance(err, Exception)


def _reraise_if_fatal(err: BaseException) -> None:
    if _is_fatal(err):
        raise err


class ThreadedExecutor(Executor):
    """Up to ``concurrency`` episodes at once in threads of the runner's process (``--concurrency N``)."""

    def __init__(self, concurrency: int) -> None:
        self.concurrency = concurrency

    def play(self, suite: Suite, root: Path, pending: deque[PlannedEpisode]) -> Generator[ExecutorReport, None, None]:
        threads = _EpisodeThreads(suite, root)
        finished: queue.SimpleQueue[tuple[PlannedEpisode, ThreadOutcome]] = queue.SimpleQueue()
        in_flight = 0
        try:
            while pending or in_flight:
                while pending and in_flight < self.concurrency:
                    planned = pending.popleft()
                    threads.start(planned, functools.partial(_put, finished, planned))
                    in_flight += 1
                planned, (summary, err) = finished.get()
                in_flight -= 1
                if err is not None:
                    _reraise_if_fatal(err)
                    yield Faulted.of(planned, err)
                else:
                    assert summary is not None
                    yield Played(planned, summary)
        finally:
            threads.abandon()  # done: nothing is in flight; interrupted or closed early: what is, is dropped


def _put(
    finished: "queue.SimpleQueue[tuple[PlannedEpisode, ThreadOutcome]]", planned: PlannedEpisode, outcome: ThreadOutcome
) -> None:
    finished.put((planned, outcome))


@dataclass
class _ThreadedWorker:
    """One worker process of a :class:`ThreadedWorkerPoolExecutor`, as the runner sees it: the pipe its episodes
    go down, the pipe their reports come up, and the episodes it holds, by job number."""

    process: BaseProcess
    jobs_out: Connection
    reports_in: Connection
    jobs: dict[int, PlannedEpisode] = field(default_factory=dict)
    dead: bool = False

    @classmethod
    def start(cls, suite: Suite, root: Path, context: Any) -> "_ThreadedWorker":
        jobs_in, jobs_out = context.Pipe(duplex=False)
        reports_in, reports_out = context.Pipe(duplex=False)
        process = context.Process(target=_serve_episodes, args=(suite, root, os.getpid(), jobs_in, reports_out))
        process.start()
        jobs_in.close()  # the worker's ends: closed here, so the runner reads EOF when the worker is gone
        reports_out.close()
        return cls(process, jobs_out, reports_in)

    def give(self, job: int, planned: PlannedEpisode) -> None:
        """Send the worker an episode (one sent to a worker that has died is lost with it)."""
        self.jobs[job] = planned
        try:
            self.jobs_out.send((job, planned))
        except OSError:
            self.dead = True

    def receive(self) -> list[tuple[int, tuple[str, Any]]]:
        """Every report waiting in the pipe; marks the worker dead if the pipe is closed or a report is cut."""
        reports = []
        try:
            while self.reports_in.poll():
                reports.append(self.reports_in.recv())
        except Exception:  # EOF, or half a report from a worker killed while it sent it
            self.dead = True
        return reports

    def finish(self) -> None:
        """Tell the worker that the run is over and wait for it to go (and make it go if it does not)."""
        with contextlib.suppress(OSError):
            self.jobs_out.send(None)
        self.process.join(STOP_GRACE_SECONDS)
        self.stop()

    def stop(self) -> None:
        """End the worker now, abandoning its episodes (none is written half-way), and close its pipes."""
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(10)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(10)
        self.jobs_out.close()
        self.reports_in.close()


class ThreadedWorkerPoolExecutor(Executor):
    """``workers`` spawned worker processes, each playing up to ``concurrency`` episodes at once in its threads
    (``--workers W --concurrency N``).

    A worker gets the suite once, when it starts, then episodes down a pipe of its own and sends each one's
    report up another. A worker that dies takes down only the episodes it held (each reported as faulted,
    those it reported before dying stay played) and a new worker takes its place.
    """

    def __init__(self, workers: int, concurrency: int) -> None:
        self.workers = workers
        self.concurrency = concurrency

    def play(self, suite: Suite, root: Path, pending: deque[PlannedEpisode]) -> Generator[ExecutorReport, None, None]:
        if not pending:  # a finished run resumed: no process to start
            return
        context = multiprocessing.get_context("spawn")
        workers: list[_ThreadedWorker] = []
        numbers = itertools.count()
        try:
            for _ in range(self.workers):
                workers.append(_ThreadedWorker.start(suite, root, context))
            while pending or any(worker.jobs for worker in workers):
                while pending:
                    least = min(workers, key=lambda worker: (worker.dead, len(worker.jobs)))
                    if least.dead or len(least.jobs) >= self.concurrency:
                        break
                    least.give(next(numbers), pending.popleft())
                ready = wait_for_any(
                    [worker.reports_in for worker in workers] + [worker.process.sentinel for worker in workers]
                )
                for index, worker in enumerate(workers):
                    if worker.reports_in not in ready and worker.process.sentinel not in ready and not worker.dead:
                        continue
                    for job, (kind, value) in worker.receive():
                        planned = worker.jobs.pop(job)
                        if kind == PLAYED:
                            yield Played(planned, value)
                        elif kind == FAULTED:
                            yield Faulted(planned, *value)
                        else:
                            raise value
                    if worker.dead or not worker.process.is_alive():
                        lost = list(worker.jobs.values())
                        worker.stop()
                        workers[index] = _ThreadedWorker.start(suite, root, context)
                        for planned in lost:
                            yield Faulted(planned, WORKER_DIED)
        except BaseException:
            for worker in workers:  # all told at once, then each awaited
                if worker.process.is_alive():
                    worker.process.terminate()
            for worker in workers:
                worker.stop()
            raise
        for worker in workers:
            worker.finish()


def executor_for(workers: int, concurrency: int = 1) -> Executor:
    """The executor ``--workers`` and ``--concurrency`` ask for: in this process for one worker, a pool of worker
    processes for more; one episode at a time in each process, or ``concurrency`` in its threads (a worker plays
    even one episode in a thread of its own, its main thread listening to the runner)."""
    if workers == 1:
        return InProcessExecutor() if concurrency == 1 else ThreadedExecutor(concurrency)
    return ThreadedWorkerPoolExecutor(workers, concurrency)


# The worker side. A worker is told to stop by SIGTERM: from the runner on Ctrl-C, or from itself when the
# runner is gone. Ctrl-C itself is left to the runner, so an episode is written whole or not at all.

ORPHAN_CHECK_SECONDS = 0.5
STOP_GRACE_SECONDS = 5.0
STOPPED_EXIT_CODE = 1


class _WorkerStopped(BaseException):
    """Raised into a worker's episode when the worker must stop, so the environment is closed first."""


def _exit_when_orphaned(runner_pid: int) -> None:
    while os.getppid() == runner_pid:
        time.sleep(ORPHAN_CHECK_SECONDS)
    # The runner was killed: nobody will read our results. Stop as if told to, and for good after a grace.
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(STOP_GRACE_SECONDS)
    os._exit(STOPPED_EXIT_CODE)


# The worker side of a ThreadedWorkerPoolExecutor: the main thread takes episodes from the runner's pipe and
# starts a thread for each; each thread reports its episode up the other pipe. SIGTERM (from the runner, or
# from the worker itself when the runner is gone) stops the episodes in flight, unwritten, and the worker.

PLAYED, FAULTED, FATAL = "played", "faulted", "fatal"


def _fault_words(err: BaseException) -> tuple[str, Usage | None]:
    """A fault as a worker process reports it: its message and what its episode had cost (plain objects)."""
    return describe_fault(err), spent_of(err)


_serving_stopped = False


def _stop_serving(signum: int, frame: Any) -> None:
    global _serving_stopped
    if not _serving_stopped:  # once: a second SIGTERM must not break off the stopping
        _serving_stopped = True
        raise _WorkerStopped


def _serve_episodes(suite: Suite, root: Path, runner_pid: int, jobs: Connection, reports: Connection) -> None:
    """A threaded worker's life: play the episodes the runner sends until it sends None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threads = _EpisodeThreads(suite, root)
    sending = threading.Lock()

    def report(job: int, outcome: ThreadOutcome) -> None:
        summary, err = outcome
        if err is None:
            message: tuple[str, Any] = (PLAYED, summary)
        else:
            message = (FATAL, err) if _is_fatal(err) else (FAULTED, _fault_words(err))
        with sending, contextlib.suppress(OSError):  # OSError: the runner is gone, and the worker stops
            try:
                reports.send((job, message))
            except OSError:
                raise
            except Exception:  # what cannot be pickled (an exception's own attributes): said in words
                words = _fault_words(err) if err is not None else ("the episode's report could not be sent", None)
                reports.send((job, (FAULTED, words)))

    try:
        signal.signal(signal.SIGTERM, _stop_serving)
        threading.Thread(target=_exit_when_orphaned, args=(runner_pid,), daemon=True).start()
        while (message := jobs.recv()) is not None:
            job, planned = message
            threads.start(planned, functools.partial(report, job))
    except (_WorkerStopped, EOFError, OSError):
        threads.abandon()
        os._exit(STOPPED_EXIT_CODE)
