"""Every construct and built-in of Autumn on small programs with exact frames or values, quirks included."""

import pytest

from discogym.suites.autumn.compat import official_order
from discogym.suites.autumn.compiler import c_divide, c_remainder
from discogym.suites.autumn.interpreter import Interpreter
from discogym.suites.autumn.sexpr import AutumnError
from discogym.suites.autumn.values import Instance, Position
from tests.suites.autumn.helpers import program, run, value

DOT = "(object Dot (: color String) (Cell 0 0 color))"


def test_objects_render_at_origin_plus_offset_and_off_grid_cells_are_dropped():
    src = program(
        '(object L (list (Cell 0 0 "red") (Cell 1 0 "blue") (Cell 0 1 "GREEN")))',
        "(= a (L (Position 2 2)))",
        "(= b (L (Position 3 0)))",
    )
    assert run(src) == ["...r/...g/..rb/..g."]


def test_paint_order_state_variables_first_then_other_globals_later_covers_earlier():
    src = program(
        DOT,
        '(= late (Dot "blue" (Position 0 0)))',
        '(= s1 (initnext (Dot "red" (Position 0 0)) (prev s1)))',
        '(= s2 (initnext (Dot "green" (Position 0 0)) (prev s2)))',
        '(= s3 (initnext (Dot "red" (Position 1 0)) (prev s3)))',
        '(= other (Dot "yellow" (Position 1 0)))',
    )
    # state variables in program order (red, green), then the other globals (blue, then yellow over red)
    assert run(src)[0].split("/")[0] == "by.."


def test_background_and_colour_case():
    src = '(program (= GRID_SIZE 2) (= background "White") (object D (Cell 0 0 "RED")) (= d (D (Position 1 1))))'
    assert run(src) == ["ww/wr"]


def test_initnext_prev_and_on_clause_updates_skip_next():
    src = program("(= n (initnext 0 (+ (prev n) 1)))", "(on left (= n 10))")
    assert [value(src, "n", a) for a in ("", "noop", "noop; noop", "noop; left", "noop; left; noop")] == [
        0,
        1,
        2,
        10,
        11,
    ]


def test_on_clauses_run_in_order_and_see_earlier_assignments():
    src = program(
        "(= a (initnext 0 (prev a)))", "(= b (initnext 0 (prev b)))", "(on left (= a 5))", "(on (== a 5) (= b (+ a 1)))"
    )
    assert (value(src, "a", "left"), value(src, "b", "left")) == (5, 6)


def test_next_expressions_run_in_program_order_and_read_earlier_results():
    src = program("(= a (initnext 1 (+ (prev a) 1)))", "(= b (initnext 0 a))")
    assert value(src, "b", "noop") == 2  # b's NEXT sees a's new value


def test_prev_reads_the_copy_made_at_the_start_of_the_step():
    src = program(
        "(= a (initnext 1 (prev a)))", "(= b (initnext 0 (prev b)))", "(on left (let (= a 7) (= b (prev a))))"
    )
    assert (value(src, "a", "left"), value(src, "b", "left")) == (7, 1)


def test_integer_division_and_remainder_truncate_toward_zero():
    quotients = [c_divide(7, 2), c_divide(-7, 2), c_divide(7, -2)]
    assert [*quotients, c_remainder(-7, 2), c_remainder(7, -2)] == [3, -3, -3, -1, 1]
    src = program("(= q (/ -7 2))", "(= r (% -7 2))", "(= neg (- 5))")
    assert (value(src, "q"), value(src, "r"), value(src, "neg")) == (-3, -1, -5)
    source = program("(= z (/ 1 0))")
    with pytest.raises(AutumnError, match=f"line 1, column {source.index('(/') + 1}: division by zero"):
        Interpreter(source)


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("(if 0 then 1 else 2)", 1),  # 0 is true
        ("(if (list) then 1 else 2)", 2),
        ("(if (list 1) then 1 else 2)", 1),
        ("(if null then 1 else 2)", 2),
        ('(if "" then 1 else 2)', 1),
        ("(if false then 1 else 2)", 2),
        ("(& 0 true)", True),
        ("(| false (list))", False),
        ("(! 0)", False),
        ("(and true false)", False),
        ("(or false true)", True),
        ("(== (list 1 2) (list 1 2))", True),
        ("(!= (Position 1 2) (Position 1 2))", False),
        ("(<= 3 3)", True),
    ],
)
def test_truthiness_and_operators(expr, expected):
    assert value(program(f"(= v {expr})"), "v") == expected


def test_operators_are_strictly_binary():
    source = program("(= v (+ 1 2 3))")
    with pytest.raises(AutumnError, match=rf"line 1, column {source.index('(+') + 1}: '\+' takes two operands"):
        Interpreter(source)


def test_zero_argument_calls_and_references():
    src = program("(= f (--> () 5))", "(= ref (f))", "(= called ((f)))")
    interpreter = Interpreter(src)
    assert interpreter.globals["called"] == 5
    assert interpreter.globals["ref"] is interpreter.globals["f"]  # (f) is f, not a call


def test_callables_are_called_in_on_conditions_and_logical_operators():
    src = program(
        "(= hits (initnext 0 (prev hits)))",
        "(= both (initnext false (prev both)))",
        "(on clicked (= hits (+ hits 1)))",
        "(on (& left true) (= both true))",
    )
    assert value(src, "hits", "click 0 0; noop; click 1 1") == 2
    assert value(src, "both", "left") is True and value(src, "both", "right") is False


def test_lambdas_let_and_dynamic_scope():
    src = program(
        "(= add (--> (a b) (+ a b)))",
        "(= inc (--> x (+ x 1)))",
        "(= reads_caller (--> () (+ hidden 1)))",
        "(= v (let (= hidden 41) ((reads_caller))))",  # the lambda sees its caller's let
        "(= w (let (= t 2) (= t (+ t 3)) (add t (inc 1))))",
        "(= g (fn x (* x 2)))",
        "(= h (g 4))",
    )
    assert (value(src, "v"), value(src, "w"), value(src, "h")) == (42, 7, 8)


def test_field_read_and_assignment_recolours_the_object():
    src = program(
        '(object Lamp (: on Bool) (Cell 0 0 (if on then "yellow" else "gray")))',
        "(= lamp (initnext (Lamp false (Position 1 1)) (prev lamp)))",
        "(on left (= (.. lamp on) true))",
        "(on right (= (.. lamp origin) (Position 2 1)))",
    )
    assert run(src, "left; right") == ["..../.a../..../....", "..../.y../..../....", "..../..y./..../...."]
    lamp = value(src, "lamp", "right")
    assert isinstance(lamp, Instance) and lamp.get("origin") == Position(2, 1)


def test_click_persists_and_clicked_with_an_object():
    src = program(
        DOT,
        '(= d (Dot "red" (Position 1 1)))',
        "(= where (initnext null (prev where)))",
        "(= hit (initnext false false))",
        "(on (clicked d) (= hit true))",
        "(on true (= where click))",
    )
    assert value(src, "where", "click 3 2; noop; left") == Position(3, 2)
    assert value(src, "hit", "click 1 1") is True and value(src, "hit", "click 0 1") is False


def test_list_builtins():
    src = program(
        "(= xs (list 3 1 2))",
        "(= m (map (--> x (* x 10)) xs))",
        "(= f (filter (--> x (> x 1)) xs))",
        "(= s (foldl (--> (acc x) (- acc x)) 100 xs))",
        "(= an (any (--> x (== x 2)) xs))",
        "(= len (length xs))",
        "(= hd (head xs))",
        "(= tl (tail xs))",
        "(= at1 (at xs 1))",
        "(= cat (concat (list (list 1 2) (list) (list 3))))",
        "(= rg (range 2 5))",
        "(= il (isList xs))",
        "(= ae (arrayEqual xs (list 3 1 2)))",
        "(= sq (sqrt 17))",
        "(= ap (allPositions 2))",
    )
    interpreter = Interpreter(src)
    got = {
        k: interpreter.globals[k]
        for k in ("m", "f", "s", "an", "len", "hd", "tl", "at1", "cat", "rg", "il", "ae", "sq")
    }
    assert got == {
        "m": (30, 10, 20),
        "f": (3, 2),
        "s": 94,
        "an": True,
        "len": 3,
        "hd": 3,
        "tl": 2,
        "at1": 1,
        "cat": (1, 2, 3),
        "rg": (2, 3, 4),
        "il": True,
        "ae": True,
        "sq": 4,
    }  # tail is the LAST element
    assert interpreter.globals["ap"] == (Position(0, 0), Position(0, 1), Position(1, 0), Position(1, 1))  # x-major


def test_grid_builtins_and_stale_is_free_pos():
    src = program(
        DOT,
        "(= adj (adjPositions (Position 0 0)))",
        '(= d (initnext (Dot "red" (Position 1 1)) (prev d)))',
        "(= free (initnext true (isFreePos (Position 1 1))))",
        "(= off (isFreePos (Position -1 9)))",
        "(= inb (isWithinBounds (Position 4 0)))",
        "(= rot (rotate (Position 2 3)))",
        '(on left (= d (updateObj d "origin" (Position 3 3))))',
    )
    interpreter = Interpreter(src)
    assert interpreter.globals["adj"] == (Position(1, 0), Position(0, 1))  # left and up are off the grid
    assert interpreter.globals["off"] is True and interpreter.globals["inb"] is False
    assert interpreter.globals["rot"] == Position(-3, 2)
    interpreter.step("noop")
    assert interpreter.globals["free"] is False  # the last frame has the dot at (1,1)
    interpreter.step("left")  # the dot moves away, but NEXT reads the frame before this step
    assert interpreter.globals["free"] is False
    interpreter.step("noop")
    assert interpreter.globals["free"] is True


def test_object_builtins_and_one_argument_remove():
    src = program(
        DOT,
        '(= ds (list (Dot "red" (Position 0 0)) (Dot "blue" (Position 1 0))))',
        '(= lone (Dot "green" (Position 3 3)))',
        '(= ds2 (updateObj ds (--> d (updateObj d "color" "yellow")) (--> d (== (.. d color) "red"))))',
        '(= ds3 (removeObj ds2 (--> d (== (.. d color) "blue"))))',
        '(= ds4 (addObj ds3 (Dot "white" (Position 2 0))))',
        "(= cnt (length ((allObjs))))",
        "(on left (removeObj lone))",
    )
    interpreter = Interpreter(src)
    assert [d.get("color") for d in interpreter.globals["ds4"]] == ["yellow", "white"]
    assert interpreter.globals["cnt"] == 8  # every object any global holds: ds 2, lone 1, ds2 2, ds3 1, ds4 2
    assert run(src, "left")[1].split("/")[3] == "...."  # lone is gone


def test_uniform_choice_and_random_positions_follow_the_lehmer_generator():
    interpreter = Interpreter(program("(= c (uniformChoice (list 10 20 30)))", "(= ps (randomPositions 4 2))"), seed=5)
    state, draws = 5, []
    for _ in range(5):
        state = ((48271 * state) % 2**32) % (2**31 - 1)
        draws.append(state)
    assert interpreter.globals["c"] == (10, 20, 30)[draws[0] % 3]
    assert interpreter.globals["ps"] == (Position(draws[1] % 4, draws[2] % 4), Position(draws[3] % 4, draws[4] % 4))
    zero = Interpreter(program("(= c (uniformChoice (list 1 2 3) 4))"), seed=0)
    assert zero.globals["c"] == (1, 1, 1, 1)  # seed 0 makes every draw 0


def test_the_standard_library_moves_and_collides():
    src = program(
        DOT,
        '(= wall (Dot "gray" (Position 2 0)))',
        '(= a (initnext (Dot "red" (Position 0 0)) (prev a)))',
        "(on right (= a (moveRightNoCollision a)))",
        "(on down (= a (moveDown a)))",
    )
    assert [f.split("/")[0] for f in run(src, "right; right; right")] == ["r.a.", ".ra.", ".ra.", ".ra."]


def test_print_and_defined():
    interpreter = Interpreter(
        program('(= p (print (list 1 true "x")))', '(= d1 (defined "p"))', '(= d2 (defined "q"))')
    )
    assert interpreter.output == ['(list 1 true "x")']
    assert (interpreter.globals["d1"], interpreter.globals["d2"]) == (True, False)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("(program (= x (+ 1 2)", "line 1, column 10: '(' is never closed"),
        ("(program (= x 1)))", "unexpected ')'"),
        ('(program (= x "abc))', "string is never closed"),
        ("(program (= x (foo 1)))", "line 1, column 16: unknown name 'foo'"),
        ("(program (= x (if 1 2 3)))", "if is written (if CONDITION then A else B)"),
        ("(program (= x (head (list))))", "line 1, column 15: head of an empty list"),
        ('(program (object A (Cell 0 0 "red")) (= a (A 1 (Position 0 0))))', "A takes 0 field value(s) and an origin"),
        ("(program (= f (--> x (f x))) (= y (f 1)))", "recursion too deep"),
        ("(program (bogus 1))", "unknown statement 'bogus'"),
        ("(= x 1)", "a program is one (program ...) form"),
    ],
)
def test_errors_say_what_and_where(source, message):
    with pytest.raises(AutumnError) as caught:
        Interpreter(source)
    assert message in str(caught.value)


def test_a_runtime_error_in_a_step_is_located_and_the_interpreter_survives():
    src = program("(= n (initnext 0 (prev n)))", "(on left (= n (at (list 1) 5)))")
    interpreter = Interpreter(src)
    column = src.index("(at ") + 1
    with pytest.raises(AutumnError, match=f"line 1, column {column}: at: index 5 is outside a list of 1"):
        interpreter.step("left")
    interpreter.step("noop")  # the next step runs


@pytest.mark.parametrize("flavor", ["libstdc++", "libc++", "libc++-wasm32"])
def test_compatibility_mode_evaluates_next_in_the_official_hash_map_order(flavor):
    names = ["alpha", "beta", "gamma", "delta", "epsilon"]
    # each NEXT is the step's count of NEXTs evaluated so far, read from a chain: a variable's value is one more
    # than the largest value among the variables evaluated before it this step
    biggest = "(--> (m v) (if (> v m) then v else m))"
    lines = [
        f"(= {n} (initnext 0 (+ 1 (foldl {biggest} 0 (list {' '.join(o for o in names if o != n)})))))" for n in names
    ]
    src = program(*lines)
    order = official_order(names, flavor)
    official = Interpreter(src, order="official", flavor=flavor)
    official.step("noop")
    plain = Interpreter(src)
    plain.step("noop")
    assert [plain.globals[n] for n in names] == [1, 2, 3, 4, 5]  # program order
    assert [official.globals[n] for n in order] == [1, 2, 3, 4, 5]  # the map's order
    assert order != names


def test_more_object_forms_and_events():
    src = program(
        DOT,
        '(= pair (list (Dot "red" (Position 0 0)) (Dot "blue" (Position 1 0))))',
        '(= other (Dot "green" (Position 3 3)))',
        '(= fn_form (updateObj other (--> d (updateObj d "color" "white"))))',
        "(= list_form (updateObj pair (--> d (move d (Position 0 1)))))",
        "(= by_instance (removeObj pair (head pair)))",
        '(= cellpos (Cell (Position 2 2) "red"))',
        '(= within (isWithinBounds (Dot "red" (Position 3 3))))',
        '(= outside (isWithinBounds (Dot "red" (Position 4 3))))',
        "(= cells (length ((renderAll))))",
        "(= hit (initnext false false))",
        "(= moves (initnext 0 (prev moves)))",
        "(on (clicked pair) (= hit true))",
        "(on (| up (| down right)) (= moves (+ moves 1)))",
    )
    interpreter = Interpreter(src)
    g = interpreter.globals
    assert g["fn_form"].get("color") == "white" and g["fn_form"].id == g["other"].id
    assert [d.origin for d in g["list_form"]] == [Position(0, 1), Position(1, 1)]
    assert [d.get("color") for d in g["by_instance"]] == ["blue"]
    assert g["cellpos"].position == Position(2, 2)
    assert (g["within"], g["outside"]) == (True, False)
    assert g["cells"] == 7  # pair 2, other 1, fn_form 1, list_form 2, by_instance 1: one cell each
    assert value(src, "hit", "click 1 0") is True and value(src, "hit", "click 2 0") is False
    assert value(src, "moves", "up; down; right; left; noop") == 3


def test_a_runaway_step_stops_at_the_operation_budget(monkeypatch):
    import discogym.suites.autumn.interpreter as interpreter_module

    monkeypatch.setattr(interpreter_module, "OPS_BUDGET", 10_000)
    src = program("(= n (initnext 0 (prev n)))", "(on left (= n (length (map (--> i (+ i 1)) (range 0 20000)))))")
    interpreter = Interpreter(src)
    with pytest.raises(AutumnError, match="the step made more than 10,000 calls"):
        interpreter.step("left")
    assert interpreter.step("noop")  # the interpreter goes on


def test_built_ins_refuse_to_make_huge_lists():
    with pytest.raises(AutumnError, match="more than the 1,000,000 elements"):
        Interpreter(program("(= xs (range 0 2000000000))"))
