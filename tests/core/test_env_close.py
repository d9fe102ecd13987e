"""Env.close(): every environment is closed exactly once, however its episode ends, in this process, in
worker processes, and when the run is interrupted or its runner killed."""

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from discogym.core import AgentOptions, Episode
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir
from tests.conftest import REPO, cli_environment, discogym_command, group_is_gone, wait_for_episodes
from tests.core.closing_suite import EVENTS, LOG_VARIABLE, opened_and_closed, suite


@pytest.fixture(autouse=True)
def fresh_events():
    EVENTS.clear()
    yield
    EVENTS.clear()


def run(out: Path, *agents: str, condition: str = "plain", workers: int = 1, **options: str):
    requested = [AgentOptions(name=a, options=options) for a in agents]
    config = RunConfig.for_suite(suite, requested, split="tiny", conditions=[condition])
    return Runner(suite, config, out, workers=workers).run()


def episodes(out: Path) -> list[Episode]:
    return list(RunDir(out).iter_episodes())


def assert_each_closed_once(opened: list[str], closed: list[str], count: int, checked: int = 1) -> None:
    """``count`` episodes' environments and ``checked`` more, which each run opens to check its first episode
    before playing any (a setting refused at the start stops the run), were opened and each closed once."""
    assert len(opened) == count + checked
    assert sorted(closed) == sorted(opened), "every environment is closed, and only once"


@pytest.mark.parametrize(
    ("agent", "condition", "termination"),
    [
        ("bisect", "plain", "submitted"),  # a normal end
        ("crasher", "plain", "agent_error"),
        ("random", "buggy", "env_error"),  # the environment fails while the agent plays
        ("bisect", "bad-brief", "env_error"),  # ... or before it starts
    ],
)
def test_an_episode_that_is_written_closes_its_environment(tmp_path, agent, condition, termination):
    run(tmp_path, agent, condition=condition)
    assert [e.outcome.termination for e in episodes(tmp_path)] == [termination, termination]
    assert_each_closed_once(*opened_and_closed(), count=2)


def test_an_infrastructure_fault_closes_the_abandoned_environment(tmp_path):
    summary = run(tmp_path, "outage")
    assert (summary.written, len(summary.faults)) == (0, 2)
    assert_each_closed_once(*opened_and_closed(), count=2)
    run(tmp_path / "flaky", "flaky", fail_dir=str(tmp_path / "markers"))  # an agent's fault, not the env's
    assert_each_closed_once(*opened_and_closed(), count=4, checked=2)  # two runs


def test_an_interrupt_closes_the_environment_of_the_episode_in_flight(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, "interrupter")
    assert episodes(tmp_path) == []
    assert_each_closed_once(*opened_and_closed(), count=1)


def test_a_close_that_fails_is_an_environment_error_of_a_written_episode(tmp_path):
    run(tmp_path, "bisect", condition="bad-close")
    for episode in episodes(tmp_path):
        assert (episode.outcome.status, episode.outcome.termination) == ("error", "env_error")
        assert episode.outcome.error == "RuntimeError: close is broken"
        assert episode.score.value is None
    assert_each_closed_once(*opened_and_closed(), count=2)


def logged(folder: Path) -> tuple[list[str], list[str]]:
    """The environments opened and closed in other processes (see closing_suite)."""
    names = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    return [n.removesuffix(".opened") for n in names if n.endswith(".opened")], [
        n.removesuffix(".closed") for n in names if n.endswith(".closed")
    ]


def test_worker_processes_close_their_environments(tmp_path, monkeypatch):
    monkeypatch.setenv(LOG_VARIABLE, str(tmp_path / "log"))
    summary = run(tmp_path / "run", "bisect", "outage", workers=2)
    assert (summary.written, len(summary.faults)) == (2, 2)
    assert_each_closed_once(*logged(tmp_path / "log"), count=4, checked=2)  # two agents


SLOW_RUN = ["run", "closing", "--split", "dev", "--condition", "slow", "--agent", "bisect", "--repeats", "4"]


def start_slow_run(tmp_path: Path) -> subprocess.Popen[str]:
    environment = cli_environment(DISCOGYM_SUITES="tests.core.closing_suite:suite")
    environment[LOG_VARIABLE] = str(tmp_path / "log")
    return subprocess.Popen(
        discogym_command(*SLOW_RUN, "--workers", "2", "--quiet", "--out", str(tmp_path / "run")),
        env=environment,
        cwd=REPO,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def wait_for_one_in_flight(tmp_path: Path, within_s: float = 60) -> None:
    """Wait until an environment is open whose episode is not written (between two episodes, both workers may
    have none: a loaded machine can hold them there for a while)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        opened, closed = logged(tmp_path / "log")
        if len(opened) > len(closed):
            return
        time.sleep(0.01)
    raise AssertionError("no episode was in flight")


def test_ctrl_c_closes_the_environments_in_flight_in_the_workers(tmp_path):
    process = start_slow_run(tmp_path)
    wait_for_episodes(tmp_path / "run", 3, process)
    wait_for_one_in_flight(tmp_path)
    os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    opened, closed = logged(tmp_path / "log")
    written = len(list((tmp_path / "run" / "episodes").glob("*.json")))
    assert written < 32 and len(opened) > written, "the run was stopped with episodes in flight"
    assert_each_closed_once(opened, closed, count=len(opened), checked=0)


def test_orphaned_workers_close_their_environments_before_they_exit(tmp_path):
    process = start_slow_run(tmp_path)
    wait_for_episodes(tmp_path / "run", 3, process)
    process.kill()  # the runner alone
    process.communicate()
    try:
        assert group_is_gone(process.pid, within_s=10), "orphaned workers are still running"
    finally:
        if not group_is_gone(process.pid, within_s=0.1):
            os.killpg(process.pid, signal.SIGKILL)
    opened, closed = logged(tmp_path / "log")
    assert_each_closed_once(opened, closed, count=len(opened), checked=0)
