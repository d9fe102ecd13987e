"""The Ray backend on a local Ray instance: the same episode files as a local run, byte for byte; a worker killed
mid-episode loses nothing (its episode is retried, never duplicated, never half-written); a run stopped by
Ctrl-C, or whose driver is killed, resumes; and the instance listens on 127.0.0.1 alone and asks for its token.
Skipped, saying so, when Ray is not installed (make install installs it, extra ``ray``)."""

import contextlib
import ipaddress
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from discogym.core.running.ray_executor import RayExecutor
from discogym.core.running.storage import CLAIM_SUFFIX, RunDir
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


def listening(process: psutil.Process) -> list[tuple[str, int]]:
    """The TCP addresses ``process`` listens on (IPv4 and IPv6), as (host, port)."""
    return [(c.laddr.ip, c.laddr.port) for c in process.net_connections(kind="tcp") if c.status == psutil.CONN_LISTEN]


def is_loopback(host: str) -> bool:
    address = ipaddress.ip_address(host)
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None  # ::ffff:127.0.0.1
    return (mapped or address).is_loopback


def agent_answer(port: int, token: str | None) -> int:
    """The HTTP status of Ray's runtime-env agent to a request carrying ``token`` (none: no Authorization)."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    request = urllib.request.Request(f"http://127.0.0.1:{port}/get_runtime_envs_info", b"", headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as err:
        return err.code


def gcs_answer(address: str, variables: dict[str, str]) -> str:
    """Whether a client of Ray's GCS at ``address``, in a process with this environment and ``variables``, is let
    in ("connected") or refused for its token ("refused")."""
    code = f"import ray._raylet\nray._raylet.GcsClient(address={address!r}).internal_kv_get(b'x', None, timeout=10)"
    done = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **variables}, capture_output=True, text=True, timeout=60
    )  # fmt: skip
    if done.returncode == 0:
        return "connected"
    assert "Authentication token is missing or incorrect" in done.stderr, done.stderr
    return "refused"


def test_a_local_ray_instance_listens_on_loopback_only_and_asks_for_its_token(tmp_path, local_ray):
    summary = run(tmp_path / "ray", config("bisect", split="dev"), executor=RayExecutor(workers=2))
    assert summary.complete  # the workers have started and played
    driver = psutil.Process()
    processes = [driver, *driver.children(recursive=True)]
    sockets = {}
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):  # a process that ended meanwhile listens nowhere
            sockets[process.pid, process.name()] = listening(process)
    listeners = {name for (_, name), addresses in sockets.items() if addresses}
    # The processes all listen here (the driver is this test's process): none can be left unchecked.
    assert {driver.name(), "gcs_server", "raylet", "ray::RuntimeEnvAgent"} <= listeners, sockets
    workers = [pid for (pid, name), found in sockets.items() if found and re.fullmatch(r"ray::(?!.*Agent$).*", name)]
    assert len(workers) >= 2, sockets
    exposed = {key: [a for a in addresses if not is_loopback(a[0])] for key, addresses in sockets.items()}
    assert not any(exposed.values()), exposed

    # Token authentication: the driver's Ray uses it, the GCS (Ray's entry point, gRPC) and the runtime-env agent
    # (HTTP) refuse a client without the run's token.
    assert ray._raylet.get_authentication_mode() == ray._raylet.AuthenticationMode.TOKEN
    token = os.environ["RAY_AUTH_TOKEN"]
    gcs = ray.get_runtime_context().gcs_address
    without, wrong = {"RAY_AUTH_MODE": "disabled"}, {"RAY_AUTH_TOKEN": "not-" + token}
    assert [gcs_answer(gcs, variables) for variables in (without, wrong, {})] == ["refused", "refused", "connected"]
    [(_, port)] = next(found for (_, name), found in sockets.items() if name == "ray::RuntimeEnvAgent")
    assert [agent_answer(port, key) for key in (None, "not-" + token, token)] == [401, 403, 200]


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
    # No temporary left half-written; the claim of an episode a stopped worker was playing may stay (it claims
    # nothing once its process is gone, see storage.EpisodeClaim).
    assert all(name.endswith((".json", CLAIM_SUFFIX)) for name in files(tmp_path / "ray"))
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


NOT_LOOPBACK_SCRIPT = """
import ray
from discogym.core.model.errors import UserError
from discogym.core.running.ray_executor import RayExecutor

ray.util.get_node_ip_address = lambda *args, **kwargs: "192.0.2.7"  # as if Ray had taken the machine's address
try:
    RayExecutor(workers=1)._connect()
except UserError as err:
    print("refused:", err)
print("still running:", ray.is_initialized())
"""


def test_a_local_instance_that_took_another_address_is_stopped_and_refused():
    done = subprocess.run(
        [sys.executable, "-c", NOT_LOOPBACK_SCRIPT], capture_output=True, text=True, env=cli_environment(), cwd=REPO,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "refused: the local Ray instance took the address 192.0.2.7, not 127.0.0.1: not started" in done.stdout
    assert "still running: False" in done.stdout
