"""Runs: the (task x condition x agent x repeat) grid, one file per episode, resumable.

The runner plans (:mod:`discogym.core.running.planning`), skips finished episodes, refuses to mix versions
(:mod:`discogym.core.running.versions`), and owns retries, faults, progress and interrupts; an
:class:`~discogym.core.running.executors.Executor` plays the episodes.
"""

from collections import deque
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from discogym.core.model.agent import Usage
from discogym.core.model.episode import Episode, EpisodeKey
from discogym.core.model.errors import UserError
from discogym.core.model.suite import Suite
from discogym.core.model.termination import EndingKind
from discogym.core.running.crosscheck import made_as_planned
from discogym.core.running.episode_loop import PlannedEpisode, preflight
from discogym.core.running.executors import EpisodeSummary, Executor, Faulted, Played, RunListener, executor_for
from discogym.core.running.planning import RunConfig, plan_episode, plan_episodes, resolve_agents
from discogym.core.running.run_file import append_run_record, check_same_run, run_record
from discogym.core.running.storage import RunDir, UnwritableRun
from discogym.core.running.versions import check_resumable

__all__ = [
    "EpisodeSummary",
    "RunConfig",
    "RunSummary",
    "Runner",
    "plan_episode",
    "plan_episodes",
    "resolve_agents",
]


@dataclass
class RunSummary:
    """What a pass over a run did."""

    run_dir: Path
    planned: int
    skipped: int = 0
    written: int = 0
    errors: int = 0
    retried: int = 0  # episodes that had ended in an error, set aside and played again
    faults: dict[str, str] = field(default_factory=dict)
    scores: list[float] = field(default_factory=list)
    lost_plays: int = 0  # plays of episodes abandoned unwritten by faults (each a line of faults.jsonl)
    lost_spent: Usage = field(default_factory=Usage)  # what they had cost, as far as known
    lost_unknown: int = 0  # those whose cost is not known

    @property
    def complete(self) -> bool:
        """True when every planned episode has its file."""
        return self.skipped + self.written == self.planned


class Runner:
    """Plays the episodes of a run that have no file yet, with ``executor``; without one, in this process for
    one worker or in ``workers`` worker processes, each process playing up to ``concurrency`` episodes at once
    in threads (for agents that spend their time waiting on a model).

    An episode whose file says it ended in an error (:attr:`EndingKind.ERROR`: the environment's, the harness's
    or the run's configuration, never the agent's own choice) is played again, its file set aside in
    ``retried/``; ``keep_errors`` keeps it as it is."""

    def __init__(
        self,
        suite: Suite,
        config: RunConfig,
        out: Path,
        *,
        workers: int = 1,
        concurrency: int = 1,
        retries: int = 0,
        listener: RunListener | None = None,
        executor: Executor | None = None,
        keep_errors: bool = False,
    ) -> None:
        if workers < 1:
            raise UserError("--workers must be at least 1")
        if concurrency < 1:
            raise UserError("--concurrency must be at least 1")
        if retries < 0:
            raise UserError("--retries cannot be negative")
        self.suite = suite
        self.config = config
        self.run_dir = RunDir(out)
        self.executor = executor or executor_for(workers, concurrency)
        self.retries = retries
        self.keep_errors = keep_errors
        self.listener = listener or RunListener()
        self.interrupted = False
        self._queue: deque[PlannedEpisode] = deque()
        self._attempts: dict[EpisodeKey, int] = {}
        self._waiting: dict[EpisodeKey, list[PlannedEpisode]] = {}  # curriculum links, by the one they follow

    def _check_previous_config(self) -> None:
        check_same_run(self.run_dir, self.config)

    def run(self) -> RunSummary:
        """Play every planned episode that is not finished yet; return what happened. The run directory is
        locked meanwhile: another run into it is refused (:class:`~discogym.core.running.storage.RunInUse`)."""
        planned = plan_episodes(self.suite, self.config)
        preflight(self.suite, planned)
        self.run_dir.prepare()
        with self.run_dir.locked():
            return self._resume(planned)

    def _resume(self, planned: list[PlannedEpisode]) -> RunSummary:
        self._check_previous_config()
        self.run_dir.check_episode_paths(item.key for item in planned)
        check_resumable(self.suite, self.run_dir, {item.task.id: item.task for item in planned}.values())
        append_run_record(self.run_dir, run_record(self.suite, self.config))
        self.run_dir.remove_temporary_files()
        summary = RunSummary(run_dir=self.run_dir.root, planned=len(planned))
        finished = []
        finished_keys: set[EpisodeKey] = set()
        for item in planned:
            episode = self.run_dir.read_episode(item.key)
            if episode is not None and self._plays_again(episode):
                self.run_dir.set_aside(item.key)
                summary.retried += 1
                episode = None
            if episode is None or not made_as_planned(episode, item):  # a copy from another run is played again
                if item.after is None or item.after in finished_keys:
                    self._enqueue(item)
                else:
                    self._waiting.setdefault(item.after, []).append(item)
            else:
                finished_keys.add(item.key)
                finished.append(EpisodeSummary.of(episode))
        summary.skipped = len(finished)
        self.listener.started(len(planned), finished)
        for done in finished:
            if done.score is not None:
                summary.scores.append(done.score)
        try:
            self._play(summary)
        except UnwritableRun as err:
            kept = summary.skipped + summary.written
            raise UserError(
                f"cannot write {err.filename}: {err.strerror}; the run stopped with {kept} of {summary.planned} "
                f"episodes finished in {self.run_dir.root}: fix that, then rerun the same command to resume"
            ) from None
        finally:
            self.run_dir.remove_temporary_files()
            self.listener.close()
        return summary

    def _plays_again(self, episode: Episode) -> bool:
        return not self.keep_errors and episode.outcome.termination.kind is EndingKind.ERROR

    def _play(self, summary: RunSummary) -> None:
        """Hand the queue to the executor; record what it reports, re-queue faults to retry, and stop at
        the first report after an interrupt (closing the executor's reports abandons what is in flight)."""
        self._stop_if_interrupted()
        with closing(self.executor.play(self.suite, self.run_dir.root, self._queue)) as reports:
            for report in reports:
                if isinstance(report, Played):
                    self._record(summary, report.summary)
                else:
                    self._fault(summary, report)
                self._stop_if_interrupted()

    def _enqueue(self, item: PlannedEpisode) -> None:
        """Queue ``item``; a curriculum link gets what the episode before it (written by now) carries forward."""
        if item.after is not None:
            before = self.run_dir.read_episode(item.after)
            assert before is not None, "a curriculum link is queued only once the episode before it is written"
            item = item.model_copy(update={"carried": self.suite.carry_forward(before)})
        self._queue.append(item)

    def _record(self, summary: RunSummary, done: EpisodeSummary) -> None:
        for item in self._waiting.pop(done.key, []):
            self._enqueue(item)
        summary.written += 1
        summary.errors += done.status == "error"
        if done.score is not None:
            summary.scores.append(done.score)
        self.listener.finished(done)

    def _fault(self, summary: RunSummary, report: Faulted) -> None:
        item, message = report.planned, report.message
        self.run_dir.record_fault(item.key, message, report.spent)
        summary.lost_plays += 1
        if report.spent is None:
            summary.lost_unknown += 1
        else:
            summary.lost_spent = summary.lost_spent + report.spent
        attempts = self._attempts[item.key] = self._attempts.get(item.key, 0) + 1
        retry = attempts <= self.retries
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
