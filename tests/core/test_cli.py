"""The CLI in real subprocesses: hash seeds, kill -9, Ctrl-C, clear errors, JSON output."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

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
        (["run", "toy", "--agent-opt", "novalue"], "error: --agent-opt takes KEY=VALUE, got 'novalue'"),
        (["run", "toy", "--task", "dev-99"], "error: split 'dev' of suite 'toy' has no task 'dev-99'"),
        (["run", "toy", "--split", "huge"], "error: toy has no split 'huge'"),
        (["run", "toy", "--agent", "replay"], "error: agent 'replay' needs --agent-opt transcript=..."),
        (["report", "no/such/dir"], "error: no run directory at no/such/dir"),
        (["list", "nope"], "error: unknown suite 'nope'"),
        (["run", "toy", "--seed", "-1"], "error: Invalid value for '--seed': Input should be greater than or equal"),
        (["run", "toy", "--bogus"], "error: No such option: --bogus"),
        (["run"], "error: Missing argument 'SUITE'. (see 'discogym run --help')"),
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
        "faults": {},
        "complete": True,
        "mean_score": 1.0,
    }
    reported = json.loads(run_cli("report", str(tmp_path), "--json").stdout)
    assert reported["episodes"] == 2 and reported["tables"][0]["rows"][0][:5] == ["toy", "plain", "bisect", "-", 2]
    html = tmp_path / "report.html"
    markdown = run_cli("report", str(tmp_path), "--html", str(html))
    assert markdown.stdout.startswith("# discogym report") and "| toy | plain | bisect |" in markdown.stdout
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
