"""A game's journal: its calls, appended to a file as they happen, so that a server killed in the middle of a game
(SIGKILL, a power cut) can play them again into a fresh session on restart and go on from where the game was.

One JSON line per call (``{"tool": ..., "args": ...}``) after a first line that says which game it is. Each line is
handed to the operating system as it is written (a killed process loses nothing written), and the watcher syncs the
journals to disk every second (:meth:`Journal.sync`), so a power cut loses at most the last second of calls. A
line cut short by the crash is left out when the journal is read.
"""

import json
import os
from pathlib import Path
from typing import Any

JOURNAL_DIR = "journal"  # in the study folder: one GAME.jsonl per game running


class Journal:
    """The journal of one game, open for appending."""

    def __init__(self, path: Path, header: dict[str, Any]) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not path.exists()
        self._file = path.open("a", encoding="utf-8")
        self._dirty = False
        if fresh:
            self._append(header)

    def _append(self, line: dict[str, Any]) -> None:
        self._file.write(json.dumps(line, separators=(",", ":")) + "\n")
        self._file.flush()
        self._dirty = True

    def record(self, tool: str, args: dict[str, Any]) -> None:
        """Append one call the game was given."""
        self._append({"tool": tool, "args": args})

    def sync(self) -> None:
        """Put what was appended since the last sync on the disk (an OSError is left for the next sync)."""
        if self._dirty and not self._file.closed:
            try:
                os.fsync(self._file.fileno())
            except OSError:
                return
            self._dirty = False

    def close(self, keep: bool = False) -> None:
        """Close the journal, and delete it unless ``keep`` (its game's episode is not written yet)."""
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
