"""The compiler's own promises: Python code generated from a program keeps the order of evaluation, never runs a
program's texts as code, and is compiled once per process."""

import pytest

from discogym.suites.autumn import compiler
from discogym.suites.autumn.interpreter import Interpreter
from discogym.suites.autumn.sexpr import AutumnError
from tests.suites.autumn.helpers import draw, program, run, value


def test_operands_arguments_and_let_parts_are_evaluated_left_to_right():
    source = program(
        "(= sum (+ (print 1) (print 2)))",
        "(= same (== (print 3) (print 4)))",
        "(= both (& (print true) (print false)))",
        "(= listed (list (print 5) (print 6)))",
        "(= last (let (print 7) (print 8)))",
        "(= called (Position (print 9) (print 10)))",
    )
    interpreter = Interpreter(source)
    assert interpreter.output == ["1", "2", "3", "4", "true", "false", "5", "6", "7", "8", "9", "10"]
    assert interpreter.globals["last"] == 8


def test_conditions_stop_as_soon_as_they_are_decided():
    source = program("(= a (& false (print 1)))", "(= b (| true (print 2)))", "(= c (if true then 3 else (print 4)))")
    interpreter = Interpreter(source)
    assert interpreter.output == []
    assert (interpreter.globals["a"], interpreter.globals["b"], interpreter.globals["c"]) == (False, True, 3)


def test_a_programs_texts_and_names_stay_values():
    hostile = "') or __import__('os').system('exit 3') or ('"
    assert value(program(f'(= text "{hostile}")'), "text") == hostile
    with pytest.raises(AutumnError, match="unknown name 'G'"):
        Interpreter(program("(= x (G))"))  # the generated code's own names are not the program's


def test_a_scope_names_a_program_writes_are_its_own():
    source = program("(= f (--> (parent) (let (= inner parent) (+ inner 1))))", "(= x (f 41))")
    assert value(source, "x") == 42


def test_a_second_interpreter_of_a_program_compiles_nothing():
    source = program("(= x (+ 1 2))", "(= y (initnext 0 (+ (prev y) x)))")
    Interpreter(source)
    misses = compiler._code_of.cache_info().misses
    again = Interpreter(source)
    again.step()
    assert compiler._code_of.cache_info().misses == misses
    assert again.globals["y"] == 3


def test_a_second_interpreter_replays_the_compiling_into_its_own_functions_with_the_same_frames(monkeypatch):
    source = program(
        '(object Dot (: on Bool) (Cell 0 0 (if on then "red" else "blue")))',
        '(= flip (--> d (updateObj d "on" (! (.. d on)))))',
        "(= dots (initnext (list (Dot false (Position 1 1))) (updateObj (prev dots) flip)))",
        "(= inc (--> x (+ x 1)))",
        "(= twice (--> x (inc (inc x))))",
        "(= n (initnext 0 (twice (prev n))))",
        "(on clicked (= dots (addObj dots (Dot true click))))",
    )
    monkeypatch.setattr(compiler, "_PLANS", {})
    replayed: list[object] = []
    replay = compiler._Plan.replay

    def counted(plan, into):
        replayed.append(plan)
        return replay(plan, into)

    monkeypatch.setattr(compiler._Plan, "replay", counted)
    first = Interpreter(source)  # compiled, and recorded
    assert not replayed
    second = Interpreter(source)
    assert len(replayed) == len(compiler._PLANS) > 5  # every compile of the library and the program replayed
    assert second.globals["twice"] is not first.globals["twice"]
    actions = [None, ("click", 3, 4), "left", ("click", 5, 5), None]
    frames = [[interpreter.step(action) for action in actions] for interpreter in (first, second)]
    assert frames[0] == frames[1] and first.globals["n"] == second.globals["n"] == 10
    assert len(first.globals["dots"]) == 3
    # a lambda replayed is this interpreter's: its body reads this interpreter's globals
    second.globals["n"] = 100
    assert first.evaluate("(twice n)") == 12 and second.evaluate("(twice n)") == 102


def test_cells_made_once_are_those_of_equal_field_values_of_the_same_kind():
    source = program(
        '(object Box (: v Int) (if (== (+ v 0) 1) then (Cell 0 0 "red") else (Cell 0 0 "blue")))',
        "(= boxes (initnext (list (Box 1 (Position 0 0)) (Box 1 (Position 1 0))) (list (Box true (Position 2 0)))))",
    )
    interpreter = Interpreter(source)
    assert draw(interpreter.frame).split("/")[0] == "rr.."
    with pytest.raises(AutumnError, match="'\\+' needs integers, got a boolean"):
        interpreter.step()  # true is not 1, though Python's True == 1: no cells made for 1 are reused


def test_cells_that_read_a_global_are_made_every_frame():
    source = program(
        "(object Lamp (Cell 0 0 shade))", '(= shade (initnext "red" "blue"))', "(= lamp (Lamp (Position 0 0)))"
    )
    assert run(source, "noop; noop") == [draw_row("r..."), draw_row("b..."), draw_row("b...")]


def draw_row(first: str) -> str:
    return "/".join([first, "....", "....", "...."])
