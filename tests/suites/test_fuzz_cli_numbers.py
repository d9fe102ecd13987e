"""Fuzzing the numbers the suites' own sub-commands take (counts, seeds, ticks, sizes): any value either runs
or is refused in one line (exit 2); never a traceback, a hang or unbounded memory.

The commands run in this process through the CLI's entry point, so an uncaught exception fails the test as
the traceback a user would have seen. Values a command accepts but that take long by design (say 100,000
steps) are left out: the fuzz is about small values and values far outside the range."""

import contextlib
import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from discogym.interfaces.cli import main
from discogym.suites.autumn.catalog import PROGRAMS_DIR

FUZZ = settings(
    max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
numbers = st.one_of(
    st.integers(min_value=-3, max_value=12),
    st.integers(min_value=10**7, max_value=10**40),
    st.integers(min_value=-(10**40), max_value=-(10**7)),
).map(str)


def run_cli(*args: str) -> tuple[int, str]:
    """Exit code and stderr of ``discogym ARGS``; any exception other than the exit fails the test."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else 1
        else:
            code = 0
    return code, err.getvalue()


def assert_clean(code: int, err: str) -> None:
    assert code in (0, 2), (code, err)
    assert "Traceback" not in err, err
    if code == 2:
        assert err.startswith("error:") and len(err.strip().splitlines()) == 1, err


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("world") / "world.txt"
    path.write_text("0 0 0 minecraft:stone\n0 1 0 minecraft:stone_button[face=floor]\n", encoding="utf-8")
    return path


def command(*args: str, world: Path, out: Path) -> list[str]:
    """The command line with the placeholders WORLD, PROGRAM and OUT filled in."""
    fill = {"WORLD": str(world), "PROGRAM": str(PROGRAMS_DIR / "counter.sexp"), "OUT": str(out)}
    return [fill.get(arg, arg) for arg in args]


# Each case: a command and one of its numeric options; the fuzzed value goes after the option (a "{}" in an
# argument is replaced instead), every other option keeps a small valid value.
CASES = {
    "autumn run --seed": ("autumn", "run", "PROGRAM", "--steps", "2", "--seed"),
    "autumn run --steps": ("autumn", "run", "PROGRAM", "--steps"),
    "redstone simulate --ticks": ("redstone", "simulate", "WORLD", "--ticks"),
    "redstone simulate --press tick": ("redstone", "simulate", "WORLD", "--press", "0,1,0@{}"),
    "redstone simulate --press x": ("redstone", "simulate", "WORLD", "--press", "{},1,0"),
    "redstone simulate --at": ("redstone", "simulate", "WORLD", "--press", "0,1,0", "--at"),
    "redstone view --tick": ("redstone", "view", "WORLD", "--tick"),
    "redstone generate --lamps": ("redstone", "generate", "--family", "A", "--lamps"),
    "redstone generate --reach": ("redstone", "generate", "--family", "B", "--reach"),
    "redstone generate --delays": ("redstone", "generate", "--family", "C", "--lamps", "3", "--delays", "1,{}"),
    "redstone generate --distances": ("redstone", "generate", "--family", "D", "--distances", "4,{}"),
    "redstone generate --tau": ("redstone", "generate", "--family", "E", "--tau"),
    "redstone generate --tolerance": ("redstone", "generate", "--family", "A", "--tolerance"),
    "petri simulate --seeds": ("petri", "simulate", "market", "--seeds"),
    "petri simulate --first-seed": ("petri", "simulate", "market", "--seeds", "2", "--first-seed"),
    "crafting generate --count": ("crafting", "generate", "--out", "OUT", "--count"),
    "crafting generate --seed": ("crafting", "generate", "--out", "OUT", "--count", "2", "--seed"),
}


@pytest.mark.parametrize("case", CASES)
@FUZZ
@given(value=numbers)
def test_a_suite_command_takes_any_number(case, value, world, tmp_path):
    args = command(*CASES[case], world=world, out=tmp_path / "out.json")
    if any("{}" in arg for arg in args):
        args = [arg.replace("{}", value) for arg in args]
    else:
        args.append(value)
    assert_clean(*run_cli(*args))
