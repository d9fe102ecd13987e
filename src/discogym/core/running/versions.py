"""What an episode was played against: the suite's version and a content hash of its task, and the digest of
the task set it was listed in.

The first two are recorded in every episode's provenance, the set digest in ``run.json``. A resumed run
refuses to add episodes beside ones of another suite version or of a task whose content has changed since
(their scores would not be comparable), and ``discogym report`` warns about a run directory that mixes them
anyway.
"""

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from discogym.core.model.episode import Episode, EpisodeKey
from discogym.core.model.errors import UserError
from discogym.core.model.suite import Suite
from discogym.core.model.task import Task
from discogym.core.running.storage import RunDir

SHOWN = 5  # how many task ids or file names a message lists before "..."
DIGEST_FLOAT_DIGITS = 12  # significant digits of a float in a set digest: last bits of numerics do not count
SHORT_DIGEST = 12  # hex digits of a set digest shown in tables


def task_hash(task: Task) -> str:
    """The SHA-256 (hex) of the task's canonical JSON: sorted keys, no spaces, ground truth included.

    It depends only on the task's content, not on key order, process or hash seed.
    """
    canonical = orjson.dumps(task.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canonical).hexdigest()


def content_hash(task: Task) -> str:
    """The :func:`task_hash` of the task as if it were listed in no split: what is compared when runs are
    resumed or reported. A task listed in two sets (autumn's ``all`` and ``cd``, say) is the same task, and its
    episodes from either set may share a run directory."""
    return task_hash(task.model_copy(update={"split": "-"}))


def rounded(value: object) -> object:
    """``value`` (JSON data) with every float rounded to :data:`DIGEST_FLOAT_DIGITS` significant digits."""
    if isinstance(value, float):
        return float(f"{value:.{DIGEST_FLOAT_DIGITS}g}")
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [rounded(item) for item in value]
    return value


def set_digest(tasks: Iterable[Task]) -> str:
    """The SHA-256 (hex) of a task set's content: every task's id, brief, parameters and ground truth (not the
    split's name), in id order, as canonical JSON (sorted keys, floats to 12 significant digits).

    It depends only on what the tasks are: not on their order, on key order, on the process's hash seed, or
    on the last bits of a float a numerics library computed. Two sets with the same tasks have one digest.
    """
    documents = sorted(
        (rounded(task.model_dump(mode="json", exclude={"split"})) for task in tasks),
        key=lambda document: str(document["id"]),  # type: ignore[index]
    )
    return hashlib.sha256(orjson.dumps(documents, option=orjson.OPT_SORT_KEYS)).hexdigest()


@cache
def _suite_set_digest(suite: Suite, split: str) -> str:
    return set_digest(suite.tasks(split))


def suite_set_digest(suite: Suite, split: str) -> str:
    """The :func:`set_digest` of the suite's split, computed once per process (UserError for a split that
    cannot be loaded)."""
    return _suite_set_digest(suite, split)


class _RecordedVersions(BaseModel):
    model_config = ConfigDict(extra="ignore")

    suite_version: str | None = None


class _StampedEpisode(BaseModel):
    """The parts of an episode file that say what it was played against (the log is not validated)."""

    model_config = ConfigDict(extra="ignore")

    key: EpisodeKey
    task: Task
    provenance: _RecordedVersions


class EpisodeStamp(BaseModel):
    """One episode file's suite, task, suite version and the :func:`content_hash` of the task it stores."""

    path: Path
    suite: str
    task: str
    suite_version: str | None
    content_hash: str


def read_stamps(run_dir: RunDir) -> list[EpisodeStamp]:
    """The stamps of every readable episode file of the run, in file-name order.

    The task's content is hashed from the task the file stores (the recorded ``task_hash`` also covers the split
    the task was listed in, which is not part of its content); an unreadable file is left out (the runner plays
    such an episode again).
    """
    stamps = []
    for path in run_dir.episode_paths():
        try:
            stamped = _StampedEpisode.model_validate_json(path.read_bytes())
        except (OSError, ValidationError):
            continue
        stamps.append(stamp_of(path, stamped))
    return stamps


def stamp_of(path: Path, episode: Episode | _StampedEpisode) -> EpisodeStamp:
    """The stamp of an episode read from ``path``."""
    return EpisodeStamp(
        path=path,
        suite=episode.key.suite,
        task=episode.task.id,
        suite_version=episode.provenance.suite_version,
        content_hash=content_hash(episode.task),
    )


def listed(items: list[str]) -> str:
    """The first few of ``items``, comma-separated, "..." after them when there are more."""
    return ", ".join(items[:SHOWN]) + (", ..." if len(items) > SHOWN else "")


def _episodes(count: int) -> str:
    return f"{count} episode" + ("" if count == 1 else "s")


def check_resumable(suite: Suite, run_dir: RunDir, tasks: Iterable[Task]) -> None:
    """Refuse (UserError) to play ``tasks`` into ``run_dir`` when it holds episodes of ``suite`` from
    another suite version, or of one of these task ids with other content. Episodes that predate
    recorded versions (no ``suite_version``) are checked by their task's content only."""
    current = {task.id: content_hash(task) for task in tasks}
    changed: set[str] = set()
    versions: set[str] = set()
    conflicting: list[EpisodeStamp] = []
    for stamp in read_stamps(run_dir):
        if stamp.suite != suite.name:
            continue
        other_version = stamp.suite_version is not None and stamp.suite_version != suite.version
        other_task = stamp.task in current and stamp.content_hash != current[stamp.task]
        if other_version and stamp.suite_version is not None:
            versions.add(stamp.suite_version)
        if other_task:
            changed.add(stamp.task)
        if other_version or other_task:
            conflicting.append(stamp)
    if not conflicting:
        return
    reasons = []
    if versions:
        reasons.append(f"suite version {listed(sorted(versions))} (now {suite.version})")
    if changed:
        reasons.append(f"tasks whose content has changed since ({listed(sorted(changed))})")
    files = listed([stamp.path.name for stamp in conflicting])
    raise UserError(
        f"{run_dir.root} holds {_episodes(len(conflicting))} of {' and of '.join(reasons)}, which cannot be mixed "
        f"with new ones; choose another --out, or delete those episode files from {run_dir.episodes_dir} "
        f"({files}) to play them again"
    )


def mixed_versions(run_dir: RunDir, stamps: Iterable[EpisodeStamp] | None = None) -> str | None:
    """One line saying what the run directory mixes (suite versions, a task's contents), or None; ``stamps``
    are its episodes' (:func:`stamp_of` the episodes a caller has read already), else they are read."""
    versions: dict[str, set[str]] = defaultdict(set)
    hashes: dict[tuple[str, str], set[str]] = defaultdict(set)
    for stamp in read_stamps(run_dir) if stamps is None else stamps:
        if stamp.suite_version is not None:
            versions[stamp.suite].add(stamp.suite_version)
        hashes[(stamp.suite, stamp.task)].add(stamp.content_hash)
    problems = [
        f"suite '{name}' versions {', '.join(sorted(found))}"
        for name, found in sorted(versions.items())
        if len(found) > 1
    ]
    changed = sorted(f"{name}/{task}" for (name, task), found in hashes.items() if len(found) > 1)
    if changed:
        problems.append(f"tasks with more than one content ({listed(changed)})")
    if not problems:
        return None
    return (
        f"{run_dir.root} mixes episodes of {'; '.join(problems)}; scores across them may not be comparable "
        "(see docs/episode-format.md, Versions)"
    )
