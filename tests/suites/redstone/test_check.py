"""The checkers accept the reference devices and reject near misses of every family, saying why."""

import pytest

from discogym.suites.redstone.blocks import Block, Pos, parse_block
from discogym.suites.redstone.builder import build_device
from discogym.suites.redstone.evaluator import Evaluation, evaluate
from discogym.suites.redstone.tasks import TaskSpec, make_task, packaged_tasks

STONE = parse_block("stone")
WIRE = parse_block("redstone_wire")
LAMP = parse_block("redstone_lamp")


def only_failures(spec: TaskSpec, device: dict[Pos, Block], *expected: str) -> Evaluation:
    report = evaluate(spec, device)
    assert not report.passed
    for text in expected:
        assert any(text in failure for failure in report.failures), report.failures
    return report


@pytest.mark.parametrize("spec", packaged_tasks(), ids=lambda spec: spec.task_id)
def test_every_reference_device_passes(spec):
    report = evaluate(spec, build_device(spec))
    assert report.passed, report.failures
    assert len(report.lamps) == spec.lamps and all(lamp.on is not None for lamp in report.lamps)


def test_simultaneity_rejects_one_tick_of_skew_too_many():
    spec = make_task("A", "L2")  # two clusters of four lamps, at x = 2 south and north of the trunk
    device = build_device(spec)
    assert device[(2, 4, 1)] == WIRE  # the branch feeding the southern one
    device[(2, 4, 1)] = parse_block("redstone_repeater[facing=north,delay=1]")  # 2 gt later: one gt too many
    report = only_failures(spec, device, "2 gt apart, more than 1")
    assert sorted({lamp.on or 0 for lamp in report.lamps}) == [0, 2]
    looser = make_task("A", lamps=8, tolerance=2)
    assert evaluate(looser, device).passed


def test_a_block_on_a_lamp_or_a_wrong_count_is_refused():
    spec = make_task("A", "L2")
    device = build_device(spec)
    lamp = next(pos for pos, block in sorted(device.items()) if block == LAMP)
    device[(lamp[0], lamp[1] + 1, lamp[2])] = STONE
    only_failures(spec, device, f"lamp top: minecraft:stone stands on the lamp at {lamp[0]},{lamp[1]},{lamp[2]}")
    fewer = build_device(make_task("A", "L1"))
    only_failures(spec, fewer, "the device has 4 redstone_lamps; the task asks for exactly 8")


def test_a_device_must_have_one_button_and_stay_in_the_region():
    spec = make_task("A", "L1")
    device = build_device(spec)
    device[(5, 4, -5)] = parse_block("stone_button[face=floor]")
    device[(11, 4, 0)] = STONE
    only_failures(spec, device, "2 stone_buttons", "region: 1 block(s) outside the build region")
    del device[(5, 4, -5)], device[(0, 4, 0)]
    only_failures(spec, device, "no stone_button")


def branch_without_t_junction() -> dict[Pos, Block]:
    """Button, a line with a repeater, then one bend into a cluster of four: no dust with three connections."""
    device: dict[Pos, Block] = {(0, 4, -10): parse_block("stone_button[face=floor]")}
    device |= {(0, 4, z): WIRE for z in range(-9, -1)}
    device[(0, 4, -1)] = parse_block("redstone_repeater[facing=north]")
    device |= {(x, 4, 0): WIRE for x in range(0, 9)}
    device[(8, 4, 1)] = WIRE
    device |= {pos: LAMP for pos in [(8, 4, 2), (7, 4, 2), (9, 4, 2), (8, 4, 3)]}
    return device


def test_branch_reach_needs_a_t_junction_off_axis_lamps_and_the_reach():
    spec = make_task("B", "L1")
    device = branch_without_t_junction()
    report = only_failures(spec, device, "T-junction: no dust block with three or more connections")
    assert len(report.failures) == 1  # everything else holds: all four lamps light together, 21 blocks away
    device[(1, 4, 1)] = WIRE  # a stub makes the trunk dust at (1, 4, 0) a T-junction
    assert evaluate(spec, device).passed
    on_axis = build_device(spec)
    lamp = next(pos for pos, block in sorted(on_axis.items()) if block == LAMP)
    del on_axis[lamp]
    on_axis[(0, 4, 5)] = LAMP
    only_failures(spec, on_axis, "off-axis: the lamp at 0,4,5 shares x or z with the button")
    far = make_task("B", lamps=4, reach=24)
    only_failures(far, build_device(spec), "reach: the farthest lamp is 23 blocks from the button; at least 24")


def test_sequences_reject_a_wrong_stage_delay():
    spec = make_task("C", "L1")  # delays [1, 2, 1] rt
    device = build_device(spec)
    stage = next(
        pos for pos, block in sorted(device.items()) if block.id.endswith("repeater") and block.get("delay") == "2"
    )
    device[stage] = device[stage].with_props(delay="3")
    only_failures(spec, device, "lamp 2", "6 gt apart; the delay is 2 rt = 4 gt (+-1)")
    swapped = make_task("C", delays=[2, 1, 1])
    only_failures(swapped, build_device(spec), "lamp 1", "2 gt apart; the delay is 2 rt = 4 gt")


def test_equal_delay_rejects_a_lamp_off_its_bucket():
    spec = make_task("D", "L1")  # one lamp at each of 4, 8, 12, 16 (+-1)
    device = build_device(spec)
    lamp = next(pos for pos, block in sorted(device.items()) if block == LAMP and abs(pos[0]) + abs(pos[2]) == 4)
    del device[lamp]
    device[(lamp[0], 4, lamp[2] + (2 if lamp[2] > 0 else -2))] = LAMP  # two blocks farther out: distance 6
    only_failures(spec, device, "is 6 blocks from the button, in no bucket", "0 lamps at distance 4 (+-1)")


@pytest.mark.parametrize("level", ["L1", "L3"])
def test_pulses_must_last_tau(level):
    spec = make_task("E", level)
    tau = spec.contract.tau_ticks
    assert tau is not None
    longer = build_device(make_task("E", lamps=spec.lamps, tau=tau + 1))  # on 2 gt too long
    only_failures(spec, longer, f"; tau is {tau} rt = {2 * tau} gt (+-1)")
    button_only = build_device(make_task("E", lamps=spec.lamps, tau=12))  # the button's own 24 gt
    only_failures(spec, button_only, "(24 gt)")


def test_a_lamp_lit_before_the_press_and_a_dark_lamp_are_reported():
    spec = make_task("A", "L1")
    device = build_device(spec)
    device[(-5, 4, -5)] = parse_block("redstone_torch")
    device[(-5, 4, -4)] = LAMP
    lamp = next(pos for pos, block in sorted(device.items()) if block == LAMP and pos != (-5, 4, -4))
    del device[lamp]
    report = only_failures(spec, device, "rest: the lamp at -5,4,-4 is lit before the press", "never turns on")
    assert report.document()["passed"] is False and report.document()["lamps"]
