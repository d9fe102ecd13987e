"""The 28 environments added after the first 15: each one's main rules, shown by an action sequence and the
frame cells it must produce, and 300 seeded random actions on three seeds without an error."""

import numpy as np
import pytest

from discogym.suites.autumn.catalog import CATALOG, program_source
from discogym.suites.autumn.challenges import random_actions
from discogym.suites.autumn.interpreter import Interpreter, parse_actions

NEW = [info.name for info in CATALOG[15:]]

Frame = list[list[str]]


def frames(name: str, actions: str = "", seed: int = 1) -> list[Frame]:
    """The initial frame and one frame per action (``;``-separated, as ``discogym autumn run``)."""
    interpreter = Interpreter(program_source(name), seed=seed)
    return [interpreter.frame] + [interpreter.step(a) for a in parse_actions(actions)]


def last(name: str, actions: str = "", seed: int = 1) -> Frame:
    return frames(name, actions, seed)[-1]


def cells(frame: Frame, colour: str) -> list[tuple[int, int]]:
    """The (x, y) cells of a colour, sorted."""
    return sorted((x, y) for y, row in enumerate(frame) for x, c in enumerate(row) if c == colour)


def times(action: str, n: int) -> str:
    return ";".join([action] * n)


def test_there_are_28_new_environments():
    assert len(NEW) == 28 and len(set(NEW)) == 28


@pytest.mark.parametrize("name", NEW)
def test_a_new_program_runs_300_random_actions_on_three_seeds(name):
    source = program_source(name)
    for seed in (1, 2, 3):
        interpreter = Interpreter(source, seed=seed)
        seen = {str(interpreter.frame)}
        for action in random_actions(np.random.default_rng(seed), interpreter.grid_size, 300):
            seen.add(str(interpreter.step(action)))
        assert interpreter.time == 300 and len(seen) > 1


# Physical ------------------------------------------------------------------------------------------------------


def test_dunes_sand_falls_slides_and_piles_on_ledges():
    grain = frames("dunes", "click 0 0;" + times("noop", 12))
    assert grain[1][1][7] == "tan" and grain[0][0][7] == "orange"
    assert cells(grain[-1], "tan") == [(7, 12)]  # on the floor
    second = last("dunes", "click 0 0;" + times("noop", 12) + ";click 3 3;" + times("noop", 12))
    assert len(cells(second, "tan")) == 2 and second[11][7] == "black"  # slid off the first grain
    assert cells(second, "tan")[0] in ((6, 12), (7, 12)) and cells(second, "tan")[1] in ((7, 12), (8, 12))
    ledge = last("dunes", "left;left;left;left;click 9 9;" + times("noop", 8))
    assert cells(ledge, "tan") == [(3, 7)] and ledge[0][3] == "orange"  # held by the ledge
    assert cells(last("dunes", "click 0 0;noop;down"), "tan") == []


def test_rink_the_puck_slides_until_a_rock_and_rests_on_the_goal():
    slide = frames("rink", "down;right;noop;noop")
    assert cells(slide[1], "blue") == [(1, 2)] and cells(slide[2], "blue") == [(1, 3)]  # right is ignored mid-slide
    assert cells(slide[-1], "blue") == [(1, 3)]  # stopped above the rock at (1, 4)
    solved = last("rink", "down;noop;noop;right;" + times("noop", 5) + ";down;" + times("noop", 6))
    assert solved[8][6] == "gold"
    assert cells(last("rink", "down;noop;click 5 5"), "blue") == [(1, 1)]


def test_clouds_drift_with_the_wind_and_the_sun_stops_the_rain():
    calm = frames("clouds", "click 15 0;left;noop;noop")
    assert calm[0][0][15] == "gray" and calm[1][0][15] == "yellow"
    assert calm[1][3][1:4] == ["white"] * 3 and calm[3][3][0:3] == ["white"] * 3  # blown left
    rain = last("clouds", times("noop", 30))
    assert sum(c == "blue" for c in rain[15]) > 0  # a puddle on the ground
    dried = last("clouds", times("noop", 30) + ";click 15 0;" + times("noop", 60))
    assert cells(dried, "blue") == []


def test_magnet_pulls_iron_in_its_column_and_lets_it_fall():
    pulled = last("magnet", "click 0 0;" + times("noop", 20))
    assert pulled[0][5] == "red" and pulled[1][5] == "silver" and pulled[2][5] == "silver"
    assert pulled[10][5] == "black" and pulled[7][8] == "silver"  # the other columns stay put
    dropped = last("magnet", "click 0 0;" + times("noop", 20) + ";click 0 0;" + times("noop", 12))
    assert dropped[0][5] == "gray" and dropped[10][5] == "silver" and dropped[9][5] == "silver"
    moved = last("magnet", "right;right;right;click 0 0;" + times("noop", 12))
    assert moved[0][8] == "red" and moved[1][8] == "silver" and moved[7][8] == "black"


def test_thaw_the_stove_warms_the_gauge_and_melts_the_ice():
    warm = frames("thaw", "click 0 9;" + times("noop", 10))
    assert warm[0][5][2:8] == ["cyan"] * 6 and warm[1][9][0] == "orange"
    assert cells(warm[5], "red") == [(9, 5), (9, 6), (9, 7), (9, 8), (9, 9)]  # five marks after five steps
    assert warm[-1][5][2:8] == ["blue"] * 6 and len(cells(warm[-1], "red")) == 8
    assert warm[5][5][2:8] == ["cyan"] * 6 and warm[6][5][2:4] == ["blue", "cyan"]  # from six marks, left first
    cold = last("thaw", "click 0 9;" + times("noop", 10) + ";click 1 9;" + times("noop", 14))
    assert cold[5][2:8] == ["cyan"] * 6 and cold[9][0] == "maroon" and cells(cold, "red") == []
    spilt = last("thaw", "click 0 9;" + times("noop", 10) + ";up")
    assert spilt[5][2:8] == ["black"] * 6


# Emergent ------------------------------------------------------------------------------------------------------


def test_forest_fire_spreads_to_neighbouring_trees_and_stops_at_gaps():
    fire = frames("forest", "click 2 2;noop;" + times("noop", 30))
    assert fire[0][2][2] == "green" and fire[1][2][2] == "red"
    assert fire[2][2][2] == "gray" and [fire[2][y][x] for x, y in ((1, 2), (3, 2), (2, 1), (2, 3))] == ["red"] * 4
    assert fire[-1][10][10] == "green" and fire[-1][5][2] == "black"  # the bare row and column stop it
    out = last("forest", "click 2 2;noop;down")
    assert cells(out, "red") == []
    planted = last("forest", "click 8 2")
    assert planted[2][8] == "green"


def test_weave_rewrites_the_row_and_keeps_its_history():
    woven = frames("weave", "noop;noop")
    assert cells(woven[0], "gold") == [(12, 0)] and woven[0][24][0] == "magenta"
    assert cells(woven[1], "gold") == [(11, 0), (12, 1), (13, 0)]
    assert cells(woven[2], "gold") == [(10, 0), (11, 1), (12, 2), (13, 1), (14, 0)]
    other = last("weave", "right")
    assert other[24][0] == "cyan" and cells(other, "gold") == [(11, 0), (12, 0), (12, 1), (13, 0)]  # the other rule
    clicked = last("weave", "click 3 0")
    assert clicked[0][3] == "gold" and clicked[0][12] == "gold"
    assert cells(last("weave", "noop;noop;down"), "gold") == [(12, 0)]


def test_crystal_grows_into_cells_that_touch_exactly_one():
    grown = frames("crystal", "noop;noop")
    assert cells(grown[0], "white") == [(7, 7)]
    assert cells(grown[1], "cyan") == [(6, 7), (7, 6), (7, 8), (8, 7)]
    assert cells(grown[2], "blue") == [(5, 7), (7, 5), (7, 9), (9, 7)]  # not the diagonals: they touch two
    seeded = last("crystal", "click 1 1;noop")
    assert seeded[1][1] == "white" and seeded[1][2] == "blue" and seeded[1][0] == "blue"  # the next step's colour
    assert cells(last("crystal", "noop;up"), "cyan") == []


def test_dominoes_fall_along_a_line_and_a_new_domino_bridges_a_gap():
    fall = frames("dominoes", "click 1 2;noop;" + times("noop", 30))
    assert fall[1][2][1] == "orange" and fall[2][2][1] == "gray" and fall[2][2][2] == "orange"
    assert fall[-1][6][3] == "gray" and fall[-1][7][2] == "white"  # the diagonal gap stops it
    bridged = last("dominoes", "click 2 6;click 1 2;" + times("noop", 40))
    assert bridged[6][2] == "gray" and bridged[10][10] == "gray"
    assert cells(last("dominoes", "click 1 2;noop;noop;up"), "gray") == []


def test_trail_ants_carry_food_home_and_fill_the_store():
    fed = frames("trail", "click 6 10;up;" + times("noop", 300))
    assert fed[1][10][6] == "green"
    assert len(cells(fed[-1], "yellow")) > 0  # the store at the top has grown
    assert any("orange" in row for frame in fed for row in frame)  # an ant carried a crumb


# Multi-agent ---------------------------------------------------------------------------------------------------


def test_guards_catch_the_agent_and_the_flag_is_won_by_timing():
    walked = frames("guards", times("up", 12) + ";noop")
    assert walked[12][0][6] == "green" and walked[-1][12][6] == "white"  # back at the start, the flag stays won
    caught = frames("guards", times("right", 5) + ";" + times("up", 3) + ";noop")
    assert caught[-2][9][11] == "white" and caught[-1][12][6] == "white"  # the guard turned and saw it
    assert last("guards", times("up", 12) + ";click 0 0")[0][6] == "yellow"


def test_ducks_join_the_line_follow_and_sit_in_the_pond():
    joined = frames("ducks", "right;right;right;up")
    assert joined[3][9][5] == "white" and joined[3][9][4] == "orange"  # she stays, the duckling joins
    assert joined[4][8][4] == "orange" and joined[4][9][4] == "white"  # it steps into the cell she left
    sat = last("ducks", "right;right;right;up;click 0 0")
    assert sat[9][4] == "yellow"
    swim = last("ducks", "right;right;right;" + times("up", 5) + ";" + times("right", 5) + ";up;up;up;click 0 0")
    assert swim[2][9] == "cyan" and swim[1][9] == "orange"


def test_bees_fly_to_flowers_make_honey_and_clicks_plant_and_pick():
    busy = frames("bees", times("noop", 100))
    assert busy[-1][0][0] == "khaki"
    assert any("gold" in row for frame in busy for row in frame)  # a bee carried nectar
    picked = frames("bees", "click 2 3;click 4 5")
    assert picked[0][3][2] == "pink" and picked[1][3][2] != "pink" and picked[2][5][4] == "pink"


def test_fish_race_for_a_pellet_and_the_winner_grows():
    race = frames("fish", "click 8 3;" + times("noop", 14))
    assert race[1][3][8] == "brown" and race[2][4][8] == "brown" and race[3][4][8] == "brown"  # it sinks slowly
    assert race[4][5][8] == "brown" and cells(race[5], "red") == [(8, 5)] and cells(race[5], "brown") == []  # eaten
    assert cells(last("fish", "click 8 3;" + times("noop", 6) + ";up"), "red") == []


# Logic ---------------------------------------------------------------------------------------------------------

SWITCH = {0: "click 1 4", 1: "click 3 4", 2: "click 5 4", 3: "click 7 4"}


def test_switches_flip_only_in_order_and_light_the_lamp():
    refused = frames("switches", "click 3 4;noop;click 1 4;click 3 5")
    assert refused[1][1][3:5] == ["orange", "orange"] and refused[1][4][3] == "gray"
    assert refused[2][1][3] == "red" and refused[3][4][1] == "yellow" and refused[4][4][3] == "yellow"
    solution = ";".join(SWITCH[i] for i in (0, 1, 0, 2, 0, 1, 0, 3, 0, 1))
    solved = frames("switches", solution + ";noop;left;noop")
    assert solved[-3][1][3] == "green" and [solved[-3][4][x] for x in (1, 3, 5, 7)] == ["yellow"] * 4
    assert solved[-1][1][3] == "red" and [solved[-1][4][x] for x in (1, 3, 5, 7)] == ["gray"] * 4


def test_combo_turns_a_dial_and_its_right_neighbour():
    turned = frames("combo", "click 1 3;click 2 3;click 2 3;click 2 3")
    assert turned[0][3][1:4] == ["red", "green", "blue"] and turned[0][1][2] == "darkgray"
    assert turned[1][3][1:4] == ["green", "blue", "blue"]
    assert turned[-1][3][1:4] == ["green"] * 3 and turned[-1][1][2] == "white"
    assert last("combo", "click 3 3;left")[3][1:4] == ["red", "green", "blue"]


def test_sorter_swaps_neighbours_and_the_lamp_shows_sorted():
    swapped = frames("sorter", "click 1 9")
    assert swapped[0][9][1] == "yellow" and swapped[1][9][1] == "blue" and swapped[1][9][2] == "yellow"
    heights = [3, 7, 1, 8, 5, 2, 6, 4]
    clicks = []
    for end in range(7, 0, -1):  # bubble sort with the swaps a click makes
        for i in range(end):
            if heights[i] > heights[i + 1]:
                heights[i], heights[i + 1] = heights[i + 1], heights[i]
                clicks.append(f"click {i + 1} 9")
    done = frames("sorter", ";".join(clicks) + ";noop;down;noop")
    assert done[-4][0][0] == "green" and done[-4][9][1:9] == [
        "red",
        "orange",
        "yellow",
        "lime",
        "green",
        "cyan",
        "blue",
        "purple",
    ]
    assert done[-1][0][0] == "red"
    assert last("sorter", "up;noop")[2][1] == "purple"


def test_order_needs_the_secret_sequence_and_turns_it_each_round():
    right = frames("order", "click 0 3;click 3 0;click 3 6;click 6 3")
    assert right[1][3][1] == "white" and right[2][3][1:3] == ["white", "white"]
    assert right[-1][3][1:5] == ["lime"] * 4
    wrong = frames("order", "click 0 3;click 6 3;noop")
    assert wrong[2][3][1:5] == ["red"] * 4 and wrong[3][3][1:5] == ["dimgray"] * 4  # a red flash, then out
    round_one = "click 0 3;click 3 0;click 3 6;click 6 3;"
    turned = frames("order", round_one + "click 0 3;click 3 0;click 3 6;click 6 3;click 0 3")
    assert turned[5][3][1:5] == ["dimgray"] * 4 and turned[8][3][1:5] == ["white"] * 3 + ["dimgray"]
    assert turned[-1][3][1:5] == ["lime"] * 4  # red, green, blue, yellow: the cycle one button later
    assert last("order", round_one + "click 0 3;click 0 3;noop")[3][1] == "dimgray"
    restart = frames("order", round_one + "left;click 0 3")
    assert restart[5][3][1:5] == ["dimgray"] * 4 and restart[6][3][1:3] == ["white", "dimgray"]  # round one again


# Game ----------------------------------------------------------------------------------------------------------


def test_snake_crawls_turns_eats_and_starts_over_at_the_edge():
    fed = last("snake", times("noop", 4))
    assert cells(fed, "lime") == [(10, 7)] and cells(fed, "green") == [(7, 7), (8, 7), (9, 7)]  # one longer
    assert len(cells(last("snake", times("noop", 5)), "red")) == 1  # a new apple
    crash = frames("snake", "up;" + times("noop", 7))
    assert cells(crash[7], "lime") == [(6, 0)] and cells(crash[8], "lime") == [(6, 7)]
    assert cells(last("snake", "left;noop"), "lime") == [(8, 7)]  # no turning straight back
    assert cells(last("snake", "click 0 0;noop;noop"), "lime") == [(6, 7)]  # paused


def test_meteor_the_ship_moves_and_fires():
    fired = frames("meteor", "up;noop;left")
    assert cells(fired[0], "cyan") == [(5, 11), (6, 11), (7, 11)]
    assert cells(fired[1], "white") == [(6, 10)] and cells(fired[2], "white") == [(6, 9)]
    assert cells(fired[3], "cyan") == [(4, 11), (5, 11), (6, 11)]
    play = frames("meteor", times("up;noop;noop", 40))
    assert any("yellow" in frame[0] for frame in play)  # a shot hit a meteor


def test_sweeper_uncovers_counts_and_mines():
    interpreter = Interpreter(program_source("sweeper"), seed=1)
    mines = {(t.origin.x, t.origin.y) for t in interpreter.globals["tiles"] if t.values[1]}
    safe = sorted(p for p in ((x, y) for x in range(8) for y in range(8)) if p not in mines)
    assert 1 <= len(mines) <= 6

    def count(p: tuple[int, int]) -> int:
        return sum(1 for m in mines if m != p and abs(m[0] - p[0]) <= 1 and abs(m[1] - p[1]) <= 1)

    for p in safe[:12]:
        frame = interpreter.step(("click", *p))
        assert frame[p[1]][p[0]] == ["white", "blue", "green", "orange"][min(count(p), 3)]
    mine = sorted(mines)[0]
    frame = interpreter.step(("click", *mine))
    assert all(frame[y][x] == "red" for x, y in mines)
    frame = interpreter.step(("click", *safe[-1]))
    assert frame[safe[-1][1]][safe[-1][0]] == "gray"  # the game is over
    frame = interpreter.step("down")
    assert all(c == "gray" for row in frame for c in row)


def test_frog_crosses_on_logs_and_is_sent_back_by_cars_and_water():
    crossed = last("frog", "up;up;up;left;up;up;left;left;up;left;up;up;up")
    assert cells(crossed, "green") == [(3, 1)] and crossed[10][5] == "lime"
    run_over = frames("frog", "up;up;up;up")
    assert cells(run_over[3], "lime") == [(5, 7)] and cells(run_over[4], "lime") == [(5, 10)]
    assert cells(last("frog", "up;up;up;left;up;up;left;left;up;left;up;up;up;click 0 0"), "green") == []


def test_bricks_the_ball_breaks_bricks_and_bounces_off_the_paddle():
    play = frames("bricks", "left;up;" + times("noop", 18))
    assert cells(play[1], "cyan") == [(5, 11)] and cells(play[2], "cyan") == [(5, 11)]
    assert cells(play[3], "cyan") == [(6, 10)] and play[0][3][11] == "yellow"
    assert play[10][3][11] == "black" and cells(play[10], "cyan") == [(12, 4)]  # the brick broke, the ball turned
    assert cells(play[19], "cyan") == [(4, 10)]  # back up off the paddle
    lost = last("bricks", "up;" + times("noop", 30))
    assert cells(lost, "cyan") == [(6, 11)]  # missed, it waits on the paddle


def test_stones_take_and_the_computer_replies():
    game = frames("stones", "click 6 4;noop;click 4 6;noop")
    assert game[0][0][4] == "blue" and len(cells(game[0], "white")) == 12
    assert game[1][0][4] == "orange" and game[1][4][6] == "black" and game[1][5][6] == "white"
    assert game[2][0][4] == "blue" and [game[2][y][2] for y in (6, 7, 8)] == ["black"] * 3  # it emptied pile one
    assert game[4][0][4] == "blue" and len(cells(game[4], "white")) == 4  # piles 0, 2, 2
    lost = last("stones", "click 4 5;noop;click 6 8;noop;click 4 8;noop")
    assert lost[0][4] in ("red", "blue")
    assert len(cells(last("stones", "click 6 4;noop;down"), "white")) == 12


# Tool use ------------------------------------------------------------------------------------------------------

CROSSING = (
    "up;right;right;right;right;"  # the plank at (3, 9), laid at (5, 9)
    "right;left;up;up;up;left;left;right;right;down;down;down;right;right;"  # the plank at (2, 6), laid at (6, 9)
    "right;left;left;up;up;up;up;up;up;up;left;left;left;right;right;right;down;down;down;down;down;down;down;"
    "right;right;right;"  # the plank at (1, 2), laid at (7, 9)
    "right;right;right;right;up;up;up;up"
)


def test_bridge_planks_carried_and_laid_cross_the_river():
    start = frames("bridge", "right;up;right;right;right")
    assert start[3][9][3] == "orange" and start[4][9][4] == "orange"  # picked up and carried
    assert start[-1][9][5] == "tan" and start[-1][9][4] == "white"  # laid
    assert cells(last("bridge", "right;right;right;right;right"), "white") == [(4, 10)]  # water stops it
    crossed = last("bridge", CROSSING + ";down")
    assert crossed[5][10] == "green" and [crossed[9][x] for x in (5, 6, 7)] == ["tan"] * 3


def test_pickaxe_breaks_rocks_and_the_gem_counts():
    dug = frames("pickaxe", "down;down;right;up;up;up;right;right;right;right;right;right;left;right")
    assert dug[3][9][2] == "lightblue" and dug[8][6][5] == "gray" and dug[9][6][4] == "lightblue"
    assert dug[9][6][5] == "black" and dug[10][6][5] == "lightblue"  # broke the rock, then walked in
    assert dug[-1][0][0:3] == ["green", "green", "black"] and dug[-1][4][5] == "gray"
    blocked = last("pickaxe", "right;right;right;right;right")
    assert blocked[7][4] == "white" and blocked[7][5] == "gray"


def test_ladder_carried_stood_and_climbed_reaches_the_gem():
    climbed = frames("ladder", "left;left;left;left;down;up;up;up;up;up;right;right;right;right;left")
    assert climbed[4][10][6] == "orange" and climbed[4][10][0] == "black"  # picked up
    assert [climbed[5][y][6] for y in (5, 6, 7, 8, 9)] == ["brown"] * 5
    assert climbed[-1][5][10] == "green"
    refused = last("ladder", "left;left;left;left;right;down")
    assert refused[10][7] == "orange" and refused[9][7] == "black"  # under the ledge there is no room
    fallen = frames("ladder", "left;left;left;left;down;up;up;up;up;up;left;noop;noop")
    assert cells(fallen[11], "white") == [(5, 5)] and cells(fallen[-1], "white") == [(5, 7)]


def test_garden_water_from_the_well_makes_seeds_grow():
    grow = frames("garden", "click 5 4;left;left;left;left;right;right;right;down;down;down;down;" + times("noop", 30))
    assert grow[1][4][5] == "tan" and grow[5][1][2] == "cyan"  # the can is full
    assert grow[12][4][5] == "darkgreen" and grow[-1][4][5] == "lime"
    dry = last("garden", "click 5 4;" + times("noop", 30))
    assert dry[4][5] == "tan"  # without water nothing grows
    assert last("garden", "click 1 1")[1][1] == "blue"
