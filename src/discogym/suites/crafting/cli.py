"""``discogym crafting ...``: Plancraft's data (cache, fetch, counts) and the generator of new task sets."""

from pathlib import Path
from typing import Annotated, Any

import typer

from discogym.core.terminal.console import JsonOption, print_json, stdout, user_errors
from discogym.suites.crafting import data

app = typer.Typer(help="Plancraft maintenance: the data wheel and generated task sets.", no_args_is_help=True)


def data_document(loaded: bool) -> dict[str, Any]:
    """The cache state, and when the data is there, what it holds."""
    document = data.data_status()
    if not loaded:
        return document
    from discogym.suites.crafting.recipes import recipe_book

    book = recipe_book()
    document["counts"] = {
        "items": len(book.items),
        "icons": len(data.icon_names()),
        "shaped": book.count("shaped"),
        "shapeless": book.count("shapeless"),
        "smelting": book.count("smelting"),
        "splits": {name: len(data.load_split(name)) for name in data.SPLITS},
    }
    return document


@app.command("data")
def data_command(
    fetch: Annotated[bool, typer.Option(help="Download the wheel from PyPI if it is not cached yet.")] = False,
    wheel: Annotated[
        Path | None, typer.Option(help="Install a wheel you downloaded yourself (its checksum is checked).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Where Plancraft's data is cached and what it holds; --fetch or --wheel provide it."""
    with user_errors():
        if wheel is not None:
            data.install_wheel(wheel)
        elif fetch and data.find_wheel() is None:
            data.fetch_wheel()
        document = data_document(loaded=data.find_wheel() is not None)
    if as_json:
        print_json(document)
        return
    if not document["available"]:
        stdout.print(data.offline_help(), highlight=False)
        return
    stdout.print(f"plancraft {document['version']} wheel: {document['wheel']}", highlight=False)
    counts = document["counts"]
    stdout.print(
        f"{counts['items']} items, {counts['icons']} icons; recipes: {counts['shaped']} shaped, "
        f"{counts['shapeless']} shapeless, {counts['smelting']} smelting",
        highlight=False,
    )
    stdout.print("splits: " + ", ".join(f"{name} {n}" for name, n in counts["splits"].items()), highlight=False)


@app.command("generate")
def generate_command(
    out: Annotated[Path, typer.Option(help="JSON file to write; run it with `discogym run crafting --split FILE`.")],
    seed: Annotated[int, typer.Option(min=0, help="Generator seed: the same seed gives the same file.")] = 0,
    count: Annotated[int, typer.Option(min=1, max=100_000, help="How many tasks.")] = 100,
    impossible_fraction: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Share of impossible tasks (the official splits have 1/6).")
    ] = 0.2,
    as_json: JsonOption = False,
) -> None:
    """Make a new task set the way the paper made its own: fresh, uncontaminated, checked by the planner."""
    from collections import Counter

    from discogym.suites.crafting.generate import generate_examples, write_task_file

    with user_errors():
        examples = generate_examples(seed, count, impossible_fraction=impossible_fraction)
        write_task_file(out, examples)
    splits = Counter(example.complexity_split for example in examples)
    by_difficulty = dict(sorted(splits.items()))
    if as_json:
        print_json({"out": str(out), "seed": seed, "tasks": len(examples), "by_difficulty": by_difficulty})
        return
    spread = ", ".join(f"{name} {n}" for name, n in by_difficulty.items())
    stdout.print(f"{len(examples)} tasks written to {out} ({spread})", highlight=False)


@app.command("perceive")
def perceive_command(
    image: Annotated[Path, typer.Argument(help="A crafting-table picture (PNG) at high, medium or low resolution.")],
    as_json: JsonOption = False,
) -> None:
    """Read a crafting-table picture back into its slots, by template matching against the renderer's icons."""
    from discogym.suites.crafting.perception import read_file
    from discogym.suites.crafting.state import slot_name

    with user_errors():
        reading = read_file(image)
    if as_json:
        print_json(
            {
                "image": str(image),
                "resolution": reading.resolution,
                "slots": [
                    {
                        "slot": index,
                        "name": slot_name(index),
                        "item": item,
                        "quantity": n,
                        "alike": [{"item": other, "quantity": m} for other, m in reading.alike.get(index, ())],
                    }
                    for index, (item, n) in sorted(reading.slots.items())
                ],
            }
        )
        return
    for index, (item, quantity) in sorted(reading.slots.items()):
        alike = ", ".join(f"{other} {m}" for other, m in reading.alike.get(index, ()))
        note = f"  (the picture is the same for: {alike})" if alike else ""
        stdout.print(f"{slot_name(index)} {item} {quantity}{note}", highlight=False, markup=False)
