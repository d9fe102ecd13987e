"""Crafting: how well the picture reader recovers the slots, per resolution.

States come from the test split: each task's initial inventory, then the tables along the action-level
optimizer's trajectory for the possible ones, in split order, until ``--states`` are gathered. Each state
is rendered at every resolution and read back. ``slots`` counts slots read exactly (empty slots included:
all 46 of each picture), ``fitting`` slots whose true stack is the reading or one of its ``alike`` stacks
(stacks that draw the same square); ``types`` and ``quantities`` count occupied slots whose item or quantity
is read right; ``alike`` is how many slots the reader flagged as ambiguous. Time per picture is the reading
alone, with squares read before looked up as in an episode (``cold ms``: on the first 100 pictures, forgetting
every reading before each); building a resolution's templates is timed on its own.

    python benchmarks/crafting_perception.py [--states 1000]
"""

import argparse
import time

from PIL import Image

from discogym.suites.crafting import data
from discogym.suites.crafting.optimizer import _Player, optimize
from discogym.suites.crafting.perception import read_table, templates
from discogym.suites.crafting.recipes import recipe_book
from discogym.suites.crafting.render import RESOLUTIONS, SLOT_POSITIONS, Resolution, renderer
from discogym.suites.crafting.state import Stack

COLD_PICTURES = 100


def gather(count: int) -> list[dict[int, Stack]]:
    """Initial inventories first, then the states along the optimizer's trajectories (deterministic)."""
    book = recipe_book()
    examples = data.load_split("test")
    states = [example.table() for example in examples][:count]
    for example in examples:
        if len(states) >= count:
            break
        if example.impossible:
            continue
        slots = example.table()
        result = optimize(book, example.target, slots)
        if result is None:
            continue
        for table in _Player(book, example.target, slots, result.actions).prefixes[1:]:
            states.append(dict(table.slots))
    return states[:count]


def visible(stack: Stack | None) -> Stack | None:
    """What a picture can show of a slot: a single ``air`` (Minecraft's empty slot; a few test tables hold
    one) draws nothing."""
    return None if stack == ("air", 1) else stack


def _cold_milliseconds(pictures: list[Image.Image], resolution: Resolution) -> float:
    """Milliseconds per picture when none of its squares has been read before."""
    elapsed = 0.0
    for picture in pictures:
        templates(resolution).forget()
        started = time.perf_counter()
        read_table(picture, resolution)
        elapsed += time.perf_counter() - started
    return 1000 * elapsed / len(pictures)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=1000)
    states = gather(parser.parse_args().states)
    print(f"{len(states)} states from the test split")
    print(
        f"{'resolution':<10} {'slots':>8} {'fitting':>8} {'types':>8} {'quantities':>10} {'alike':>6} "
        f"{'ms/picture':>10} {'cold ms':>8} {'templates s':>11}"
    )
    for resolution in RESOLUTIONS:
        started = time.perf_counter()
        templates(resolution)
        built = time.perf_counter() - started
        pictures = [renderer().render(slots, resolution) for slots in states]
        exact = fitting = occupied = types_right = quantities_right = alike = 0
        elapsed = 0.0
        for slots, picture in zip(states, pictures, strict=True):
            started = time.perf_counter()
            reading = read_table(picture, resolution)
            elapsed += time.perf_counter() - started
            alike += len(reading.alike)
            for index in range(len(SLOT_POSITIONS)):
                want = visible(slots.get(index))
                got = reading.slots.get(index)
                exact += got == want
                fitting += reading.fits(index, want)
                if want is not None:
                    occupied += 1
                    types_right += got is not None and got[0] == want[0]
                    quantities_right += got is not None and got[1] == want[1]
        cold = _cold_milliseconds(pictures[:COLD_PICTURES], resolution)
        total = len(states) * len(SLOT_POSITIONS)
        print(
            f"{resolution:<10} {exact / total:>8.3%} {fitting / total:>8.3%} {types_right / occupied:>8.3%} "
            f"{quantities_right / occupied:>10.3%} {alike:>6} {1000 * elapsed / len(states):>10.1f} {cold:>8.1f} "
            f"{built:>11.2f}"
        )


if __name__ == "__main__":
    main()
