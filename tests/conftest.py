"""Shared fixtures: the toy suite, registered in-process and reachable from subprocesses."""

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from discogym.core import register_suite
from tests.core.toy_suite import suite as toy_suite

REPO = Path(__file__).resolve().parent.parent
register_suite(toy_suite)

# Tests that take minutes (the petri frozen sets regenerated under two numerics stacks, the documented commands):
# started first, so that with `pytest -n auto` the cores share the rest while they run instead of waiting for one
# of them at the end.
LONG_FIRST = (
    "tests/suites/petri/test_generate.py::test_verify_regenerates_frozen_tasks",
    "tests/test_docs_examples.py::test_the_documented_commands_run",
    "tests/suites/autumn/test_sets.py",
    "tests/core/test_cli.py::test_sweep_runs_every_suite",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the long tests first, in the order of :data:`LONG_FIRST`, the others after them as collected."""

    def rank(item: pytest.Item) -> int:
        return next((i for i, prefix in enumerate(LONG_FIRST) if item.nodeid.startswith(prefix)), len(LONG_FIRST))

    items.sort(key=rank)


def cli_environment(**extra: str) -> dict[str, str]:
    """The environment for running ``discogym`` in a subprocess with the toy suite available."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    env["DISCOGYM_SUITES"] = "tests.core.toy_suite:suite"
    env.update(extra)
    return env


def discogym_command(*args: str) -> list[str]:
    """The argv that runs the CLI with this interpreter."""
    return [sys.executable, "-m", "discogym", *args]


def run_discogym(*args: str, input: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI in a subprocess to completion (``input`` on its stdin), with extra environment variables
    ``env``."""
    return subprocess.run(
        discogym_command(*args),
        input=input,
        capture_output=True,
        text=True,
        env=cli_environment(**env),
        timeout=300,
        cwd=REPO,
    )


def wait_for_episodes(out: Path, count: int, process: subprocess.Popen[str]) -> None:
    """Wait until the run writing to ``out`` has written ``count`` episode files (the run must go on meanwhile)."""
    deadline = time.monotonic() + 120
    while len(list((out / "episodes").glob("*.json"))) < count:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the run wrote too few episodes"
        time.sleep(0.02)


def group_is_gone(group: int, within_s: float) -> bool:
    """True once no process of the process group ``group`` is left, waiting at most ``within_s`` seconds."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def discogym_server(*args: str, **env: str) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    """``discogym ARGS --port PORT`` (a server) on a free port of 127.0.0.1, with extra environment variables
    ``env``, ready to answer; yields its port and process (stopped afterwards)."""
    port = free_port()
    server = subprocess.Popen(
        discogym_command(*args, "--port", str(port)),
        env=cli_environment(**env),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, server.communicate()
                time.sleep(0.1)
        yield port, server
    finally:
        server.terminate()
        server.communicate(timeout=30)


@contextlib.contextmanager
def mcp_toy_server(out: Path, *options: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`discogym mcp toy --transport http --split tiny` on a free port, writing to ``out``, ready to answer;
    yields its URL and process (stopped afterwards)."""
    with discogym_server("mcp", "toy", "--transport", "http", "--split", "tiny", "--out", str(out), *options) as (
        port,
        server,
    ):
        yield f"http://127.0.0.1:{port}/mcp", server


@pytest.fixture
def run_cli():
    """:func:`run_discogym`, as a fixture."""
    return run_discogym


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--update-golden``: rewrite the golden files under tests/golden/ instead of comparing with them."""
    parser.addoption(
        "--update-golden", action="store_true", help="rewrite the golden files under tests/golden/ from the code"
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    """True when the run was asked to rewrite the golden files (``pytest --update-golden``)."""
    return bool(request.config.getoption("--update-golden"))
