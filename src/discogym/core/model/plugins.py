"""Plugins (suites, agents, suite commands) come from entry points; loading one that is broken must cost a
warning line, never the whole command.

Every entry point is loaded through :func:`load_entry_point`, which turns whatever went wrong (a missing
module, an exception while importing it, a missing attribute) into a :class:`PluginError` whose message is one
line naming the plugin, where it points and the cause. Callers either warn (:func:`warn`) and go on without
the plugin, or, when the user asked for that very plugin, report the message as an error.
"""

import importlib
import sys
from importlib.metadata import EntryPoint, entry_points


class PluginError(Exception):
    """A plugin that could not be loaded; its message is one line that names the plugin and the cause."""


def plugin_points(group: str) -> list[EntryPoint]:
    """The entry points of ``group`` in a fixed order (by name, then by what they point to)."""
    return sorted(entry_points(group=group), key=lambda point: (point.name, point.value))


def one_line(err: BaseException) -> str:
    """An exception as ``Type: first line of its message``."""
    lines = str(err).strip().splitlines()
    return f"{type(err).__name__}: {lines[0]}" if lines else type(err).__name__


def load_entry_point(point: EntryPoint, kind: str) -> object:
    """The object ``point`` names, or a PluginError like ``suite plugin 'x' (pkg.mod:obj) could not be loaded:
    ModuleNotFoundError: No module named 'pkg'``. ``kind`` says what the plugin is (suite, agent, commands)."""
    try:
        return point.load()
    except Exception as err:  # a plugin's import can raise anything; it must not take the command down
        raise PluginError(f"{kind} plugin '{point.name}' ({point.value}) could not be loaded: {one_line(err)}") from err


def import_reference(reference: str, kind: str, origin: str) -> object | None:
    """Import ``module`` or ``module:attribute`` (as written in an environment variable ``origin``); the
    attribute's value, or None for a bare module. Failures are a PluginError naming ``reference``."""
    module_name, _, attribute = reference.partition(":")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attribute) if attribute else None
    except Exception as err:  # as for entry points: a broken reference costs a warning, not the command
        raise PluginError(f"{kind} '{reference}' from {origin} could not be loaded: {one_line(err)}") from err


_warned: set[str] = set()


def warn(message: str) -> None:
    """Write ``warning: MESSAGE`` as one line on standard error, once per process for the same message."""
    if message in _warned:
        return
    _warned.add(message)
    sys.stderr.write(f"warning: {message}\n")
    sys.stderr.flush()
