"""Hostile world files and schematics: one clear UserError each (one line at the CLI), bounded time and memory."""

import gzip
import io

import numpy as np
import pytest
from nbtlib import ByteArray, Compound, File, Int, IntArray, Short

from discogym.core import UserError
from discogym.suites.redstone.schematic import (
    MAX_CELLS,
    MAX_NBT_BYTES,
    litematic_bytes,
    read_schematic,
    write_schematic,
)
from discogym.suites.redstone.tasks import read_task
from discogym.suites.redstone.world import MAX_COORD, MAX_SIDE, parse_world, read_world
from tests.conftest import run_discogym
from tests.suites.redstone import test_schematic as schematics

DEEP_JSON = "[" * 5000 + "]" * 5000
DEEP_YAML = "[" * 600 + "]" * 600  # enough to exhaust the recursion limit, quickly
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"


@pytest.mark.parametrize("name", ["world.txt", "world.json", "world.yaml", "picture.png"])
def test_a_binary_file_is_not_a_world(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(PNG)
    with pytest.raises(UserError, match="is not UTF-8 text"):
        read_world(path)


@pytest.mark.parametrize(
    ("suffix", "text"), [(".json", DEEP_JSON), (".json", '{"blocks": ' + DEEP_JSON + "}"), (".yaml", DEEP_YAML)]
)
def test_deep_nesting_is_not_a_world(suffix, text):
    with pytest.raises(UserError, match="nested too deeply"):
        parse_world(text, "deep", suffix)


def test_task_files_refuse_binary_and_deep_nesting(tmp_path):
    binary, deep = tmp_path / "binary.yaml", tmp_path / "deep.yaml"
    binary.write_bytes(PNG)
    deep.write_text(DEEP_YAML, encoding="utf-8")
    with pytest.raises(UserError, match="is not UTF-8 text"):
        read_task(binary)
    with pytest.raises(UserError, match="nested too deeply"):
        read_task(deep)


def test_coordinates_beyond_the_world_border_are_refused_on_load(tmp_path):
    assert len(parse_world(f"{MAX_COORD} 0 0 minecraft:stone\n")) == 1
    with pytest.raises(UserError, match="outside the world"):
        parse_world(f"{2**70} 0 0 minecraft:stone\n")  # export raised OverflowError on it
    with pytest.raises(UserError, match="outside the world"):
        parse_world('[{"pos": [0, -30000001, 0], "block": "minecraft:stone"}]', "w", ".json")


def test_a_world_spanning_more_than_the_limit_is_refused():
    far = f"0 0 0 minecraft:stone\n{MAX_SIDE - 1} 0 0 minecraft:stone\n"
    assert len(parse_world(far)) == 2
    with pytest.raises(UserError, match=r"span 100001x1x1; a world spans at most 256"):
        parse_world("0 0 0 minecraft:stone\n100000 0 0 minecraft:stone\n")  # view grew without bound
    with pytest.raises(UserError, match="cells in all"):
        parse_world("0 0 0 minecraft:stone\n255 255 255 minecraft:stone\n")


def sponge_v2(size: tuple[int, int, int], data: np.ndarray, offset: tuple[int, int, int] = (0, 0, 0)) -> bytes:
    """A Sponge v2 schematic of air declaring ``size``, as another tool could write it."""
    width, height, length = size
    body = {
        "Version": Int(2),
        "DataVersion": Int(3953),
        "Width": Short(width - 0x10000 if width >= 0x8000 else width),
        "Height": Short(height),
        "Length": Short(length),
        "Offset": IntArray(list(offset)),
        "PaletteMax": Int(1),
        "Palette": Compound({"minecraft:air": Int(0)}),
        "BlockData": ByteArray(data),
    }
    buffer = io.BytesIO()
    File(body, root_name="Schematic").write(buffer)
    return gzip.compress(buffer.getvalue())


def test_a_schematic_declaring_a_huge_box_is_refused_before_it_is_decoded(tmp_path):
    path = tmp_path / "air.schem"
    path.write_bytes(sponge_v2((2000, 50, 2000), np.zeros(1, dtype=np.int8)))
    with pytest.raises(UserError, match=f"declares a 2000x50x2000 box .*at most {MAX_CELLS:,}"):
        read_schematic(path)


def test_a_litematic_declaring_a_huge_region_is_refused_before_it_is_decoded(tmp_path):
    root = File.parse(io.BytesIO(gzip.decompress(litematic_bytes(parse_world("0 0 0 minecraft:stone\n")))))
    root["Regions"]["discogym"]["Size"] = Compound({"x": Int(2000), "y": Int(50), "z": Int(-2000)})
    path = tmp_path / "huge.litematic"
    path.write_bytes(schematics.gzip_nbt(root))
    with pytest.raises(UserError, match="declares a 2000x50x2000 box"):
        read_schematic(path)


def test_a_schematic_that_inflates_past_the_limit_is_refused(tmp_path):
    path = tmp_path / "bomb.schem"  # 2000 x 50 x 2000 of air: about 195 KB that took 1.9 GB to import
    path.write_bytes(sponge_v2((2000, 50, 2000), np.zeros(2000 * 50 * 2000, dtype=np.int8)))
    assert path.stat().st_size < MAX_NBT_BYTES // 100
    with pytest.raises(UserError, match="decompresses to more than"):
        read_schematic(path)


def test_a_schematic_offset_beyond_the_world_border_is_refused(tmp_path):
    path = tmp_path / "far.schem"
    path.write_bytes(sponge_v2((1, 1, 1), np.zeros(1, dtype=np.int8), offset=(2**31 - 1, 0, 0)))
    with pytest.raises(UserError, match=r"Offset .* is outside the world"):
        read_schematic(path)


def test_a_schematic_with_blocks_farther_apart_than_a_world_may_span_is_refused(tmp_path):
    cells = [1] + [0] * (MAX_SIDE - 1) + [1]
    path = tmp_path / "wide.schem"
    raw = schematics.handmade_v3({"minecraft:air": 0, "minecraft:stone": 1}, cells, (MAX_SIDE + 1, 1, 1))
    path.write_bytes(schematics.gzip_nbt(raw))
    with pytest.raises(UserError, match="a world spans at most"):
        read_schematic(path)
    write_schematic(parse_world("0 0 0 minecraft:stone\n"), tmp_path / "ok.schem")


def test_the_cli_reports_hostile_world_files_in_one_line(tmp_path):
    far = tmp_path / "far.txt"
    far.write_text("0 0 0 minecraft:stone\n100000 0 0 minecraft:stone\n", encoding="utf-8")
    picture = tmp_path / "picture.png"
    picture.write_bytes(PNG)
    for args in (("view", str(far)), ("export", str(picture), str(tmp_path / "out.schem"))):
        result = run_discogym("redstone", *args)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("error: "), result.stderr
