"""The CLI in real subprocesses: hash seeds, kill -9, Ctrl-C, clear errors, JSON output."""

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
import typer.rich_utils
from rich.console import Console
from typer import _click
from typer.core import TyperGroup

from discogym.interfaces.cli import app, suite_document, suites_table
from discogym.interfaces.suite_commands import SuiteCommandsGroup, plain_help
from tests.conftest import REPO, cli_environment, discogym_command, group_is_gone, run_discogym, wait_for_episodes

SLOW_RUN = [
    "run",
    "toy",
    "--split",
    "dev",
    "--condition",
    "slow",
    "--agent",
    "bisect",
    "--agent",
    "random",
    "--repeats",
    "2",
    "--quiet",
]  # 32 episodes of a few 50 ms calls each


def episode_files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / "episodes").glob("*.json"))}


def stray_files(out: Path) -> list[Path]:
    return [p for p in out.rglob("*") if p.name.endswith(".tmp")]


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        discogym_command(*args),
        env=cli_environment(),
        cwd=REPO,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("uninterrupted")
    done = run_discogym(*SLOW_RUN, "--out", str(out))
    assert done.returncode == 0, done.stderr
    files = episode_files(out)
    assert len(files) == 32
    return files


def test_episode_files_do_not_depend_on_the_hash_seed(tmp_path, run_cli):
    args = ["run", "toy", "--agent", "bisect", "--agent", "random", "--condition", "plain", "--quiet"]
    first = run_cli(*args, "--out", str(tmp_path / "a"), PYTHONHASHSEED="1")
    second = run_cli(*args, "--out", str(tmp_path / "b"), "--workers", "2", PYTHONHASHSEED="2")
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert episode_files(tmp_path / "a") == episode_files(tmp_path / "b")
    assert len(episode_files(tmp_path / "a")) == 16


@pytest.mark.parametrize("workers", ["1", "2"])
def test_resume_after_kill_9_gives_exactly_the_uninterrupted_episodes(tmp_path, uninterrupted, workers):
    out = tmp_path / "run"
    process = start(*SLOW_RUN, "--out", str(out), "--workers", workers)
    wait_for_episodes(out, 4, process)
    os.killpg(process.pid, signal.SIGKILL)  # the runner and its workers, as when a machine's job is killed
    process.communicate()
    written = episode_files(out)
    assert 4 <= len(written) < 32
    assert all(uninterrupted[name] == content for name, content in written.items())
    resumed = run_discogym(*SLOW_RUN, "--out", str(out), "--workers", workers, "--json")
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["skipped"] == len(written) and summary["written"] == 32 - len(written)
    assert episode_files(out) == uninterrupted
    assert stray_files(out) == []


@pytest.mark.parametrize(
    ("workers", "how"),
    [("1", "ctrl-c"), ("2", "ctrl-c"), ("2", "kill")],
)
def test_ctrl_c_exits_non_zero_and_writes_no_partial_episode(tmp_path, uninterrupted, workers, how):
    out = tmp_path / "run"
    process = start(*SLOW_RUN, "--out", str(out), "--workers", workers)
    wait_for_episodes(out, 3, process)
    if how == "ctrl-c":
        os.killpg(process.pid, signal.SIGINT)  # what a terminal sends to the foreground job
    else:
        process.send_signal(signal.SIGTERM)  # plain `kill PID` of the runner alone
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "interrupted;" in stderr and "rerun the same command to resume" in stderr
    assert "Traceback" not in stderr
    written = episode_files(out)
    assert 3 <= len(written) < 32
    assert all(uninterrupted[name] == content for name, content in written.items())
    assert stray_files(out) == []
    resumed = run_discogym(*SLOW_RUN, "--out", str(out), "--workers", workers)
    assert resumed.returncode == 0, resumed.stderr
    assert episode_files(out) == uninterrupted


def test_workers_end_themselves_when_the_runner_is_killed(tmp_path):
    out = tmp_path / "run"
    process = start(*SLOW_RUN, "--out", str(out), "--workers", "2")
    wait_for_episodes(out, 2, process)
    process.kill()  # the runner alone; its workers are orphaned
    process.communicate()
    try:
        assert group_is_gone(process.pid, within_s=10), "orphaned workers are still running"
    finally:
        if not group_is_gone(process.pid, within_s=0.1):
            os.killpg(process.pid, signal.SIGKILL)


def test_ctrl_c_while_workers_start_stops_cleanly(tmp_path):
    out = tmp_path / "run"
    process = start(*SLOW_RUN, "--out", str(out), "--workers", "2")
    deadline = time.monotonic() + 60
    while not (out / "run.json").exists():  # written just before the workers are started
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.005)
    os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "rerun the same command to resume" in stderr
    assert group_is_gone(process.pid, within_s=10)
    assert stray_files(out) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "nope"], "error: unknown suite 'nope'; known suites: autumn, crafting, petri, redstone, toy"),
        (["run", "toy", "--agent", "oracle"], "error: unknown agent 'oracle' for suite 'toy'"),
        (
            ["run", "toy", "--agent-opt", "novalue"],
            "error: --agent-opt takes KEY=VALUE or SUITE:KEY=VALUE, got 'novalue'",
        ),
        (["run", "toy", "--task", "dev-99"], "error: split 'dev' of suite 'toy' has no task 'dev-99'"),
        (["run", "toy", "--split", "huge"], "error: toy has no split 'huge'"),
        (["run", "toy", "--agent", "replay"], "error: agent 'replay' needs --agent-opt transcript=..."),
        (["report", "no/such/dir"], "error: no run directory at no/such/dir"),
        (["list", "nope"], "error: unknown suite 'nope'"),
        (["run", "toy", "--seed", "-1"], "error: Invalid value for '--seed': Input should be greater than or equal"),
        (["run", "toy", "--bogus"], "error: No such option: --bogus"),
        (["run"], "error: name a SUITE, or a paper's protocol with --protocol NAME (`discogym protocols`)"),
        (
            ["run", "toy", "--tasks", "dev-00", "--task", "dev-98"],
            "error: split 'dev' of suite 'toy' has no task 'dev-98'",
        ),
    ],
)
def test_user_errors_print_one_clear_line(run_cli, tmp_path, args, message):
    done = run_cli(*args) if args[0] != "run" else run_cli(*args, "--out", str(tmp_path / "o"))
    assert done.returncode == 2
    assert done.stderr.strip() == message or done.stderr.startswith(message), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stdout == ""


def test_unwritable_outputs_are_clear_errors(run_cli, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    done = run_cli("run", "toy", "--split", "tiny", "--out", str(tmp_path / "run"))
    assert done.returncode == 0
    for args in (
        ["run", "toy", "--out", str(blocker / "run")],
        ["report", str(tmp_path / "run"), "--html", str(blocker / "r.html")],
    ):
        done = run_cli(*args)
        assert done.returncode == 2
        assert done.stderr.startswith(f"error: {blocker / ''}") and done.stderr.strip().endswith(": Not a directory")
        assert len(done.stderr.strip().splitlines()) == 1


def test_json_output_is_one_document(run_cli, tmp_path):
    listed = run_cli("list", "--json")
    assert [s["name"] for s in json.loads(listed.stdout)["suites"]] == [
        "autumn",
        "crafting",
        "petri",
        "redstone",
        "toy",
    ]
    tasks = json.loads(run_cli("list", "toy", "--split", "tiny", "--json").stdout)
    assert [t["id"] for t in tasks["tasks"]] == ["tiny-00", "tiny-01"]
    assert all("ground_truth" not in json.dumps(t) for t in tasks["tasks"])
    ran = run_cli("run", "digits", "--split", "tiny", "--out", str(tmp_path), "--json")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == {
        "run_dir": str(tmp_path),
        "planned": 2,
        "skipped": 0,
        "written": 2,
        "errors": 0,
        "retried": 0,
        "faults": {},
        "lost_plays": 0,
        "lost_spent": {"input_tokens": 0, "output_tokens": 0, "cached_tokens": 0, "cost_usd": 0.0},
        "lost_unknown": 0,
        "complete": True,
        "mean_score": 1.0,
    }
    reported = json.loads(run_cli("report", str(tmp_path), "--json").stdout)
    generic = reported["tables"][0]
    row = dict(zip(generic["columns"], generic["rows"][0], strict=True))
    assert reported["episodes"] == 2 and [row[c] for c in ("suite", "set", "condition", "agent", "episodes")] == [
        "toy",
        "tiny",
        "plain",
        "bisect",
        2,
    ]
    html = tmp_path / "report.html"
    markdown = run_cli("report", str(tmp_path), "--html", str(html))
    assert markdown.stdout.startswith("# discogym report") and "| plain | bisect |" in markdown.stdout
    assert "<td>bisect</td>" in html.read_text()
    assert f"- plot: {tmp_path / 'plots' / 'scores.png'}" in markdown.stdout
    assert '<img alt="scores.png" src="data:image/png;base64,' in html.read_text()


def test_report_writes_plots_where_asked(run_cli, tmp_path):
    assert (
        run_cli("run", "toy", "--agent", "bisect", "--agent", "quitter", "--out", str(tmp_path / "run")).returncode == 0
    )
    reported = json.loads(run_cli("report", str(tmp_path / "run"), "--plots", str(tmp_path / "p"), "--json").stdout)
    assert reported["plots"] == [str(tmp_path / "p" / "scores.png")]
    png = (tmp_path / "p" / "scores.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 5000
    bare = json.loads(run_cli("report", str(tmp_path / "run"), "--no-plots", "--json").stdout)
    assert bare["plots"] == [] and not (tmp_path / "run" / "plots").exists()


def test_unfinished_episodes_make_a_non_zero_exit(run_cli, tmp_path):
    args = [
        "run",
        "toy",
        "--split",
        "tiny",
        "--agent",
        "flaky",
        "--agent-opt",
        f"fail_dir={tmp_path / 'm'}",
        "--out",
        str(tmp_path / "run"),
    ]
    first = run_cli(*args)
    assert first.returncode == 3
    assert "2 episodes were not finished because of infrastructure faults" in first.stderr
    assert run_cli(*args).returncode == 0


def test_sweep_runs_every_suite_with_its_reference_agent(run_cli, tmp_path):
    done = run_cli("sweep", "--out", str(tmp_path), "--json", "--quiet")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["suites"]["toy"]
    assert result["run"]["complete"] and result["run"]["mean_score"] == 1.0
    assert len(episode_files(tmp_path / "toy")) == 8


@pytest.mark.parametrize("command", [["run", "toy", "--agent", "bisect"], ["play", "toy", "dev-00"]])
def test_an_out_that_is_a_file_is_refused_before_anything_is_played(tmp_path, run_cli, command):
    occupied = tmp_path / "results.json"
    occupied.write_text("kept\n")
    done = run_cli(*command, "--out", str(occupied), input="submit 3\n")
    assert done.returncode == 2
    assert done.stderr == f"error: {occupied} is a file, not a folder: choose a folder for --out\n"
    assert done.stdout == "" and occupied.read_text() == "kept\n"  # the game never started, the file is untouched


def test_tables_are_whole_when_stdout_is_not_a_terminal(run_cli):
    listed = run_cli("list")
    assert listed.returncode == 0, listed.stderr
    assert "…" not in listed.stdout  # Rich cut cells at 80 columns when piped
    assert "test.small.easy" in listed.stdout
    assert "find which hidden simulation parameter changed, by controlled experiments with statistics" in listed.stdout


@pytest.mark.parametrize("width", [60, 80, 100, 120, 250])
def test_list_never_cuts_a_name_a_person_types(width):
    import discogym.core.running.generic_agents  # noqa: F401 - the generic agents, as `discogym list` has them
    from discogym.core import all_suites

    docs = [suite_document(suite) for suite in all_suites()]
    console = Console(width=width, record=True, markup=False)
    console.print(suites_table(docs, width))
    shown = console.export_text()
    assert "…" not in shown and max(len(line) for line in shown.splitlines()) <= width
    names = {doc["name"] for doc in docs} | {"image+perception", "image+perception-medium", "hint+scientist-summary"}
    for doc in docs:
        names |= {*doc["aliases"], *doc["splits"], *doc["conditions"], *doc["agents"]}
    for name in names:  # whole, not the start of a longer name nor cut at the line's end
        assert re.search(rf"(?<![\w+.-]){re.escape(name)}(?![\w+.-])", shown), (width, name)


def command_paths(command: Any, context: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command under ``command`` as its argv path, the suites' own commands loaded."""
    paths = [path]
    if isinstance(command, TyperGroup):
        for name in command.list_commands(context):
            _, sub, _ = command.resolve_command(context, [name])  # imports a suite's commands
            assert sub is not None
            paths += command_paths(sub, _click.Context(sub, parent=context, info_name=name), (*path, name))
    return paths


def test_help_is_plain_for_every_command(capsys, monkeypatch):
    monkeypatch.setattr(typer.rich_utils, "MAX_WIDTH", 1000)  # one line per option: no range cut in two
    root = typer.main.get_command(app)
    paths = command_paths(root, _click.Context(root, info_name="discogym"))
    assert ("run",) in paths and ("petri", "generate") in paths and len(paths) > 20
    for path in paths:
        root.main(args=[*path, "--help"], prog_name="discogym", standalone_mode=False)
        shown = capsys.readouterr().out
        assert "Usage: discogym" in shown
        for marker in ("<bool>", "<int", "<str>", "<path>", "<float", "9223372036854775807", "x>="):
            assert marker not in shown, (path, marker)
    root.main(args=["run", "--help"], prog_name="discogym", standalone_mode=False)
    shown = capsys.readouterr().out
    assert re.search(r"--seed +N \[at least 0\]", shown) and re.search(r"--out +PATH", shown)
    assert "pip install 'discogym[ray]'" in shown  # rich markup once ate the [ray]


def test_help_texts_are_shown_as_written_not_as_markup(capsys, monkeypatch):
    monkeypatch.setattr(typer.rich_utils, "MAX_WIDTH", 1000)
    tool = typer.Typer(cls=SuiteCommandsGroup)

    @tool.command()
    def build(
        name: Annotated[str, typer.Argument(help="A name like [bold] or x[/b]y.")],
        extra: Annotated[str, typer.Option(help="Needs pip install 'discogym[web]'.")] = "",
    ) -> None:
        """Build it: pip install 'discogym[plots]'."""

    @tool.command()
    def other() -> None:
        """The second command, so that the group keeps its sub-commands."""

    root = typer.main.get_command(tool)
    plain_help(root)  # marking twice escapes once
    root.main(args=["build", "--help"], prog_name="tool", standalone_mode=False)
    shown = capsys.readouterr().out
    for text in ("'discogym[plots]'", "[bold] or x[/b]y", "'discogym[web]'"):
        assert text in shown, text
    assert "\\[" not in shown


def test_an_out_path_with_markup_is_printed_as_it_is(run_cli, tmp_path):
    out = tmp_path / "x[/b]y[bold]"
    done = run_cli("run", "toy", "--agent", "bisect", "--tasks", "dev-00", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert f"1 episode written, 0 already done, 0 ended in an error; mean score 1.000; run directory {out}\n" in (
        done.stderr
    )
    assert len(episode_files(out)) == 1


def test_a_fault_message_with_markup_does_not_stop_the_run(tmp_path):
    echo = "gateway said [/bold] for [/v1/chat/completions]"

    def flaky_run(name: str, *extra: str) -> subprocess.CompletedProcess[str]:
        markers, out = f"fail_dir={tmp_path / name / 'm'}", str(tmp_path / name / "run")
        args = ["--split", "tiny", "--agent", "flaky", "--agent-opt", markers, "--agent-opt", f"message={echo}"]
        return run_discogym("run", "toy", *args, "--out", out, *extra)

    left = flaky_run("left")
    assert left.returncode == 3, left.stderr  # both episodes were tried: the first fault did not stop the run
    assert left.stderr.count(f"{echo}; left for the next run") == 2
    assert left.stderr.count(f": {echo}\n") == 2  # the "not finished" lines
    assert "2 episodes were not finished" in left.stderr
    retried = flaky_run("retried", "--retries", "1")  # each first attempt faults, its retry passes
    assert retried.returncode == 0, retried.stderr
    assert retried.stderr.count(f"{echo}; retrying") == 2 and "2 episodes written" in retried.stderr


def test_list_shows_task_counts_and_the_default_split(run_cli):
    listed = run_cli("list")
    assert listed.returncode == 0, listed.stderr
    assert "dev (8, default), tiny (2)" in listed.stdout
    assert "core-v1 (10, default)" in listed.stdout and "pilot-v0 (6)" in listed.stdout
    document = json.loads(run_cli("list", "--json").stdout)
    toy = next(suite for suite in document["suites"] if suite["name"] == "toy")
    assert (toy["default_split"], toy["task_counts"]) == ("dev", {"dev": 8, "tiny": 2})
    assert toy["agent_options"]["flaky"] == ["fail_dir", "fault", "message"] and toy["agent_options"]["random"] == []
    generic = {agent["name"]: agent["options"] for agent in document["generic_agents"]}
    assert generic["replay"] == ["transcript"] and generic["random"] == [] and "mode" in generic["llm"]


@pytest.mark.parametrize("command", [["run", "toy", "--tasks", "tiny-01"], ["play", "toy", "tiny-01"]])
def test_a_task_of_another_split_gets_a_hint_naming_it(run_cli, tmp_path, command):
    done = run_cli(*command, "--out", str(tmp_path), input="quit\n")
    assert done.returncode == 2
    assert done.stderr == (
        "error: split 'dev' of suite 'toy' has no task 'tiny-01'; task tiny-01 is in split tiny: add --split tiny\n"
    )


def test_unknown_agent_options_are_one_line_errors(run_cli, tmp_path):
    random = run_cli("run", "toy", "--agent", "random", "--agent-opt", "foo=bar", "--out", str(tmp_path))
    assert (random.returncode, random.stderr) == (2, "error: agent 'random' takes no options (got --agent-opt foo)\n")
    replay = run_cli("run", "toy", "--agent", "replay", "--agent-opt", "file=x", "--out", str(tmp_path))
    assert replay.stderr == "error: agent 'replay': --agent-opt file: unknown option (options: transcript)\n"
    assert not (tmp_path / "episodes").exists()


@pytest.mark.parametrize("command", [["run", "toy"], ["play", "toy", "dev-00"], ["mcp", "toy"], ["sweep", "toy"]])
def test_an_empty_out_is_refused_rather_than_meaning_the_current_folder(tmp_path, command):
    done = subprocess.run(
        discogym_command(*command, "--out", ""), cwd=tmp_path, capture_output=True, text=True, env=cli_environment()
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: Invalid value for '--out': must name a folder; it is empty")
    assert list(tmp_path.iterdir()) == []  # nothing written in the current folder
