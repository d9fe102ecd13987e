"""Fixtures of the agent-CLI tests: the installed CLIs (or a skip saying how to install them), a discogym MCP
server over HTTP on a free port, and the isolated places a CLI runs in."""

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from discogym.agent_clis.install import cli_spec, find_cli
from discogym.core import UserError
from tests.conftest import mcp_toy_server


def installed(name: str) -> Path:
    """The CLI ``name``, or skip the test saying how to install it."""
    try:
        return find_cli(name)
    except UserError:
        pytest.skip(f"{cli_spec(name).label} is not installed: make agents-cli")


@pytest.fixture
def claude() -> Path:
    """The Claude Code executable."""
    return installed("claude-code")


@pytest.fixture
def codex() -> Path:
    """The Codex executable."""
    return installed("codex")


@pytest.fixture(params=["claude-code", "codex"])
def cli(request: pytest.FixtureRequest, claude: Path, codex: Path) -> str:
    """Each CLI in turn (the test skips, saying so, unless both are installed)."""
    return str(request.param)


@dataclass
class McpServer:
    """A running ``discogym mcp toy --transport http``: its URL and the run directory its episodes go to."""

    url: str
    out: Path


@pytest.fixture
def mcp_server(tmp_path: Path) -> Iterator[McpServer]:
    """The toy suite's tiny split served over streamable HTTP, ready to answer."""
    out = tmp_path / "run"
    with mcp_toy_server(out) as (url, _):
        yield McpServer(url, out)


@dataclass
class Sandbox:
    """Where a CLI runs: a fresh HOME and an empty working directory it cannot write to."""

    home: Path
    work: Path


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    """A fresh HOME and an empty, read-only working directory (made writable again afterwards for clean-up)."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    work.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    yield Sandbox(home, work)
    os.chmod(work, 0o755)
