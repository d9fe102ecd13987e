"""discogym: measuring how well AI agents do science.

Agents explore worlds whose rules are hidden, find those rules by experiment, and use them to plan or
build something that works. The harness lives in :mod:`discogym.core`; each benchmark is a suite under
:mod:`discogym.suites`.
"""

from typing import Any

__all__ = ["__version__"]

__version__: str  # bound by __getattr__ on first use


def __getattr__(name: str) -> Any:
    """``__version__``, read from the installed package's metadata on first use (importing
    :mod:`importlib.metadata` costs tens of milliseconds that most imports of the package never need)."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("discogym")
    except PackageNotFoundError:  # running from a source tree that was never installed
        found = "0.0.0+unknown"
    globals()["__version__"] = found
    return found
