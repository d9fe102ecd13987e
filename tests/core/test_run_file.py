"""Every table says what was run: run.json keeps one record per invocation, rows are split by task set (name and
content digest), scaffold and context policy, the header and ``--json`` carry versions, digests and model facts,
and ``discogym cite`` says it all with the papers the suites implement."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from discogym import __version__
from discogym.core import Paper, UserError, get_suite
from discogym.core.reporting.run_report import KEY_COLUMNS, build_report, generic_table, run_header
from discogym.core.running.run_file import RunRecord, read_run_file
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir
from discogym.core.running.versions import set_digest, suite_set_digest
from tests.conftest import REPO, cli_environment, run_discogym
from tests.core.toy_suite import DigitSuite
from tests.core.toy_suite import suite as toy


def toy_run(out: Path, split: str, *agents: str, seed: int = 0) -> None:
    Runner(toy, RunConfig.for_suite(toy, list(agents), split=split, seed=seed), out).run()


def key_cells(row: list[object]) -> dict[str, object]:
    return dict(zip(KEY_COLUMNS, row, strict=False))


def test_two_sets_run_into_one_folder_are_two_rows_with_their_names_and_digests(tmp_path):
    for split in ("tiny", "dev"):
        done = run_discogym("run", "toy", "--split", split, "--agent", "bisect", "--out", str(tmp_path), "--quiet")
        assert done.returncode == 0, done.stderr
    digests = {split: suite_set_digest(toy, split) for split in ("tiny", "dev")}
    assert digests["tiny"] != digests["dev"]
    reported = json.loads(run_discogym("report", str(tmp_path), "--json", "--no-plots").stdout)
    rows = [key_cells(row) for row in reported["tables"][0]["rows"]]
    assert [(row["set"], row["set digest"]) for row in rows] == [
        ("dev", digests["dev"][:12]),
        ("tiny", digests["tiny"][:12]),
    ]
    assert [row[len(KEY_COLUMNS)] for row in reported["tables"][0]["rows"]] == [8, 2]  # episodes: never pooled
    header = reported["header"]
    assert header["discogym_versions"] == [__version__] and header["suite_versions"] == {"toy": [toy.version]}
    assert [(s["name"], s["digest"], s["tasks"]) for s in header["task_sets"]] == [
        ("dev", digests["dev"], 8),
        ("tiny", digests["tiny"], 2),
    ]
    markdown = run_discogym("report", str(tmp_path), "--no-plots").stdout
    assert f"| toy | dev | {digests['dev'][:12]} | plain | bisect |" in markdown
    assert f"toy/tiny (2 tasks, sha256 {digests['tiny']})" in markdown
    assert "- suite versions: toy 1" in markdown


def test_run_json_keeps_a_record_per_invocation_and_refuses_another_seed(tmp_path):
    toy_run(tmp_path, "tiny", "bisect")
    toy_run(tmp_path, "dev", "quitter")
    toy_run(tmp_path, "tiny", "bisect")  # a resume is an invocation too
    records = read_run_file(RunDir(tmp_path))
    assert [(r.split, r.agents[0].name) for r in records] == [
        ("tiny", "bisect"),
        ("dev", "quitter"),
        ("tiny", "bisect"),
    ]
    assert all(r.suite_version == toy.version and r.discogym_version == __version__ for r in records)
    assert records[0].set_digest == suite_set_digest(toy, "tiny") and records[1].set_size == 8
    assert all(r.started_at is not None for r in records)
    with pytest.raises(UserError, match="holds a run of suite 'toy' with seed 0"):
        toy_run(tmp_path, "tiny", "bisect", seed=1)
    assert len(read_run_file(RunDir(tmp_path))) == 3  # the refused invocation left no record


def test_a_run_json_in_the_old_single_record_format_still_reads(tmp_path):
    toy_run(tmp_path, "tiny", "bisect")
    old = RunConfig.for_suite(toy, ["bisect"], split="tiny")
    (tmp_path / "run.json").write_text(old.model_dump_json(indent=1))  # what discogym wrote before records
    (record,) = read_run_file(RunDir(tmp_path))
    assert (record.split, record.set_digest, record.suite_version) == ("tiny", None, None)
    report = build_report(tmp_path)
    assert report.episodes == 2 and not report.warnings
    assert [(s.name, s.digest) for s in report.header.task_sets] == [("tiny", None)]  # not recorded then
    toy_run(tmp_path, "tiny", "bisect")  # resuming keeps the old record as the first
    records = read_run_file(RunDir(tmp_path))
    assert [r.set_digest for r in records] == [None, suite_set_digest(toy, "tiny")]
    (tmp_path / "run.json").write_text("[1, 2]")
    with pytest.raises(UserError, match="is not a discogym run configuration"):
        toy_run(tmp_path, "tiny", "bisect")


def test_the_set_digest_depends_on_the_tasks_content_only():
    tasks = toy.tasks("dev")
    digest = set_digest(tasks)
    assert set_digest(reversed(tasks)) == digest  # not on order
    nudged = [t.model_copy(update={"params": {"x": 0.1 + 0.2}}) for t in tasks]
    assert set_digest(nudged) == set_digest(t.model_copy(update={"params": {"x": 0.3}}) for t in tasks)
    renamed = [t.model_copy(update={"split": "other"}) for t in tasks]
    assert set_digest(renamed) == digest  # not on the set's name
    moved = [tasks[0].model_copy(update={"ground_truth": {"digit": 10}}), *tasks[1:]]
    assert set_digest(moved) != digest and set_digest(tasks[1:]) != digest


def test_the_set_digest_is_the_same_in_processes_with_other_hash_seeds():
    script = (
        "from discogym.core.running.versions import suite_set_digest; from tests.core.toy_suite import suite; "
        "print(suite_set_digest(suite, 'dev'))"
    )
    found = set()
    for seed in ("1", "2", "random"):
        env = cli_environment(PYTHONHASHSEED=seed)
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=REPO)
        assert done.returncode == 0, done.stderr
        found.add(done.stdout.strip())
    assert found == {suite_set_digest(toy, "dev")}


def test_rows_and_the_header_carry_the_scaffold_context_policy_and_model_facts(tmp_path):
    toy_run(tmp_path, "tiny", "bisect")
    facts = {"model": "m/x", "context_window": 1000, "price_per_million_tokens": {"input": 1.0, "output": 2.0}}
    episodes = [
        e.model_copy(
            update={
                "provenance": e.provenance.model_copy(
                    update={"agent_settings": facts | {"scaffold": scaffold, "context": "compact", "base_url": "u"}}
                )
            }
        )
        for e in RunDir(tmp_path).iter_episodes()
        for scaffold in ("none", "plancraft")
    ]
    rows = [key_cells(row) for row in generic_table(episodes).rows]
    assert [(row["scaffold"], row["context"], row["set digest"]) for row in rows] == [
        ("none", "compact", "-"),
        ("plancraft", "compact", "-"),
    ]
    header = run_header(RunDir(tmp_path), read_run_file(RunDir(tmp_path)), episodes)
    assert header.model_facts == [facts]  # the model's facts once, without its endpoint or policy
    assert (
        "m/x: context window 1,000, output limit unknown, $ per M tokens input 1 output 2"
        in dict(header.lines())["model facts"]
    )


class CitedToy(DigitSuite):
    papers = (Paper(key="toy2026", title="A Toy Paper", authors=("A. Author", "B. Author"), year=2026),)


def test_cite_says_what_was_run_and_which_papers(tmp_path, monkeypatch):
    toy_run(tmp_path / "a", "tiny", "bisect")
    toy_run(tmp_path / "b", "dev", "quitter")
    done = run_discogym("cite", str(tmp_path))
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert f"We ran discogym {__version__}" in text and "toy (version 1)" in text
    for split, size in (("tiny", 2), ("dev", 8)):
        assert f"toy/{split} ({size} tasks, sha256 {suite_set_digest(toy, split)})" in text
    assert "Agents: bisect; quitter." in text and "10 episodes were played between" in text
    assert "@misc{discogym-run-" in text
    document = json.loads(run_discogym("cite", str(tmp_path), "--json").stdout)
    assert document["bibtex"].startswith("@misc{discogym-run-") and document["papers"] == []
    monkeypatch.setattr(type(get_suite("toy")), "papers", CitedToy.papers)
    cited = build_report(tmp_path / "a").citation()
    assert "The suites implement A. Author and B. Author (2026). A Toy Paper." in cited.paragraph
    assert "@misc{toy2026,\n  title = {A Toy Paper},\n  author = {A. Author and B. Author},\n  year = {2026},\n}" in (
        cited.bibtex
    )
    page = build_report(tmp_path / "a").html()
    assert '<h2 id="cite">How to cite</h2>' in page and "A Toy Paper" in page


def test_every_suite_names_the_paper_it_implements():
    for name in ("redstone", "petri", "crafting", "autumn"):
        (paper,) = get_suite(name).papers
        assert paper.title and paper.key
    assert get_suite("petri").papers[0].authors == ("Baris Sozudogru",)


def test_list_json_carries_the_versions_and_each_sets_digest():
    document = json.loads(run_discogym("list", "--json").stdout)
    assert document["discogym_version"] == __version__
    (entry,) = [s for s in document["suites"] if s["name"] == "toy"]
    assert entry["version"] == toy.version
    assert entry["set_digests"] == {split: suite_set_digest(toy, split) for split in toy.splits()}
    tasks = json.loads(run_discogym("list", "toy", "--split", "dev", "--json").stdout)
    assert (tasks["suite_version"], tasks["set_digest"]) == (toy.version, suite_set_digest(toy, "dev"))


def test_a_record_reads_back_as_it_was_written(tmp_path):
    toy_run(tmp_path, "tiny", "bisect")
    (record,) = read_run_file(RunDir(tmp_path))
    assert RunRecord.model_validate_json(record.model_dump_json()) == record
    assert json.loads((tmp_path / "run.json").read_text())["runs"][0]["set_digest"] == record.set_digest
