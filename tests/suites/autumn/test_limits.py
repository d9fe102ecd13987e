"""Hostile Autumn programs: each stops with one AutumnError (a clear line at the CLI), never a traceback, a
hang or unbounded memory."""

import time

import pytest

from discogym.suites.autumn.interpreter import OPS_BUDGET, Interpreter
from discogym.suites.autumn.sexpr import INT_MAX, INT_MIN, MAX_NESTING, AutumnError, parse
from tests.conftest import run_discogym
from tests.suites.autumn.helpers import program, value


def test_nesting_deeper_than_the_limit_is_an_error_not_a_recursion_error():
    deep = "(+ 1 " * 330 + "1" + ")" * 330
    with pytest.raises(AutumnError, match=f"nested more than {MAX_NESTING} deep"):
        Interpreter(program(f"(= x {deep})"))
    with pytest.raises(AutumnError, match="nested more than"):
        parse("(" * 5000 + ")" * 5000)


def test_nesting_up_to_the_limit_still_runs():
    depth = MAX_NESTING - 4  # (program (= x ...)) takes two levels; leave room
    nested = "(+ 1 " * depth + "0" + ")" * depth
    assert value(program(f"(= x {nested})"), "x") == depth


def test_integer_literals_beyond_64_bits_are_parse_errors():
    assert value(program(f"(= x {INT_MAX})"), "x") == INT_MAX
    assert value(program(f"(= x {INT_MIN})"), "x") == INT_MIN
    with pytest.raises(AutumnError, match="outside the 64-bit range"):
        parse(str(INT_MAX + 1))
    with pytest.raises(AutumnError, match=r"\(5000 digits\) is outside the 64-bit range"):
        parse("9" * 5000)  # Python refuses to convert over 4,300 digits: a ValueError before the fix


@pytest.mark.parametrize("expr", [f"(* {INT_MAX} 2)", f"(+ {INT_MAX} 1)", f"(- {INT_MIN} 1)", f"(- {INT_MIN})"])
def test_arithmetic_beyond_64_bits_is_an_overflow_error(expr):
    with pytest.raises(AutumnError, match="integer overflow"):
        Interpreter(program(f"(= x {expr})"))


def test_squaring_every_step_stops_at_the_overflow_instead_of_growing_without_bound():
    interpreter = Interpreter(program("(= x (initnext 2 (* (prev x) (prev x))))"))
    with pytest.raises(AutumnError, match="integer overflow"):
        for _ in range(40):
            interpreter.step()
    assert interpreter.globals["x"] == 2**32  # the last square that fits


def test_a_list_doubling_every_step_stops_at_the_step_budget():
    interpreter = Interpreter(program("(= xs (initnext (list 1) (concat (list (prev xs) (prev xs)))))"))
    with pytest.raises(AutumnError, match="calls and list elements"):
        for _ in range(40):
            interpreter.step()
    assert len(interpreter.globals["xs"]) <= OPS_BUDGET


def test_one_call_making_a_million_lists_stops_at_the_budget_quickly():
    start = time.perf_counter()
    with pytest.raises(AutumnError, match="calls and list elements"):
        Interpreter(program("(= n (length (map (--> i (range 0 1000000)) (range 0 1000000))))"))
    assert time.perf_counter() - start < 10


def test_range_with_a_far_start_is_refused_before_it_is_made():
    with pytest.raises(AutumnError, match="more than the 1,000,000 elements"):
        Interpreter(program(f"(= xs (range {INT_MIN} 0))"))


def test_loading_many_definitions_is_linear():
    def load_seconds(count: int) -> float:
        source = program(*(f"(= v{i} {i})" for i in range(count)))
        start = time.perf_counter()
        Interpreter(source)
        return time.perf_counter() - start

    small, large = load_seconds(2_000), load_seconds(16_000)
    assert large < 16 * small + 1  # quadratic loading took 64 times as long (and over 60 s for 90,000)


def test_redefinition_keeps_the_last_definition():
    assert value(program("(= x 1)", "(= x (initnext 5 (prev x)))", "(= x 3)"), "x") == 3


def test_the_cli_reports_hostile_programs_in_one_line(tmp_path):
    cases = {
        "binary.sexp": b"\x89PNG\r\n\x1a\n\xff\xfe",
        "deep.sexp": ("(program (= x " + "(+ 1 " * 330 + "1" + ")" * 330 + "))").encode(),
        "digits.sexp": ("(program (= x " + "9" * 5000 + "))").encode(),
    }
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        result = run_discogym("autumn", "run", str(path))
        assert result.returncode == 2 and "Traceback" not in result.stderr, (name, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("error: "), result.stderr
    assert "is not UTF-8 text" in run_discogym("autumn", "check", str(tmp_path / "binary.sexp")).stderr
