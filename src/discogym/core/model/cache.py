"""Where discogym keeps third-party data it fetched at run time (Plancraft's wheel, AutumnBench's public tasks):
never in the repository, in the user's cache."""

import os
from pathlib import Path

CACHE_VARIABLE = "DISCOGYM_CACHE_DIR"


def cache_dir() -> Path:
    """``$DISCOGYM_CACHE_DIR``, else ``discogym`` in the user cache directory (``$XDG_CACHE_HOME`` or ``~/.cache``)."""
    if os.environ.get(CACHE_VARIABLE):
        return Path(os.environ[CACHE_VARIABLE])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "discogym"
