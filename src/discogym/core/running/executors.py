"""Executors: where a run's episodes are played.

The runner plans the episodes, skips the finished ones, and owns retries, faults, progress and interrupts;
an executor only takes planned episodes, plays each, writes its file, and reports it as played or faulted.
Two ship with discogym: :class:`InProcessExecutor` (``--workers 1``) and :class:`WorkerPoolExecutor`
(``--workers N``, spawned processes). Another backend (Ray, agents run as outside programs) is another
:class:`Executor`, with no change to the runner.
"""

import multiprocessing
import os
import signal
import threading
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Generator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from discogym.core.model.agent import Usage
from discogym.core.model.episode import Episode, EpisodeKey
from discogym.core.model.errors import InfrastructureError
from discogym.core.model.suite import Suite
from discogym.core.running.episode_loop import PlannedEpisode, play_episode
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
    """An episode abandoned unwritten because of an infrastructure fault; ``message`` says which."""

    planned: PlannedEpisode
    message: str


ExecutorReport = Played | Faulted


def play_and_write(suite: Suite, planned: PlannedEpisode, root: Path) -> EpisodeSummary:
    """Play one episode and write its file under the run directory ``root``; what every executor runs."""
    episode, runtime = play_episode(suite, planned)
    RunDir(root).write_episode(episode, runtime)
    return EpisodeSummary.of(episode)


def describe_fault(err: BaseException) -> str:
    """How a fault reads in the run's summary: the error, or that a worker died."""
    if isinstance(err, BrokenProcessPool):
        return WORKER_DIED
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
                yield Faulted(planned, describe_fault(err))
            else:
                yield Played(planned, summary)


class WorkerPoolExecutor(Executor):
    """``workers`` episodes at a time in spawned worker processes.

    No more episodes are in flight than there are workers, so a worker that dies takes down only the
    episodes running beside it (each reported as faulted), and the pool is started afresh.
    """

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def _new_pool(self, suite: Suite) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            initargs=(suite, os.getpid()),
        )

    def play(self, suite: Suite, root: Path, pending: deque[PlannedEpisode]) -> Generator[ExecutorReport, None, None]:
        pool = self._new_pool(suite)
        in_flight: dict[Future[EpisodeSummary], PlannedEpisode] = {}
        try:
            while pending or in_flight:
                while pending and len(in_flight) < self.workers:
                    planned = pending.popleft()
                    in_flight[pool.submit(_play_in_worker, planned, root)] = planned
                finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                broken = False
                for future in finished:
                    planned = in_flight.pop(future)
                    try:
                        report: ExecutorReport = Played(planned, future.result())
                    except UnwritableRun:
                        raise
                    except BrokenProcessPool as err:
                        broken = True
                        report = Faulted(planned, describe_fault(err))
                    except Exception as err:
                        report = Faulted(planned, describe_fault(err))
                    yield report
                if broken:
                    lost = list(in_flight.values())
                    in_flight.clear()
                    pool.shutdown(wait=True, cancel_futures=True)
                    pool = self._new_pool(suite)
                    for planned in lost:
                        yield Faulted(planned, WORKER_DIED)
        except BaseException:
            _terminate(pool)
            raise
        pool.shutdown(wait=True)


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Stop the workers now, abandoning the episodes they are playing (none is written half-way)."""
    processes = list(getattr(pool, "_processes", {}).values())
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(timeout=10)
    pool.shutdown(wait=False, cancel_futures=True)
    # Let the pool's manager thread see its dead workers and close its pipes now: left running, it races the
    # interpreter's exit hook, which then writes to a closed pipe and prints a traceback after Ctrl-C.
    manager = getattr(pool, "_executor_manager_thread", None)
    if manager is not None:
        manager.join(timeout=10)


def executor_for(workers: int) -> Executor:
    """The executor ``--workers`` asks for: in process for 1, a pool of worker processes for more."""
    return InProcessExecutor() if workers == 1 else WorkerPoolExecutor(workers)


# The worker side. A worker gets the suite once, when it starts (not with every episode), and is told to
# stop by SIGTERM: from the runner on Ctrl-C, from the pool when another worker died, or from itself when
# the runner is gone. Ctrl-C itself is left to the runner, so an episode is written whole or not at all.

_worker_suite: Suite | None = None
_worker_playing = False
ORPHAN_CHECK_SECONDS = 0.5
STOP_GRACE_SECONDS = 5.0
STOPPED_EXIT_CODE = 1


class _WorkerStopped(BaseException):
    """Raised into a worker's episode when the worker must stop, so the environment is closed first."""


def _stop_worker(signum: int, frame: Any) -> None:
    if _worker_playing:
        raise _WorkerStopped
    os._exit(STOPPED_EXIT_CODE)


def _exit_when_orphaned(runner_pid: int) -> None:
    while os.getppid() == runner_pid:
        time.sleep(ORPHAN_CHECK_SECONDS)
    # The runner was killed: nobody will read our results. Stop as if told to, and for good after a grace.
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(STOP_GRACE_SECONDS)
    os._exit(STOPPED_EXIT_CODE)


def _start_worker(suite: Suite, runner_pid: int) -> None:
    """Set up a worker process: keep the suite, leave Ctrl-C to the runner, stop on SIGTERM, and stop
    when the runner dies."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_worker)
    global _worker_suite
    _worker_suite = suite
    threading.Thread(target=_exit_when_orphaned, args=(runner_pid,), daemon=True).start()


def _play_in_worker(planned: PlannedEpisode, root: Path) -> EpisodeSummary:
    global _worker_playing
    assert _worker_suite is not None, "worker started without its suite"
    try:
        _worker_playing = True
        return play_and_write(_worker_suite, planned, root)
    except _WorkerStopped:  # play_episode has closed the environment; the episode is abandoned
        os._exit(STOPPED_EXIT_CODE)
    finally:
        _worker_playing = False
