"""The suites' own commands (``discogym petri verify``, ``discogym redstone render``, ...), mounted lazily.

Every entry point of the ``discogym.commands`` group is a typer app mounted under the entry point's name. The
root command lists those names without importing anything (``discogym --help`` shows each with a generic
line, since its real help text lives in the module that is not imported), and imports an app only when its
command is invoked: ``discogym petri verify`` imports petri's commands and nothing of the other suites, and
``discogym --version`` imports no suite at all. An app that cannot be imported fails only its own command,
with one line.
"""

from importlib.metadata import EntryPoint

import typer

# typer vendors click; a command group's methods take and return the vendored click's types.
from typer import _click
from typer.core import TyperCommand, TyperGroup

from discogym.core.console import fail
from discogym.core.plugins import PluginError, load_entry_point, plugin_points

COMMANDS_ENTRY_POINT_GROUP = "discogym.commands"


def commands_help(name: str) -> str:
    """The line ``discogym --help`` shows for the commands mounted as ``name``."""
    return f"The {name} suite's own commands: discogym {name} --help."


class UnloadedCommands(TyperCommand):
    """Stands for a plugin's commands in the root command's listing until they are invoked."""

    def __init__(self, point: EntryPoint) -> None:
        super().__init__(name=point.name, help=commands_help(point.name))
        self.point = point


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
        return name, command, rest
