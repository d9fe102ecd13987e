"""Each rule of the spec on a small circuit, with its exact game-tick timings."""

import pytest

from discogym.suites.redstone.blocks import parse_block
from tests.suites.redstone.circuits import build, history, wire_line

BUTTON = "0 1 0 stone_button[face=floor]"
PRESS = (0, 1, 0)
LIT_OFF = [(0, "true"), (24, "false")]


def test_the_specs_example_dust_decays_one_per_block_and_the_lamp_lights_at_once_and_goes_off_at_24():
    sim = build(BUTTON, *wire_line(1, 14), "15 1 0 redstone_lamp")
    sim.press(PRESS)
    assert [sim.power[(x, 1, 0)] for x in range(1, 15)] == list(range(15, 1, -1))
    sim.run(40)
    assert history(sim, (15, 1, 0), "lit") == LIT_OFF
    assert history(sim, PRESS, "powered") == [(0, "true"), (20, "false")]


def test_dust_reaches_15_blocks_and_no_further():
    reach = build(BUTTON, *wire_line(1, 15), "16 1 0 redstone_lamp")
    reach.press(PRESS)
    assert reach.power[(15, 1, 0)] == 1 and reach.on[(16, 1, 0)]
    short = build(BUTTON, *wire_line(1, 16), "17 1 0 redstone_lamp")
    short.press(PRESS)
    assert short.power[(16, 1, 0)] == 0 and not short.on[(17, 1, 0)]


def test_a_dust_line_running_past_a_lamp_does_not_light_it():
    sim = build(BUTTON, *wire_line(1, 4), "2 1 -1 redstone_lamp", "5 1 0 redstone_lamp")
    sim.press(PRESS)
    assert sim.on[(5, 1, 0)] and not sim.on[(2, 1, -1)]
    assert sim.block((2, 1, 0)).get("north") == "none" and sim.block((2, 1, 0)).get("east") == "side"


def test_an_unconnected_dust_is_a_cross_that_powers_all_four_sides():
    # A repeater strongly powers the stone under a lone dust; the dust (no connections) points four ways.
    cross = ["1 1 0 redstone_repeater[facing=west]", "2 1 0 stone", "2 2 0 redstone_wire"]
    sim = build(BUTTON, *cross, "2 2 -1 redstone_lamp", "2 2 1 redstone_lamp")
    sim.press(PRESS)
    sim.run(2)
    assert sim.power[(2, 2, 0)] == 15 and sim.on[(2, 2, -1)] and sim.on[(2, 2, 1)]
    assert all(sim.block((2, 2, 0)).get(side) == "side" for side in ("north", "east", "south", "west"))
    # A second dust to the east makes a line (east-west): the lamps beside it stay dark.
    line = build(BUTTON, *cross, "3 1 0 stone", "3 2 0 redstone_wire", "2 2 -1 redstone_lamp", "2 2 1 redstone_lamp")
    line.press(PRESS)
    line.run(2)
    assert line.power[(2, 2, 0)] == 15 and not line.on[(2, 2, -1)] and not line.on[(2, 2, 1)]


def test_strong_power_passes_through_a_block_to_dust_but_weak_power_does_not():
    # repeater -> stone: strongly powered, so dust on the far side reads 15
    strong = build(BUTTON, "1 1 0 redstone_repeater[facing=west]", "2 1 0 stone", "3 1 0 redstone_wire")
    strong.press(PRESS)
    strong.run(2)
    assert strong.power[(3, 1, 0)] == 15
    # dust -> stone: weakly powered; dust beyond ignores it, a lamp beside it lights, a torch on it goes out
    weak = build(
        BUTTON,
        *wire_line(1, 2),
        "3 1 0 stone",
        "4 1 0 redstone_wire",
        "3 1 1 redstone_lamp",
        "3 2 0 redstone_torch",
    )
    weak.press(PRESS)
    assert weak.power[(4, 1, 0)] == 0 and weak.on[(3, 1, 1)]
    weak.run(2)
    assert not weak.on[(3, 2, 0)] and history(weak, (3, 2, 0), "lit") == [(2, "false")]


def test_glass_is_never_powered():
    sim = build(
        BUTTON, "1 1 0 redstone_repeater[facing=west]", "2 1 0 glass", "2 1 1 redstone_lamp", "3 1 0 redstone_wire"
    )
    sim.press(PRESS)
    sim.run(5)
    assert not sim.on[(2, 1, 1)] and sim.power[(3, 1, 0)] == 0


def test_signal_climbs_onto_dust_on_glass_but_never_comes_down():
    up = build(BUTTON, *wire_line(1, 2), "3 1 0 glass", "3 2 0 redstone_wire")
    up.press(PRESS)
    assert up.power[(2, 1, 0)] == 14 and up.power[(3, 2, 0)] == 13
    assert up.block((2, 1, 0)).get("east") == "up"
    down = build(
        "4 1 0 stone", "4 2 0 stone_button[face=floor]", "3 1 0 glass", "3 2 0 redstone_wire", *wire_line(1, 2)
    )
    down.press((4, 2, 0))
    assert down.power[(3, 2, 0)] == 15 and down.power[(2, 1, 0)] == 0


def test_dust_steps_up_onto_stone_unless_an_opaque_block_sits_above_the_lower_dust():
    step = build(BUTTON, *wire_line(1, 2), "3 1 0 stone", "3 2 0 redstone_wire", "4 1 0 stone", "4 2 0 redstone_wire")
    step.press(PRESS)
    assert step.power[(3, 2, 0)] == 13 and step.power[(4, 2, 0)] == 12
    cut = build(BUTTON, *wire_line(1, 2), "2 2 0 stone", "3 1 0 stone", "3 2 0 redstone_wire")
    cut.press(PRESS)
    assert cut.power[(2, 1, 0)] == 14 and cut.power[(3, 2, 0)] == 0
    assert cut.block((2, 1, 0)).get("east") != "up"


@pytest.mark.parametrize("delay", [1, 2, 3, 4])
def test_repeater_delays_are_2_4_6_8_game_ticks(delay):
    sim = build(BUTTON, f"1 1 0 redstone_repeater[facing=west,delay={delay}]", "2 1 0 redstone_lamp")
    sim.press(PRESS)
    sim.run(60)
    assert history(sim, (1, 1, 0), "powered") == [(2 * delay, "true"), (20 + 2 * delay, "false")]
    assert history(sim, (2, 1, 0), "lit") == [(2 * delay, "true"), (24 + 2 * delay, "false")]


def pulse_circuit(delay: int):
    """A torch placed and removed by hand drives dust into a repeater of ``delay``, then a lamp."""
    return build(
        "0 1 0 stone",
        "1 1 0 redstone_wire",
        f"2 1 0 redstone_repeater[facing=west,delay={delay}]",
        "3 1 0 redstone_lamp",
    )


def drive(sim, edges: dict[int, bool], until: int) -> None:
    """Switch the input on and off by hand: a torch placed beside the input dust, and removed."""
    torch = parse_block("redstone_torch")
    air = parse_block("air")
    while sim.time <= until:
        if sim.time in edges:
            sim.set_block((1, 1, -1), torch if edges[sim.time] else air)
        sim.step()


def test_a_pulse_shorter_than_the_delay_comes_out_one_delay_long():
    sim = pulse_circuit(4)
    drive(sim, {10: True, 12: False}, until=60)  # a 2 gt pulse into an 8 gt repeater
    assert history(sim, (2, 1, 0), "powered") == [(18, "true"), (26, "false")]


def test_gaps_shorter_than_the_delay_are_filled():
    sim = pulse_circuit(2)
    drive(sim, {10: True, 20: False, 22: True, 32: False}, until=60)  # a 2 gt gap into a 4 gt repeater
    assert history(sim, (2, 1, 0), "powered") == [(14, "true"), (36, "false")]


def test_a_powered_repeater_into_the_side_locks_a_repeater_and_dust_does_not():
    # main repeater at (2,1,0) facing west; a side repeater at (2,1,1) facing south points into it.
    lock = [
        "0 1 0 stone",
        "1 1 0 redstone_wire",
        "2 1 0 redstone_repeater[facing=west]",
        "3 1 0 redstone_lamp",
        "2 1 1 redstone_repeater[facing=south]",
        "2 1 2 stone",
        "2 2 2 stone_button[face=floor]",
    ]
    sim = build(*lock)
    sim.press((2, 2, 2))
    sim.run(2)
    assert sim.block((2, 1, 0)).get("locked") == "true"
    drive(sim, {5: True}, until=15)  # input arrives while locked: the repeater keeps its (off) state
    assert not sim.on[(2, 1, 0)]
    sim.run(20)  # the side repeater turns off at 22; the lock opens and the input passes 2 gt later
    assert history(sim, (2, 1, 0), "locked") == [(2, "true"), (22, "false")]
    assert history(sim, (2, 1, 0), "powered") == [(24, "true")]
    dust_side = build(*lock[:4], "2 1 1 redstone_wire", "2 1 2 stone", "2 2 2 stone_button[face=floor]")
    dust_side.press((2, 2, 2))
    dust_side.run(2)
    assert dust_side.block((2, 1, 0)).get("locked") == "false"


def test_a_torch_inverts_in_2_game_ticks():
    sim = build(BUTTON, *wire_line(1, 2), "3 1 0 stone", "3 2 0 redstone_torch", "3 3 0 redstone_lamp")
    assert sim.on[(3, 2, 0)] and sim.on[(3, 3, 0)]
    sim.press(PRESS)
    sim.run(40)
    assert history(sim, (3, 2, 0), "lit") == [(2, "false"), (22, "true")]
    assert history(sim, (3, 3, 0), "lit") == [(6, "false"), (22, "true")]


def test_a_torch_turned_off_8_times_within_60_ticks_burns_out_and_retries_after_160():
    # Torch T on stone S; a driver torch placed under S (strong power into S) turns T off 2 gt later.
    sim = build("0 2 0 stone", "0 3 0 redstone_torch")
    driver, air = parse_block("redstone_torch"), parse_block("air")
    edges = {}
    for cycle in range(9):
        edges[10 + 6 * cycle] = driver
        edges[13 + 6 * cycle] = air
    while sim.time <= 300:
        if sim.time in edges:
            sim.set_block((0, 1, 0), edges[sim.time])
        sim.step()
    expected = []
    for cycle in range(7):
        expected += [(12 + 6 * cycle, "false"), (15 + 6 * cycle, "true")]
    expected += [(54, "false"), (54 + 160, "true")]  # the 8th turn-off within 60 gt: out until the retry
    assert history(sim, (0, 3, 0), "lit") == expected


def test_lamps_light_at_once_and_go_off_4_ticks_after_the_first_loss_rechecked():
    sim = pulse_circuit(1)
    sim.set_block((2, 1, 0), parse_block("air"))
    sim.set_block((2, 1, 0), parse_block("redstone_wire"))
    drive(sim, {10: True, 20: False, 22: True, 23: False}, until=40)
    # the lamp at (3,1,0) is fed by dust: on at 10; loses power at 20 (tick for 24 scheduled), regains at 22,
    # loses at 23 (no second tick: one is pending); at 24 it is unpowered, so it goes off then.
    assert history(sim, (3, 1, 0), "lit") == [(10, "true"), (24, "false")]
    again = pulse_circuit(1)
    again.set_block((2, 1, 0), parse_block("air"))
    again.set_block((2, 1, 0), parse_block("redstone_wire"))
    drive(again, {10: True, 20: False, 22: True, 30: False}, until=40)  # powered again when the tick runs
    assert history(again, (3, 1, 0), "lit") == [(10, "true"), (34, "false")]


def test_a_repeater_into_a_lamp_lights_the_lamps_next_to_it():
    sim = build(
        BUTTON,
        "1 1 0 redstone_repeater[facing=west]",
        "2 1 0 redstone_lamp",
        "3 1 0 redstone_lamp",
        "2 1 1 redstone_lamp",
    )
    sim.press(PRESS)
    sim.run(2)
    assert sim.on[(2, 1, 0)] and sim.on[(3, 1, 0)] and sim.on[(2, 1, 1)]


def test_a_button_stays_on_20_ticks_and_a_second_press_while_on_does_nothing():
    sim = build(BUTTON, "1 1 0 redstone_lamp")
    assert sim.press(PRESS)
    sim.run(10)
    assert not sim.press(PRESS)
    sim.run(30)
    assert history(sim, PRESS, "powered") == [(0, "true"), (20, "false")]
    assert history(sim, (1, 1, 0), "lit") == LIT_OFF


def edge_detector(first: int | None, last: int) -> list[str]:
    """A rising-edge detector: input dust -> block X with torch T1 (inverter) -> dust -> block Y; and input
    -> repeaters (delays ``first`` (None: plain dust) and ``last``) -> Y. Torch T2 on Y lights the lamp above."""
    first_block = "redstone_wire" if first is None else f"redstone_repeater[facing=north,delay={first}]"
    return [
        BUTTON,
        *wire_line(1, 2),
        "3 1 0 stone",
        "4 1 0 redstone_wall_torch[facing=east]",
        "4 1 1 redstone_wire",
        "4 1 2 redstone_wire",
        "4 1 3 stone",
        "4 2 3 redstone_torch",
        "4 3 3 redstone_lamp",
        f"1 1 1 {first_block}",
        "1 1 2 redstone_wire",
        "1 1 3 redstone_wire",
        "2 1 3 redstone_wire",
        f"3 1 3 redstone_repeater[facing=west,delay={last}]",
    ]


@pytest.mark.parametrize(
    ("first", "last", "pulse"), [(None, 1, None), (1, 1, None), (None, 2, None), (2, 1, 4), (2, 2, 6)]
)
def test_a_rising_edge_detector_gives_pulses_of_the_right_length_and_none_below_6_ticks(first, last, pulse):
    sim = build(*edge_detector(first, last))
    assert not sim.on[(4, 2, 3)]
    sim.press(PRESS)
    sim.run(60)
    total = 2 * ((first or 0) + last)
    t2 = history(sim, (4, 2, 3), "lit")
    if pulse is None:
        assert t2 == [], (total, t2)
    else:
        assert t2 == [(4, "true"), (total + 2, "false")] and total + 2 - 4 == pulse
