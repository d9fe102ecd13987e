"""Run directories: ``run.json``, one atomically written file per episode, and the runtime sidecars."""

import contextlib
import errno
import fcntl
import glob
import hashlib
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import orjson
from pydantic import BaseModel, ValidationError

from discogym.core.model.agent import Usage
from discogym.core.model.episode import EPISODE_FORMAT_VERSION, Episode, EpisodeKey, EpisodeRuntime
from discogym.core.model.errors import InfrastructureError, UserError

RUN_FILE = "run.json"
EPISODES_DIR = "episodes"
RUNTIME_DIR = "runtime"
RETRIED_DIR = "retried"  # episodes that ended in an error, set aside when a resume plays them again
RETRIED_RUNTIME = ".runtime.json"  # how a set-aside runtime sidecar's name ends
FAULTS_FILE = "faults.jsonl"  # episodes abandoned unwritten by infrastructure faults, with what they had cost
TEMP_SUFFIX = ".tmp"
TEMPORARY_NAME = re.compile(r"\..+\.json\.\d+\.tmp")  # what atomic_write leaves when killed mid-write
LOCK_FILE = ".lock"
CLAIM_SUFFIX = ".claim"  # episodes/.KEY.json.claim: the name KEY is being played (see EpisodeClaim)
MAX_LOCK_FILE_BYTES = 65_536
# Write errors that the next episode would meet too: the run stops instead of playing (and paying for) more.
LASTING_WRITE_ERRORS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EACCES, errno.EPERM, errno.EISDIR, errno.ENOTDIR}
)


class UnwritableRun(OSError):
    """An episode could not be written for a reason that retrying will not fix (a full disk, a read-only
    folder, a folder where the file goes): ``filename`` is the file, ``strerror`` the reason."""


class EpisodeInPlay(InfrastructureError):
    """Another process (``play``, ``serve``, ``mcp``) holds the claim on an episode's name: it is playing it."""


class RunInUse(UserError):
    """Another process holds the run directory's lock."""


class LostEpisode(BaseModel):
    """One play of an episode abandoned unwritten by an infrastructure fault (a line of ``faults.jsonl``): its
    file's stem, the fault, and what it had cost by then (None: not known, e.g. its worker process died)."""

    episode: str
    fault: str
    spent: Usage | None = None


class LostEpisodes(NamedTuple):
    """What ``faults.jsonl`` holds: its readable lines, and how many were not (cut short by a kill, say)."""

    lost: list[LostEpisode]
    unreadable: int


class EpisodeClaim:
    """A hold on one episode's name, taken before the episode is played and released once its file is written
    (or the episode is dropped), so that no two processes (``run``, ``play``, ``serve``, ``mcp``) ever write one
    episode file. The hold is an exclusive ``flock`` on ``episodes/.KEY.json.claim``: the operating system
    releases it when its process ends, however it ends, so the name of a killed process's episode is free
    again at once (the file it leaves behind claims nothing). Two holds in one process exclude each other too."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        """Let the name go (idempotent). The file is removed while still locked: a process that opened it
        meanwhile finds, once it holds the lock, that the path no longer names its file, and opens it again."""
        if self._fd is not None:
            self.path.unlink(missing_ok=True)
            os.close(self._fd)
            self._fd = None


def try_claim(path: Path) -> EpisodeClaim | None:
    """Claim the name whose claim file is ``path``, or None when a live process holds it."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        try:
            current = os.stat(path)
        except FileNotFoundError:
            current = None
        locked = os.fstat(fd)
        if current is not None and (current.st_dev, current.st_ino) == (locked.st_dev, locked.st_ino):
            return EpisodeClaim(path, fd)
        os.close(fd)  # its holder released and removed it between our open and our lock: claim the new one


def atomic_write(path: Path, content: str | bytes) -> None:
    """Write ``content`` to ``path`` so that readers see either the old file or the whole new one.

    The text goes to a temporary file in the same folder, is flushed to disk, then renamed over
    ``path``; a process killed at any point leaves at most a stray temporary file behind. A write that fails (a
    full disk) removes its temporary file, so retrying it does not fill the disk with halves.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}{TEMP_SUFFIX}")
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


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

    def claim_path(self, key: EpisodeKey) -> Path:
        """The claim file of the episode with this key (see :class:`EpisodeClaim`)."""
        return self.episodes_dir / f".{key.file_stem()}.json{CLAIM_SUFFIX}"

    def claim(self, key: EpisodeKey) -> EpisodeClaim | None:
        """Hold the name of the episode with this key, or None when another process (or another session of
        this one) is playing it."""
        self.episodes_dir.mkdir(parents=True, exist_ok=True)
        return try_claim(self.claim_path(key))

    @contextmanager
    def claimed(self, key: EpisodeKey) -> Iterator[None]:
        """Hold the claim on the episode's name for the block (how ``run`` plays each episode), or raise
        :class:`EpisodeInPlay` (a fault of that episode: retried, or played by the next run) when another
        process holds it."""
        claim = self.claim(key)
        if claim is None:
            raise EpisodeInPlay(f"another process is playing episode {key.file_stem()} in {self.root}")
        try:
            yield
        finally:
            claim.release()

    def claim_unwritten(self, key: EpisodeKey) -> EpisodeClaim | None:
        """Hold the name of the episode with this key if nobody plays it and its file is not written yet."""
        if self.has_episode(key):
            return None
        claim = self.claim(key)
        if claim is not None and self.has_episode(key):  # written by the claim's last holder before we took it
            claim.release()
            return None
        return claim

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
        """Write the sidecar, then the episode: the episode file's presence marks it finished.

        A write error that the next episode would meet too (:data:`LASTING_WRITE_ERRORS`) is raised as
        :class:`UnwritableRun`; any other OSError as it is.
        """
        for path, content in (
            (self.runtime_path(episode.key), runtime.model_dump_json(indent=1) + "\n"),
            (self.episode_path(episode.key), episode.to_json()),
        ):
            try:
                atomic_write(path, content)
            except OSError as err:
                if err.errno in LASTING_WRITE_ERRORS:
                    raise UnwritableRun(err.errno, err.strerror or str(err), str(path)) from None
                raise

    def check_episode_paths(self, keys: Iterable[EpisodeKey]) -> None:
        """Raise a UserError naming the first episode (or sidecar) path of ``keys`` that is a folder: its
        episode could never be written, so it is found before anything is played."""
        for key in keys:
            for path in (self.episode_path(key), self.runtime_path(key)):
                if path.is_dir():
                    raise UserError(f"{path} is a folder where an episode file goes: remove it, then rerun")

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the run directory's lock (``RUN/.lock``) for the block, or raise :class:`RunInUse` naming
        the process that holds it. The operating system releases the lock when its holder exits, however
        it ends (``kill -9`` included), so it never goes stale; worker processes do not inherit it."""
        path = self.root / LOCK_FILE
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as err:
            raise UserError(f"{path}: cannot open the run's lock file: {err.strerror or err}") from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise RunInUse(
                    f"{self.root} is in use by another discogym run ({_holder(fd)}); "
                    "wait for it to end or choose another --out"
                ) from None
            command = " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv else ""
            holder = json.dumps({"pid": os.getpid(), "command": command}) + "\n"
            os.ftruncate(fd, 0)
            os.pwrite(fd, holder.encode("utf-8"), 0)
            yield
        finally:
            os.close(fd)  # closing the only descriptor releases the lock

    @property
    def retried_dir(self) -> Path:
        """Where :meth:`set_aside` keeps the files of episodes played again after an error."""
        return self.root / RETRIED_DIR

    def set_aside(self, key: EpisodeKey) -> Path:
        """Move the episode's file (and its runtime sidecar) into ``retried/`` as ``STEM.N.json``, N counting the
        earlier tries from 1, so that the episode is played again; returns where the episode file went."""
        stem = key.file_stem()
        self.retried_dir.mkdir(exist_ok=True)
        earlier = self.retried_dir.glob(f"{glob.escape(stem)}.*.json")
        tries = 1 + sum(1 for path in earlier if not path.name.endswith(RETRIED_RUNTIME))
        target = self.retried_dir / f"{stem}.{tries}.json"
        runtime = self.runtime_path(key)
        if runtime.exists():
            os.replace(runtime, self.retried_dir / f"{stem}.{tries}{RETRIED_RUNTIME}")
        os.replace(self.episode_path(key), target)
        return target

    def retried_count(self) -> int:
        """How many episode files were set aside to be played again (:meth:`set_aside`)."""
        if not self.retried_dir.is_dir():
            return 0
        return sum(1 for path in self.retried_dir.glob("*.json") if not path.name.endswith(RETRIED_RUNTIME))

    def set_aside_spent(self) -> Usage:
        """What the episodes set aside to be played again (:meth:`set_aside`) had cost (unreadable ones
        count nothing)."""
        if not self.retried_dir.is_dir():
            return Usage()
        spent: list[Usage] = []
        for path in sorted(self.retried_dir.glob("*.json")):
            if not path.name.endswith(RETRIED_RUNTIME):
                with contextlib.suppress(OSError, ValidationError, UserError):
                    spent.append(load_episode(path).usage())
        return Usage.total(spent)

    def record_fault(self, key: EpisodeKey, fault: str, spent: Usage | None) -> None:
        """Add a line to ``faults.jsonl``: the episode ``key`` was abandoned by ``fault``, having cost ``spent``
        (no episode file will hold that cost, so the run's totals take it from here)."""
        line = LostEpisode(episode=key.file_stem(), fault=fault, spent=spent).model_dump_json() + "\n"
        with open(self.root / FAULTS_FILE, "a", encoding="utf-8") as faults:
            faults.write(line)

    def lost_episodes(self) -> LostEpisodes:
        """The lines of ``faults.jsonl`` (none when there is no such file)."""
        path = self.root / FAULTS_FILE
        if not path.is_file():
            return LostEpisodes([], 0)
        lost: list[LostEpisode] = []
        unreadable = 0
        for line in path.read_bytes().splitlines():
            try:
                lost.append(LostEpisode.model_validate_json(line))
            except ValidationError:
                unreadable += 1
        return LostEpisodes(lost, unreadable)

    def has_episode(self, key: EpisodeKey) -> bool:
        """True when the episode with this key is finished (its file exists)."""
        return self.episode_path(key).exists()

    def read_episode(self, key: EpisodeKey) -> Episode | None:
        """The finished episode with this key, or None if there is none (or its file is unreadable, or holds
        another key: a copied or renamed episode does not finish this one). A file of another format version
        is a UserError (see :func:`load_episode`)."""
        try:
            episode = load_episode(self.episode_path(key))
        except (OSError, ValidationError):
            return None
        return episode if episode.key == key else None

    def episode_paths(self) -> list[Path]:
        """Every episode file, in name order."""
        if not self.episodes_dir.is_dir():
            return []
        return sorted(p for p in self.episodes_dir.iterdir() if p.suffix == ".json" and not p.name.startswith("."))

    def read_episodes(self, skipped: list[str] | None = None) -> Iterator["StoredEpisode"]:
        """Every episode of the run with its file and digest, in file-name order; a file of another format
        version is a UserError naming it. A damaged file, and a file not named after the key it holds (a copied
        or renamed episode), are left out with a line saying so added to ``skipped`` if given; without
        ``skipped`` a damaged file is a UserError."""
        for path in self.episode_paths():
            try:
                episode, digest = read_episode_file(path)
            except ValidationError as err:
                damaged = f"{path} is not a valid episode file ({err.error_count()} problems)"
                if skipped is None:
                    raise UserError(damaged) from None
                skipped.append(f"{damaged}; it is not counted")
                continue
            if path.name == self.episode_path(episode.key).name:
                yield StoredEpisode(path, episode, digest)
            elif skipped is not None:
                skipped.append(
                    f"{path} holds episode {episode.key.file_stem()} under another name (copied or renamed?); "
                    "it is not counted"
                )

    def iter_episodes(self, skipped: list[str] | None = None) -> Iterator[Episode]:
        """The episodes of :meth:`read_episodes`."""
        return (stored.episode for stored in self.read_episodes(skipped))

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


class StoredEpisode(NamedTuple):
    """An episode as read from its file: the file, the episode, and the SHA-256 (hex) of the bytes it was read
    from."""

    path: Path
    episode: Episode
    digest: str


def load_episode(path: Path) -> Episode:
    """The episode stored at ``path``. A file of a format version this discogym does not read is a UserError
    naming it (also when it does not validate: another version may not); a damaged file raises
    ValidationError, an unreadable one OSError."""
    return read_episode_file(path)[0]


def read_episode_file(path: Path) -> tuple[Episode, str]:
    """:func:`load_episode`, and the SHA-256 (hex) of the bytes it was read from. The file is parsed once;
    only a file that does not validate is parsed again, for the format version it declares."""
    data = path.read_bytes()
    try:
        episode = Episode.model_validate_json(data)
    except ValidationError:
        _check_format_version(path, _format_version(data))
        raise
    _check_format_version(path, episode.format_version)
    return episode, hashlib.sha256(data).hexdigest()


def _check_format_version(path: Path, version: object) -> None:
    if version != EPISODE_FORMAT_VERSION:
        raise UserError(
            f"{path} has episode format_version {version}; this discogym reads format_version "
            f"{EPISODE_FORMAT_VERSION} (use the discogym that wrote it)"
        )


def _format_version(data: bytes) -> object:
    """The ``format_version`` a file declares; the current one when it declares none or is not a JSON object
    (validation then says what is wrong)."""
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        document = None
    if not isinstance(document, dict):
        return EPISODE_FORMAT_VERSION
    return document.get("format_version", EPISODE_FORMAT_VERSION)


def _holder(fd: int) -> str:
    """Who holds the lock, as its lock file says: ``pid 1234: discogym run ...``."""
    try:
        holder = json.loads(os.pread(fd, MAX_LOCK_FILE_BYTES, 0))
        described = f"pid {int(holder['pid'])}"
    except (OSError, ValueError, TypeError, KeyError):
        return "a process that has not said which yet"
    command = holder.get("command")
    return f"{described}: {command}" if isinstance(command, str) and command else described
