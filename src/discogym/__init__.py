"""discogym: measuring how well AI agents do science.

Agents explore worlds whose rules are hidden, find those rules by experiment, and use them to plan or
build something that works. The harness lives in :mod:`discogym.core`; each benchmark is a suite under
:mod:`discogym.suites`.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("discogym")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
