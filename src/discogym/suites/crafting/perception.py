"""Reading Plancraft's crafting-table picture back into slots, by template matching.

Every slot's square in a picture from :mod:`discogym.suites.crafting.render` is the background, or an item's
icon pasted on it with a quantity 1..64 written over; the quantity's digits overwrite their pixels with one
of two flat colours. So the square an (item, quantity) draws is the item's patch (icon on background) with
the quantity's pixels replaced, and its squared difference from an observed square splits into a part that
depends on the item alone and parts that are one matrix product over the 64 quantities.

For each slot the reader first ranks every item on a sparse sample of the pixels no quantity covers, keeps
the closest few (with all ties), then scores each kept item with every quantity, and the empty slot, exactly
in integers. The least difference wins; stacks that score exactly as well are reported as ``alike``: on a
picture the renderer drew they draw the very same square (two items sharing an icon, a quantity hiding the
pixels where two icons differ), so nothing in the picture tells them apart. Among them the reading is the
empty slot, else the shortest item name, else the smallest quantity. A single item whose icon is fully
transparent (``air``, Minecraft's empty slot) draws an empty slot and is never read.
"""

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from discogym.core import UserError
from discogym.suites.crafting.data import icon_names
from discogym.suites.crafting.render import (
    DIVISORS,
    MAX_QUANTITY,
    RESOLUTIONS,
    SLOT_POSITIONS,
    SQUARE,
    Resolution,
    renderer,
)
from discogym.suites.crafting.state import Stack

_SHORTLIST = 4  # items kept after the quantity-blind ranking (more when they tie)
_CACHE_LIMIT = 4096  # squares whose reading is kept per resolution (tables repeat most squares from step to step)
_SAMPLE_STEP = 4  # the ranking looks at one high-resolution pixel in 4x4 (every pixel at low resolution)
_BLACK, _WHITE = (0, 0, 0), (255, 255, 255)


def _shrink(patch: Image.Image, resolution: Resolution) -> NDArray[np.int32]:
    """A square patch downscaled as the renderer downscales the picture, as (pixels, 3) integers.

    Slot corners are multiples of 4, so nearest-neighbour picks the same pixels of a slot's square
    whether the square is downscaled alone or inside the whole picture."""
    divisor = DIVISORS[resolution]
    if divisor > 1:
        patch = patch.resize((SQUARE // divisor, SQUARE // divisor), Image.Resampling.NEAREST)
    return np.asarray(patch.convert("RGB"), dtype=np.int32).reshape(-1, 3)


def _transparent(icon: Image.Image | None) -> bool:
    return icon is None or icon.getchannel("A").getextrema()[1] == 0


@dataclass(frozen=True)
class Reading:
    """What a picture shows.

    ``slots`` maps slot index -> (item, quantity) for every slot read as holding something. ``alike`` maps
    the few slots whose square other stacks draw exactly as well to those other stacks (never the empty
    slot: when the empty slot fits as well, it is the reading)."""

    resolution: Resolution
    slots: dict[int, Stack]
    alike: dict[int, tuple[Stack, ...]]

    def fits(self, index: int, stack: Stack | None) -> bool:
        """Whether ``stack`` (None: empty) in slot ``index`` is the reading or one of its alike stacks."""
        return stack == self.slots.get(index) or (stack is not None and stack in self.alike.get(index, ()))


class _Templates:
    """One resolution's templates: each item's patch without quantity, and each quantity's pixels."""

    def __init__(self, resolution: Resolution) -> None:
        drawer = renderer()
        # Items in the order ties are broken: the shorter, plainer name first.
        self.items: list[str] = sorted(icon_names(), key=lambda name: (len(name), name))
        # Items whose icon is fully transparent (air): one of them is an empty slot, so it is never read.
        self.invisible = {item for item in self.items if _transparent(drawer.icon(item))}
        self.empty: dict[bool, NDArray[np.int32]] = {}
        self.patches: dict[bool, NDArray[np.uint8]] = {}
        for output in (True, False):
            background = drawer.empty_square(output)
            self.empty[output] = _shrink(background, resolution)
            patches = []
            for item in self.items:
                patch = background.copy()
                icon = drawer.icon(item)
                if icon is not None:
                    patch.paste(icon, (0, 0), icon)
                patches.append(_shrink(patch, resolution))
            self.patches[output] = np.stack(patches).astype(np.uint8)  # (items, pixels, 3)
        self._quantity_pixels(resolution)
        self._ranking_sample(resolution)
        self._readings: dict[tuple[bool, bytes], list[Stack]] = {}

    def _quantity_pixels(self, resolution: Resolution) -> None:
        """Which pixels each quantity overwrites, and with what: a quantity drawn on black and on white
        changes the same pixels to the same colours (checked by the tests)."""
        masks, colours = [], []
        for quantity in range(1, MAX_QUANTITY + 1):
            drawn = []
            for fill in (_BLACK, _WHITE):
                blank = Image.new("RGB", (SQUARE, SQUARE), fill)
                renderer().draw_quantity(blank, (0, 0), quantity)
                drawn.append(_shrink(blank, resolution))
            on_black, on_white = drawn
            masks.append((on_black != 0).any(axis=1) | (on_white != 255).any(axis=1))
            colours.append(on_black)
        mask = np.stack(masks)  # (64, pixels)
        self.covered = np.flatnonzero(mask.any(axis=0))  # pixels some quantity can overwrite
        self.masks = mask[:, self.covered].astype(np.int32)  # (64, covered)
        self.colours = np.stack(colours)[:, self.covered]  # (64, covered, 3)

    def _ranking_sample(self, resolution: Resolution) -> None:
        side = SQUARE // DIVISORS[resolution]
        step = max(1, _SAMPLE_STEP // DIVISORS[resolution])
        grid = np.zeros((side, side), dtype=bool)
        grid[::step, ::step] = True
        grid.reshape(-1)[self.covered] = False
        self.sample = np.flatnonzero(grid)
        # Float64 products of integers this small are exact, so ties in the ranking are real ties.
        self.vectors = {
            output: self.patches[output][:, self.sample].reshape(len(self.items), -1).astype(np.float64)
            for output in (True, False)
        }
        self.norms = {output: (vectors**2).sum(axis=1) for output, vectors in self.vectors.items()}

    def read(self, output: bool, squares: NDArray[np.int32]) -> list[list[Stack]]:
        """:meth:`read_square` for each square, with the closest items as candidates; squares read before
        (the empty slot, stacks that did not move) are looked up."""
        keys = [(output, square.tobytes()) for square in squares]
        if len(self._readings) + len(keys) > _CACHE_LIMIT:
            self._readings.clear()
        first_seen: dict[tuple[bool, bytes], int] = {}
        for index, key in enumerate(keys):
            if key not in self._readings:
                first_seen.setdefault(key, index)
        new = list(first_seen.values())
        if new:
            for index, candidates in zip(new, self.shortlist(output, squares[new]), strict=True):
                self._readings[keys[index]] = self.read_square(output, squares[index], candidates)
        return [self._readings[key] for key in keys]

    def forget(self) -> None:
        """Drop the readings kept so far (benchmarks time reading squares never seen before)."""
        self._readings.clear()

    def shortlist(self, output: bool, squares: NDArray[np.int32]) -> list[NDArray[np.intp]]:
        """For each observed square, the indices of the items closest on the sampled pixels, in item order."""
        observed = squares[:, self.sample].reshape(len(squares), -1).astype(np.float64)
        distances = self.norms[output][None, :] - 2 * observed @ self.vectors[output].T
        keep = min(_SHORTLIST, len(self.items)) - 1
        cutoffs = np.partition(distances, keep, axis=1)[:, keep]
        return [np.flatnonzero(row <= cutoff) for row, cutoff in zip(distances, cutoffs, strict=True)]

    def read_square(self, output: bool, square: NDArray[np.int32], candidates: NDArray[np.intp]) -> list[Stack]:
        """The stacks whose square differs least from ``square``: the empty slot as ``("", 0)`` first, then items
        in tie-breaking order, quantities ascending."""
        # int32 holds every difference summed over a square: at most 68 * 68 pixels * 3 * 255**2 < 2**31.
        patches = self.patches[output][candidates].astype(np.int32)  # (candidates, pixels, 3)
        per_pixel = ((patches - square) ** 2).sum(axis=2)  # (candidates, pixels)
        # Quantity q replaces the covered pixels in its mask with its colours.
        replaced = ((self.colours - square[self.covered]) ** 2).sum(axis=2)  # (64, covered)
        errors = (
            per_pixel.sum(axis=1)[:, None]
            - per_pixel[:, self.covered] @ self.masks.T
            + (self.masks * replaced).sum(axis=1)[None, :]
        )  # (candidates, 64)
        empty_error = int(((self.empty[output] - square) ** 2).sum())
        best = min(empty_error, int(errors.min()))
        found = [(self.items[candidates[i]], int(q) + 1) for i, q in zip(*np.nonzero(errors == best), strict=True)]
        found = [(item, quantity) for item, quantity in found if quantity > 1 or item not in self.invisible]
        return found if empty_error != best else [("", 0), *found]


@cache
def templates(resolution: Resolution) -> _Templates:
    """The resolution's templates (built once per process: about a second each)."""
    return _Templates(resolution)


def infer_resolution(size: tuple[int, int]) -> Resolution:
    """The resolution whose pictures have this (width, height); UserError for any other size."""
    width, height = renderer().background.size
    for resolution in RESOLUTIONS:
        divisor = DIVISORS[resolution]
        if size == (width // divisor, height // divisor):
            return resolution
    expected = ", ".join(f"{width // DIVISORS[r]}x{height // DIVISORS[r]} ({r})" for r in RESOLUTIONS)
    raise UserError(f"picture is {size[0]}x{size[1]}; a crafting-table picture is one of {expected}")


def read_table(image: Image.Image | NDArray[np.uint8], resolution: Resolution | None = None) -> Reading:
    """Read a crafting-table picture (a PIL image or a (height, width, 3) array) into a :class:`Reading`.

    ``resolution`` is inferred from the picture's size when None. Raises UserError for a picture of the wrong
    size or resolution."""
    picture = Image.fromarray(np.asarray(image)) if not isinstance(image, Image.Image) else image
    found = infer_resolution(picture.size)
    if resolution is not None and resolution != found:
        raise UserError(f"picture is {picture.size[0]}x{picture.size[1]}, not a {resolution}-resolution picture")
    table = templates(found)
    divisor = DIVISORS[found]
    side = SQUARE // divisor
    pixels = np.asarray(picture.convert("RGB"), dtype=np.int32)
    squares = np.stack(
        [pixels[y // divisor : y // divisor + side, x // divisor : x // divisor + side] for x, y in SLOT_POSITIONS]
    ).reshape(len(SLOT_POSITIONS), -1, 3)
    slots: dict[int, Stack] = {}
    alike: dict[int, tuple[Stack, ...]] = {}
    for output, first, group in ((True, 0, squares[:1]), (False, 1, squares[1:])):
        for offset, stacks in enumerate(table.read(output, group)):
            index = first + offset
            if stacks and stacks[0][1] > 0:
                slots[index] = stacks[0]
            others = tuple(stack for stack in stacks[1:] if stack[1] > 0)
            if others:
                alike[index] = others
    return Reading(found, slots, alike)


def perceive(
    image: Image.Image | NDArray[np.uint8], resolution: Resolution | None = None
) -> dict[int, tuple[str, int]]:
    """Read a crafting-table picture: slot index -> (item, quantity) for every slot that holds something
    (the ``slots`` of :func:`read_table`)."""
    return read_table(image, resolution).slots


def read_file(path: Path, resolution: Resolution | None = None) -> Reading:
    """Read a picture file; UserError when it is missing or not a picture."""
    try:
        with Image.open(path) as opened:
            picture = opened.convert("RGB")
    except (OSError, ValueError) as error:
        raise UserError(f"cannot read picture {path}: {error}") from error
    return read_table(picture, resolution)
