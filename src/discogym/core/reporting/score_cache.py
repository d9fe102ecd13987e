"""Recomputed scores remembered between reports, so that a report re-scores only the episodes that changed.

``discogym report`` never trusts the score stored in an episode file: it recomputes it from the log. What it
recomputed is kept in ``RUN/.cache/scores-ID.json``, keyed by the SHA-256 of the episode file's bytes, the
suite, its ``version`` and ``scorer_version`` and discogym's version: an edited file, or a changed scorer, is
scored again. The cache is signed (HMAC-SHA256) with a key of the user's own (``~/.cache/discogym``, ``ID``
names it), so a cache written by someone else (a shared or copied run folder), edited, damaged or of another
format is not read, only replaced. Episode files are never written.
"""

import contextlib
import hashlib
import hmac
import os
import secrets
import tempfile
from pathlib import Path
from typing import Literal

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

import discogym
from discogym.core.model.episode import Episode, Score
from discogym.core.model.jsonsafe import JsonDict
from discogym.core.model.suite import Suite
from discogym.core.running.episode_loop import score_episode

CACHE_DIR = ".cache"
FORMAT = "discogym-score-cache"
KEY_FILE = "score-cache.key"
KEY_BYTES = 32


class CachedScore(BaseModel):
    """What :func:`~discogym.core.running.episode_loop.score_episode` gave for one episode file."""

    model_config = ConfigDict(extra="forbid")

    score: Score
    audit: JsonDict


class _CacheFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["discogym-score-cache"]
    version: Literal[1]
    mac: str
    entries: dict[str, CachedScore]


def user_key() -> bytes | None:
    """The user's signing key (made on first use, readable by its user only), or None when it can be neither
    read nor made: then nothing is cached."""
    folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "discogym"
    path = folder / KEY_FILE
    try:
        if not path.exists():
            _make_key(folder, path)
        key = path.read_bytes()
    except OSError:
        return None
    return key if len(key) == KEY_BYTES else None


def _make_key(folder: Path, path: Path) -> None:
    """Write a fresh key to ``path`` whole or not at all; when two processes race, the first one's stays."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{KEY_FILE}.")  # mode 0600
    try:
        os.write(handle, secrets.token_bytes(KEY_BYTES))
        os.fsync(handle)
        os.link(temporary, path)
    except FileExistsError:
        pass
    finally:
        os.close(handle)
        os.unlink(temporary)


def _mac(key: bytes, entries: object) -> str:
    return hmac.new(key, orjson.dumps(entries, option=orjson.OPT_SORT_KEYS), hashlib.sha256).hexdigest()


def entry_key(suite: Suite, digest: str) -> str:
    """What a recomputed score is remembered by: the file's SHA-256 and everything its scoring depends on."""
    return f"{digest} {suite.name} {suite.version} {suite.scorer_version} {discogym.__version__}"


class ScoreCache:
    """The recomputed scores of one run's episodes: read from the run's cache (unless ``read`` is False, as
    ``--rescore`` asks), completed by scoring what is not there, written back by :meth:`save`."""

    def __init__(self, run_root: Path, *, read: bool = True) -> None:
        self.key = user_key()
        self.path = None if self.key is None else run_root / CACHE_DIR / f"scores-{_key_id(self.key)}.json"
        self.known = self._load() if read else {}
        self.used: dict[str, CachedScore] = {}
        self.scored = 0  # episodes scored, not found in the cache

    def _load(self) -> dict[str, CachedScore]:
        """The cache's entries; none when there is no cache, or it is unreadable, damaged, foreign or edited."""
        if self.path is None or self.key is None:
            return {}
        try:
            document = orjson.loads(self.path.read_bytes())
            checked = _CacheFile.model_validate(document)
        except (OSError, orjson.JSONDecodeError, ValidationError):
            return {}
        return checked.entries if hmac.compare_digest(checked.mac, _mac(self.key, document["entries"])) else {}

    def recomputed(self, suite: Suite, episode: Episode, digest: str) -> Episode:
        """``episode`` with the score and audit its suite's scorer gives it, remembered or computed now;
        ``digest`` is the SHA-256 of the file it was read from."""
        key = entry_key(suite, digest)
        cached = self.known.get(key)
        if cached is None:
            scored = score_episode(suite, episode)
            cached = CachedScore(score=scored.score, audit=scored.audit)
            self.scored += 1
        self.used[key] = cached
        return episode.model_copy(update={"score": cached.score, "audit": cached.audit})

    def save(self) -> None:
        """Write the entries this report used (atomically), unless they are what the cache already held or no
        cache can be kept; a run folder that cannot be written to is left as it is."""
        if self.path is None or self.key is None or self.used == self.known:
            return
        entries = {key: self.used[key].model_dump(mode="json") for key in sorted(self.used)}
        document = {"format": FORMAT, "version": 1, "mac": _mac(self.key, entries), "entries": entries}
        with contextlib.suppress(OSError):
            _write_atomically(self.path, orjson.dumps(document))


def _key_id(key: bytes) -> str:
    return hashlib.sha256(key).hexdigest()[:16]


def _write_atomically(path: Path, data: bytes) -> None:
    """Readers see the old file or the whole new one; two writers at once each write their own temporary file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
