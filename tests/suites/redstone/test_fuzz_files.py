"""Fuzzing the redstone file readers (world files in all three formats, task files, schematics): any bytes give
a world or task, or one UserError; never another exception, a hang or a blow-up."""

import contextlib
import gzip
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from discogym.core import UserError
from discogym.suites.redstone.pictures import text_layers
from discogym.suites.redstone.schematic import read_schematic, sponge_bytes
from discogym.suites.redstone.tasks import parse_task, read_task
from discogym.suites.redstone.world import parse_world, read_world

FUZZ = settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
coordinates = st.one_of(st.integers(-3, 300), st.integers(-(2**80), 2**80))
blocks = st.sampled_from(
    ["minecraft:stone", "minecraft:redstone_wire", "minecraft:redstone_lamp[lit=true]", "minecraft:air",
     "minecraft:stone_button[face=floor]", "minecraft:dirt", "minecraft:redstone_repeater[delay=9]", "x[", "]"]
)  # fmt: skip
lines = st.tuples(coordinates, coordinates, coordinates, blocks).map(lambda t: " ".join(map(str, t)))
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=8), blocks),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["pos", "block", "blocks",
                                                                                          "x", "y", "z"]), inner)),
    max_leaves=20,
)  # fmt: skip


def loads_or_refuses(load, *args) -> None:
    with contextlib.suppress(UserError):
        load(*args)


@FUZZ
@given(st.lists(lines, max_size=6).map("\n".join))
def test_the_line_format_takes_any_lines_and_what_loads_can_be_viewed_and_exported(text):
    try:
        world = parse_world(text)
    except UserError:
        return
    assert text_layers(world)  # far-apart blocks made this grow without bound
    assert sponge_bytes(world)  # coordinates beyond 64 bits raised OverflowError here


@FUZZ
@given(json_values, st.sampled_from([".json", ".yaml"]))
def test_json_and_yaml_worlds_take_any_document(document, suffix):
    loads_or_refuses(parse_world, json.dumps(document), "world", suffix)


@FUZZ
@given(st.binary(max_size=200), st.sampled_from(["w.txt", "w.json", "w.yaml", "task.yaml"]))
def test_world_and_task_files_take_any_bytes(tmp_path, data, name):
    path = tmp_path / name
    path.write_bytes(data)
    loads_or_refuses(read_task if name == "task.yaml" else read_world, path)


@FUZZ
@given(json_values)
def test_task_files_take_any_document(document):
    loads_or_refuses(parse_task, json.dumps(document))


SCHEMATIC = gzip.decompress(sponge_bytes(parse_world("0 0 0 minecraft:stone\n0 1 0 minecraft:redstone_wire\n")))


@FUZZ
@given(st.lists(st.tuples(st.integers(0, len(SCHEMATIC) - 1), st.integers(0, 255)), min_size=1, max_size=6),
       st.booleans())  # fmt: skip
def test_schematics_take_any_damage(tmp_path, changes, zipped):
    data = bytearray(SCHEMATIC)
    for where, byte in changes:
        data[where] = byte
    path = tmp_path / "damaged.schem"
    path.write_bytes(gzip.compress(bytes(data)) if zipped else bytes(data))
    loads_or_refuses(read_schematic, path)
