"""Suite versions and task hashes: recorded in every episode, checked on resume, warned about in reports."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from discogym.core import AgentOptions, Episode, Task, UserError
from discogym.core.reporting.run_report import build_report
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir
from discogym.core.running.versions import mixed_versions, stamp_of, task_hash
from tests.core.toy_suite import DigitSuite, suite


class NextVersion(DigitSuite):
    version = "2"


class ChangedTask(DigitSuite):
    """tiny-01's hidden digit moved: same id, other content."""

    def tasks(self, split: str) -> list[Task]:
        return [
            task.model_copy(update={"ground_truth": {"digit": (task.ground_truth["digit"] + 1) % 10}})
            if task.id == "tiny-01"
            else task
            for task in super().tasks(split)
        ]


class TwoListings(DigitSuite):
    """The tiny tasks are listed again in a second set, "again" (as autumn lists each task in "all" and its kind's
    set)."""

    def splits(self) -> list[str]:
        return [*super().splits(), "again"]

    def tasks(self, split: str) -> list[Task]:
        if split != "again":
            return super().tasks(split)
        return [task.model_copy(update={"split": "again"}) for task in super().tasks("tiny")]


def run(
    out: Path,
    played: DigitSuite = suite,
    *agents: str,
    tasks: list[str] | None = None,
    repeats: int = 1,
    split: str = "tiny",
):
    requested = [AgentOptions(name=a) for a in agents or ("bisect",)]
    config = RunConfig.for_suite(played, requested, split=split, tasks=tasks, repeats=repeats)
    return Runner(played, config, out).run()


def episodes(out: Path) -> list[Episode]:
    return list(RunDir(out).iter_episodes())


def test_the_task_hash_is_the_sha256_of_the_canonical_task():
    task = Task(id="t", suite="s", split="x", brief="b", params={"b": 1, "a": [1.5, "z"]}, ground_truth={"d": 3})
    canonical = b'{"brief":"b","ground_truth":{"d":3},"id":"t","params":{"a":[1.5,"z"],"b":1},"split":"x","suite":"s"}'
    assert task_hash(task) == hashlib.sha256(canonical).hexdigest()
    assert task_hash(task) == "2c5726653d7db5b6bd455650c75712b2e36deef48db196c4e2433a5d70232d66"
    reordered = task.model_copy(update={"params": {"a": [1.5, "z"], "b": 1}})
    assert task_hash(reordered) == task_hash(task)
    assert task_hash(task.model_copy(update={"ground_truth": {"d": 4}})) != task_hash(task)


def test_every_episode_records_the_suite_version_and_its_task_s_hash(tmp_path):
    run(tmp_path)
    by_task = {task.id: task for task in suite.tasks("tiny")}
    for episode in episodes(tmp_path):
        assert episode.provenance.suite_version == "1"
        assert episode.provenance.task_hash == task_hash(by_task[episode.key.task])


def test_resume_refuses_episodes_of_another_suite_version(tmp_path):
    run(tmp_path)
    with pytest.raises(UserError) as refused:
        run(tmp_path, NextVersion(), repeats=2)
    message = str(refused.value)
    assert "holds 2 episodes of suite version 1 (now 2)" in message
    assert "choose another --out, or delete those episode files" in message and "tiny-00_plain_bisect" in message
    assert len(episodes(tmp_path)) == 2
    assert run(tmp_path / "other", NextVersion()).written == 2


def test_resume_refuses_episodes_of_a_task_whose_content_changed(tmp_path):
    run(tmp_path, suite, "bisect", "quitter")
    with pytest.raises(UserError, match=r"holds 2 episodes of tasks whose content has changed since \(tiny-01\)"):
        run(tmp_path, ChangedTask(), "random")  # even another agent's episodes would be compared with them
    assert run(tmp_path, ChangedTask(), tasks=["tiny-00"]).skipped == 1  # an unchanged task resumes
    for path in RunDir(tmp_path).episode_paths():
        if path.name.startswith("tiny-01"):
            path.unlink()  # what the message suggests
    summary = run(tmp_path, ChangedTask())
    assert (summary.skipped, summary.written) == (1, 1)


def test_a_task_listed_in_two_sets_is_the_same_task(tmp_path):
    listed_twice = TwoListings()
    run(tmp_path, listed_twice)
    summary = run(tmp_path, listed_twice, "random", split="again")  # beside the first set's episodes
    assert (summary.skipped, summary.written) == (0, 2)
    assert mixed_versions(RunDir(tmp_path)) is None
    with pytest.raises(UserError, match=r"content has changed since \(tiny-01\)"):
        run(tmp_path, ChangedTask(), "random")  # content still counts


def test_episodes_written_before_versions_load_and_resume(tmp_path):
    run(tmp_path)
    for path in RunDir(tmp_path).episode_paths():
        document = json.loads(path.read_text())
        del document["provenance"]["suite_version"], document["provenance"]["task_hash"]
        path.write_text(json.dumps(document))
    old = episodes(tmp_path)
    assert all(e.provenance.suite_version is None and e.provenance.task_hash is None for e in old)
    assert run(tmp_path, NextVersion()).skipped == 2  # an unrecorded version is not another version
    with pytest.raises(UserError, match=r"content has changed since \(tiny-01\)"):
        run(tmp_path, ChangedTask())  # the content is checked by hashing the stored task


def mixed_run(tmp_path: Path, other: DigitSuite) -> Path:
    """A run directory holding bisect's episodes from the toy suite and quitter's from ``other``."""
    run(tmp_path / "mixed")
    run(tmp_path / "other", other, "quitter")
    for path in RunDir(tmp_path / "other").episode_paths():
        shutil.copy(path, tmp_path / "mixed" / "episodes" / path.name)
    return tmp_path / "mixed"


def test_mixed_versions_are_named(tmp_path):
    assert mixed_versions(RunDir(mixed_run(tmp_path / "same", suite))) is None
    assert "episodes of suite 'toy' versions 1, 2;" in (
        mixed_versions(RunDir(mixed_run(tmp_path, NextVersion()))) or ""
    )
    changed_run = RunDir(mixed_run(tmp_path / "changed", ChangedTask()))
    changed = mixed_versions(changed_run)
    assert changed is not None and "tasks with more than one content (toy/tiny-01)" in changed
    read = [stamp_of(stored.path, stored.episode) for stored in changed_run.read_episodes()]
    assert mixed_versions(changed_run, read) == changed  # stamps of the episodes a report has read already


def test_report_warns_about_a_run_that_mixes_versions(tmp_path, run_cli):
    out = mixed_run(tmp_path, NextVersion())
    reported = run_cli("report", str(out), "--json", "--no-plots")
    assert reported.returncode == 0, reported.stderr
    (line,) = reported.stderr.splitlines()
    assert line.startswith(f"warning: {out} mixes episodes of suite 'toy' versions 1, 2;")
    assert json.loads(reported.stdout)["warnings"] == [line.removeprefix("warning: ")]
    assert build_report(out).warnings == [line.removeprefix("warning: ")]  # so `sweep --json` has it too
    markdown = run_cli("report", str(out), "--no-plots")
    assert markdown.stdout.rstrip().endswith(
        "scores across them may not be comparable (see docs/episode-format.md, Versions)"
    )
    clean = run_cli("report", str(tmp_path / "other"), "--json", "--no-plots")
    assert clean.stderr == "" and json.loads(clean.stdout)["warnings"] == []
