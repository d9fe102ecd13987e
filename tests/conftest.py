"""Shared fixtures: the toy suite, registered in-process and reachable from subprocesses."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from discogym.core import register_suite
from tests.core.toy_suite import suite as toy_suite

REPO = Path(__file__).resolve().parent.parent
register_suite(toy_suite)


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


@pytest.fixture
def run_cli():
    """:func:`run_discogym`, as a fixture."""
    return run_discogym
