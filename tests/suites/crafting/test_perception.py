"""The picture reader: rendered states of test-split tasks read back into their slots."""

from pathlib import Path

import pytest
from PIL import Image

from discogym.core.errors import UserError
from discogym.suites.crafting.data import load_split
from discogym.suites.crafting.perception import canonical_item, perceive, perceive_file
from discogym.suites.crafting.render import RESOLUTIONS, Resolution, renderer


def _states(count: int) -> list[dict[int, tuple[str, int]]]:
    return [
        {index: (stack.type, stack.quantity) for index, stack in example.slotted_inventory.items()}
        for example in load_split("test")[:count]
    ]


def _canonical(slots: dict[int, tuple[str, int]]) -> dict[int, tuple[str, int]]:
    return {index: (canonical_item(item), quantity) for index, (item, quantity) in slots.items()}


def test_high_resolution_reads_every_slot_exactly() -> None:
    for slots in _states(50):
        assert perceive(renderer().render(slots, "high")) == _canonical(slots)


@pytest.mark.parametrize("resolution", RESOLUTIONS)
def test_every_resolution_reads_back_the_slots(resolution: Resolution) -> None:
    states = _states(20)
    total = correct = 0
    for slots in states:
        read = perceive(renderer().render(slots, resolution), resolution)
        assert set(read) == set(slots)  # which slots hold something: always right
        expected = _canonical(slots)
        total += len(expected)
        correct += sum(read.get(index) == stack for index, stack in expected.items())
    assert correct >= 0.95 * total


def test_empty_table_reads_empty() -> None:
    assert perceive(renderer().render({}, "low")) == {}


def test_bad_files_and_sizes_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="cannot read"):
        perceive_file(tmp_path / "missing.png")
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a png")
    with pytest.raises(UserError, match="cannot read"):
        perceive_file(broken)
    with pytest.raises(UserError, match="100x100"):
        perceive(Image.new("RGB", (100, 100)))
    with pytest.raises(UserError, match="not a low"):
        perceive(renderer().render({}, "high"), "low")
