"""Fuzzing the Autumn reader and interpreter: any text, and any program built from the language's own words,
either runs or stops with an AutumnError (one line at the CLI); never another exception, a hang or a blow-up."""

import contextlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from discogym.suites.autumn.interpreter import Interpreter
from discogym.suites.autumn.sexpr import INT_MAX, AutumnError, parse

FUZZ = settings(max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

WORDS = [
    *("+", "-", "*", "/", "%", "==", "<", "and", "or", "!", "if", "then", "else", "let", "=", "..", "-->", "list"),
    *("prev", "map", "filter", "foldl", "concat", "range", "length", "head", "tail", "at", "allPositions", "sqrt"),
    *("Position", "Cell", "addObj", "removeObj", "updateObj", "uniformChoice", "randomPositions", "print", "x", "y"),
    *("true", "false", "null", "left", "clicked", "GRID_SIZE", "background", "origin"),
]
atoms = st.one_of(
    st.sampled_from(WORDS),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.sampled_from([str(INT_MAX), "1000000", "0", '"red"']),
)
expressions = st.recursive(
    atoms,
    lambda inner: st.lists(inner, min_size=1, max_size=5).map(lambda items: "(" + " ".join(items) + ")"),
    max_leaves=40,
)


@FUZZ
@given(st.text(alphabet=st.sampled_from('()"; \n\\-0123456789abc\x00\u00e9\u2003'), max_size=300))
def test_the_reader_takes_any_text(text):
    with contextlib.suppress(AutumnError):
        parse(text)


@FUZZ
@given(st.integers(min_value=0, max_value=400).map(lambda depth: "(" * depth + ")" * depth))
def test_the_reader_takes_any_nesting(text):
    with contextlib.suppress(AutumnError):
        parse(text)


@FUZZ
@given(init=expressions, following=expressions, clause=expressions)
def test_the_interpreter_runs_or_reports_any_program(init, following, clause):
    source = f"(program (= GRID_SIZE 4) (= x (initnext {init} {following})) (on true {clause}))"
    try:
        interpreter = Interpreter(source)
        for action in ("left", None, ("click", 1, 2)):
            interpreter.step(action)
    except AutumnError:
        pass
