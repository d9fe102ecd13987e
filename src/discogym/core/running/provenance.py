"""Facts about the software an episode was produced with."""

import platform
import subprocess
import sys
from functools import cache
from pathlib import Path

import discogym


@cache
def git_commit() -> str | None:
    """The commit of the discogym source tree in use (with ``+dirty`` if it has changes), or None."""
    source = Path(discogym.__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0:
            return None
        status = subprocess.run(
            ["git", "-C", str(source), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    dirty = "+dirty" if status.returncode == 0 and status.stdout.strip() else ""
    return head.stdout.strip() + dirty


def python_version() -> str:
    """The interpreter's implementation and version, e.g. ``CPython 3.11.7``."""
    return f"{platform.python_implementation()} {sys.version.split()[0]}"


def platform_name() -> str:
    """The operating system and machine, e.g. ``Linux-6.1-x86_64``."""
    return f"{platform.system()}-{platform.release()}-{platform.machine()}"
