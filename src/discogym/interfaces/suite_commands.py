"""The suites' own commands (``discogym petri verify``, ``discogym redstone render``, ...), mounted lazily.

Every entry point of the ``discogym.commands`` group is a typer app mounted under the entry point's name. The
root command lists those names without importing anything (``discogym --help`` shows each with a generic
line, since its real help text lives in the module that is not imported), and imports an app only when its
command is invoked: ``discogym petri verify`` imports petri's commands and nothing of the other suites, and
``discogym --version`` imports no suite at all. An app that cannot be imported fails only its own command,
with one line.

Every command's help is plain: an option's value is named (``--seed N``, ``--out PATH``) rather than typed
(``<int range>``), a range is said in words only when its bounds are ones a person would type, and help texts
are shown as written, never read as rich markup (``pip install 'discogym[ray]'`` keeps its ``[ray]``).
"""

from enum import Enum
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

# typer vendors click; a command group's methods take and return the vendored click's types.
from typer import _click
from typer.core import HAS_RICH, TyperArgument, TyperCommand, TyperGroup, TyperOption

from discogym.core.model.plugins import PluginError, load_entry_point, plugin_points
from discogym.core.terminal.console import fail

COMMANDS_ENTRY_POINT_GROUP = "discogym.commands"


# Bounds beyond this (2**63 - 1 for a seed) are limits of the number type, not advice: help does not show them.
LARGEST_SHOWN_BOUND = 2**31


def range_in_words(low: float | None, high: float | None) -> str | None:
    """``at least 1``, ``1 to 65535``, or None when no bound is worth showing."""
    low = low if low is not None and abs(low) < LARGEST_SHOWN_BOUND else None
    high = high if high is not None and abs(high) < LARGEST_SHOWN_BOUND else None
    if low is not None and high is not None:
        return f"{low} to {high}"
    if low is not None:
        return f"at least {low}"
    if high is not None:
        return f"at most {high}"
    return None


def value_name(option: TyperOption) -> str:
    """What the help calls an option's value: its choices, ``N`` for a whole number, ``PATH``, or its name."""
    descriptor = option.type_descriptor
    if descriptor.is_choice and descriptor.choices is not None:
        return "|".join(str(c.value) if isinstance(c, Enum) else str(c) for c in descriptor.choices)
    element = descriptor.annotation
    if descriptor.is_list:
        element = getattr(element, "__args__", (element,))[0]
    if element is int:
        return "N"
    if element is float:
        return "NUMBER"
    if descriptor.is_path or element is Path:
        return "PATH"
    return (option.name or "value").upper()


class PlainOption(TyperOption):
    """An option whose help shows ``--seed N`` and ``at least 1`` instead of ``<int range> [x>=1]``."""

    def display_type_rich(self, ctx: _click.Context) -> str | None:
        """The value's name (none for a flag)."""
        if self.is_flag or self.count:
            return None
        return self.metavar or value_name(self)

    def _get_number_range_help_str(self) -> str | None:
        return range_in_words(self.min, self.max)


class PlainArgument(TyperArgument):
    """An argument whose help shows its name (``SUITE``) without a type marker (``<str>``)."""

    def display_type_rich(self, ctx: _click.Context) -> str | None:
        """Nothing: the argument's name says what it is."""
        return None

    def _get_number_range_help_str(self) -> str | None:
        return range_in_words(self.min, self.max)


def literal(text: str | None) -> str | None:
    """``text`` escaped so that typer's rich help shows it as written: typer reads help texts as rich markup,
    where ``[ray]`` is a style tag and vanishes (with ``TYPER_USE_RICH=0`` it prints plain text: unchanged)."""
    return escape(text) if text is not None and HAS_RICH else text


def plain_help(command: _click.Command, parent: _click.Context | None = None) -> None:
    """Make the help of ``command`` and of every command under it plain (see the module's docstring).

    Each parameter's class becomes its plain subclass, which changes only how the help shows it; the help
    option (which click makes on first use) is made here so that it is plain too. Help texts are escaped
    once, as their parameter's class changes and as the command is first marked plain.
    """
    context = _click.Context(command, parent=parent, info_name=command.name)
    if not getattr(command, "help_is_plain", False):
        command.help, command.epilog = literal(command.help), literal(command.epilog)
        command.help_is_plain = True  # type: ignore[attr-defined]
    for param in command.get_params(context):
        if type(param) is TyperOption:
            param.__class__ = PlainOption
            param.help = literal(param.help)
        elif type(param) is TyperArgument:
            param.__class__ = PlainArgument
            param.help = literal(param.help)
    subcommands: dict[str, Any] = getattr(command, "commands", {})
    for sub in subcommands.values():
        plain_help(sub, context)


def commands_help(name: str) -> str:
    """The line ``discogym --help`` shows for the commands mounted as ``name``."""
    return f"The {name} suite's own commands: discogym {name} --help."


class UnloadedCommands(TyperCommand):
    """Stands for a plugin's commands in the root command's listing until they are invoked."""

    def __init__(self, point: EntryPoint) -> None:
        super().__init__(name=point.name, help=commands_help(point.name))
        self.point = point
        plain_help(self)


def as_click_command(target: object, point: EntryPoint) -> _click.Command:
    """The click command of what a ``discogym.commands`` entry point names: a typer app or a click command."""
    if isinstance(target, typer.Typer):  # mounted as a group, like add_typer would (no completion options)
        group = typer.main.get_group(target)
        group.name = point.name
        return group
    if isinstance(target, _click.Command):
        return target
    raise PluginError(
        f"commands plugin '{point.name}' ({point.value}) is not a typer app (got {type(target).__name__})"
    )


def load_commands(point: EntryPoint) -> _click.Command:
    """Import the commands an entry point names; a PluginError with one line if that fails."""
    return as_click_command(load_entry_point(point, "commands"), point)


class SuiteCommandsGroup(TyperGroup):
    """The root command: its own commands, then each ``discogym.commands`` plugin's, imported on invocation."""

    _plugins_listed = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        plain_help(self)

    def _list_plugins(self) -> None:
        """Add a stand-in for each plugin whose name no command has yet (once; reading entry points is cheap)."""
        if self._plugins_listed:
            return
        self._plugins_listed = True
        for point in plugin_points(COMMANDS_ENTRY_POINT_GROUP):
            self.commands.setdefault(point.name, UnloadedCommands(point))

    def list_commands(self, ctx: _click.Context) -> list[str]:
        """The root's own commands in the order they were defined, then the plugins' by name."""
        self._list_plugins()
        return super().list_commands(ctx)

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        """The command ``cmd_name``; for a plugin not invoked yet, its stand-in (enough for help listings)."""
        self._list_plugins()
        return super().get_command(ctx, cmd_name)

    def resolve_command(
        self, ctx: _click.Context, args: list[str]
    ) -> tuple[str | None, _click.Command | None, list[str]]:
        """Find the invoked command, importing a plugin's commands now; a broken plugin is one error line."""
        name, command, rest = super().resolve_command(ctx, args)
        if isinstance(command, UnloadedCommands) and name is not None:
            try:
                command = self.commands[name] = load_commands(command.point)
            except PluginError as err:
                fail(str(err))
            plain_help(command, ctx)
        return name, command, rest
