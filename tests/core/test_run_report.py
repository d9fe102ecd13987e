"""``discogym report``: every suite's tables keep models apart, reports of a folder of runs, the header saying
what was run, the trust checks on what is read (and resumed), and ``discogym sweep`` with agents and models."""

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from discogym.core import AgentOptions, Episode, UserError, get_suite
from discogym.core.reporting.run_report import build_report
from discogym.core.running.agent_lookup import resolve_agent_name
from discogym.core.running.episode_loop import play_episode
from discogym.core.running.planning import plan_episode
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir
from tests.conftest import run_discogym
from tests.core.toy_suite import suite as toy

MODELS = ("model-a", "model-b")


def reference_episodes(name: str) -> list[Episode]:
    """The suite's reference agent on the first task of its first split, once per model of ``MODELS`` (the
    same episode, its key carrying each model: the tables must not merge them)."""
    suite = get_suite(name)
    agent = AgentOptions(name=resolve_agent_name(suite, "reference"))
    task = suite.tasks(suite.splits()[0])[0]
    episode, _ = play_episode(suite, plan_episode(name, task, suite.conditions()[0], agent, 0, 0))
    return [episode.model_copy(update={"key": episode.key.model_copy(update={"model": m})}) for m in MODELS]


def mentions(row: list[object], model: str) -> bool:
    return any(model in str(cell) for cell in row)


@pytest.mark.parametrize("name", ["autumn", "crafting", "petri", "redstone"])
def test_every_suites_tables_keep_models_apart(name):
    tables = get_suite(name).tables(reference_episodes(name))
    assert tables
    for table in tables:
        if table.title.startswith("petri: paired comparisons"):
            (pair,) = table.rows
            assert mentions([pair[0]], "model-a") and mentions([pair[1]], "model-b"), pair
            continue
        a, b = MODELS
        assert any(mentions(row, a) and not mentions(row, b) for row in table.rows), table.title
        assert any(mentions(row, b) and not mentions(row, a) for row in table.rows), table.title


def toy_run(out: Path, *agents: str, seed: int = 0, repeats: int = 1) -> RunConfig:
    """Run toy agents on the tiny split into ``out``; the configuration."""
    config = RunConfig.for_suite(toy, list(agents), split="tiny", seed=seed, repeats=repeats)
    Runner(toy, config, out).run()
    return config


def report_json(path: Path, *options: str) -> dict[str, Any]:
    done = run_discogym("report", str(path), "--json", *options)
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def test_a_folder_of_runs_is_reported_run_by_run_after_a_summary(tmp_path):
    toy_run(tmp_path / "a", "bisect")
    toy_run(tmp_path / "b" / "c", "quitter", "bisect")
    (tmp_path / "a" / "devices").mkdir()  # like redstone's reference devices inside its run
    (tmp_path / "a" / "devices" / "x.txt").write_text("not an episode")
    (tmp_path / "notes").mkdir()
    reported = report_json(tmp_path)
    assert reported["episodes"] == 6 and [r["run_dir"] for r in reported["runs"]] == [
        str(tmp_path / "a"),
        str(tmp_path / "b" / "c"),
    ]
    (summary,) = reported["tables"]
    assert summary["columns"][:6] == ["run", "suite", "set", "set digest", "condition", "agent"]
    where = [summary["columns"].index(name) for name in ("run", "suite", "condition", "agent", "episodes")]
    assert [[row[i] for i in where] for row in summary["rows"]] == [
        ["a", "toy", "plain", "bisect", 2],
        ["b/c", "toy", "plain", "bisect", 2],
        ["b/c", "toy", "plain", "quitter", 2],
    ]
    assert reported["header"]["agents"] == ["bisect", "quitter"]
    for run in ("a", "b/c"):  # plots per run, in the run
        assert (tmp_path / run / "plots" / "scores.png").is_file()
    markdown = run_discogym("report", str(tmp_path), "--no-plots", "--html", str(tmp_path / "r.html")).stdout
    assert markdown.index("## All runs") < markdown.index(f"# run: {tmp_path / 'a'}")
    assert markdown.index(f"# run: {tmp_path / 'a'}") < markdown.index(f"# run: {tmp_path / 'b' / 'c'}")
    page = (tmp_path / "r.html").read_text()
    assert f"<h1>run: {tmp_path / 'b' / 'c'}</h1>" in page and "<td>b/c</td>" in page
    with pytest.raises(UserError, match="holds no episodes"):
        build_report(tmp_path / "notes")


def test_a_run_folder_linked_into_the_folder_is_reported_once_and_a_loop_of_links_ends(tmp_path):
    # issue 47: `discogym report runs` said "holds no episodes" of a folder whose runs were symbolic links
    toy_run(tmp_path / "elsewhere" / "smollm", "bisect")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "smollm").symlink_to(tmp_path / "elsewhere" / "smollm", target_is_directory=True)
    (tmp_path / "runs" / "again").symlink_to(tmp_path / "elsewhere" / "smollm", target_is_directory=True)
    (tmp_path / "runs" / "loop").symlink_to(tmp_path / "runs", target_is_directory=True)
    reported = report_json(tmp_path / "runs")
    assert reported["episodes"] == 2
    assert [run["run_dir"] for run in reported["runs"]] == [str(tmp_path / "runs" / "again")]  # the first by name


def test_the_report_opens_with_what_was_run(tmp_path):
    toy_run(tmp_path, "bisect", "quitter", seed=7, repeats=2)
    starts = ["2026-01-02T09:00:00+00:00", "2026-01-02T10:30:00+02:00", "2026-01-01T23:00:00-05:00"]
    for path, start in zip(sorted(RunDir(tmp_path).runtime_dir.iterdir()), starts * 10, strict=False):
        sidecar = json.loads(path.read_text())
        path.write_text(json.dumps(sidecar | {"started_at": start}))
    report = build_report(tmp_path)
    header = report.header
    assert (header.suites, header.splits, header.agents, header.models) == (
        ["toy"],
        ["tiny"],
        ["bisect", "quitter"],
        [],
    )
    assert (header.conditions, header.seeds, header.repeats) == (["plain"], [7], 2)
    assert header.discogym_versions and header.git_commits == sorted(
        {e.provenance.git_commit for e in RunDir(tmp_path).iter_episodes() if e.provenance.git_commit}
    )
    # in UTC: 09:00, 08:30 and 04:00 on 2 January; the range goes by time, not by text
    assert (header.first_started, header.last_started) == (starts[2], starts[0])
    assert (
        "- agents: bisect, quitter\n- models: -\n- conditions: plain\n- seeds: 7\n- repeats: 2\n" in report.markdown()
    )
    assert f"- episodes started: {starts[2]} to {starts[0]}" in report.markdown()
    assert "<li>seeds: 7</li>" in report.html()
    assert build_report(tmp_path).markdown() == report.markdown()  # no clock in it


def first_episode_file(run: Path) -> Path:
    return RunDir(run).episode_paths()[0]


def test_a_copied_episode_is_not_counted_and_does_not_finish_another(tmp_path):
    toy_run(tmp_path, "bisect")
    first, second = RunDir(tmp_path).episode_paths()
    shutil.copy(first, tmp_path / "episodes" / "copy.json")
    report = build_report(tmp_path)
    assert report.episodes == 2
    assert [w for w in report.warnings if "copy.json" in w and "under another name" in w]
    shutil.copy(first, second)  # the second episode's file now holds the first: it is not finished
    summary = Runner(toy, RunConfig.for_suite(toy, ["bisect"], split="tiny"), tmp_path).run()
    assert (summary.skipped, summary.written) == (1, 1)
    assert json.loads(second.read_text())["key"] != json.loads(first.read_text())["key"]


def test_an_episode_the_run_did_not_plan_is_left_out_with_a_warning(tmp_path):
    toy_run(tmp_path / "run", "bisect")
    toy_run(tmp_path / "other", "bisect", "quitter", seed=5)
    stranger = next(p for p in RunDir(tmp_path / "other").episode_paths() if "quitter" in p.name)
    shutil.copy(stranger, tmp_path / "run" / "episodes" / stranger.name)
    report = build_report(tmp_path / "run")
    assert report.episodes == 2 and [row[4] for row in report.tables[0].rows] == ["bisect"]
    assert [w for w in report.warnings if stranger.name in w and "not an episode this run plans" in w]
    # Resuming replays an episode whose file came from a run with another seed.
    same_name = next(p for p in RunDir(tmp_path / "other").episode_paths() if "bisect" in p.name)
    shutil.copy(same_name, tmp_path / "run" / "episodes" / same_name.name)
    summary = Runner(toy, RunConfig.for_suite(toy, ["bisect"], split="tiny"), tmp_path / "run").run()
    assert summary.written == 1
    assert json.loads((tmp_path / "run" / "episodes" / same_name.name).read_text())["provenance"]["run_seed"] == 0


def test_a_tampered_score_is_warned_about_and_replaced_without_rescore(tmp_path):
    toy_run(tmp_path, "quitter")
    path = first_episode_file(tmp_path)
    document = json.loads(path.read_text())
    document["score"].update(value=1.0, success=True)
    path.write_text(json.dumps(document))
    done = run_discogym("report", str(tmp_path), "--json", "--no-plots")
    (row,) = json.loads(done.stdout)["tables"][0]["rows"]
    assert row[10] == 0.0  # mean score: recomputed from the log, not the stored 1.0
    (warning,) = [line for line in done.stderr.splitlines() if "stored score" in line]
    assert "stored score 1 (success)" in warning and "recomputed from its log, 0 (no success)" in warning


def test_an_unknown_format_version_is_refused_in_one_line(tmp_path):
    toy_run(tmp_path, "bisect")
    path = first_episode_file(tmp_path)
    document = json.loads(path.read_text())
    path.write_text(json.dumps(document | {"format_version": 99, "new_field": {}}))
    done = run_discogym("report", str(tmp_path), "--no-plots")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == (
        f"error: {path} has episode format_version 99; this discogym reads format_version 1 "
        "(use the discogym that wrote it)"
    )
    with pytest.raises(UserError, match="format_version 99"):  # and resuming does not overwrite it
        Runner(toy, RunConfig.for_suite(toy, ["bisect"], split="tiny"), tmp_path).run()


def test_sweep_runs_agents_on_every_suite_that_has_them_then_one_summary(tmp_path):
    out = tmp_path / "sweep"
    done = run_discogym("sweep", "toy", "petri", "--agent", "quitter", "--repeats", "2", "--seed", "3",
                        "--out", str(out), "--quiet")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (skipped,) = done.stderr.strip().splitlines()
    assert skipped == "petri: none of the agents asked for, skipped"
    (config,) = json.loads((out / "toy" / "run.json").read_text())["runs"]
    assert (config["agents"][0]["name"], config["repeats"], config["seed"]) == ("quitter", 2, 3)
    summary = done.stdout[done.stdout.rindex("## All runs") :]
    digest = config["set_digest"][:12]
    assert f"| toy | toy | dev | {digest} | plain | quitter | - | - | - | 16 |" in summary
    document = json.loads(run_discogym("sweep", "toy", "--agent", "quitter", "--repeats", "2", "--seed", "3",
                                       "--out", str(out), "--quiet", "--json").stdout)  # fmt: skip
    assert document["summary"]["rows"][0][:10] == ["toy", "toy", "dev", digest, "plain", "quitter", "-", "-", "-", 16]
    nothing = run_discogym("sweep", "petri", "--agent", "quitter", "--out", str(tmp_path / "none"), "--quiet")
    assert nothing.returncode == 2
    assert nothing.stderr.strip().endswith("error: no suite has the agents asked for; nothing was run")


def test_sweep_takes_a_split_condition_and_agent_options_per_suite(tmp_path):
    out = tmp_path / "sweep"
    done = run_discogym("sweep", "toy", "--agent", "flaky", "--split", "digits=tiny", "--condition", "toy=slow",
                        "--agent-opt", f"toy:fail_dir={tmp_path / 'markers'}", "--agent-opt", "petri:salt=3",
                        "--retries", "1", "--out", str(out), "--quiet", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (record,) = json.loads((out / "toy" / "run.json").read_text())["runs"]
    assert (record["split"], record["conditions"]) == ("tiny", ["slow"])
    assert record["agents"][0]["options"] == {"fail_dir": str(tmp_path / "markers")}  # petri's option left out
    run = json.loads(done.stdout)["suites"]["toy"]["run"]
    assert (run["written"], run["faults"]) == (2, {})  # each episode's first try faulted, and was retried
    mixed = run_discogym("sweep", "toy", "--split", "toy=tiny", "--split", "toy=dev", "--out", str(tmp_path / "x"))
    assert (mixed.returncode, mixed.stderr) == (2, "error: --split names 2 values for suite toy; give one\n")
