"""The catalogue of Autumn environments: 43 entries over the six categories, programs that check, Table B.1
statistics computed from the programs and equal to counts made by hand."""

from pathlib import Path

import numpy as np
import pytest

from discogym.core import UserError
from discogym.suites.autumn.catalog import (
    CATALOG,
    CATEGORIES,
    PROGRAMS_DIR,
    EnvStats,
    catalog_rows,
    env_info,
    env_stats,
    program_source,
    program_stats,
)
from discogym.suites.autumn.challenges import random_actions
from discogym.suites.autumn.interpreter import Interpreter
from discogym.suites.autumn.lint import check_program

NAMES = [info.name for info in CATALOG]


FIRST_15 = [
    *("gravity", "water", "ball", "particles", "life", "wind", "counter", "paint", "collector", "push", "chase"),
    *("traffic", "keydoor", "bucket", "lightsout"),
]


def test_43_environments_cover_the_six_categories():
    assert len(CATALOG) == 43 and len(set(NAMES)) == 43
    assert NAMES[:15] == FIRST_15  # task seeds derive from catalogue position: the first 15 never move
    assert {info.category for info in CATALOG} == set(CATEGORIES)
    assert set(NAMES) == {path.stem for path in PROGRAMS_DIR.glob("*.sexp")}  # every program is catalogued
    by_category = {c: sorted(i.name for i in CATALOG if i.category == c) for c in CATEGORIES}
    assert by_category["physical"] == sorted(
        ["ball", "gravity", "particles", "water", "dunes", "rink", "clouds", "magnet", "thaw"]
    )
    assert by_category["emergent"] == sorted(["life", "wind", "forest", "weave", "crystal", "dominoes", "trail"])
    assert by_category["game"] == sorted(
        ["collector", "push", "snake", "meteor", "sweeper", "frog", "bricks", "stones"]
    )
    assert {"counter", "paint", "lightsout"} <= set(by_category["logic"])
    counts = {c: len(names) for c, names in by_category.items()}
    assert counts == {"physical": 9, "emergent": 7, "multi-agent": 6, "logic": 7, "game": 8, "tool-use": 6}


def test_the_catalogue_spans_the_papers_ranges():
    stats = [env_stats(name) for name in NAMES]
    sizes = [s.grid_size for s in stats]
    assert min(sizes) <= 5 and max(sizes) == 25  # from small up to 25 x 25
    assert all(1 <= s.colors <= 12 for s in stats) and max(s.colors for s in stats) >= 8


@pytest.mark.parametrize("name", NAMES)
def test_each_program_exists_and_checks(name):
    info = env_info(name)
    assert info.program_file.is_file() and info.program_file.stem == name
    assert info.description and "\n" not in info.description
    source = program_source(name)
    assert source.startswith(";")  # a first comment line describes it
    assert check_program(source) == []
    stats = env_stats(name)
    assert 1 <= stats.objects <= 5 and 5 <= stats.grid_size <= 25 and stats.length <= 60


def test_stats_equal_counts_made_by_hand():
    # counter.sexp: object types Bar, Lamp; state variables count (an Int: latent), bar and lamp (objects);
    # 11 lines of code (13 lines less the 2 comment lines); on clicked, on left; no randomness; colours cyan
    # (Bar), yellow and gray (Lamp); GRID_SIZE 8.
    assert env_stats("counter") == EnvStats(2, 1, 11, 2, False, 3, 8, ("cyan", "gray", "yellow"), ("count",))
    # chase.sexp: Agent, Wolf, Sheep, Rock; state variables rocks, agent, wolf, sheep (drawn) and tick (latent);
    # 34 lines less 3 comment lines = 31; four arrows and two click clauses; uniformChoice (the sheep wander);
    # white, red, yellow, gray; GRID_SIZE 12.
    assert env_stats("chase") == EnvStats(4, 1, 31, 6, True, 4, 12, ("gray", "red", "white", "yellow"), ("tick",))
    # paint.sexp: Dab, Swatch; current (latent), swatch, dabs; 12 lines; three clauses; six colours, all reaching
    # a Cell through the `colors` list and the `color` fields; GRID_SIZE 16.
    paint = env_stats("paint")
    assert (paint.objects, paint.latent, paint.length, paint.on_clauses, paint.stochastic) == (2, 1, 12, 3, False)
    assert paint.color_names == ("blue", "green", "orange", "purple", "red", "yellow") and paint.grid_size == 16
    # collector.sexp draws through randomPositions; particles through uniformChoice.
    assert env_stats("collector").stochastic and env_stats("particles").stochastic


def test_counting_rules_on_small_programs():
    source = """; a comment line
(program
  ; an indented comment line

  (object Dot (: shade String) (Cell 0 0 shade))
  (= shades (list "Red" "blue"))
  (= pick (--> n (at shades n)))
  (= hidden (initnext (list 1 2) (prev hidden)))
  (= none (initnext (list) (prev none)))
  (= dot (initnext (Dot (pick 0) (Position 0 0)) (updateObj dot "shade" "green")))
  (= where (initnext ((randomPosition)) (prev where)))
  (on (== "white" "black") (= dot dot))   ; strings compared, not painted
)"""
    stats = program_stats(source)
    assert stats.objects == 1 and stats.on_clauses == 1 and stats.grid_size == 16
    assert stats.length == 10  # the blank and the two comment-only lines are not counted
    assert stats.latent_names == ("hidden", "where")  # an empty list counts as drawn
    assert stats.color_names == ("blue", "green", "red")  # through a named lambda, a list and a field
    assert stats.stochastic  # randomPosition, from the standard library, draws
    own = source.replace("(= where (initnext ((randomPosition)) (prev where)))", "(= randomPosition (--> () 3))")
    assert not program_stats(own).stochastic  # the program's own randomPosition does not draw


@pytest.mark.parametrize("name", NAMES)
def test_the_colours_seen_are_among_the_colours_counted(name):
    interpreter = Interpreter(program_source(name), seed=5)
    background = str(interpreter.globals.get("background", "black"))
    seen = {colour for row in interpreter.frame for colour in row}
    for action in random_actions(np.random.default_rng(11), interpreter.grid_size, 300):
        seen |= {colour for row in interpreter.step(action) for colour in row}
    assert seen - {background} <= set(env_stats(name).color_names)


def test_19_of_the_43_environments_are_stochastic():
    stochastic = {info.name for info in CATALOG if env_stats(info.name).stochastic}
    assert len(stochastic) == 19  # as the paper's 19 of 43
    assert {"chase", "traffic", "keydoor", "bucket"} <= stochastic and "lightsout" not in stochastic
    assert {"snake", "sweeper", "garden"} <= stochastic and not {"rink", "switches", "stones"} & stochastic


def test_unknown_names_give_a_user_error_listing_the_names():
    with pytest.raises(UserError, match=r"unknown Autumn environment 'nope'.*ball.*wind"):
        env_info("nope")
    with pytest.raises(UserError):
        program_source("nope")
    with pytest.raises(UserError):
        env_stats("nope")


def test_rows_for_a_table_and_json():
    rows = catalog_rows()
    assert [row["name"] for row in rows] == NAMES
    assert set(rows[0]) == {
        "name",
        "category",
        "description",
        "objects",
        "latent",
        "length",
        "on_clauses",
        "stochastic",
        "colors",
        "grid_size",
    }
    counter = rows[NAMES.index("counter")]
    assert counter["category"] == "logic" and counter["latent"] == 1 and counter["grid_size"] == 8


def test_the_docs_table_shows_the_computed_statistics():
    docs = (Path(__file__).parents[3] / "docs/autumn.md").read_text(encoding="utf-8")
    section = docs.split("## The environments\n", 1)[1]
    shown = [
        line for line in section.splitlines() if line.startswith("| ") and not line.startswith(("| env ", "| --- "))
    ]
    expected = [
        f"| {r['name']} | {r['category']} | {r['description']} | {r['objects']} | {r['latent']} | {r['length']} "
        f"| {r['on_clauses']} | {'Yes' if r['stochastic'] else 'No'} | {r['colors']} | {r['grid_size']} |"
        for r in catalog_rows()
    ]
    assert shown == expected
