"""Finding the agent CLIs and their versions, whether or not they are installed here."""

import re
import stat
from pathlib import Path

import pytest

from discogym.agent_clis.install import CLIS, LOCAL_DIR_ENV, cli_version, find_cli
from discogym.core import UserError
from tests.conftest import REPO


def executable(path: Path, script: str) -> Path:
    """A shell script at ``path``, executable."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No CLI installed: an empty project-local folder and a PATH of one empty folder. Returns the local folder."""
    local, empty = tmp_path / "local", tmp_path / "empty"
    local.mkdir()
    empty.mkdir()
    monkeypatch.setenv(LOCAL_DIR_ENV, str(local))
    monkeypatch.setenv("PATH", str(empty))
    return local


@pytest.mark.parametrize(("name", "label"), [("claude-code", "Claude Code"), ("codex", "Codex")])
def test_a_missing_cli_is_one_line_saying_make_agents_cli(nowhere, name, label):
    with pytest.raises(UserError) as raised:
        find_cli(name)
    message = str(raised.value)
    spec = CLIS[name]
    assert message == (
        f"{label} is not installed: run `make agents-cli` (installs {spec.package}@{spec.version} into {nowhere}) "
        f"or put `{spec.command}` on PATH"
    )


def test_an_unknown_cli_names_the_known_ones():
    with pytest.raises(UserError, match=r"^unknown agent CLI 'gemini': choose one of claude-code, codex$"):
        find_cli("gemini")


def test_the_project_local_install_comes_before_path(nowhere, tmp_path, monkeypatch):
    on_path = executable(tmp_path / "bin" / "claude", "echo 1.0.0")
    monkeypatch.setenv("PATH", str(on_path.parent))
    assert find_cli("claude-code") == on_path
    local = executable(nowhere / "node_modules" / ".bin" / "claude", "echo '2.1.331 (Claude Code)'")
    assert find_cli("claude-code") == local
    assert cli_version(local) == "2.1.331"


def test_the_version_is_read_in_a_clean_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    monkeypatch.setenv("HOME", str(tmp_path))
    checks = f'[ -z "$ANTHROPIC_API_KEY" ] && [ "$HOME" != "{tmp_path}" ] && [ "$(pwd)" = "$HOME" ]'
    cli = executable(tmp_path / "codex", f'{checks} && echo "codex-cli 0.169.0" || {{ echo leaked >&2; exit 1; }}')
    assert cli_version(cli) == "0.169.0"


def test_a_cli_that_fails_or_hangs_on_version_is_a_one_line_error(tmp_path):
    failing = executable(tmp_path / "failing", "echo 'boom: no such thing' >&2; exit 1")
    with pytest.raises(UserError, match=r"^`.*failing --version` failed: boom: no such thing$"):
        cli_version(failing)
    silent = executable(tmp_path / "silent", "echo 'no version here'")
    with pytest.raises(UserError, match=r"failed: no version here$"):
        cli_version(silent)
    hanging = executable(tmp_path / "hanging", "exec sleep 30")
    with pytest.raises(UserError, match=r"did not answer within 0.5 s$"):
        cli_version(hanging, timeout_s=0.5)
    with pytest.raises(UserError, match=r"^cannot run .*absent: No such file or directory$"):
        cli_version(tmp_path / "absent")


def test_the_makefile_installs_the_pinned_versions():
    makefile = (REPO / "Makefile").read_text()
    pinned = dict(re.findall(r"^(CLAUDE_CODE|CODEX)_VERSION := (\S+)$", makefile, re.MULTILINE))
    assert pinned == {"CLAUDE_CODE": CLIS["claude-code"].version, "CODEX": CLIS["codex"].version}
