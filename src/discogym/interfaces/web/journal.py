"""A game's journal: its calls, appended to a file as they happen, so that a server killed in the middle of a game
(SIGKILL, a power cut) can play them again into a fresh session on restart and go on from where the game was.

One JSON line per call (``{"tool": ..., "args": ...}``) after a first line that says which game it is. The lines are
buffered, and the watcher hands them to the operating system and syncs them to disk every second
(:meth:`Journal.flush`, :meth:`Journal.sync`), so a killed server or a power cut loses at most the last second of
calls (writing each call through at once took 9% of a busy study server's time). A line cut short by the crash is
left out when the journal is read.
"""

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import orjson

JOURNAL_DIR = "journal"  # in the study folder: one GAME.jsonl per game running


class Journal:
    """The journal of one game, open for appending."""

    def __init__(self, path: Path, header: dict[str, Any]) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not path.exists()
        self._file = path.open("ab")
        self._flushed = True  # nothing waits in the buffer
        self._synced = True  # nothing handed to the operating system waits to be put on the disk
        if fresh:
            self._append(header)
            self.flush()

    def _append(self, line: dict[str, Any]) -> None:
        self._file.write(orjson.dumps(line) + b"\n")
        self._flushed = False

    def record(self, tool: str, args: dict[str, Any]) -> None:
        """Append one call the game was given (to the buffer: :meth:`flush` writes it)."""
        self._append({"tool": tool, "args": args})

    def flush(self) -> None:
        """Hand the buffered lines to the operating system (a killed process loses nothing handed over); an
        OSError (a full disk) leaves them for the next flush. Not to be called while another thread appends."""
        if self._flushed or self._file.closed:
            return
        try:
            self._file.flush()
        except OSError:
            return
        self._flushed, self._synced = True, False

    def sync(self) -> None:
        """Put what was flushed on the disk (safe beside appends in another thread; an OSError is left for the
        next sync)."""
        if self._synced or self._file.closed:
            return
        try:
            os.fsync(self._file.fileno())
        except (OSError, ValueError):  # ValueError: closed meanwhile
            return
        self._synced = True

    def close(self, keep: bool = False) -> None:
        """Close the journal (what it holds written out), and delete it unless ``keep`` (its game's episode is not
        written yet)."""
        with contextlib.suppress(OSError):
            self._file.close()
        if not keep:
            self.path.unlink(missing_ok=True)


def read_journal(path: Path) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    """The journal's first line and its calls, in order; a missing journal has none, and a damaged line (the last
    one, cut short by a crash) ends the calls read."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return {}, []
    parsed: list[Any] = []
    for line in lines:
        try:
            parsed.append(json.loads(line))
        except json.JSONDecodeError:
            break
    header = parsed[0] if parsed and isinstance(parsed[0], dict) else {}
    calls = []
    for entry in parsed[1:]:
        if not (isinstance(entry, dict) and isinstance(entry.get("tool"), str) and isinstance(entry.get("args"), dict)):
            break
        calls.append((entry["tool"], entry["args"]))
    return header, calls


__all__ = ["JOURNAL_DIR", "Journal", "read_journal"]
