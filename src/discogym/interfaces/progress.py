"""Progress of a run in the terminal: a rich progress bar, told what the run does as its listener.

Nothing shown is read as rich markup: a task id, an agent name or a fault's message (an endpoint's error body
echoing ``[/v1/chat/completions]``) is shown as it is and never stops the run.
"""

from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from discogym.core.running.executors import EpisodeSummary, RunListener
from discogym.core.terminal.console import styled

if TYPE_CHECKING:
    from discogym.core import EpisodeKey


class TimeLeftColumn(ProgressColumn):
    """``0:03:00 left``: the episodes still to play at the pace of those played so far in this run (episodes
    resumed from an earlier run, the task's ``resumed`` field, took no time here and are not counted in the pace);
    ``-:--:-- left`` until one has finished. The pace is over the whole run, not a recent window: episodes of a
    model can take minutes each, and parallel workers finish them in bursts."""

    def render(self, task: Task) -> Text:
        """The estimate for ``task``."""
        played = task.completed - task.fields.get("resumed", 0)
        if task.total is None or not task.elapsed or played <= 0:
            return Text("-:--:-- left", style="progress.remaining")
        seconds = task.elapsed / played * max(task.total - task.completed, 0)
        return Text(f"{timedelta(seconds=round(seconds))} left", style="progress.remaining")


class ProgressBar(RunListener):
    """A rich progress bar on stderr: episodes done/total, mean score, tokens and cost so far, time taken and
    time left (``clock``, seconds, for tests: the progress bar's time source)."""

    def __init__(
        self, description: str, console: Console | None = None, clock: Callable[[], float] | None = None
    ) -> None:
        self.console = console or Console(stderr=True, markup=False)
        self.description = description
        self.progress = Progress(
            TextColumn("{task.description}", style="bold", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("score {task.fields[score]}", markup=False),
            TextColumn("tokens {task.fields[tokens]}", markup=False),
            TextColumn("${task.fields[cost]}", markup=False),
            TimeElapsedColumn(),
            TimeLeftColumn(),
            console=self.console,
            transient=False,
            get_time=clock,
        )
        self.task: TaskID | None = None
        self.scores: list[float] = []
        self.tokens = 0
        self.cost = 0.0

    def _mean_score(self) -> str:
        return f"{sum(self.scores) / len(self.scores):.3f}" if self.scores else "-"

    def _count(self, done: "EpisodeSummary") -> None:
        if done.score is not None:
            self.scores.append(done.score)
        self.tokens += done.usage.input_tokens + done.usage.output_tokens
        self.cost += done.usage.cost_usd

    def started(self, total: int, finished: "list[EpisodeSummary]") -> None:
        for done in finished:
            self._count(done)
        self.progress.start()
        self.task = self.progress.add_task(
            self.description,
            total=total,
            completed=len(finished),
            resumed=len(finished),
            score=self._mean_score(),
            tokens=f"{self.tokens:,}",
            cost=f"{self.cost:.2f}",
        )

    def finished(self, done: "EpisodeSummary") -> None:
        self._count(done)
        if self.task is not None:
            self.progress.update(
                self.task, advance=1, score=self._mean_score(), tokens=f"{self.tokens:,}", cost=f"{self.cost:.2f}"
            )

    def fault(self, key: "EpisodeKey", message: str, will_retry: bool) -> None:
        action = "retrying" if will_retry else "left for the next run"
        where = f"{key.task} ({key.agent}, repeat {key.repeat})"
        self.progress.console.print(styled("fault", "yellow", f"{where}: {message}; {action}"), highlight=False)

    def close(self) -> None:
        self.progress.stop()
