"""What the browse pages show of a run's episodes: one row per episode for the filterable list, and the steps of
an episode's replay. A row is read from its file once and kept while the file's size and modification time stay
the same, so a run of a thousand episodes lists quickly after its first visit."""

import os
import threading
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from discogym.core import Episode, EpisodeKey, Event, MemoryEvent, get_suite
from discogym.core.reporting.replays import replay_views
from discogym.core.reporting.run_report import RunReport, run_report
from discogym.core.running.storage import FAULTS_FILE, RunDir

FILTERS = ("suite", "task", "agent", "model", "outcome")


def file_version(path: Path) -> tuple[int, int]:
    """A file's size and modification time: what a cache keeps an entry for."""
    stat = os.stat(path)
    return stat.st_size, stat.st_mtime_ns


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
    def of(cls, stem: str, document: dict[str, Any]) -> "EpisodeRow":
        """The row of an episode file's parsed JSON (read without validating the whole episode: a list of a
        thousand episodes needs only these fields)."""
        key = EpisodeKey.model_validate(document["key"])
        outcome, score = document.get("outcome") or {}, document.get("score") or {}
        if outcome.get("status") == "error":
            verdict = "error"
        elif score.get("success") is None:
            verdict = "unscored"
        else:
            verdict = "success" if score["success"] else "failure"
        return cls(
            stem=stem,
            suite=key.suite,
            task=key.task,
            condition=key.condition_label(),
            agent=key.agent_label(),
            model=key.model or "-",
            repeat=key.repeat,
            outcome=verdict,
            score=score.get("value"),
            steps=len(document.get("events") or []),
        )


class EpisodeIndex:
    """The rows of runs' episodes, each file read once per version (its size and modification time)."""

    def __init__(self) -> None:
        self._rows: dict[Path, tuple[tuple[int, int], EpisodeRow]] = {}
        self._lock = threading.Lock()

    def _row(self, path: Path) -> EpisodeRow:
        version = file_version(path)
        with self._lock:
            cached = self._rows.get(path)
        if cached is not None and cached[0] == version:
            return cached[1]
        row = EpisodeRow.of(path.stem, orjson.loads(path.read_bytes()))
        with self._lock:
            self._rows[path] = (version, row)
        return row

    def episode(self, path: Path) -> Episode:
        """The whole episode (validated), for its replay."""
        return Episode.model_validate_json(path.read_bytes())

    def rows(self, run_dir: RunDir, damaged: list[str] | None = None) -> list[EpisodeRow]:
        """A row for every readable episode of the run, in file-name order; an unreadable file is left out, its
        name added to ``damaged`` if given."""
        rows = []
        for path in sorted(run_dir.episode_paths()):
            try:
                rows.append(self._row(path))
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                if damaged is not None:
                    damaged.append(path.name)
        return rows


class ReportCache:
    """Runs' reports, each built once per version of its episode files (building one re-scores every episode:
    seconds for a thousand)."""

    def __init__(self) -> None:
        self._reports: dict[Path, tuple[Hashable, RunReport]] = {}
        self._lock = threading.Lock()

    def report(self, folder: Path) -> RunReport:
        run_dir = RunDir(folder)
        faults = run_dir.root / FAULTS_FILE  # the spend of lost plays counts in the report's totals
        version = (
            tuple((path.name, *file_version(path)) for path in sorted(run_dir.episode_paths())),
            file_version(faults) if faults.is_file() else None,
            run_dir.retried_count(),
        )
        with self._lock:
            cached = self._reports.get(folder)
        if cached is not None and cached[0] == version:
            return cached[1]
        built = run_report(folder)
        with self._lock:
            self._reports[folder] = (version, built)
        return built


class ViewCache:
    """The replayed views of the last few episodes opened (replaying runs the episode's calls again: a second for
    a long one), each kept while its file is unchanged."""

    KEPT = 8

    def __init__(self) -> None:
        self._views: dict[Path, tuple[tuple[int, int], dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def views(self, path: Path, episode: Episode) -> dict[str, Any]:
        """``{"views": [...], "pictures": [...], "stopped": why or None}`` for the episode stored at ``path`` (the
        views' pictures shared, see :func:`_share_pictures`)."""
        version = file_version(path)
        with self._lock:
            cached = self._views.get(path)
        if cached is not None and cached[0] == version:
            return cached[1]
        views, stopped = replay_views(get_suite(episode.key.suite), episode)
        pictures: dict[str, int] = {}
        replayed = {
            "views": [_share_pictures(view, pictures) for view in views],
            "pictures": list(pictures),
            "stopped": stopped,
        }
        with self._lock:
            self._views[path] = (version, replayed)
            while len(self._views) > self.KEPT:
                del self._views[next(iter(self._views))]
        return replayed


def _share_pictures(value: Any, pictures: dict[str, int]) -> Any:
    """``value`` with each picture (a ``data:`` URL) replaced by ``{"picture": N}``, N its place in ``pictures``: most
    steps show most pictures of the step before, so each is sent once (replay.js puts them back)."""
    if isinstance(value, str) and value.startswith("data:"):
        return {"picture": pictures.setdefault(value, len(pictures))}
    if isinstance(value, dict):
        return {key: _share_pictures(item, pictures) for key, item in value.items()}
    if isinstance(value, list):
        return [_share_pictures(item, pictures) for item in value]
    return value


def replay_steps(episode: Episode) -> list[dict[str, Any]]:
    """Each step of the replay: what the agent said and called, what came back, the pictures it was shown, and
    the sub-agent session the call ran (its steps alike)."""
    return replay_steps_of(episode.events)


def replay_steps_of(events: list[Event]) -> list[dict[str, Any]]:
    """The replay steps of these events (a game's so far, on its play page)."""
    return [_step(event) for event in events]


def _memory(entry: MemoryEvent) -> dict[str, Any]:
    """A compaction or notes call on the way to a step, as the replay shows it."""
    usage = entry.usage
    return {
        "kind": entry.kind,
        "action": entry.action,
        "text": entry.text,
        "replaced_turns": entry.replaced_turns,
        "tokens": None if usage is None else usage.input_tokens + usage.output_tokens,
    }


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
        "memory": [_memory(entry) for entry in event.memory],
    }
    if event.session is not None:
        step["session"] = {
            "role": event.session.role,
            "termination": event.session.termination,
            "steps": [_step(inner) for inner in event.session.events],
        }
    return step
