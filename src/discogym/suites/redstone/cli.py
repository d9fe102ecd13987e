"""``discogym redstone ...``: run a world file through the simulator, look at it, convert schematics."""

from pathlib import Path
from typing import Annotated, Any

import typer

from discogym.core.console import JsonOption, print_json, stdout, user_errors
from discogym.core.errors import UserError
from discogym.suites.redstone.blocks import Pos
from discogym.suites.redstone.engine import Change, Simulator
from discogym.suites.redstone.world import World, format_pos, parse_pos, read_world

app = typer.Typer(help="The redstone simulator: traces, views and schematics of world files.", no_args_is_help=True)

WorldArgument = Annotated[
    Path, typer.Argument(metavar="WORLD", help="World file: 'x y z minecraft:id[...]' lines, YAML or JSON.")
]
PressOption = Annotated[
    list[str] | None,
    typer.Option(help="Press the button at X,Y,Z (repeatable); X,Y,Z@T presses it at tick T."),
]
AtOption = Annotated[
    list[int] | None, typer.Option(min=0, help="Tick of each --press without @T, in order (default 0).")
]


def parse_presses(presses: list[str], ats: list[int]) -> dict[int, list[Pos]]:
    """``--press`` and ``--at`` as the buttons pressed at each tick."""
    if ats and len(ats) != len(presses):
        raise UserError(f"give one --at per --press ({len(presses)} presses, {len(ats)} --at)")
    schedule: dict[int, list[Pos]] = {}
    for index, text in enumerate(presses):
        where, at, when = text.partition("@")
        try:
            tick = int(when) if at else (ats[index] if ats else 0)
        except ValueError:
            raise UserError(f"--press {text!r}: the tick after @ must be an integer") from None
        if tick < 0:
            raise UserError(f"--press {text!r}: ticks start at 0")
        schedule.setdefault(tick, []).append(parse_pos(where))
    return schedule


def change_document(change: Change) -> dict[str, Any]:
    """One trace entry: tick, position, the new block and the properties that changed."""
    before = dict(change.before.props)
    after = dict(change.after.props)
    changed = {key: [before.get(key), value] for key, value in after.items() if before.get(key) != value}
    if change.before.id != change.after.id:
        changed["id"] = [change.before.id, change.after.id]
    return {"tick": change.tick, "pos": list(change.pos), "block": str(change.after), "changed": changed}


def simulate_world(world: World, presses: dict[int, list[Pos]], ticks: int) -> Simulator:
    """Load ``world``, press the buttons at their ticks and run ``ticks`` game ticks."""
    sim = Simulator(world)
    sim.run(ticks, presses)
    return sim


@app.command("simulate")
def simulate_command(
    world_file: WorldArgument,
    press: PressOption = None,
    at: AtOption = None,
    ticks: Annotated[int, typer.Option(min=0, max=10_000_000, help="Game ticks to run (20 gt = 1 s).")] = 40,
    as_json: JsonOption = False,
) -> None:
    """Print every block-state change with its game tick (state[t] is after tick t and the inputs at t)."""
    with user_errors():
        presses = parse_presses(press or [], at or [])
        sim = simulate_world(read_world(world_file), presses, ticks)
    changes = [change_document(change) for change in sim.trace]
    if as_json:
        print_json(
            {
                "world": str(world_file),
                "ticks": ticks,
                "presses": [{"tick": t, "pos": list(p)} for t in sorted(presses) for p in presses[t]],
                "changes": changes,
            }
        )
        return
    for entry in changes:
        diff = ", ".join(f"{key} {old}->{new}" for key, (old, new) in entry["changed"].items())
        name = entry["block"].split("[")[0].removeprefix("minecraft:")
        stdout.print(f"t={entry['tick']:>5}  {format_pos(tuple(entry['pos'])):>12}  {name}: {diff}", highlight=False)
    stdout.print(f"{len(changes)} changes in {ticks} game ticks", highlight=False)


@app.command("export")
def export_command(
    world_file: WorldArgument,
    out: Annotated[Path, typer.Argument(help="Schematic to write: .schem (Sponge) or .litematic (Litematica).")],
    sponge_version: Annotated[int, typer.Option(min=2, max=3, help="Sponge format version for .schem.")] = 3,
) -> None:
    """Write a world file as a Minecraft schematic, to paste into the game."""
    with user_errors():
        from discogym.suites.redstone.schematic import write_schematic

        world = read_world(world_file)
        write_schematic(world, out, sponge_version=sponge_version)
    stdout.print(f"{len(world)} blocks written to {out}", highlight=False)


@app.command("import")
def import_command(
    schematic: Annotated[Path, typer.Argument(help="A .schem (Sponge v1-v3) or .litematic file.")],
    out: Annotated[Path, typer.Argument(help="World file to write (the line format).")],
) -> None:
    """Read a Minecraft schematic of palette blocks into a world file."""
    with user_errors():
        from discogym.suites.redstone.schematic import read_schematic

        world = read_schematic(schematic)
        out.write_text(world.to_text(), encoding="utf-8")
    stdout.print(f"{len(world)} blocks written to {out}", highlight=False)


@app.command("view")
def view_command(
    world_file: WorldArgument,
    press: PressOption = None,
    at: AtOption = None,
    tick: Annotated[int, typer.Option(min=0, max=10_000_000, help="Show the state at this game tick.")] = 0,
    png: Annotated[
        Path | None, typer.Option(help="Also write layers.png, top.png and iso.png into this directory.")
    ] = None,
) -> None:
    """The world's state at a tick: a text grid per layer, and pictures with --png."""
    from discogym.suites.redstone import views

    with user_errors():
        presses = parse_presses(press or [], at or [])
        state = simulate_world(read_world(world_file), presses, tick).snapshot()
        if png is not None:
            png.mkdir(parents=True, exist_ok=True)
            (png / "layers.png").write_bytes(views.layers_png(state))
            (png / "top.png").write_bytes(views.top_down_png(state))
            (png / "iso.png").write_bytes(views.iso_png(state))
    stdout.print(f"state at tick {tick}", highlight=False)
    stdout.print(views.text_layers(state), highlight=False, markup=False)
    if png is not None:
        stdout.print(f"pictures written to {png}/layers.png, top.png and iso.png", highlight=False)
