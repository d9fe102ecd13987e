"""Reading Plancraft's crafting-table picture back into slots, by template matching.

Every slot's square in a picture from :mod:`discogym.suites.crafting.render` is one of a finite set of
patches: the background, or an item's icon pasted on it with a quantity 1..64 written over. For each slot
the reader compares the square with every icon as the renderer pastes it (at the picture's resolution),
ignoring the pixels any quantity can cover, keeps the few closest items, and then compares the whole square
with those items' patches for every quantity, keeping the least squared difference. Templates are drawn
once per resolution with the renderer's own icons, background and font, so a picture the renderer drew is
read back exactly (high resolution; at lower ones two items can share a downscaled icon).
"""

from functools import cache
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from discogym.core.errors import UserError
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

_CANDIDATES = 4  # items kept after the first, quantity-blind comparison
_EMPTY = ""


def _shrink(patch: Image.Image, resolution: Resolution) -> NDArray[np.float32]:
    """A square patch downscaled as the renderer downscales the picture (slot corners are multiples of 4)."""
    divisor = DIVISORS[resolution]
    if divisor > 1:
        patch = patch.resize((SQUARE // divisor, SQUARE // divisor), Image.Resampling.NEAREST)
    return np.asarray(patch.convert("RGB"), dtype=np.float32)


class _Templates:
    """One resolution's templates: item patches without quantity, and the pixels quantities can cover."""

    def __init__(self, resolution: Resolution) -> None:
        self.resolution = resolution
        drawer = renderer()
        # Some items share an icon (stone_bricks and infested_stone_bricks, oak_slab and petrified_oak_slab):
        # on a tie the shorter, plainer name wins, so items are ordered by length then name.
        self.items: list[str] = [_EMPTY, *sorted(icon_names(), key=lambda name: (len(name), name))]
        # Pixels any quantity can touch: draw all quantities on black and on white and see what changed.
        covered = np.zeros((SQUARE, SQUARE), dtype=bool)
        for fill in ((0, 0, 0), (255, 255, 255)):
            blank = Image.new("RGB", (SQUARE, SQUARE), fill)
            reference = np.asarray(blank, dtype=np.int16)
            for quantity in range(2, MAX_QUANTITY + 1):
                drawn = blank.copy()
                drawer.draw_quantity(drawn, (0, 0), quantity)
                covered |= (np.asarray(drawn, dtype=np.int16) != reference).any(axis=2)
        divisor = DIVISORS[resolution]
        side = SQUARE // divisor
        # A downscaled pixel is free when none of the pixels of its block is covered.
        blocks = covered.reshape(side, divisor, side, divisor).any(axis=(1, 3))
        self.free = ~blocks.reshape(-1)
        self.bases: dict[bool, list[Image.Image]] = {}
        self.vectors: dict[bool, NDArray[np.float32]] = {}
        self.norms: dict[bool, NDArray[np.float32]] = {}
        for output in (True, False):
            empty = drawer._empty[output]
            bases = []
            for item in self.items:
                patch = empty.copy()
                icon = drawer.icon(item) if item else None
                if icon is not None:
                    patch.paste(icon, (0, 0), icon)
                bases.append(patch)
            self.bases[output] = bases
            stack = np.stack([_shrink(patch, resolution).reshape(-1, 3)[self.free].reshape(-1) for patch in bases])
            self.vectors[output] = stack
            self.norms[output] = (stack**2).sum(axis=1)
        self.empty = {output: _shrink(self.bases[output][0], resolution).reshape(-1) for output in (True, False)}
        self._full: dict[tuple[bool, int], NDArray[np.float32]] = {}

    def quantities(self, output: bool, index: int) -> NDArray[np.float32]:
        """The item's whole square for quantities 1..64, shape (64, side*side*3) (drawn on first use)."""
        key = (output, index)
        if key not in self._full:
            drawer = renderer()
            arrays = []
            for quantity in range(1, MAX_QUANTITY + 1):
                patch = self.bases[output][index].copy()
                drawer.draw_quantity(patch, (0, 0), quantity)
                arrays.append(_shrink(patch, self.resolution).reshape(-1))
            self._full[key] = np.stack(arrays)
        return self._full[key]


@cache
def templates(resolution: Resolution) -> _Templates:
    """The resolution's templates (built once per process: about a second each)."""
    return _Templates(resolution)


@cache
def _aliases() -> dict[str, str]:
    table = templates("high")
    first: dict[bytes, str] = {}
    aliases = {}
    for item, patch in zip(table.items[1:], table.bases[False][1:], strict=True):
        aliases[item] = first.setdefault(patch.tobytes(), item)
    return aliases


def canonical_item(item: str) -> str:
    """The item the reader reports for ``item``: items with pixel-identical icons read as the plainest name."""
    return _aliases().get(item, item)


def infer_resolution(size: tuple[int, int]) -> Resolution:
    """The resolution whose pictures have this (width, height); UserError for any other size."""
    width, height = renderer().background.size
    for resolution in RESOLUTIONS:
        divisor = DIVISORS[resolution]
        if size == (width // divisor, height // divisor):
            return resolution
    expected = ", ".join(f"{width // DIVISORS[r]}x{height // DIVISORS[r]} ({r})" for r in RESOLUTIONS)
    raise UserError(f"picture is {size[0]}x{size[1]}; a crafting-table picture is one of {expected}")


def perceive(
    image: Image.Image | NDArray[np.uint8], resolution: Resolution | None = None
) -> dict[int, tuple[str, int]]:
    """Read a crafting-table picture: slot index -> (item, quantity) for every slot that holds something.

    ``image`` is a PIL image or an (height, width, 3) array; ``resolution`` is inferred from its size when
    None. Raises UserError for a picture of the wrong size.
    """
    picture = Image.fromarray(np.asarray(image)) if not isinstance(image, Image.Image) else image
    found = infer_resolution(picture.size)
    if resolution is not None and resolution != found:
        raise UserError(f"picture is {picture.size[0]}x{picture.size[1]}, not a {resolution}-resolution picture")
    table = templates(found)
    divisor = DIVISORS[found]
    side = SQUARE // divisor
    pixels = np.asarray(picture.convert("RGB"), dtype=np.float32)
    squares = np.stack(
        [pixels[y // divisor : y // divisor + side, x // divisor : x // divisor + side] for x, y in SLOT_POSITIONS]
    ).reshape(len(SLOT_POSITIONS), -1, 3)
    free = squares[:, table.free].reshape(len(SLOT_POSITIONS), -1)
    slots: dict[int, tuple[str, int]] = {}
    for output, rows in ((True, slice(0, 1)), (False, slice(1, None))):
        observed = free[rows]
        distances = table.norms[output][None, :] - 2 * observed @ table.vectors[output].T
        nearest = np.argsort(distances, axis=1, kind="stable")[:, :_CANDIDATES]
        for offset, candidates in enumerate(nearest):
            index = rows.start + offset
            whole = squares[index].reshape(-1)
            best = (np.inf, _EMPTY, 0)
            for candidate in candidates:
                if candidate == 0:
                    score = float(((table.empty[output] - whole) ** 2).sum())
                    if score < best[0]:
                        best = (score, _EMPTY, 0)
                    continue
                errors = ((table.quantities(output, int(candidate)) - whole) ** 2).sum(axis=1)
                quantity = int(np.argmin(errors))
                if errors[quantity] < best[0]:
                    best = (float(errors[quantity]), table.items[candidate], quantity + 1)
            if best[1]:
                slots[index] = (best[1], best[2])
    return slots


def perceive_file(path: Path, resolution: Resolution | None = None) -> dict[int, tuple[str, int]]:
    """Read a picture file; UserError when it is missing or not a picture."""
    try:
        with Image.open(path) as opened:
            picture = opened.convert("RGB")
    except (OSError, ValueError) as error:
        raise UserError(f"cannot read picture {path}: {error}") from error
    return perceive(picture, resolution)
