"""Views of a redstone world: the text layers, and the top-down, per-layer and isometric pictures."""

import io

import pytest
from PIL import Image

from discogym.suites.redstone.blocks import Block, make_block
from discogym.suites.redstone.pictures import (
    LAMP_LIT,
    LAMP_UNLIT,
    STONE_COLOUR,
    dust_colour,
    iso_pixel,
    iso_png,
    iso_size,
    layers_layout,
    layers_png,
    readable_scale,
    text_layers,
    top_down_cell,
    top_down_png,
    top_down_size,
)
from discogym.suites.redstone.world import World

Pos = tuple[int, int, int]


def circuit(lamp_lit: bool = True, power: int = 15) -> World:
    """Stone at y=0 (x -1..3, and -1,0,1); on it a torch, two dust, a repeater facing west, a lamp, a button
    and a wall torch hanging on the lamp; states as the simulator would write them."""
    blocks: dict[Pos, Block] = {(x, 0, 0): make_block("stone") for x in range(-1, 4)}
    blocks[(-1, 0, 1)] = make_block("stone")
    blocks[(-1, 1, 0)] = make_block("redstone_torch", lit="true")
    blocks[(0, 1, 0)] = make_block("redstone_wire", power=str(power), east="side", west="side")
    blocks[(1, 1, 0)] = make_block("redstone_wire", power=str(max(power - 1, 0)), east="side", west="side")
    blocks[(2, 1, 0)] = make_block("redstone_repeater", facing="west", delay="2", powered="true")
    blocks[(3, 1, 0)] = make_block("redstone_lamp", lit=str(lamp_lit).lower())
    blocks[(-1, 1, 1)] = make_block("stone_button", face="floor")
    blocks[(3, 1, 1)] = make_block("redstone_wall_torch", facing="south", lit="false")
    return World(blocks)


def picture(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    return image.convert("RGB")


def cell_centre(world: World, x: int, z: int, scale: int) -> tuple[int, int]:
    left, top = top_down_cell(world, x, z, scale)
    return left + scale // 2, top + scale // 2


# ---------------------------------------------------------------------------------------------- text

EXPECTED_TEXT = """\
y=0
z\\x -1  0  1  2  3
  0  #  #  #  #  #
  1  #  .  .  .  .
y=1
z\\x -1  0  1  2  3
  0  T  f  e  >  L
  1  p  .  .  .  t
  repeater at 2,1,0: delay 2, powered
  wall torch at 3,1,1: on the block to its north
legend:
  .        air
  #        stone
  L l      lamp, lit / unlit
  0-f      redstone dust, its power in hex (0 = off, f = 15)
  > < ^ v  repeater, the arrow pointing where the signal leaves
  T t      torch or wall torch, lit / unlit
  P p      stone button, pressed / not pressed
"""


def test_text_layers_exact_grid() -> None:
    assert text_layers(circuit()) == EXPECTED_TEXT


def test_text_states_change_characters() -> None:
    text = text_layers(circuit(lamp_lit=False, power=10), layers=[1])
    assert text.splitlines()[:4] == ["y=1", "z\\x -1  0  1  2  3", "  0  T  a  9  >  l", "  1  p  .  .  .  t"]
    pressed = World(
        {(0, 0, 0): make_block("stone"), (0, 1, 0): make_block("stone_button", face="floor", powered="true")}
    )
    assert text_layers(pressed).splitlines()[5] == "  0 P"


@pytest.mark.parametrize(("facing", "arrow"), [("west", ">"), ("east", "<"), ("north", "v"), ("south", "^")])
def test_repeater_arrow_points_where_the_signal_leaves(facing: str, arrow: str) -> None:
    world = World({(0, 0, 0): make_block("stone"), (0, 1, 0): make_block("redstone_repeater", facing=facing)})
    lines = text_layers(world, layers=[1]).splitlines()
    assert lines[2] == f"  0 {arrow}"
    assert lines[3] == "  repeater at 0,1,0: delay 1"


def test_text_layers_selection_and_empty_world() -> None:
    text = text_layers(circuit(), layers=[5, 0, 0])
    titles = [line for line in text.splitlines() if line.startswith("y=")]
    assert titles == ["y=0", "y=5"]
    assert "  0  .  .  .  .  ." in text
    assert text_layers(World()) == "empty world\n"


def test_text_notes_for_wall_and_ceiling_buttons() -> None:
    blocks = {
        (0, 1, 0): make_block("stone"),
        (1, 1, 0): make_block("stone_button", face="wall", facing="east", powered="true"),
        (0, 0, 0): make_block("stone_button", face="ceiling"),
        (0, 1, 1): make_block("redstone_repeater", facing="north", delay="4", locked="true"),
        (0, 0, 1): make_block("stone"),
    }
    text = text_layers(World(blocks))
    assert "  button at 0,0,0: on the block above" in text
    assert "  button at 1,1,0: on the block to its west" in text
    assert "  repeater at 0,1,1: delay 4, locked" in text


# ---------------------------------------------------------------------------------------------- top-down


def test_top_down_size_and_lamp_colour() -> None:
    lit, unlit = circuit(), circuit(lamp_lit=False)
    image = picture(top_down_png(lit, layer=1))
    assert image.size == top_down_size(lit) == (6 * 24 + 1, 4 * 24 + 1)  # 5 columns and 2 rows plus labels
    assert image.getpixel(cell_centre(lit, 3, 0, 24)) == LAMP_LIT
    assert picture(top_down_png(unlit, layer=1)).getpixel(cell_centre(unlit, 3, 0, 24)) == LAMP_UNLIT
    assert picture(top_down_png(lit, layer=0)).getpixel(cell_centre(lit, 3, 0, 24)) == STONE_COLOUR


def test_top_down_map_shows_the_topmost_block() -> None:
    world = circuit(lamp_lit=False)
    image = picture(top_down_png(world, scale=30))
    assert image.size == (6 * 30 + 1, 4 * 30 + 1)
    assert image.getpixel(cell_centre(world, 3, 0, 30)) == LAMP_UNLIT
    assert image.getpixel(cell_centre(world, 0, 0, 30)) == dust_colour(15)


def test_top_down_dust_shade_follows_power() -> None:
    bright, dark = circuit(power=15), circuit(power=1)
    assert picture(top_down_png(bright, 1)).getpixel(cell_centre(bright, 0, 0, 24)) == dust_colour(15)
    assert picture(top_down_png(dark, 1)).getpixel(cell_centre(dark, 0, 0, 24)) == dust_colour(1)
    assert dust_colour(15) != dust_colour(1)


def test_top_down_deterministic_and_state_dependent() -> None:
    assert top_down_png(circuit(), 1) == top_down_png(circuit(), 1)
    assert top_down_png(circuit(), 1) != top_down_png(circuit(lamp_lit=False), 1)
    assert top_down_png(circuit(), 1) != top_down_png(circuit(power=12), 1)
    with pytest.raises(ValueError, match="scale"):
        top_down_png(circuit(), 1, scale=4)


# ---------------------------------------------------------------------------------------------- layers


def test_layers_png_panels() -> None:
    world = circuit()
    image = picture(layers_png(world))
    width, height = top_down_size(world)
    assert image.size == (2 * width + 12, height)  # two layers side by side, half a cell apart
    size, panels = layers_layout(world)
    assert size == image.size
    assert panels == [(0, (0, 0)), (1, (width + 12, 0))]
    x, y = cell_centre(world, 3, 0, 24)
    assert image.getpixel((x, y)) == STONE_COLOUR
    assert image.getpixel((width + 12 + x, y)) == LAMP_LIT
    dark = picture(layers_png(circuit(lamp_lit=False)))
    assert dark.getpixel((width + 12 + x, y)) == LAMP_UNLIT


def test_layers_png_wraps_after_four_layers() -> None:
    world = World({(0, y, 0): make_block("stone") for y in range(6)})
    width, height = top_down_size(world, 10)
    size, panels = layers_layout(world, 10)
    assert size == (4 * width + 3 * 5, 2 * height + 5)
    assert panels[4] == (4, (0, height + 5))
    assert picture(layers_png(world, 10)).size == size


def test_layers_png_deterministic_and_state_dependent() -> None:
    assert layers_png(circuit()) == layers_png(circuit())
    assert layers_png(circuit()) != layers_png(circuit(lamp_lit=False))


# ---------------------------------------------------------------------------------------------- isometric


def test_iso_size_and_lamp_colour() -> None:
    lit, unlit = circuit(), circuit(lamp_lit=False)
    # extent 5 x 2 x 2 blocks: width (5 + 2) * 16 + 2 * 16, height (5 + 2) * 8 + 2 * 16 + 2 * 16
    assert picture(iso_png(lit, 16)).size == iso_size(lit, 16) == (144, 120)
    image = picture(iso_png(lit))
    # by default a small world is drawn larger: ceil(400 / (5 + 2 + 2)) = 45 pixels a block
    assert readable_scale(lit) == 45
    assert image.size == iso_size(lit) == iso_size(lit, 45) == (405, 338)
    top_of_lamp = (3.5, 2, 0.5)
    assert image.getpixel(iso_pixel(lit, top_of_lamp)) == LAMP_LIT
    assert picture(iso_png(unlit)).getpixel(iso_pixel(unlit, top_of_lamp)) == LAMP_UNLIT


def test_iso_default_is_readable_for_small_worlds_and_bounded_for_large_ones() -> None:
    one_block = World({(0, 0, 0): make_block("stone")})
    assert picture(iso_png(one_block)).size[0] >= 400
    floor = World({(x, 0, z): make_block("stone") for x in range(40) for z in range(40)})
    assert readable_scale(floor) == 16  # as large as before: 16 pixels a block
    assert iso_size(floor) == iso_size(floor, 16)


def test_iso_draws_nearer_blocks_over_farther_ones() -> None:
    world = World({(0, 0, 0): make_block("redstone_lamp", lit="true"), (1, 1, 0): make_block("stone")})
    image = picture(iso_png(world, 20))
    hidden = image.getpixel(iso_pixel(world, (0.7, 1, 0.3), 20))  # behind the stone's south face
    assert isinstance(hidden, tuple)
    assert hidden != LAMP_LIT
    assert hidden[0] == hidden[1] == hidden[2]  # grey
    assert image.getpixel(iso_pixel(world, (0.3, 1, 0.7), 20)) == LAMP_LIT  # in the open


def test_iso_glass_is_see_through() -> None:
    behind = {(0, 0, 0): make_block("redstone_lamp", lit="true")}
    with_glass = World({**behind, (1, 1, 1): make_block("glass")})
    centre = iso_pixel(with_glass, (0.7, 1, 0.6), 20)
    colour = picture(iso_png(with_glass, 20)).getpixel(centre)
    assert isinstance(colour, tuple)
    assert colour != LAMP_LIT
    assert colour[0] > colour[2] + 40  # the yellow lamp shows through the pale blue glass


def test_iso_deterministic_and_state_dependent() -> None:
    assert iso_png(circuit()) == iso_png(circuit())
    assert iso_png(circuit()) != iso_png(circuit(lamp_lit=False))
    assert iso_png(circuit()) != iso_png(circuit(power=3))


def test_every_block_shape_renders() -> None:
    blocks: dict[Pos, Block] = {(x, 0, z): make_block("stone") for x in range(6) for z in range(6)}
    blocks[(2, 1, 2)] = make_block("glass")
    for i, facing in enumerate(("north", "east", "south", "west")):
        blocks[(i, 1, 0)] = make_block("redstone_repeater", facing=facing, locked=str(i % 2 == 0).lower())
        blocks[(i, 1, 5)] = make_block("stone_button", face="floor", facing=facing, powered=str(i % 2 == 1).lower())
    blocks[(1, 1, 2)] = make_block("redstone_wall_torch", facing="west", lit="true")
    blocks[(3, 1, 2)] = make_block("redstone_wall_torch", facing="east", lit="false")
    blocks[(2, 1, 1)] = make_block("stone_button", face="wall", facing="north", powered="true")
    blocks[(2, 2, 2)] = make_block("redstone_wire", power="7", north="up", south="side")
    blocks[(2, 1, 3)] = make_block("redstone_wire", power="8", north="up")
    blocks[(5, 1, 5)] = make_block("redstone_wire")  # no connections recorded: a cross
    blocks[(4, 1, 4)] = make_block("redstone_torch", lit="false")
    blocks[(5, 2, 2)] = make_block("stone")
    blocks[(5, 1, 2)] = make_block("stone_button", face="ceiling")
    world = World(blocks)
    for png in (top_down_png(world), top_down_png(world, 1), layers_png(world, 12), iso_png(world, 8)):
        assert picture(png).size[0] > 0
    assert "G" in text_layers(world)
