"""Where the agent CLIs are and which versions discogym pins.

``make agents-cli`` installs the pinned npm packages into ``.agents-cli/`` at the top of the checkout; a CLI is
looked up there first (or in ``$DISCOGYM_AGENTS_CLI_DIR`` when set), then on ``PATH``.
"""

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from discogym.core import UserError

LOCAL_DIR_ENV = "DISCOGYM_AGENTS_CLI_DIR"
# src/discogym/agent_clis/install.py -> the checkout's top folder, where the Makefile installs the CLIs
CHECKOUT_DIR = Path(__file__).resolve().parents[3] / ".agents-cli"
SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
VERSION = re.compile(r"\b(\d+\.\d+\.\d+)\b")


@dataclass(frozen=True)
class CliSpec:
    """One agent CLI: its npm package, the version discogym pins, and the command it installs."""

    label: str
    package: str
    version: str
    command: str


# The Makefile's agents-cli target installs these versions (a test keeps the two equal).
CLIS = {
    "claude-code": CliSpec("Claude Code", "@anthropic-ai/claude-code", "2.1.331", "claude"),
    "codex": CliSpec("Codex", "@openai/codex", "0.169.0", "codex"),
}


def cli_spec(name: str) -> CliSpec:
    """The CLI called ``name`` (``claude-code`` or ``codex``), or a UserError naming the known ones."""
    try:
        return CLIS[name]
    except KeyError:
        raise UserError(f"unknown agent CLI '{name}': choose one of {', '.join(CLIS)}") from None


def local_dir() -> Path:
    """The project-local folder ``make agents-cli`` installs into (``$DISCOGYM_AGENTS_CLI_DIR`` overrides it)."""
    override = os.environ.get(LOCAL_DIR_ENV)
    return Path(override) if override else CHECKOUT_DIR


def find_cli(name: str) -> Path:
    """The executable of the CLI ``name``: the project-local install first, then ``PATH``.

    Raises a one-line UserError saying how to install it when it is in neither.
    """
    spec = cli_spec(name)
    local = local_dir() / "node_modules" / ".bin" / spec.command
    if os.access(local, os.X_OK):
        return local
    found = shutil.which(spec.command)
    if found:
        return Path(found)
    raise UserError(
        f"{spec.label} is not installed: run `make agents-cli` (installs {spec.package}@{spec.version} "
        f"into {local_dir()}) or put `{spec.command}` on PATH"
    )


def clean_environment(home: Path) -> dict[str, str]:
    """The least environment a CLI runs in: ``HOME``, a UTF-8 locale, and a ``PATH`` of the system folders
    and node's (Codex's npm launcher is a node script)."""
    node = shutil.which("node")
    folders = ([str(Path(node).parent)] if node else []) + list(SYSTEM_PATH)
    return {"HOME": str(home), "PATH": os.pathsep.join(dict.fromkeys(folders)), "LANG": "C.UTF-8"}


def cli_version(path: Path, timeout_s: float = 30.0) -> str:
    """The version (``X.Y.Z``) the CLI at ``path`` reports for ``--version``, run in a clean environment and a
    throwaway HOME. A CLI that fails, hangs or prints no version is a UserError."""
    with tempfile.TemporaryDirectory(prefix="discogym-cli-home-") as home:
        try:
            done = subprocess.run(
                [str(path), "--version"],
                capture_output=True,
                text=True,
                env=clean_environment(Path(home)),
                cwd=home,
                timeout=timeout_s,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise UserError(f"`{path} --version` did not answer within {timeout_s:g} s") from None
        except OSError as error:
            raise UserError(f"cannot run {path}: {error.strerror}") from None
    found = VERSION.search(done.stdout)
    if done.returncode != 0 or not found:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise UserError(f"`{path} --version` failed: {said[-1] if said else f'exit {done.returncode}'}")
    return found.group(1)
