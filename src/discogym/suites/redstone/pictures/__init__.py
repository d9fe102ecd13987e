"""Views of a redstone world: text layers, and top-down, per-layer and isometric PNG pictures.

Every view takes a :class:`World` and shows the block states it holds (the simulator computes dust power
and connections, ``lit``, ``powered`` and ``locked``); nothing here simulates. Coordinates: x east, y up,
z south. Views are deterministic: the same world gives the same text and the same PNG bytes.

Text (:func:`text_layers`): one grid per y layer, lowest layer first (the order one builds in), x to the
right and z downwards, each block one character:

====================  ===========================================================================
``.``                 air
``#`` / ``G``         stone / glass
``L`` / ``l``         lamp, lit / unlit
``0``-``f``           redstone dust: its power in hexadecimal (``0`` off, ``f`` = 15)
``>`` ``<`` ``^`` v   repeater, the arrow pointing where the signal leaves (facing=west: ``>``)
``T`` / ``t``         torch or wall torch, lit / unlit
``P`` / ``p``         stone button, pressed / not pressed (``B``/``b`` would clash with dust power 11)
====================  ===========================================================================

Under each grid, one line for every block whose character does not say everything: a repeater's delay and
whether it is powered or locked, the wall a wall torch hangs on, the wall or ceiling a button is on.

Pictures: :func:`top_down_png` (one layer, or the topmost block of each column), :func:`layers_png` (every
layer with blocks, side by side) and :func:`iso_png` (a 3D view from above the south-east corner: east runs
down-right, south down-left). Colours: stone grey, glass pale blue, lamp bright yellow when lit and brown
when not, dust from dark to bright red by power (Minecraft's own dust colours), repeaters a grey slab with
an arrow (red when powered, a dark bar across when locked) and, top-down, the delay in the corner; torches
red when lit, dark when not; buttons grey, orange while pressed. Components are drawn over a pale tint of
the block they stand on.

Modules: :mod:`.text` (the text grids), :mod:`.top_down` (top-down and per-layer pictures), :mod:`.iso` (the 3D
picture) and :mod:`.paint` (colours and shapes the pictures share). Import from this package; its ``__all__``
is the public surface.
"""

from discogym.suites.redstone.blocks import prop
from discogym.suites.redstone.pictures.iso import iso_pixel, iso_png, iso_size, readable_scale
from discogym.suites.redstone.pictures.paint import (
    BACKGROUND,
    BUTTON_PRESSED,
    BUTTON_UP,
    GLASS_COLOUR,
    LAMP_LIT,
    LAMP_UNLIT,
    SIGNAL_OFF,
    SIGNAL_ON,
    STONE_COLOUR,
    TORCH_LIT,
    TORCH_UNLIT,
    block_colour,
    dust_colour,
)
from discogym.suites.redstone.pictures.text import LEGEND, block_char, block_note, layer_ys, text_layers
from discogym.suites.redstone.pictures.top_down import (
    LAYERS_PER_ROW,
    layers_layout,
    layers_png,
    top_down_cell,
    top_down_png,
    top_down_size,
)

__all__ = [
    "BACKGROUND",
    "BUTTON_PRESSED",
    "BUTTON_UP",
    "GLASS_COLOUR",
    "LAMP_LIT",
    "LAMP_UNLIT",
    "LAYERS_PER_ROW",
    "LEGEND",
    "SIGNAL_OFF",
    "SIGNAL_ON",
    "STONE_COLOUR",
    "TORCH_LIT",
    "TORCH_UNLIT",
    "block_char",
    "block_colour",
    "block_note",
    "dust_colour",
    "iso_pixel",
    "iso_png",
    "iso_size",
    "layer_ys",
    "layers_layout",
    "layers_png",
    "prop",
    "readable_scale",
    "text_layers",
    "top_down_cell",
    "top_down_png",
    "top_down_size",
]
