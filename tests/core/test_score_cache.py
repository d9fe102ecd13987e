"""The report's score cache (discogym.core.reporting.score_cache): a second report scores nothing again, a changed
episode file is scored again and a tampered score still caught, and a damaged, foreign, edited or forged cache is
not read but replaced; episode files are never written."""

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from discogym.core import Episode, Score
from discogym.core.reporting import score_cache
from discogym.core.reporting.run_report import build_report
from discogym.core.reporting.score_cache import CACHE_DIR, FORMAT, entry_key, user_key
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir
from tests.core.toy_suite import suite as toy


@pytest.fixture(autouse=True)
def own_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test signs with a key of its own (not the user's)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))


@pytest.fixture
def scored(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The episodes (file stems) the toy suite's scorer is asked to score, in order."""
    calls: list[str] = []
    score = type(toy).score

    def counting(episode: Episode) -> Score:
        calls.append(episode.key.file_stem())
        return score(toy, episode)

    monkeypatch.setattr(toy, "score", counting)
    yield calls


def toy_run(out: Path, scored: list[str]) -> Path:
    """Two bisect episodes of the toy suite in ``out`` (the run's own scoring not counted in ``scored``)."""
    Runner(toy, RunConfig.for_suite(toy, ["bisect"], split="tiny"), out).run()
    scored.clear()
    return out


def cache_file(run: Path) -> Path:
    (path,) = (run / CACHE_DIR).glob("scores-*.json")
    return path


def rows(run: Path) -> list[list[Any]]:
    return build_report(run).tables[0].rows


def test_a_second_report_scores_nothing_again_and_writes_no_episode(tmp_path, scored):
    run = toy_run(tmp_path / "run", scored)
    files = {path: path.read_bytes() for path in RunDir(run).episode_paths()}
    first = rows(run)
    assert len(scored) == 2 and cache_file(run).stat().st_mode & 0o777 == 0o600
    written = cache_file(run).read_bytes()
    assert rows(run) == first and len(scored) == 2  # nothing scored the second time
    assert cache_file(run).read_bytes() == written  # nor rewritten
    assert {path: path.read_bytes() for path in RunDir(run).episode_paths()} == files


def test_a_changed_episode_is_scored_again_and_a_tampered_score_caught(tmp_path, scored):
    run = toy_run(tmp_path / "run", scored)
    clean = rows(run)
    path = RunDir(run).episode_paths()[0]
    document = json.loads(path.read_text())
    document["score"].update(value=1.0 - document["score"]["value"], success=not document["score"]["success"])
    path.write_text(json.dumps(document))
    report = build_report(run)
    assert scored[2:] == [path.stem]  # only the changed file
    assert report.tables[0].rows == clean  # the recomputed score, not the edited one
    (warning,) = report.warnings
    assert path.stem in warning and "stored score" in warning


def test_rescore_scores_every_episode_again(tmp_path, scored):
    run = toy_run(tmp_path / "run", scored)
    rows(run)
    assert build_report(run, rescore=True).rescored and len(scored) == 4


def test_a_new_scorer_version_scores_every_episode_again(tmp_path, scored, monkeypatch):
    run = toy_run(tmp_path / "run", scored)
    rows(run)
    monkeypatch.setattr(type(toy), "scorer_version", "2")
    rows(run)
    assert len(scored) == 4
    rows(run)
    assert len(scored) == 4  # and remembered under the new version


def _damaged(path: Path) -> None:
    path.write_bytes(b"\x00not json")


def _foreign(path: Path) -> None:
    document = json.loads(path.read_text())
    document["mac"] = "0" * 64  # as if signed with someone else's key
    path.write_text(json.dumps(document))


def _edited(path: Path) -> None:
    document = json.loads(path.read_text())
    for entry in document["entries"].values():
        entry["score"]["value"] = 0.5
    path.write_text(json.dumps(document))


def _other_format(path: Path) -> None:
    path.write_text(json.dumps(json.loads(path.read_text()) | {"version": 2}))


@pytest.mark.parametrize("spoil", [_damaged, _foreign, _edited, _other_format])
def test_a_spoilt_cache_is_not_read_but_replaced(tmp_path, scored, spoil):
    run = toy_run(tmp_path / "run", scored)
    clean = rows(run)
    good = cache_file(run).read_bytes()
    spoil(cache_file(run))
    assert rows(run) == clean and len(scored) == 4  # every episode scored again
    assert cache_file(run).read_bytes() == good


def test_a_forged_cache_entry_does_not_hide_a_tampered_score(tmp_path, scored):
    """Someone edits an episode's stored score and writes the cache entry that would vouch for it, signed with
    a key that is not the user's: the entry is not believed."""
    run = toy_run(tmp_path / "run", scored)
    rows(run)
    path = RunDir(run).episode_paths()[0]
    document = json.loads(path.read_text())
    document["score"].update(value=1.0 - document["score"]["value"], success=not document["score"]["success"])
    path.write_text(json.dumps(document))
    key = entry_key(toy, hashlib.sha256(path.read_bytes()).hexdigest())
    entries = {key: {"score": document["score"], "audit": document["audit"]}}
    forged = {"format": FORMAT, "version": 1, "mac": score_cache._mac(b"k" * 32, entries), "entries": entries}
    cache_file(run).write_text(json.dumps(forged))
    report = build_report(run)
    assert any(path.stem in line and "stored score" in line for line in report.warnings)
    assert scored[2:] == [p.stem for p in RunDir(run).episode_paths()]


def test_no_cache_when_the_run_folder_or_the_key_cannot_be_written(tmp_path, scored, monkeypatch):
    run = toy_run(tmp_path / "run", scored)
    (run / CACHE_DIR).write_text("a file where the cache folder goes")
    clean = rows(run)
    assert rows(run) == clean and len(scored) == 4  # works, scoring every time
    monkeypatch.setenv("XDG_CACHE_HOME", str(run / CACHE_DIR / "no"))  # under a file: no key can be made
    assert user_key() is None and rows(run) == clean
