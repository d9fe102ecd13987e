"""Progress of a run in the terminal: a rich progress bar, told what the run does as its listener.

Nothing shown is read as rich markup: a task id, an agent name or a fault's message (an endpoint's error body
echoing ``[/v1/chat/completions]``) is shown as it is and never stops the run.
"""

from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from discogym.core.running.executors import EpisodeSummary, RunListener
from discogym.core.terminal.console import styled

if TYPE_CHECKING:
    from discogym.core import EpisodeKey


class ProgressBar(RunListener):
    """A rich progress bar on stderr: episodes done/total, mean score, tokens and cost so far."""

    def __init__(self, description: str, console: Console | None = None) -> None:
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
            console=self.console,
            transient=False,
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
