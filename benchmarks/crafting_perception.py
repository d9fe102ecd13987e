"""Crafting: how well the picture reader recovers the slots, per resolution.

States come from the test split: each task's initial inventory, then the tables along the action-level
optimizer's trajectory for the possible ones, in split order, until ``--states`` are gathered. Each state
is rendered at every resolution and read back. Slot accuracy counts slots read exactly (empty slots
included: all 46 of each picture); type and quantity accuracy count occupied slots whose item (up to
pixel-identical icons) or quantity is right. Time per picture is the reading alone, after templates are built.

    python benchmarks/crafting_perception.py [--states 1000]
"""

import argparse
import time

from discogym.suites.crafting import data
from discogym.suites.crafting.optimizer import _Player, optimize
from discogym.suites.crafting.perception import canonical_item, perceive, templates
from discogym.suites.crafting.recipes import recipe_book
from discogym.suites.crafting.render import RESOLUTIONS, SLOT_POSITIONS, renderer
from discogym.suites.crafting.state import Stack


def gather(count: int) -> list[dict[int, Stack]]:
    """Initial inventories first, then the states along the optimizer's trajectories (deterministic)."""
    book = recipe_book()
    examples = data.load_split("test")
    states = [{i: (s.type, s.quantity) for i, s in e.slotted_inventory.items()} for e in examples][:count]
    for example in examples:
        if len(states) >= count:
            break
        if example.impossible:
            continue
        slots = {i: (s.type, s.quantity) for i, s in example.slotted_inventory.items()}
        result = optimize(book, example.target, slots)
        if result is None:
            continue
        for table in _Player(book, example.target, slots, result.actions).prefixes[1:]:
            states.append(dict(table.slots))
    return states[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=1000)
    states = gather(parser.parse_args().states)
    print(f"{len(states)} states from the test split")
    print(f"{'resolution':<10} {'slots':>8} {'types':>8} {'quantities':>10} {'ms/picture':>10}")
    for resolution in RESOLUTIONS:
        templates(resolution)
        pictures = [renderer().render(slots, resolution) for slots in states]
        slots_right = occupied = types_right = quantities_right = 0
        elapsed = 0.0
        for slots, picture in zip(states, pictures, strict=True):
            started = time.perf_counter()
            read = perceive(picture, resolution)
            elapsed += time.perf_counter() - started
            for index in range(len(SLOT_POSITIONS)):
                want = slots.get(index)
                got = read.get(index)
                if want is not None:
                    want = (canonical_item(want[0]), want[1])
                    occupied += 1
                    types_right += got is not None and got[0] == want[0]
                    quantities_right += got is not None and got[1] == want[1]
                slots_right += got == want
        total = len(states) * len(SLOT_POSITIONS)
        print(
            f"{resolution:<10} {slots_right / total:>8.2%} {types_right / occupied:>8.2%} "
            f"{quantities_right / occupied:>10.2%} {1000 * elapsed / len(states):>10.1f}"
        )


if __name__ == "__main__":
    main()
