"""The Ray backend on a local Ray instance: the same episode files as a local run, byte for byte; a worker killed
mid-episode loses nothing (its episode is retried, never duplicated, never half-written); and a run stopped by
Ctrl-C, or whose driver is killed, resumes. Skipped, saying so, when Ray is not installed (make install installs
it, extra ``ray``)."""

import os
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from discogym.core.running.ray_executor import RayExecutor
from discogym.core.running.storage import RunDir
from discogym.core.terminal.console import EXIT_INTERRUPTED
from tests.conftest import REPO, cli_environment, discogym_command, run_discogym, wait_for_episodes
from tests.core.test_runner import config, episodes, run

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'discogym[ray]' (make install installs it)")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """One Ray instance for the in-process tests (a RayExecutor uses it and leaves it running)."""
    RayExecutor(workers=2)._connect()
    yield
    ray.shutdown()


def files(out: Path) -> dict[str, bytes]:
    """Every file of the run's episodes folder (temporary files included), by name."""
    folder = RunDir(out).episodes_dir
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_a_ray_run_writes_the_files_a_local_run_writes(tmp_path, local_ray):
    cfg = config("bisect", "quitter", split="dev", repeats=2)
    local = run(tmp_path / "local", cfg)
    on_ray = run(tmp_path / "ray", cfg, executor=RayExecutor(workers=2))
    assert (on_ray.written, on_ray.complete) == (local.written, True) and local.written == 32
    assert files(tmp_path / "ray") == files(tmp_path / "local")


def test_a_ray_worker_killed_mid_episode_loses_nothing(tmp_path, local_ray):
    # Each episode's first attempt kills the Ray worker playing it; the runner plays it again.
    cfg = config("flaky", split="dev", fail_dir=str(tmp_path / "markers"), fault="die")
    summary = run(tmp_path / "ray", cfg, executor=RayExecutor(workers=2), retries=8)
    assert summary.complete and summary.written == 8
    assert len(list((tmp_path / "markers").iterdir())) == 8  # every episode's worker died once
    played = episodes(tmp_path / "ray")
    assert len(played) == 8 and all(e.score.value == 1.0 and e.outcome.status == "completed" for e in played)
    assert all(name.endswith(".json") for name in files(tmp_path / "ray"))  # nothing half-written left behind


def start_driver(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        discogym_command(*args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=cli_environment(), cwd=REPO,
    )  # fmt: skip


def test_a_ray_run_stopped_by_ctrl_c_then_killed_resumes_to_the_local_runs_files(tmp_path):
    args = ["run", "crafting", "--split", "val.small.easy", "--agent", "random", "--quiet"]
    done = run_discogym(*args, "--out", str(tmp_path / "local"))
    assert done.returncode == 0, done.stderr
    ray_run = [*args, "--out", str(tmp_path / "ray"), "--backend", "ray", "--workers", "2"]

    driver = start_driver(*ray_run)  # Ctrl-C: a clean stop, nothing half-written
    wait_for_episodes(tmp_path / "ray", 5, driver)
    driver.send_signal(signal.SIGINT)
    _, printed = driver.communicate(timeout=120)
    assert driver.returncode == EXIT_INTERRUPTED, printed
    assert "interrupted;" in printed and "rerun the same command to resume" in printed and "Traceback" not in printed
    assert all(name.endswith(".json") for name in files(tmp_path / "ray"))
    stopped = len(RunDir(tmp_path / "ray").episode_paths())

    driver = start_driver(*ray_run)  # the rerun resumes; its driver is then killed outright
    wait_for_episodes(tmp_path / "ray", stopped + 10, driver)
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    written = len(RunDir(tmp_path / "ray").episode_paths())
    assert written < 100, "the run ended before it could be killed"

    resumed = run_discogym(*ray_run)
    assert resumed.returncode == 0, resumed.stderr
    # Workers of the dead driver may still finish the episodes they were playing: those are written whole.
    counts = re.search(r"(\d+) episodes? written, (\d+) already done", resumed.stderr)
    assert counts is not None, resumed.stderr
    assert int(counts[1]) + int(counts[2]) == 100 and int(counts[2]) >= written
    assert files(tmp_path / "ray") == files(tmp_path / "local")
