"""Redstone worlds to and from Sponge .schem and Litematica .litematic files."""

import gzip
import io
import itertools
from pathlib import Path

import nbtlib
import numpy as np
import pytest
from nbtlib import ByteArray, Compound, File, Int, IntArray, List, Short, String

from discogym.core import UserError
from discogym.suites.redstone.blocks import HORIZONTAL, PROPERTIES, Block, Pos, game_id, make_block, offset
from discogym.suites.redstone.schematic import (
    DATA_VERSION,
    block_state,
    decode_varints,
    encode_varints,
    litematic_bytes,
    parse_block_state,
    read_schematic,
    sponge_bytes,
    write_schematic,
)
from discogym.suites.redstone.world import World

REPEATER_WEST = "minecraft:repeater[delay=2,facing=west,locked=false,powered=false]"  # as the game names it
WIRE_STATES = ("none", "side", "up")
BOOLEAN = ("true", "false")
FACING = ("north", "south", "west", "east")
# The game's block ids, properties and values for the palette (Java Edition 1.21), default value first, from the
# game's block report (``java -DbundlerMainClass=net.minecraft.data.Main -jar server.jar --reports``, file
# reports/blocks.json), as republished in PrismarineJS/minecraft-data, data/pc/1.21.1/blocks.json (the file its
# dataPaths.json names for 1.21). Written out here, independent of the module's tables.
GAME_BLOCKS: dict[str, dict[str, tuple[str, ...]]] = {
    "minecraft:air": {},
    "minecraft:stone": {},
    "minecraft:glass": {},
    "minecraft:redstone_lamp": {"lit": ("false", "true")},
    "minecraft:redstone_wire": {
        "east": ("none", "side", "up"),
        "north": ("none", "side", "up"),
        "power": tuple(str(n) for n in range(16)),
        "south": ("none", "side", "up"),
        "west": ("none", "side", "up"),
    },
    "minecraft:repeater": {
        "delay": ("1", "2", "3", "4"),
        "facing": FACING,
        "locked": ("false", "true"),
        "powered": ("false", "true"),
    },
    "minecraft:redstone_torch": {"lit": BOOLEAN},
    "minecraft:redstone_wall_torch": {"facing": FACING, "lit": BOOLEAN},
    "minecraft:stone_button": {"face": ("wall", "floor", "ceiling"), "facing": FACING, "powered": ("false", "true")},
}
# The palette's name for each block where the game's differs (the paper's, kept by the task files).
PAPER_NAMES = {"minecraft:repeater": "minecraft:redstone_repeater"}


def as_game_writes(state: str) -> str:
    """A palette block state with the game's id (the test's own conversion, independent of the module's)."""
    name, bracket, rest = state.partition("[")
    game = {paper: game for game, paper in PAPER_NAMES.items()}.get(name, name)
    return game + bracket + rest


def split_state(state: str) -> tuple[str, dict[str, str]]:
    """``minecraft:id[k=v,...]`` as (id, properties)."""
    name, _, rest = state.partition("[")
    props = dict(part.split("=") for part in rest.rstrip("]").split(",") if part)
    return name, props


def palette_world() -> World:
    """Every palette block in many states, at negative and positive coordinates; more than 128 distinct states,
    so some palette indices need two varint bytes."""
    blocks: dict[Pos, Block] = {}
    floor: list[Block] = []
    for power, north, east in itertools.product(range(16), WIRE_STATES, WIRE_STATES):
        floor.append(make_block("redstone_wire", power=str(power), north=north, east=east, west="side"))
    for facing, delay, locked, powered in itertools.product(HORIZONTAL, "1234", ("false", "true"), ("false", "true")):
        floor.append(make_block("redstone_repeater", facing=facing, delay=delay, locked=locked, powered=powered))
    floor += [make_block("redstone_torch", lit=lit) for lit in ("true", "false")]
    floor += [
        make_block("stone_button", face="floor", facing=facing, powered=powered)
        for facing, powered in itertools.product(HORIZONTAL, ("false", "true"))
    ]
    # floor components on a stone floor at y = -7, in rows of 20 starting at x = -13, z = -9
    for number, block in enumerate(floor):
        x, z = -13 + 2 * (number % 20), -9 + 2 * (number // 20)
        blocks[(x, -7, z)] = make_block("stone")
        blocks[(x, -6, z)] = block
    # wall torches and wall buttons hang on stone blocks; ceiling buttons hang under them
    column = 0
    for facing in HORIZONTAL:
        wall = [make_block("redstone_wall_torch", facing=facing, lit=lit) for lit in ("true", "false")]
        wall += [make_block("stone_button", face="wall", facing=facing, powered=p) for p in ("false", "true")]
        for block in wall:
            support = (-20 + 4 * column, 3, 30)
            blocks[support] = make_block("stone")
            blocks[offset(support, facing)] = block
            column += 1
    for number, (facing, powered) in enumerate(itertools.product(HORIZONTAL, ("false", "true"))):
        blocks[(5 + 2 * number, 12, -40)] = make_block("glass")
        blocks[(5 + 2 * number, 11, -40)] = make_block("stone_button", face="ceiling", facing=facing, powered=powered)
    blocks[(-30, 0, 0)] = make_block("redstone_lamp", lit="false")
    blocks[(-30, 1, 0)] = make_block("redstone_lamp", lit="true")
    blocks[(-30, 2, 0)] = make_block("glass")
    blocks[(-30, 3, 0)] = make_block("stone")
    return World(blocks)


@pytest.fixture(scope="module")
def world() -> World:
    return palette_world()


def varints(data: bytes) -> list[int]:
    """A varint decoder of the test's own, independent of the module's."""
    values, value, shift = [], 0, 0
    for byte in data:
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            values.append(value)
            value, shift = 0, 0
    assert shift == 0
    return values


def raw_bytes(tag: ByteArray) -> bytes:
    return np.asarray(tag, dtype=np.int8).tobytes()


def gzip_nbt(root: File) -> bytes:
    buffer = io.BytesIO()
    root.write(buffer)
    return gzip.compress(buffer.getvalue())


def test_fixture_world_is_rich(world):
    states = {block_state(block) for _, block in world}
    assert (
        {block.id for _, block in world}
        == {PAPER_NAMES.get(name, name) for name in GAME_BLOCKS} - {"minecraft:air"}
        == {
            "minecraft:stone",
            "minecraft:glass",
            "minecraft:redstone_lamp",
            "minecraft:redstone_wire",
            "minecraft:redstone_repeater",
            "minecraft:redstone_torch",
            "minecraft:redstone_wall_torch",
            "minecraft:stone_button",
        }
    )
    assert len(states) > 200
    low, high = world.bounds()
    assert min(low) < 0 and max(high) > 0


@pytest.mark.parametrize(
    ("name", "version"), [("world.schem", 3), ("world.schem", 2), ("world.litematic", 3), ("WORLD.SCHEM", 3)]
)
def test_round_trip_restores_every_block_and_property(world, tmp_path, name, version):
    path = tmp_path / name
    write_schematic(world, path, sponge_version=version)
    loaded = read_schematic(path)
    assert loaded.blocks == world.blocks
    assert list(loaded) == list(world)


def test_round_trip_of_empty_and_single_block_worlds(tmp_path):
    for suffix in (".schem", ".litematic"):
        write_schematic(World(), tmp_path / f"empty{suffix}")
        assert read_schematic(tmp_path / f"empty{suffix}").blocks == {}
        single = World({(-100, -64, 2000): make_block("glass")})
        write_schematic(single, tmp_path / f"one{suffix}")
        assert read_schematic(tmp_path / f"one{suffix}").blocks == single.blocks


def test_schem_is_gzipped_sponge_v3_nbt(world, tmp_path):
    path = tmp_path / "world.schem"
    write_schematic(world, path)
    data = path.read_bytes()
    assert data[:2] == b"\x1f\x8b"
    root = nbtlib.load(path)
    assert root.root_name == ""
    assert list(root) == ["Schematic"]
    body = root["Schematic"]
    assert int(body["Version"]) == 3
    assert int(body["DataVersion"]) == DATA_VERSION == 3953
    (lx, ly, lz), (hx, hy, hz) = world.bounds()
    width, height, length = hx - lx + 1, hy - ly + 1, hz - lz + 1
    assert isinstance(body["Width"], Short)
    assert (int(body["Width"]), int(body["Height"]), int(body["Length"])) == (width, height, length)
    assert isinstance(body["Offset"], IntArray)
    assert [int(v) for v in body["Offset"]] == [lx, ly, lz]
    palette = {str(state): int(number) for state, number in body["Blocks"]["Palette"].items()}
    assert list(palette) == ["minecraft:air", *sorted(set(palette) - {"minecraft:air"})]  # the fixed order
    assert list(palette.values()) == list(range(len(palette)))
    assert REPEATER_WEST in palette
    assert "minecraft:redstone_wall_torch[facing=east,lit=false]" in palette
    assert "minecraft:stone" in palette and "minecraft:glass" in palette
    assert max(palette.values()) > 127
    by_index = {number: state for state, number in palette.items()}
    cells = varints(raw_bytes(body["Blocks"]["Data"]))
    assert len(cells) == width * height * length

    def state_at(pos: Pos) -> str:
        x, y, z = pos[0] - lx, pos[1] - ly, pos[2] - lz
        return by_index[cells[x + z * width + y * width * length]]

    repeater = next(pos for pos, block in world if as_game_writes(str(block)) == REPEATER_WEST)
    assert state_at(repeater) == REPEATER_WEST
    high_index = next(pos for pos, block in world if palette[as_game_writes(str(block))] > 127)
    assert state_at(high_index) == as_game_writes(str(world.blocks[high_index]))
    assert state_at((-30, 1, 0)) == "minecraft:redstone_lamp[lit=true]"
    assert state_at((lx, ly, lz)) == "minecraft:air"
    for pos, block in world:
        assert state_at(pos) == as_game_writes(str(block))
    assert sum(1 for cell in cells if cell != 0) == len(world)


def test_schem_v2_layout(world, tmp_path):
    path = tmp_path / "world.schem"
    write_schematic(world, path, sponge_version=2)
    root = nbtlib.load(path)
    assert root.root_name == "Schematic"
    assert int(root["Version"]) == 2 and int(root["DataVersion"]) == 3953
    low, _ = world.bounds()
    assert [int(v) for v in root["Offset"]] == list(low)
    assert [int(root["Metadata"][f"WEOffset{axis}"]) for axis in "XYZ"] == list(low)
    palette = {str(state): int(number) for state, number in root["Palette"].items()}
    assert int(root["PaletteMax"]) == len(palette)
    width, length = int(root["Width"]), int(root["Length"])
    cells = varints(raw_bytes(root["BlockData"]))
    x, y, z = (-30, 0, 0)
    index = (x - low[0]) + (z - low[2]) * width + (y - low[1]) * width * length
    assert cells[index] == palette["minecraft:redstone_lamp[lit=false]"]


def test_litematic_layout(world, tmp_path):
    path = tmp_path / "world.litematic"
    write_schematic(world, path)
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    root = nbtlib.load(path)
    assert int(root["Version"]) == 7 and int(root["MinecraftDataVersion"]) == 3953
    (lx, ly, lz), (hx, hy, hz) = world.bounds()
    assert [int(v) for v in root["Metadata"]["DiscogymOrigin"]] == [lx, ly, lz]
    size = root["Metadata"]["EnclosingSize"]
    assert (int(size["x"]), int(size["y"]), int(size["z"])) == (hx - lx + 1, hy - ly + 1, hz - lz + 1)
    assert int(root["Metadata"]["TotalBlocks"]) == len(world)
    (region,) = root["Regions"].values()
    assert [int(region["Position"][axis]) for axis in "xyz"] == [0, 0, 0]
    palette = region["BlockStatePalette"]
    assert str(palette[0]["Name"]) == "minecraft:air"
    repeater = [
        {str(k): str(v) for k, v in entry["Properties"].items()}
        for entry in palette
        if str(entry["Name"]) == "minecraft:repeater"
    ]
    assert {"delay": "2", "facing": "west", "locked": "false", "powered": "false"} in repeater


@pytest.mark.parametrize("suffix", [".schem", ".litematic"])
def test_output_bytes_are_deterministic(world, tmp_path, suffix):
    write_schematic(world, tmp_path / f"a{suffix}")
    reordered = World(dict(reversed(list(world.blocks.items()))))
    write_schematic(reordered, tmp_path / f"b{suffix}")
    first, second = (tmp_path / f"a{suffix}").read_bytes(), (tmp_path / f"b{suffix}").read_bytes()
    assert first == second
    assert first[4:8] == b"\x00\x00\x00\x00"  # gzip MTIME


def test_palette_strings_are_full_and_sorted():
    partial = Block("minecraft:redstone_repeater", (("facing", "west"), ("delay", "2")))
    assert block_state(partial) == REPEATER_WEST
    assert block_state(make_block("stone")) == "minecraft:stone"
    expected = make_block("redstone_repeater", facing="west", delay="2")
    assert expected.id == "minecraft:redstone_repeater"  # held under the paper's name
    assert parse_block_state("redstone_repeater[facing=west,delay=2]") == expected
    assert parse_block_state("minecraft:repeater[facing=west,delay=2]") == expected
    assert parse_block_state("minecraft:cave_air") is None
    with pytest.raises(UserError, match="create:shaft is not in the redstone palette"):
        parse_block_state("create:shaft[axis=y]")


def test_varints_round_trip():
    values = [0, 1, 127, 128, 255, 300, 16383, 16384, 2**21, 2**31 - 1]
    data = encode_varints(values)
    assert data[:3] == b"\x00\x01\x7f" and data[3:5] == b"\x80\x01"
    assert decode_varints(data) == varints(data) == values
    with pytest.raises(ValueError):
        decode_varints(b"\x80")


def handmade_v3(palette: dict[str, int], cells: list[int], size: tuple[int, int, int], **extra: object) -> File:
    """A Sponge v3 schematic built with nbtlib alone, as another tool would write it."""
    width, height, length = size
    body = Compound(
        {
            "Version": Int(3),
            "DataVersion": Int(3953),
            "Width": Short(width),
            "Height": Short(height),
            "Length": Short(length),
            "Blocks": Compound(
                {
                    "Palette": Compound({state: Int(n) for state, n in palette.items()}),
                    "Data": ByteArray(np.frombuffer(encode_varints(cells), dtype=np.int8)),
                    "BlockEntities": List[Compound]([]),
                }
            ),
            **extra,
        }
    )
    return File({"Schematic": body}, root_name="")


def test_unknown_blocks_are_a_user_error_naming_them_and_where(tmp_path):
    palette = {
        "minecraft:oak_planks": 0,
        "minecraft:stone": 1,
        "minecraft:cave_air": 2,
        "minecraft:redstone_wire[east=none,north=none,power=20,south=none,west=none]": 3,
        "minecraft:piston[extended=false,facing=up]": 4,  # in the palette but never used
    }
    cells = [1, 0, 2, 1, 3, 2]  # 3 x 2 x 1: y=0: stone, planks, cave air; y=1: stone, bad wire, cave air
    path = tmp_path / "foreign.schem"
    path.write_bytes(gzip_nbt(handmade_v3(palette, cells, (3, 2, 1), Offset=IntArray([10, 64, -5]))))
    with pytest.raises(UserError) as caught:
        read_schematic(path)
    message = str(caught.value)
    assert "foreign.schem" in message
    assert "minecraft:oak_planks at (11,64,-5)" in message
    assert "not in the redstone palette" in message
    assert "power=20" in message and "(11,65,-5)" in message
    assert "piston" not in message and "cave_air" not in message
    assert "\n" not in message


def test_air_variants_load_as_empty_space_and_worldedit_origin_counts(tmp_path):
    palette = {"minecraft:void_air": 0, "minecraft:stone": 1, "minecraft:air": 2, "minecraft:cave_air": 3}
    origin = Compound({"WorldEdit": Compound({"Origin": IntArray([100, 0, -100]), "Version": String("7.3")})})
    path = tmp_path / "worldedit.schem"
    root = handmade_v3(palette, [0, 1, 2, 3], (2, 1, 2), Offset=IntArray([-1, 60, 3]), Metadata=origin)
    path.write_bytes(gzip_nbt(root))
    assert read_schematic(path).blocks == {(100, 60, -97): make_block("stone")}


def test_reads_sponge_v1_at_its_offset(tmp_path):
    root = File(
        {
            "Version": Int(1),
            "Width": Short(2),
            "Height": Short(1),
            "Length": Short(1),
            "Offset": IntArray([-7, 70, 7]),
            "Palette": Compound({"minecraft:air": Int(0), "minecraft:redstone_lamp[lit=false]": Int(1)}),
            "BlockData": ByteArray([0, 1]),
        },
        root_name="Schematic",
    )
    path = tmp_path / "old.schem"
    path.write_bytes(gzip_nbt(root))
    assert read_schematic(path).blocks == {(-6, 70, 7): make_block("redstone_lamp")}


def test_litematic_with_unknown_block_is_a_user_error(tmp_path):
    litemapy = pytest.importorskip("litemapy")
    region = litemapy.Region(0, 0, 0, 2, 1, 1)
    region[1, 0, 0] = litemapy.BlockState("minecraft:piston", facing="up", extended="false")
    path = tmp_path / "piston.litematic"
    region.as_schematic(name="p").save(str(path))
    with pytest.raises(UserError, match=r"minecraft:piston\[extended=false,facing=up\] at \(1,0,0\)"):
        read_schematic(path)


def test_unsupported_component_is_a_user_error(tmp_path):
    path = tmp_path / "floating.schem"
    path.write_bytes(gzip_nbt(handmade_v3({"minecraft:air": 0, "minecraft:redstone_torch": 1}, [1], (1, 1, 1))))
    with pytest.raises(UserError, match=r"floating\.schem: minecraft:redstone_torch"):
        read_schematic(path)


def test_bad_files_are_user_errors(world, tmp_path):
    with pytest.raises(UserError, match=r"ends in \.schem or \.litematic"):
        write_schematic(world, tmp_path / "world.nbt")
    with pytest.raises(UserError, match="version 4 cannot be written"):
        write_schematic(world, tmp_path / "world.schem", sponge_version=4)
    with pytest.raises(UserError, match="cannot read schematic"):
        read_schematic(tmp_path / "missing.schem")
    junk = tmp_path / "junk.schem"
    junk.write_bytes(gzip.compress(b"not nbt at all"))
    with pytest.raises(UserError, match=r"junk\.schem"):
        read_schematic(junk)
    short = tmp_path / "short.schem"
    short.write_bytes(gzip_nbt(handmade_v3({"minecraft:stone": 0}, [0, 0], (3, 1, 1))))
    with pytest.raises(UserError, match="holds 2 blocks; a 3x1x1 box has 3"):
        read_schematic(short)
    litematic_as_schem = tmp_path / "wrong.schem"
    litematic_as_schem.write_bytes(litematic_bytes(world))
    with pytest.raises(UserError, match="not a Sponge schematic"):
        read_schematic(litematic_as_schem)
    schem_as_litematic = tmp_path / "wrong.litematic"
    schem_as_litematic.write_bytes(sponge_bytes(world))
    with pytest.raises(UserError, match="not a Litematica schematic"):
        read_schematic(schem_as_litematic)


def test_reading_files_we_did_not_gzip(world, tmp_path):
    path = tmp_path / "plain.schem"
    path.write_bytes(gzip.decompress(sponge_bytes(world)))
    assert read_schematic(path).blocks == world.blocks


def test_every_wire_connection_survives(tmp_path):
    blocks: dict[Pos, Block] = {}
    for number, sides in enumerate(itertools.product(WIRE_STATES, repeat=4)):
        north, east, south, west = sides
        blocks[(number, 0, 0)] = make_block("stone")
        blocks[(number, 1, 0)] = make_block("redstone_wire", north=north, east=east, south=south, west=west)
    world = World(blocks)
    write_schematic(world, tmp_path / "wires.schem")
    assert read_schematic(tmp_path / "wires.schem").blocks == world.blocks


def exported_states(path: Path) -> list[tuple[str, dict[str, str]]]:
    """The (id, properties) of every palette entry of a schematic file, read with nbtlib alone."""
    root = nbtlib.load(path)
    if path.suffix == ".litematic":
        (region,) = root["Regions"].values()
        return [
            (str(entry["Name"]), {str(k): str(v) for k, v in entry.get("Properties", {}).items()})
            for entry in region["BlockStatePalette"]
        ]
    body = root.get("Schematic", root)
    palette = body["Blocks"]["Palette"] if "Blocks" in body else body["Palette"]
    return [split_state(str(state)) for state in palette]


@pytest.mark.parametrize(("name", "version"), [("world.schem", 3), ("world.schem", 2), ("world.litematic", 3)])
def test_exports_write_the_games_ids_properties_and_values(world, tmp_path, name, version):
    path = tmp_path / name
    write_schematic(world, path, sponge_version=version)
    states = exported_states(path)
    for block_id, props in states:
        assert block_id in GAME_BLOCKS, f"{block_id} is not one of the game's ids"
        assert set(props) == set(GAME_BLOCKS[block_id]), f"{block_id} does not carry the game's properties"
        for key, value in props.items():
            assert value in GAME_BLOCKS[block_id][key], f"{block_id}[{key}={value}] is not a value of the game's"
    assert {block_id for block_id, _ in states} == set(GAME_BLOCKS)  # every palette block, and air
    assert ("minecraft:repeater", {"delay": "2", "facing": "west", "locked": "false", "powered": "false"}) in states
    # and read back under the paper's name
    assert read_schematic(path).blocks == world.blocks


def test_the_palette_has_the_games_properties_values_and_defaults():
    assert {game_id(block_id) for block_id in PROPERTIES} == set(GAME_BLOCKS)
    for block_id, props in PROPERTIES.items():
        game = GAME_BLOCKS[game_id(block_id)]
        assert {key: set(values) for key, values in props.items()} == {key: set(values) for key, values in game.items()}
        defaults = tuple(sorted((key, values[0]) for key, values in game.items()))
        assert make_block(block_id) == Block(block_id, defaults)


def repeater_schematic(path: Path, name: str) -> None:
    """Stone, a repeater named ``name`` and a lamp, in a schematic another tool might have written."""
    if path.suffix == ".litematic":
        litemapy = pytest.importorskip("litemapy")
        region = litemapy.Region(0, 0, 0, 2, 2, 1)
        region[0, 0, 0] = region[1, 0, 0] = litemapy.BlockState("minecraft:stone")
        region[0, 1, 0] = litemapy.BlockState(name, delay="3", facing="west", locked="false", powered="false")
        region[1, 1, 0] = litemapy.BlockState("minecraft:redstone_lamp", lit="false")
        region.as_schematic(name="r").save(str(path))
        return
    palette = {
        "minecraft:air": 0,
        "minecraft:stone": 1,
        f"{name}[delay=3,facing=west,locked=false,powered=false]": 2,
        "minecraft:redstone_lamp[lit=false]": 3,
    }
    path.write_bytes(gzip_nbt(handmade_v3(palette, [1, 1, 2, 3], (2, 2, 1), Offset=IntArray([0, 0, 0]))))


@pytest.mark.parametrize("suffix", [".schem", ".litematic"])
def test_both_repeater_names_import_as_the_same_world(tmp_path, suffix):
    worlds = []
    for number, name in enumerate(("minecraft:repeater", "minecraft:redstone_repeater")):
        path = tmp_path / f"repeater{number}{suffix}"
        repeater_schematic(path, name)
        worlds.append(read_schematic(path))
    assert worlds[0].blocks == worlds[1].blocks
    assert worlds[0].blocks[(0, 1, 0)] == make_block("redstone_repeater", delay="3", facing="west")
    assert worlds[0].blocks[(0, 1, 0)].id == "minecraft:redstone_repeater"
    assert len(worlds[0]) == 4
