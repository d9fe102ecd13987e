"""Run directories: ``run.json``, one atomically written file per episode, and the runtime sidecars."""

import os
import re
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from discogym.core.episode import Episode, EpisodeKey, EpisodeRuntime
from discogym.core.errors import UserError

RUN_FILE = "run.json"
EPISODES_DIR = "episodes"
RUNTIME_DIR = "runtime"
TEMP_SUFFIX = ".tmp"
TEMPORARY_NAME = re.compile(r"\..+\.json\.\d+\.tmp")  # what atomic_write leaves when killed mid-write


def atomic_write(path: Path, content: str | bytes) -> None:
    """Write ``content`` to ``path`` so that readers see either the old file or the whole new one.

    The text goes to a temporary file in the same folder, is flushed to disk, then renamed over
    ``path``; a process killed at any point leaves at most a stray temporary file behind.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}{TEMP_SUFFIX}")
    data = content.encode("utf-8") if isinstance(content, str) else content
    with open(temporary, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


class RunDir:
    """The folder of one run: ``run.json``, ``episodes/<key>.json`` and ``runtime/<key>.json``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.episodes_dir = root / EPISODES_DIR
        self.runtime_dir = root / RUNTIME_DIR

    @property
    def config_path(self) -> Path:
        """Where the run's configuration is kept."""
        return self.root / RUN_FILE

    def episode_path(self, key: EpisodeKey) -> Path:
        """The file of the episode with this key."""
        return self.episodes_dir / f"{key.file_stem()}.json"

    def runtime_path(self, key: EpisodeKey) -> Path:
        """The wall-clock sidecar of the episode with this key."""
        return self.runtime_dir / f"{key.file_stem()}.json"

    def prepare(self) -> None:
        """Make the run's folders, or raise a UserError saying why they cannot be: called before any episode is
        played, so that nothing a person or a model did is lost to a bad ``--out``."""
        for folder in (self.root, self.episodes_dir, self.runtime_dir):
            if folder.exists() and not folder.is_dir():
                raise UserError(f"{folder} is a file, not a folder: choose a folder for --out")
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                raise UserError(f"{folder}: cannot make this run folder: {err.strerror or err}") from None

    def write_episode(self, episode: Episode, runtime: EpisodeRuntime) -> None:
        """Write the sidecar, then the episode: the episode file's presence marks it finished."""
        atomic_write(self.runtime_path(episode.key), runtime.model_dump_json(indent=1) + "\n")
        atomic_write(self.episode_path(episode.key), episode.to_json())

    def has_episode(self, key: EpisodeKey) -> bool:
        """True when the episode with this key is finished (its file exists)."""
        return self.episode_path(key).exists()

    def read_episode(self, key: EpisodeKey) -> Episode | None:
        """The finished episode with this key, or None if there is none (or its file is unreadable)."""
        path = self.episode_path(key)
        try:
            return Episode.model_validate_json(path.read_bytes())
        except (OSError, ValidationError):
            return None

    def episode_paths(self) -> list[Path]:
        """Every episode file, in name order."""
        if not self.episodes_dir.is_dir():
            return []
        return sorted(p for p in self.episodes_dir.iterdir() if p.suffix == ".json" and not p.name.startswith("."))

    def iter_episodes(self) -> Iterator[Episode]:
        """Every episode of the run, in file-name order; a damaged file is a UserError naming it."""
        for path in self.episode_paths():
            try:
                yield Episode.model_validate_json(path.read_bytes())
            except ValidationError as err:
                raise UserError(f"{path} is not a valid episode file ({err.error_count()} problems)") from None

    def remove_temporary_files(self) -> int:
        """Delete what interrupted writes left behind; returns how many files went."""
        removed = 0
        for folder in (self.root, self.episodes_dir, self.runtime_dir):
            if folder.is_dir():
                for path in folder.iterdir():
                    if TEMPORARY_NAME.fullmatch(path.name):
                        path.unlink(missing_ok=True)
                        removed += 1
        return removed
