"""``discogym redstone ...``: run a world file through the simulator, look at it, convert schematics."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from discogym.core import UserError
from discogym.core.terminal.console import JsonOption, print_json, stdout, user_errors
from discogym.suites.redstone.blocks import Pos
from discogym.suites.redstone.engine import Change, Simulator
from discogym.suites.redstone.world import World, format_pos, parse_pos, read_world

if TYPE_CHECKING:
    from discogym.suites.redstone.tasks import TaskSpec

app = typer.Typer(help="The redstone simulator: traces, views and schematics of world files.", no_args_is_help=True)

WorldArgument = Annotated[
    Path, typer.Argument(metavar="WORLD", help="World file: 'x y z minecraft:id[...]' lines, YAML or JSON.")
]
PressOption = Annotated[
    list[str] | None,
    typer.Option(help="Press the button at X,Y,Z (repeatable); X,Y,Z@T presses it at tick T."),
]
LabOption = Annotated[
    bool,
    typer.Option("--lab", help="Stand the world on the task lab's stone floor (y=3, |x|,|z| <= 10): for device files."),
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


def load_world(path: Path, lab: bool) -> World:
    """A world file, or with ``lab`` a device file stood on the lab's floor."""
    if not lab:
        try:
            return read_world(path)
        except UserError as err:
            if "needs stone, glass or a lamp" not in str(err):
                raise
            raise UserError(f"{err} (a device file of the task lab? add --lab to stand it on the floor)") from None
    from discogym.suites.redstone.lab import lab_world, read_device

    return lab_world(read_device(path))


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
    lab: LabOption = False,
    as_json: JsonOption = False,
) -> None:
    """Print every block-state change with its game tick (state[t] is after tick t and the inputs at t)."""
    with user_errors():
        presses = parse_presses(press or [], at or [])
        sim = simulate_world(load_world(world_file, lab), presses, ticks)
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
    lab: LabOption = False,
) -> None:
    """Write a world file as a Minecraft schematic, to paste into the game."""
    with user_errors():
        from discogym.suites.redstone.schematic import write_schematic

        world = load_world(world_file, lab)
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
    lab: LabOption = False,
    png: Annotated[
        Path | None, typer.Option(help="Also write layers.png, top.png and iso.png into this directory.")
    ] = None,
) -> None:
    """The world's state at a tick: a text grid per layer, and pictures with --png."""
    from discogym.suites.redstone import pictures

    with user_errors():
        presses = parse_presses(press or [], at or [])
        state = simulate_world(load_world(world_file, lab), presses, tick).snapshot()
        if png is not None:
            png.mkdir(parents=True, exist_ok=True)
            (png / "layers.png").write_bytes(pictures.layers_png(state))
            (png / "top.png").write_bytes(pictures.top_down_png(state))
            (png / "iso.png").write_bytes(pictures.iso_png(state))
    stdout.print(f"state at tick {tick}", highlight=False)
    stdout.print(pictures.text_layers(state), highlight=False, markup=False)
    if png is not None:
        stdout.print(f"pictures written to {png}/layers.png, top.png and iso.png", highlight=False)


TaskArgument = Annotated[
    str, typer.Argument(metavar="TASK", help="A task id (e.g. C_sequential_activation_L2) or a task file.")
]


def find_task(name: str) -> "TaskSpec":
    """An official task by id, or a task file."""
    from discogym.suites.redstone.tasks import packaged_tasks, read_task

    for spec in packaged_tasks():
        if spec.task_id == name:
            return spec
    path = Path(name)
    if path.suffix in (".yaml", ".yml") or path.exists():
        return read_task(path)
    raise UserError(f"no task {name!r}: give an official task id (discogym list redstone) or a task file")


def _int_list(text: str | None, what: str) -> list[int] | None:
    if text is None:
        return None
    try:
        return [int(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        raise UserError(f"--{what} takes comma-separated integers, e.g. 1,2,1") from None


@app.command("generate")
def generate_command(
    family: Annotated[str | None, typer.Option(help="A, B, C, D or E.")] = None,
    level: Annotated[
        str | None, typer.Option(help="L1..L5: the paper's parameters (the default for anything not given).")
    ] = None,
    lamps: Annotated[int | None, typer.Option(min=1, max=200, help="Number of lamps N.")] = None,
    reach: Annotated[
        int | None, typer.Option(min=1, help="B: the farthest lamp's least distance from the button.")
    ] = None,
    delays: Annotated[str | None, typer.Option(help="C: the N-1 delays in redstone ticks, e.g. 1,2,1.")] = None,
    tau: Annotated[int | None, typer.Option(min=1, help="E: each lamp's on-time in redstone ticks.")] = None,
    distances: Annotated[str | None, typer.Option(help="D: the target distances, e.g. 4,8,12,16.")] = None,
    tolerance: Annotated[int, typer.Option(min=0, max=20, help="Tolerance in game ticks.")] = 1,
    official: Annotated[bool, typer.Option("--official", help="Write the paper's 25 task files into --out.")] = False,
    out: Annotated[
        Path | None, typer.Option(help="Write here (a file, or a folder with --official) instead of printing.")
    ] = None,
) -> None:
    """Make a task file: one of the paper's levels, or any other level of a family."""
    from discogym.suites.redstone.tasks import make_task, official_tasks

    with user_errors():
        if official:
            if out is None:
                raise UserError("--official writes 25 files: give --out FOLDER")
            out.mkdir(parents=True, exist_ok=True)
            for spec in official_tasks():
                (out / f"{spec.task_id}.yaml").write_text(spec.to_yaml(), encoding="utf-8")
            stdout.print(f"25 task files written to {out}", highlight=False)
            return
        if family is None:
            raise UserError("give --family (A-E), or --official")
        spec = make_task(
            family.upper(),
            level,
            lamps=lamps,
            tolerance=tolerance,
            reach=reach,
            delays=_int_list(delays, "delays"),
            tau=tau,
            distances=_int_list(distances, "distances"),
        )
        if out is None:
            typer.echo(spec.to_yaml(), nl=False)  # plain, unwrapped: the output is a file
            return
        out.write_text(spec.to_yaml(), encoding="utf-8")
    stdout.print(f"{spec.task_id} written to {out}", highlight=False)


@app.command("check")
def check_command(task: TaskArgument, device_file: WorldArgument, as_json: JsonOption = False) -> None:
    """Run the evaluator on a device file (blocks on the lab's floor, which the file may leave out)."""
    from discogym.suites.redstone.evaluator import evaluate
    from discogym.suites.redstone.lab import read_device

    with user_errors():
        spec = find_task(task)
        report = evaluate(spec, read_device(device_file))
    if as_json:
        print_json({"task": spec.task_id, **report.document()})
    else:
        stdout.print(f"{spec.task_id}: {'passed' if report.passed else 'failed'}", highlight=False)
        for failure in report.failures:
            stdout.print(f"  - {failure}", highlight=False, markup=False)
    raise typer.Exit(0 if report.passed else 1)


@app.command("reference")
def reference_command(
    tasks: Annotated[
        list[str] | None, typer.Argument(metavar="[TASK]...", help="Task ids or files (default: all 25).")
    ] = None,
    out: Annotated[Path, typer.Option(help="Folder for each device's .txt, .schem and .png files.")] = Path(
        "runs/reference-devices"
    ),
    as_json: JsonOption = False,
) -> None:
    """Build the reference device of each task, check it, and write it as a device file, a Sponge schematic
    (with the schematics extra) and pictures (top-down and 3D, at the tick the last lamp turns on)."""
    from discogym.suites.redstone.tasks import packaged_tasks

    with user_errors():
        specs = [find_task(name) for name in tasks] if tasks else list(packaged_tasks())
        out.mkdir(parents=True, exist_ok=True)
        rows = [_write_reference(spec, out) for spec in specs]
    if as_json:
        print_json({"out": str(out), "devices": rows})
    else:
        for row in rows:
            verdict = "passed" if row["passed"] else "FAILED " + "; ".join(row["failures"])
            stdout.print(f"{row['task']:<36} {row['blocks']:>4} blocks  {verdict}", highlight=False, markup=False)
        stdout.print(f"{sum(r['passed'] for r in rows)}/{len(rows)} pass; files in {out}", highlight=False)
    if not all(row["passed"] for row in rows):
        raise typer.Exit(1)


def _write_reference(spec: "TaskSpec", out: Path) -> dict[str, Any]:
    from discogym.suites.redstone import pictures
    from discogym.suites.redstone.builder import build_device
    from discogym.suites.redstone.evaluator import evaluate, region_of
    from discogym.suites.redstone.lab import device_text, lab_world, the_button

    device = build_device(spec)
    report = evaluate(spec, device)
    stem = out / spec.task_id
    header = f"# reference device for {spec.task_id} ({spec.task_name}); stands on the lab's stone floor at y=3\n"
    stem.with_suffix(".txt").write_text(header + device_text(device), encoding="utf-8")
    files = [stem.with_suffix(".txt").name]
    world = lab_world(device, region_of(spec))
    try:
        from discogym.suites.redstone.schematic import write_schematic

        write_schematic(world, stem.with_suffix(".schem"))
        files.append(stem.with_suffix(".schem").name)
    except ImportError:
        pass  # the schematics extra is not installed
    button = the_button(device)
    sim = Simulator(world)
    if not isinstance(button, str):
        sim.press(button)
        sim.run(max([lamp.on or 0 for lamp in report.lamps], default=0))
    state = sim.snapshot()
    (out / f"{spec.task_id}-top.png").write_bytes(pictures.top_down_png(state, layer=region_of(spec).anchor[1]))
    (out / f"{spec.task_id}-iso.png").write_bytes(pictures.iso_png(state))
    files += [f"{spec.task_id}-top.png", f"{spec.task_id}-iso.png"]
    return {
        "task": spec.task_id,
        "passed": report.passed,
        "failures": report.failures,
        "blocks": len(device),
        "files": files,
    }


@app.command("taxonomy")
def taxonomy_command(as_json: JsonOption = False) -> None:
    """SciCrafter's failure taxonomy (Appendix I, Table 11): the working 32-lamp device and 12 failure devices,
    each pressed once; the lamps the paper reports lit beside the lamps our simulator lights."""
    from discogym.suites.redstone.taxonomy import run_taxonomy, taxonomy_document, taxonomy_table

    with user_errors():
        results = run_taxonomy()
    if as_json:
        print_json({"cases": taxonomy_document(results)})
    else:
        stdout.print(taxonomy_table(results))
    if not all(result.agrees for result in results):
        raise typer.Exit(1)
