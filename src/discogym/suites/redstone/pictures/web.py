"""The web app's play screen of a redstone task (``RedstoneEnv.view``), drawn by ``static/screens/redstone.js``.

The view holds what the agent can read through its tools and nothing of the evaluator's: the build region one
y layer at a time (top-down pictures from the floor up to the layer above the highest block, with the cell
geometry that maps a click to x and z), the 3D picture of the device on the floor under it, the blocks with their
states, the task's palette with the properties a placement may set, the game tick, the trials and the tick of the
last press. Pictures are those of :mod:`.top_down` and :mod:`.iso`; each is kept while what it shows is unchanged,
so a call that edits one layer draws one or two layer pictures and the 3D picture again, and a call that changes
nothing draws none.
"""

import base64
from collections.abc import Sequence
from typing import Any

from discogym.suites.redstone.blocks import (
    AIR,
    BUTTON,
    COMPUTED,
    PROPERTIES,
    REPEATER,
    TORCH,
    WALL_TORCH,
    Block,
    Pos,
    make_block,
)
from discogym.suites.redstone.lab import Region, device_of, the_button
from discogym.suites.redstone.pictures.iso import iso_png
from discogym.suites.redstone.pictures.paint import block_colour
from discogym.suites.redstone.pictures.top_down import top_down_cell, top_down_png, top_down_size
from discogym.suites.redstone.world import World

KIND = "redstone"
SCALE = 24  # pixels per cell of the layer pictures
NOTES = {  # what the brief says of the properties, beside the select boxes
    REPEATER: "facing = the side its input comes from",
    WALL_TORCH: "facing points away from the wall it hangs on",
    BUTTON: "a wall button faces away from its wall; face=floor stands on the block below",
}

Items = tuple[tuple[Pos, Block], ...]


class ScreenPictures:
    """The pictures of the last view, each with what it showed, so an unchanged picture is not drawn again."""

    def __init__(self) -> None:
        self.layers: dict[int, tuple[tuple[Items, Items], str]] = {}
        self.iso: tuple[Items, str] | None = None

    def layer(self, world: World, y: int, by_y: dict[int, list[tuple[Pos, Block]]]) -> str:
        """Layer ``y``'s top-down picture (it shows the blocks at ``y`` over those at ``y - 1``)."""
        key = (tuple(by_y.get(y, ())), tuple(by_y.get(y - 1, ())))
        kept = self.layers.get(y)
        if kept is None or kept[0] != key:
            kept = key, data_url(top_down_png(world, y, SCALE))
            self.layers[y] = kept
        return kept[1]

    def device(self, world: World, region: Region) -> str | None:
        """The 3D picture of the device on the floor under it (one block around it), or None when it is empty."""
        device = device_of(world, region)
        if not device:
            return None
        key = tuple(sorted(device.items()))
        if self.iso is None or self.iso[0] != key:
            xs = [x for x, _, _ in device]
            zs = [z for _, _, z in device]
            floor = {
                (x, y, z): block
                for (x, y, z), block in region.floor().items()
                if min(xs) - 1 <= x <= max(xs) + 1 and min(zs) - 1 <= z <= max(zs) + 1
            }
            self.iso = key, data_url(iso_png(World({**floor, **device})))
        return self.iso[1]


def data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def palette(allowed_blocks: Sequence[str]) -> list[dict[str, Any]]:
    """The blocks a person may place (air is the screen's remove mode), each with the properties a placement sets
    (the computed ones left out) and their values, Minecraft's default first."""
    blocks = list(allowed_blocks)
    if TORCH in blocks and WALL_TORCH not in blocks:  # the same item in the game (as set_block reads it)
        blocks.insert(blocks.index(TORCH) + 1, WALL_TORCH)
    entries = []
    for block_id in blocks:
        if block_id == AIR or block_id not in PROPERTIES:
            continue
        red, green, blue = block_colour(make_block(block_id))
        entry: dict[str, Any] = {
            "block": block_id,
            "name": block_id.removeprefix("minecraft:"),
            "colour": f"#{red:02x}{green:02x}{blue:02x}",
            "properties": {name: list(values) for name, values in PROPERTIES[block_id].items() if name not in COMPUTED},
        }
        if block_id in NOTES:
            entry["note"] = NOTES[block_id]
        entries.append(entry)
    return entries


def screen_view(
    world: World,
    region: Region,
    allowed_blocks: Sequence[str],
    pictures: ScreenPictures,
    *,
    tick: int,
    trials_used: int,
    trials_limit: int,
    last_press: int | None,
) -> dict[str, Any]:
    """The view of the lab ``world`` (the floor and the device, with the simulator's current states)."""
    ax, ay, az = region.anchor
    r = region.radius
    top = ay + r
    (x0, _, z0), (x1, _, z1) = world.bounds()  # the floor's: the region's footprint
    by_y: dict[int, list[tuple[Pos, Block]]] = {}
    for pos, block in world:
        by_y.setdefault(pos[1], []).append((pos, block))
    device = device_of(world, region)
    highest = max((y for _, y, _ in device), default=ay - 1)
    ys = range(ay, min(top, highest + 1) + 1)
    width, height = top_down_size(world, SCALE)
    left, top_px = top_down_cell(world, x0, z0, SCALE)
    button = the_button(device)
    return {
        "kind": KIND,
        "region": {"x": [ax - r, ax + r], "y": [ay, top], "z": [az - r, az + r], "floor_y": region.floor_y},
        "grid": {
            "scale": SCALE,
            "width": width,
            "height": height,
            "left": left,
            "top": top_px,
            "x0": x0,
            "z0": z0,
            "columns": x1 - x0 + 1,
            "rows": z1 - z0 + 1,
        },
        "layers": [
            {
                "y": y,
                "blocks": sum(1 for pos in device if pos[1] == y),
                "picture": pictures.layer(world, y, by_y),
            }
            for y in ys
        ],
        "blocks": [{"pos": list(pos), "block": str(block)} for pos, block in sorted(device.items())],
        "iso": pictures.device(world, region),
        "palette": palette(allowed_blocks),
        "tick": tick,
        "trials": {"used": trials_used, "limit": trials_limit, "left": trials_limit - trials_used},
        "last_press": last_press,
        "button": list(button) if not isinstance(button, str) else None,
    }
