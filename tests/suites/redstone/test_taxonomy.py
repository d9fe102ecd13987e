"""The failure taxonomy devices (Appendix I, Table 11): each lights the paper's number of lamps, the variants are
W with their one change, and every device follows the lab's rules."""

import json
from pathlib import Path

import pytest

from discogym.core import UserError
from discogym.suites.redstone.blocks import BUTTON, LAMP, REPEATER, STONE, WIRE, Block, Pos
from discogym.suites.redstone.engine import Simulator
from discogym.suites.redstone.lab import LAB, lab_world, lamps_of, positions_of, the_button
from discogym.suites.redstone.taxonomy import (
    CASES,
    FIXTURES,
    PICTURED,
    Case,
    case,
    is_axis,
    is_perimeter,
    lit_lamp_positions,
    lit_lamps,
    run_taxonomy,
    taxonomy_document,
    taxonomy_table,
    write_pictures,
)
from tests.conftest import run_discogym

VARIANTS = [c for c in CASES if c.edit is not None]
# How each variant differs from W: (blocks removed, blocks added, blocks replaced), from the paper's text.
CHANGE_SIZES = {
    "4": (0, 0, 1),  # the centre stone becomes glass
    "5": (4, 0, 0),  # the 4 wires next to the centre stone
    "8": (80, 0, 0),  # 112 wires down to the 32 axis wires
    "9": (0, 0, 4),  # the 4 repeaters turned round
    "6": (26, 0, 0),  # the 26 perimeter wires
    "7": (92, 0, 0),  # 112 wires down to 20
    "10": (0, 12, 0),  # 12 trap wires
}
# Wire counts the paper gives.
PAPER_WIRES = {"W": 112, "1": 94, "5": 108, "6": 86, "7": 20, "8": 32, "10": 124}


def ids(item: Case) -> str:
    return item.id


def wires(device: dict[Pos, Block]) -> list[Pos]:
    return positions_of(device, WIRE)


def centre_distance(pos: Pos) -> int:
    return max(abs(pos[0]), abs(pos[2]))


# ---------------------------------------------------------------------------------------------- the counts


@pytest.mark.parametrize("item", CASES, ids=ids)
def test_every_case_lights_the_papers_count(item: Case) -> None:
    assert lit_lamps(item.device()) == (item.paper_lit, item.paper_total)


def test_run_taxonomy_agrees_with_the_paper_everywhere() -> None:
    results = run_taxonomy()
    assert [r.case.id for r in results] == ["W", "4", "5", "8", "9", "1", "6", "7", "2", "3", "10", "11", "12"]
    assert all(r.agrees for r in results)
    for result in results:
        if result.case.id in PAPER_WIRES:
            assert result.wires == PAPER_WIRES[result.case.id]


# ---------------------------------------------------------------------------------------------- W and its variants


def test_the_variants_are_the_paper_s_modifications_of_w() -> None:
    assert sorted(c.id for c in VARIANTS) == sorted(CHANGE_SIZES)
    assert [c.id for c in CASES if c.edit is None] == ["W", "1", "2", "3", "11", "12"]


@pytest.mark.parametrize("item", VARIANTS, ids=ids)
def test_a_variant_is_w_with_its_change(item: Case) -> None:
    assert item.edit is not None
    w = case("W").device()
    device = item.device()
    assert item.edit.apply(w) == device
    removed = [pos for pos in w if pos not in device]
    added = [pos for pos in device if pos not in w]
    replaced = [pos for pos in w if pos in device and w[pos] != device[pos]]
    assert (len(removed), len(added), len(replaced)) == CHANGE_SIZES[item.id]
    assert all(w[pos].id == WIRE for pos in removed)
    assert all(device[pos].id == WIRE for pos in added)


def test_w_is_the_described_broadcast_device() -> None:
    w = case("W").device()
    assert len(lamps_of(w)) == 32
    assert len(wires(w)) == 112
    assert w[(0, 4, 0)].id == STONE
    assert w[(0, 5, 0)].id == BUTTON and w[(0, 5, 0)].get("face") == "floor"
    assert sum(is_axis(pos) for pos in wires(w)) == 32
    assert sum(is_perimeter(pos) for pos in wires(w)) == 26
    assert sum(centre_distance(pos) <= 3 for pos in wires(w)) == 20
    # a repeater at distance 5 on each axis, its output pointing away from the centre
    repeaters = {pos: w[pos].get("facing") for pos in positions_of(w, REPEATER)}
    assert repeaters == {(5, 4, 0): "west", (-5, 4, 0): "east", (0, 4, 5): "north", (0, 4, -5): "south"}
    # no lamp touches an axis line, so only branch wires can light lamps
    for x, y, z in lamps_of(w):
        assert not any(is_axis((x + dx, y, z + dz)) for dx, dz in ((1, 0), (-1, 0), (0, 1), (0, -1)))


def test_nothing_stands_on_a_lamp_in_w() -> None:
    w = case("W").device()
    assert all((x, y + 1, z) not in w for x, y, z in lamps_of(w))


@pytest.mark.parametrize("case_id", ["9", "7"])
def test_reversed_repeaters_and_the_tiny_core_light_the_8_nearest_lamps(case_id: str) -> None:
    device = case(case_id).device()
    nearest = {pos for pos in lamps_of(device) if centre_distance(pos) <= 3}
    assert len(nearest) == 8
    assert lit_lamp_positions(device) == nearest


def test_missing_rails_darkens_exactly_the_corner_lamps() -> None:
    device = case("6").device()
    corner_lamps = {(x, 4, z) for x in (-10, 10) for z in (-4, 4)} | {(x, 4, z) for x in (-4, 4) for z in (-9, 9)}
    assert set(lamps_of(device)) - lit_lamp_positions(device) == corner_lamps


def test_each_trap_darkens_the_lamp_of_the_branch_it_touches() -> None:
    device = case("10").device()
    dark = set(lamps_of(device)) - lit_lamp_positions(device)
    assert len(dark) == 12
    # every dark lamp is two steps from a trap wire: trap -> last branch wire -> lamp
    traps = set(device) - set(case("W").device())
    for x, y, z in dark:
        near = {(x + dx, y, z + dz) for dx in range(-2, 3) for dz in range(-2, 3) if abs(dx) + abs(dz) == 2}
        assert near & traps


# ---------------------------------------------------------------------------------------------- devices of their own


def test_long_snake_has_94_wires_and_no_repeater() -> None:
    device = case("1").device()
    assert len(wires(device)) == 94 and not positions_of(device, REPEATER)
    # the lit lamps are the ones nearest the stone along the path: signal lasts 15 wires
    sim = Simulator(lab_world(device))
    sim.press((0, 5, 0))
    assert max(sim.power.values()) == 15
    assert sum(1 for power in sim.power.values() if power > 0) == 15 + 10  # 15 trunk wires, 10 taps


def test_islands_have_three_stones_and_one_button() -> None:
    device = case("2").device()
    stones = positions_of(device, STONE)
    assert stones == [(-7, 4, -7), (0, 4, 0), (7, 4, 7)]
    assert positions_of(device, BUTTON) == [(0, 5, 0)]
    lit = lit_lamp_positions(device)
    assert all(centre_distance(pos) <= 6 for pos in lit)  # the centre cluster only


def test_parallel_lines_light_only_the_lamps_beyond_line_ends() -> None:
    device = case("3").device()
    ends = {(x, 4, z) for x in (-9, -6, -3, 0, 3, 6, 9) for z in (-5, 5)}
    assert lit_lamp_positions(device) == ends


def test_dead_end_hooks_light_12_of_20_and_all_20_without_the_hooks() -> None:
    device = case("11").device()
    hooks = {pos for pos in wires(device) if centre_distance(pos) == 7 and min(abs(pos[0]), abs(pos[2])) > 0}
    assert len(hooks) == 8
    assert lit_lamps(device) == (12, 20)
    assert lit_lamps({pos: block for pos, block in device.items() if pos not in hooks}) == (20, 20)


def test_the_ring_carries_power_8_to_15_and_lights_nothing() -> None:
    device = case("12").device()
    sim = Simulator(lab_world(device))
    sim.press((0, 5, 0))
    powers = [sim.power[pos] for pos in wires(device)]
    assert len(powers) == 14 and min(powers) == 8 and max(powers) == 15
    for pos in wires(device):
        assert sum(side != "none" for side in (sim.block(pos).get(s) for s in ("north", "east", "south", "west"))) == 2


# ---------------------------------------------------------------------------------------------- lab rules


@pytest.mark.parametrize("item", CASES, ids=ids)
def test_every_device_stays_in_the_region_and_has_one_button(item: Case) -> None:
    device = item.device()
    assert device, item.fixture
    assert LAB.outside(device) == []
    assert isinstance(the_button(device), tuple)
    assert len(lamps_of(device)) == item.paper_total
    assert not any(LAB.is_floor(pos) for pos in device)


def test_every_fixture_file_is_a_case_and_starts_with_a_comment() -> None:
    assert sorted(p.name for p in FIXTURES.glob("*.txt")) == sorted(c.fixture for c in CASES)
    for item in CASES:
        assert item.path.read_text(encoding="utf-8").startswith(f"# Case {item.id}")


# ---------------------------------------------------------------------------------------------- outputs


def test_document_and_table() -> None:
    results = run_taxonomy()
    rows = taxonomy_document(results)
    json.dumps(rows)
    assert [row["case"] for row in rows] == [c.id for c in CASES]
    first = rows[0]
    assert first["paper_lit"] == first["lit"] == 32 and first["change_from_w"] is None
    assert rows[1]["category_label"] == "1 structural" and rows[1]["capacity_gap"] == "Application"
    table = taxonomy_table(results)
    assert table.row_count == len(CASES)
    assert [column.header for column in table.columns][-3:] == ["paper", "simulated", "wires"]


def test_case_lookup() -> None:
    assert case("w").id == "W" and case("12").name == "The Ring"
    with pytest.raises(UserError, match="no taxonomy case"):
        case("13")


def test_a_device_without_one_button_is_refused() -> None:
    with pytest.raises(UserError, match="no stone_button"):
        lit_lamps({(0, 4, 0): Block(LAMP, (("lit", "false"),))})


def test_write_pictures(tmp_path: Path) -> None:
    written = write_pictures(tmp_path)
    assert [p.name for p in written] == [f"taxonomy-{c.lower()}.png" for c in PICTURED]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in written)


def test_the_taxonomy_command_prints_the_table_and_json() -> None:
    done = run_discogym("redstone", "taxonomy", "--json")
    assert done.returncode == 0, done.stderr
    cases = json.loads(done.stdout)["cases"]
    assert [c["case"] for c in cases][:3] == ["W", "4", "5"] and all(c["agrees"] for c in cases)
    table = run_discogym("redstone", "taxonomy")
    assert table.returncode == 0 and "Table 11" in table.stdout
