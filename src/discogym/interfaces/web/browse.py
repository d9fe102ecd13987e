"""What the browse pages show of a run's episodes: one row per episode for the filterable list, and the steps of
an episode's replay. Episode files are read once and kept while their size and modification time stay the same,
so a run of a thousand episodes lists quickly after its first visit."""

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discogym.core.episode import Episode, Event
from discogym.core.storage import RunDir

FILTERS = ("suite", "task", "agent", "model", "outcome")


@dataclass(frozen=True)
class EpisodeRow:
    """One episode in a run's list."""

    stem: str
    suite: str
    task: str
    condition: str
    agent: str
    model: str
    repeat: int
    outcome: str  # success, failure, unscored or error
    score: float | None
    steps: int

    def matches(self, wanted: dict[str, str]) -> bool:
        """Whether every filter given (a non-empty value) equals this row's field."""
        return all(not value or str(getattr(self, name)) == value for name, value in wanted.items())

    @classmethod
    def of(cls, stem: str, episode: Episode) -> "EpisodeRow":
        if episode.outcome.status == "error":
            outcome = "error"
        elif episode.score.success is None:
            outcome = "unscored"
        else:
            outcome = "success" if episode.score.success else "failure"
        key = episode.key
        return cls(
            stem=stem,
            suite=key.suite,
            task=key.task,
            condition=key.condition_label(),
            agent=key.agent_label(),
            model=key.model or "-",
            repeat=key.repeat,
            outcome=outcome,
            score=episode.score.value,
            steps=len(episode.events),
        )


class EpisodeIndex:
    """Episodes and their rows, read from disk once per version of each file."""

    def __init__(self) -> None:
        self._cache: dict[Path, tuple[tuple[int, int], Episode, EpisodeRow]] = {}
        self._lock = threading.Lock()

    def _load(self, path: Path) -> tuple[Episode, EpisodeRow]:
        stat = os.stat(path)
        version = (stat.st_size, stat.st_mtime_ns)
        with self._lock:
            cached = self._cache.get(path)
        if cached is not None and cached[0] == version:
            return cached[1], cached[2]
        episode = Episode.model_validate_json(path.read_bytes())
        row = EpisodeRow.of(path.stem, episode)
        with self._lock:
            self._cache[path] = (version, episode, row)
        return episode, row

    def episode(self, path: Path) -> Episode:
        return self._load(path)[0]

    def rows(self, run_dir: RunDir) -> list[EpisodeRow]:
        """A row for every readable episode of the run, in file-name order (unreadable files left out)."""
        rows = []
        for path in sorted(run_dir.episode_paths()):
            try:
                rows.append(self._load(path)[1])
            except (OSError, ValueError):
                continue
        return rows


def replay_steps(episode: Episode) -> list[dict[str, Any]]:
    """Each step of the replay: what the agent said and called, what came back, the pictures it was shown, and
    the sub-agent session the call ran (its steps alike)."""
    return replay_steps_of(episode.events)


def replay_steps_of(events: list[Event]) -> list[dict[str, Any]]:
    """The replay steps of these events (a game's so far, on its play page)."""
    return [_step(event) for event in events]


def _step(event: Event) -> dict[str, Any]:
    step: dict[str, Any] = {
        "step": event.step,
        "message": event.agent_message or "",
        "tool": event.call.tool,
        "args": event.call.args,
        "ok": event.result.ok,
        "text": event.result.text,
        "images": [f"data:{image.media_type};base64,{image.data_base64}" for image in event.result.images],
        "tokens": None if event.usage is None else event.usage.input_tokens + event.usage.output_tokens,
    }
    if event.session is not None:
        step["session"] = {
            "role": event.session.role,
            "termination": event.session.termination,
            "steps": [_step(inner) for inner in event.session.events],
        }
    return step
