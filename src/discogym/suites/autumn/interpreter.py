"""The Autumn interpreter: programs compiled once to Python closures, then stepped and rendered.

A step (the spec's "A time step"): the step's input is set; the state is copied for ``prev``; the ``on``
clauses run in program order, each seeing what earlier ones assigned; every state variable no clause
assigned takes its NEXT value; the input is cleared (``click`` keeps its last position); the frame is
rendered. Runtime errors carry the line and column of the expression that failed; a step has an operation
budget (calls, and the elements of every list a built-in makes), a wall-clock budget and a call-depth budget;
integers are 64-bit (a result outside that range is an error, not a huge number).
"""

import operator
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from discogym.suites.autumn import builtins
from discogym.suites.autumn.compat import DEFAULT_FLAVOR, Flavor, OfficialMap, official_order
from discogym.suites.autumn.sexpr import (
    INT_MAX,
    INT_MIN,
    AutumnError,
    Expr,
    Node,
    Number,
    SList,
    Symbol,
    Text,
    parse,
    show,
)
from discogym.suites.autumn.values import Builtin, Cell, Instance, Lambda, ObjectType, Position, describe, truthy

Code = Callable[["Frame"], Any]
Action = str | tuple[str, int, int] | None  # None is noop; ("click", x, y)
Order = Literal["program", "official"]
Stdlib = Literal["discogym", "official"]
MAX_DEPTH = 120  # nested calls of Autumn functions in one evaluation
OPS_BUDGET = 2_000_000  # function calls and list elements made, per step (and for initialization)
TIME_BUDGET = 5.0  # seconds per step
OVERFLOW = "integer overflow: the result is outside the 64-bit range"
OPERATORS = {"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or", "&", "|", "!"}


class Frame:
    """A scope: its own names and the scope it sits on (the caller's, for a function call)."""

    __slots__ = ("names", "parent")

    def __init__(self, names: dict[str, Any], parent: "Frame | None") -> None:
        self.names = names
        self.parent = parent


@dataclass
class StateVar:
    name: str
    init: Code
    next: Code
    node: Node


@dataclass
class OnClause:
    condition: Code
    body: Code
    node: Node


def c_div(a: int, b: int) -> int:
    """Integer division truncating toward zero (C)."""
    if b == 0:
        raise AutumnError("division by zero")
    quotient = abs(a) // abs(b)
    return int64(quotient if (a >= 0) == (b >= 0) else -quotient)


def int64(value: int) -> int:
    """``value`` if it is a 64-bit integer; AutumnError otherwise (the official interpreter's integers are C++
    ints: we stop where they would overflow rather than let a number grow without bound)."""
    if not INT_MIN <= value <= INT_MAX:
        raise AutumnError(OVERFLOW)
    return value


def c_mod(a: int, b: int) -> int:
    """Remainder with the dividend's sign (C)."""
    if b == 0:
        raise AutumnError("remainder by zero")
    return a - b * c_div(a, b)


class Interpreter:
    """One running Autumn program."""

    def __init__(
        self,
        source: str,
        seed: int = 1,
        order: Order = "program",
        prelude: str | None = None,
        flavor: Flavor = DEFAULT_FLAVOR,
        stdlib: Stdlib = "discogym",
    ) -> None:
        self.order = order
        self.stdlib = stdlib
        self.flavor = flavor
        self.seed = seed
        self.rng_state = seed
        self.globals: dict[str, Any] = {}
        self.root = Frame(self.globals, None)
        self.caller = self.root  # the scope a built-in was called from
        self.types: dict[str, ObjectType] = {}
        # by name, in definition order (a redefinition moves a name to the end); dicts keep loading linear
        self._state: dict[str, StateVar] = {}
        self._definitions: dict[str, tuple[Code, Node]] = {}
        self.on_clauses: list[OnClause] = []
        self.declared: dict[str, str] = {}
        self.prev: dict[str, Any] = {}
        self.updated: set[str] = set()
        self.event: tuple[Any, ...] | None = None
        self.occupied: frozenset[tuple[int, int]] = frozenset()
        self.output: list[str] = []
        self.next_id = 0
        self.time = 0
        self._depth = 0
        self._ops = 0
        self._deadline = 0.0
        self._builtins = builtins.make(self)
        self._user_names: dict[str, None] = {}  # the program's own names, in first-definition order
        self.global_map: OfficialMap | None = None  # compatibility mode: the official map of globals
        library = _parsed_library(builtins.PRELUDE if prelude is None else prelude)
        forms = parse(source)
        # names only the globals can hold are looked up there directly (scope is dynamic: any other is searched
        # for through every calling scope)
        self._bound = _bound_names(library) | _bound_names(forms)
        self._load(library, user=False)
        if prelude is None and stdlib == "official":  # the one name whose two meanings cannot live side by side
            self._load(parse("(program (= nextLiquid officialNextLiquid))"), user=False)
        self._load(forms, user=True)
        self._initialize()
        self.frame = self.render()

    def restart(self) -> None:
        """Back to the initial state, as a new interpreter of the same program and seed starts, without compiling
        the program again (the globals dict is cleared in place: compiled code holds it)."""
        self.rng_state = self.seed
        self.globals.clear()
        self.globals.update(self.types)
        self.caller = self.root
        self.prev, self.updated, self.event = {}, set(), None
        self.occupied, self.output = frozenset(), []
        self.next_id = self.time = self._depth = self._ops = 0
        self.global_map = None
        self._initialize()
        self.frame = self.render()

    @property
    def state_vars(self) -> list[StateVar]:
        """The state variables (``initnext`` definitions), in definition order."""
        return list(self._state.values())

    @property
    def definitions(self) -> list[tuple[str, Code, Node]]:
        """The plain definitions (name, code, statement), in definition order."""
        return [(name, code, node) for name, (code, node) in self._definitions.items()]

    # ------------------------------------------------------------------------------------------
    # Loading

    def _load(self, forms: list[Expr], user: bool) -> None:
        if len(forms) != 1 or not _is_form(forms[0], "program"):
            if not forms:
                raise AutumnError("the program is empty; write (program ...)")
            first = forms[0] if len(forms) == 1 else forms[1]
            raise AutumnError("a program is one (program ...) form", first.line, first.column)
        program = forms[0]
        assert isinstance(program, SList)
        for statement in program.items[1:]:
            self._statement(statement, user)

    def _statement(self, stmt: Expr, user: bool) -> None:
        if not isinstance(stmt, SList) or not stmt.items or not isinstance(stmt.items[0], Symbol):
            raise AutumnError(f"expected a statement (object, :, = or on), found {show(stmt)}", stmt.line, stmt.column)
        head = stmt.items[0].name
        if head == "object":
            self._object(stmt)
        elif head == ":":
            if len(stmt.items) != 3 or not isinstance(stmt.items[1], Symbol):
                raise AutumnError("a declaration is (: name Type)", stmt.line, stmt.column)
            self.declared[stmt.items[1].name] = show(stmt.items[2])
        elif head == "=":
            self._definition(stmt, user)
        elif head == "on":  # items after the expression are ignored, as the official interpreter does
            if len(stmt.items) < 3:
                raise AutumnError("an on clause is (on CONDITION EXPRESSION)", stmt.line, stmt.column)
            self.on_clauses.append(OnClause(self.compile(stmt.items[1]), self.compile(stmt.items[2]), stmt))
        else:
            raise AutumnError(f"unknown statement '{head}' (object, :, = or on)", stmt.line, stmt.column)

    def _definition(self, stmt: SList, user: bool) -> None:
        if len(stmt.items) != 3 or not isinstance(stmt.items[1], Symbol):
            raise AutumnError("a definition is (= name EXPRESSION)", stmt.line, stmt.column)
        name = stmt.items[1].name
        value = stmt.items[2]
        self._state.pop(name, None)
        self._definitions.pop(name, None)
        if _is_form(value, "initnext"):
            assert isinstance(value, SList)
            if len(value.items) != 3:
                raise AutumnError("initnext takes an initial and a next expression", value.line, value.column)
            init, following = (self.compile(item) for item in value.items[1:])
            self._state[name] = StateVar(name, init, following, stmt)
        else:
            self._definitions[name] = (self.compile(value), stmt)
        if user:
            self._user_names.setdefault(name)

    def _object(self, stmt: SList) -> None:
        items = stmt.items
        if len(items) < 3 or not isinstance(items[1], Symbol):
            raise AutumnError("an object is (object Name (: field Type) ... CELLS)", stmt.line, stmt.column)
        name = items[1].name
        fields: list[str] = []
        for item in items[2:-1]:
            if not _is_form(item, ":") or len(item.items) != 3 or not isinstance(item.items[1], Symbol):  # type: ignore[union-attr]
                raise AutumnError(f"object {name}: a field is (: name Type)", item.line, item.column)
            fields.append(item.items[1].name)  # type: ignore[union-attr]
        cell_code = self.compile(items[-1])
        field_names = tuple(fields)
        root = self.root

        def cells(instance: Instance) -> tuple[Cell, ...]:
            names = dict(zip(field_names, instance.values, strict=True))
            names["origin"] = instance.origin
            value = cell_code(Frame(names, root))
            found = value if isinstance(value, tuple) else (value,)
            for cell in found:
                if not isinstance(cell, Cell):
                    raise AutumnError(f"object {name}'s cells must be Cells, not {describe(cell)}")
            return found

        kind = ObjectType(name, field_names, cells, stmt)
        self.types[name] = kind
        self.globals[name] = kind

    def _initialize(self) -> None:
        self._start_budget()
        self.globals["click"] = self.globals.get("click")
        codes: dict[str, Code] = {name: code for name, (code, _) in self._definitions.items()}
        codes |= {name: v.init for name, v in self._state.items()}
        self.state_order = self._state_order()
        if self.order == "program":
            order = self._program_order(codes)
        else:  # the official interpreter defines the plain globals as it reads them, then the state variables
            order = self._program_order(self._definitions) + self.state_order
        for name in order:
            self.globals[name] = self._guard(codes[name], self.root)
        self.global_map = None if self.order == "program" else self._official_globals()

    def _official_globals(self) -> OfficialMap:
        """The official interpreter's map of globals after its start: its built-ins, its library's definitions,
        a flag of its own, the program's plain globals as read, the state variables in INIT order, and the cache
        its first rendering leaves."""
        table = OfficialMap(self.flavor)
        plain = [name for name in self._user_names if name in self._definitions]
        for name in (*OFFICIAL_BUILTIN_NAMES, *OFFICIAL_LIBRARY_NAMES, "SpecialConditionTriggered", *plain):
            table.insert(name)
        for name in (*self.state_order, "cacheRendered"):
            table.insert(name)
        return table

    def _state_order(self) -> list[str]:
        """The order of the state variables' INIT and NEXT: program order, or in compatibility mode the
        iteration order of the official interpreter's hash map of them (compat.py)."""
        names = self._program_order(self._state)
        if self.order == "program":
            return names
        return official_order(names, self.flavor)

    def _program_order(self, names: Iterable[str]) -> list[str]:
        wanted = set(names)
        prelude = [n for n in self._definition_order() if n in wanted and n not in self._user_names]
        return prelude + [n for n in self._user_names if n in wanted]

    def _definition_order(self) -> list[str]:
        return [*self._definitions, *self._state]

    # ------------------------------------------------------------------------------------------
    # Running

    def step(self, action: Action = None) -> list[list[str]]:
        """Run one time step with ``action`` (None/"noop", "left", "right", "up", "down" or ("click", x, y))
        and return the rendered frame."""
        self.event = _event(action)
        if self.event is not None and self.event[0] == "click":
            self.globals["click"] = Position(self.event[1], self.event[2])
        self.prev = dict(self.globals)
        self.updated = set()
        self._start_budget()
        for clause in self.on_clauses:
            if self._condition(clause):  # at the top of a body, as officially, a new name is a new global
                self._guard(clause.body, self.root)
        state = self._state
        globals_ = self.globals
        for name in self.state_order:  # a variable removed (removeObj) is no longer defined: no NEXT for it
            if name not in self.updated and name in globals_:
                value = self._guard(state[name].next, Frame({}, self.root))
                _same_kind(name, globals_[name], value, state[name].node)
                globals_[name] = value
        self.event = None
        self.time += 1
        self.frame = self.render()
        return self.frame

    def evaluate(self, text: str) -> Any:
        """The value of the Autumn expression ``text`` in the current state; no time passes. A bare sequence of
        items such as ``or (a) (b)`` (how the official change-detection conditions are written) is read as one
        call. AutumnError when it does not parse or fails."""
        forms = parse(text)
        expr = forms[0] if len(forms) == 1 else parse(f"({text})")[0]
        names: set[str] = set()
        _expression_names(expr, names)
        self._bound |= names  # its lambdas' parameters are local names
        self._start_budget()
        return self._call_if_callable(self._guard(self.compile(expr), Frame({}, self.root)))

    def _condition(self, clause: OnClause) -> bool:
        """An ``on`` clause's condition: true or false (a function is called first); anything else is an error,
        as officially."""
        value = self._call_if_callable(self._guard(clause.condition, Frame({}, self.root)))
        if value is True or value is False:
            return value
        where = clause.node
        raise AutumnError(
            f"an on clause's condition must be true or false, not {describe(value)}", where.line, where.column
        )

    def _guard(self, code: Code, frame: Frame) -> Any:
        try:
            return code(frame)
        except RecursionError:
            raise AutumnError(f"recursion too deep (more than {MAX_DEPTH} nested calls)") from None

    def _start_budget(self) -> None:
        self._ops = 0
        self._depth = 0
        self._deadline = time.perf_counter() + TIME_BUDGET

    def _tick(self, node: Node) -> None:
        """Check the step's budgets (the caller has counted the operation in ``_ops``)."""
        if self._ops > OPS_BUDGET:
            raise AutumnError(f"the step made more than {OPS_BUDGET:,} calls and list elements", node.line, node.column)
        if self._ops & 4095 == 0 and time.perf_counter() > self._deadline:
            raise AutumnError(f"the step ran longer than {TIME_BUDGET:g} s", node.line, node.column)

    def charge(self, elements: int) -> None:
        """Count the elements of a list a built-in is about to make against the step's budget (before making
        it, so that one call cannot allocate more than the budget)."""
        self._ops += elements
        if self._ops > OPS_BUDGET:
            raise AutumnError(f"the step made more than {OPS_BUDGET:,} calls and list elements")

    # ------------------------------------------------------------------------------------------
    # Rendering

    @property
    def grid_size(self) -> int:
        size = self.globals.get("GRID_SIZE", 16)
        if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= 256:
            raise AutumnError(f"GRID_SIZE must be an integer from 1 to 256, not {size!r}")
        return size

    def rendered_names(self) -> list[str]:
        """State variables in program order, then the other globals in definition order."""
        state = self._program_order(self._state)
        known = set(state)
        return state + [n for n in self._program_order(self._definitions) if n not in known]

    def objects(self) -> list[Instance]:
        """Every object held by a global (in lists, and lists in lists, too), in paint order."""
        found: list[Instance] = []
        for name in self.rendered_names():
            _instances(self.globals.get(name), found)
        return found

    def all_objects(self) -> list[Instance]:
        """``(allObjs)``: every object held by a global; in compatibility mode in the order of the official
        interpreter's hash map of globals (compat.OfficialMap), else in paint order."""
        if self.global_map is None:
            return self.objects()
        found: list[Instance] = []
        for name in self.global_map.names():
            _instances(self.globals.get(name), found)
        return found

    def forget(self, name: str) -> None:
        """Remove the global ``name`` (one-argument ``removeObj``)."""
        del self.globals[name]
        if self.global_map is not None:
            self.global_map.erase(name)

    def cells_of(self, instance: Instance) -> list[Cell]:
        """An object's cells at their grid positions."""
        origin = instance.origin
        return [
            Cell(Position(origin.x + c.position.x, origin.y + c.position.y), c.color.lower())
            for c in instance.type.cells(instance)
        ]

    def render(self) -> list[list[str]]:
        """The frame: grid[y][x] colour names."""
        try:
            return self._render()
        except RecursionError:
            raise AutumnError(f"recursion too deep while rendering (more than {MAX_DEPTH} nested calls)") from None

    def _render(self) -> list[list[str]]:
        size = self.grid_size
        background = str(self.globals.get("background", "black")).lower()
        grid = [[background] * size for _ in range(size)]
        occupied: set[tuple[int, int]] = set()
        self._start_budget()
        for instance in self.objects():
            for cell in self.cells_of(instance):
                x, y = cell.position.x, cell.position.y
                occupied.add((x, y))  # off the grid too: isFreePos there is false, as in the official one
                if 0 <= x < size and 0 <= y < size:
                    grid[y][x] = cell.color
        self.occupied = frozenset(occupied)
        return grid

    # ------------------------------------------------------------------------------------------
    # Compiling expressions

    def compile(self, expr: Expr) -> Code:
        """A closure that evaluates ``expr`` in a frame."""
        if isinstance(expr, Number):
            number = expr.value
            return lambda frame: number
        if isinstance(expr, Text):
            text = expr.value
            return lambda frame: text
        if isinstance(expr, Symbol):
            return self._symbol(expr)
        if not expr.items:
            raise AutumnError("empty expression ()", expr.line, expr.column)
        head = expr.items[0]
        if isinstance(head, Symbol):
            special = self._special(head.name)
            if special is not None:
                return special(expr)
            if head.name in OPERATORS:
                return self._operator(expr)
        if len(expr.items) == 1:
            return self._single(expr)
        return self._call(expr)

    def _special(self, name: str) -> Callable[[SList], Code] | None:
        method = SPECIAL_FORMS.get(name)
        return None if method is None else getattr(self, method)

    def _symbol(self, expr: Symbol) -> Code:
        name = expr.name
        if name == "true":
            return lambda frame: True
        if name == "false":
            return lambda frame: False
        if name == "null":
            return lambda frame: None
        builtin_table = self._builtins
        if name not in self._bound:
            return self._global_symbol(expr)

        def look_up(frame: Frame) -> Any:
            current: Frame | None = frame
            while current is not None:
                names = current.names
                if name in names:
                    return names[name]
                current = current.parent
            found = builtin_table.get(name)
            if found is None:
                raise AutumnError(f"unknown name '{name}'", expr.line, expr.column)
            return found

        return look_up

    def _global_symbol(self, expr: Symbol) -> Code:
        """A name no scope but the globals ever binds: the globals, then the built-ins."""
        name, globals_, builtin_table = expr.name, self.globals, self._builtins

        def look_up_global(frame: Frame) -> Any:
            if name in globals_:
                return globals_[name]
            found = builtin_table.get(name)
            if found is None:
                raise AutumnError(f"unknown name '{name}'", expr.line, expr.column)
            return found

        return look_up_global

    def _single(self, expr: SList) -> Code:
        """``(f)`` is the value of f; ``((f))`` calls f with no arguments."""
        only = expr.items[0]
        inner = self.compile(only)
        if isinstance(only, Symbol):
            return inner

        def call_without_arguments(frame: Frame) -> Any:
            return self.apply(inner(frame), (), frame, expr)

        return call_without_arguments

    def _call(self, expr: SList) -> Code:
        function = self.compile(expr.items[0])
        arguments = tuple(self.compile(item) for item in expr.items[1:])
        apply = self.apply
        if len(arguments) == 1:  # the common counts without a generator (arguments left to right, as always)
            (first,) = arguments
            return lambda frame: apply(function(frame), (first(frame),), frame, expr)
        if len(arguments) == 2:
            first, second = arguments
            return lambda frame: apply(function(frame), (first(frame), second(frame)), frame, expr)

        def call(frame: Frame) -> Any:
            return apply(function(frame), tuple(argument(frame) for argument in arguments), frame, expr)

        return call

    def apply(self, function: Any, args: tuple[Any, ...], frame: Frame, node: Node) -> Any:
        """Call a function value with evaluated arguments; errors get ``node``'s place."""
        self._ops += 1
        if self._ops > OPS_BUDGET or not self._ops & 4095:
            self._tick(node)
        try:
            if type(function) is Lambda:
                params = function.params
                if len(args) < len(params):  # too many are ignored, as officially; too few crash Autumn.cpp
                    raise AutumnError(f"{function.name} takes {len(params)} argument(s), got {len(args)}")
                self._depth += 1
                if self._depth > MAX_DEPTH:
                    raise AutumnError(f"recursion too deep (more than {MAX_DEPTH} nested calls)")
                try:  # extra arguments are dropped
                    if len(params) == 1:
                        return function.body(Frame({params[0]: args[0]}, frame))
                    return function.body(Frame(dict(zip(params, args, strict=False)), frame))
                finally:
                    self._depth -= 1
            if isinstance(function, Builtin):
                if function.takes is not None and len(args) not in function.takes:
                    counts = " or ".join(map(str, function.takes))
                    raise AutumnError(f"{function.name} takes {counts} argument(s), got {len(args)}")
                outer, self.caller = self.caller, frame  # functions a built-in calls sit on this scope
                try:
                    return function.function(*args)
                finally:
                    self.caller = outer
            if isinstance(function, ObjectType):
                return self.construct(function, args)
            raise AutumnError(f"cannot call {describe(function)}")
        except AutumnError as err:
            if not err.line:
                err.line, err.column = node.line, node.column
                err.args = (err.describe(),)
            raise
        except (TypeError, ValueError, AttributeError, IndexError) as err:
            raise AutumnError(f"{err}", node.line, node.column) from None

    def construct(self, kind: ObjectType, args: tuple[Any, ...]) -> Instance:
        """``(Name field ... origin)``."""
        if len(args) != len(kind.fields) + 1:
            raise AutumnError(f"{kind.name} takes {len(kind.fields)} field value(s) and an origin, got {len(args)}")
        origin = args[-1]
        if not isinstance(origin, Position):
            raise AutumnError(f"{kind.name}'s last argument is its origin Position, not {describe(origin)}")
        self.next_id += 1
        return Instance(kind, self.next_id, tuple(args[:-1]), origin)

    def _truth(self, value: Any) -> bool:
        """A condition's value as true or false (a boolean at once; a function value is called first)."""
        if value is True or value is False:
            return value
        return truthy(self._call_if_callable(value))

    def _call_if_callable(self, value: Any) -> Any:
        """In conditions and logical operators a function value is called with no arguments."""
        if isinstance(value, Lambda | Builtin) and (isinstance(value, Builtin) or not value.params):
            return self.apply(value, (), self.root, value.node if isinstance(value, Lambda) else Node(0, 0))
        return value

    # Special forms

    def _if(self, expr: SList) -> Code:
        items = expr.items
        if len(items) != 6 or not _is_word(items[2], "then") or not _is_word(items[4], "else"):
            raise AutumnError("if is written (if CONDITION then A else B)", expr.line, expr.column)
        condition, yes, no = self.compile(items[1]), self.compile(items[3]), self.compile(items[5])

        def choose(frame: Frame) -> Any:
            value = condition(frame)
            if value is not True and value is not False:  # a boolean decides at once
                value = truthy(self._call_if_callable(value))
            return yes(frame) if value else no(frame)

        return choose

    def _let(self, expr: SList) -> Code:
        parts = [self.compile(item) for item in expr.items[1:]]
        if not parts:
            raise AutumnError("let needs at least one expression", expr.line, expr.column)

        def block(frame: Frame) -> Any:
            inner = Frame({}, frame)
            value = None
            for part in parts:
                value = part(inner)
            return value

        return block

    def _assign(self, expr: SList) -> Code:
        if len(expr.items) != 3:
            raise AutumnError("assignment is (= name EXPRESSION)", expr.line, expr.column)
        target, value_code = expr.items[1], self.compile(expr.items[2])
        if isinstance(target, Symbol):
            name = target.name

            root, assign_outside = self.root, self._assign_outside

            def assign(frame: Frame) -> Any:  # Interpreter.assign, its search of the local scopes inline
                value = value_code(frame)
                current: Frame | None = frame
                while current is not root and current is not None:
                    names = current.names
                    if name in names:
                        names[name] = value
                        return value
                    current = current.parent
                assign_outside(name, value, frame)
                return value

            return assign
        if _is_form(target, "..") and len(target.items) == 3:  # type: ignore[union-attr]
            holder, field_name = target.items[1], target.items[2]  # type: ignore[union-attr]
            if not isinstance(holder, Symbol) or not isinstance(field_name, Symbol):
                raise AutumnError("a field assignment is (= (.. variable field) EXPRESSION)", expr.line, expr.column)
            read = self._symbol(holder)

            def assign_field(frame: Frame) -> Any:
                value = value_code(frame)
                current = read(frame)
                if not isinstance(current, Instance):
                    raise AutumnError(f"{holder.name} holds {describe(current)}, not an object", expr.line, expr.column)
                self.assign(holder.name, current.with_field(field_name.name, value), frame)
                return value

            return assign_field
        raise AutumnError(f"cannot assign to {show(target)}", expr.line, expr.column)

    def assign(self, name: str, value: Any, frame: Frame) -> None:
        """A local already bound in an enclosing scope is updated there; else a global is updated (and counts
        as updated this step); else the name is bound in the innermost scope."""
        current: Frame | None = frame
        while current is not None and current is not self.root:
            if name in current.names:
                current.names[name] = value
                return
            current = current.parent
        self._assign_outside(name, value, frame)

    def _assign_outside(self, name: str, value: Any, frame: Frame) -> None:
        """The assignment of a name that no local scope binds: to the global, or a new name in ``frame``."""
        if name in self.globals:
            _same_kind(name, self.globals[name], value)
            self.globals[name] = value
            self.updated.add(name)
            return
        frame.names[name] = value
        if frame is self.root and self.global_map is not None:  # a new global (e.g. one removeObj removed)
            self.global_map.insert(name)

    def _field(self, expr: SList) -> Code:
        if len(expr.items) != 3 or not isinstance(expr.items[2], Symbol):
            raise AutumnError("field access is (.. object field)", expr.line, expr.column)
        holder, name = self.compile(expr.items[1]), expr.items[2].name
        usual_type, usual_field = USUAL_FIELDS.get(name, (None, None))

        def read(frame: Frame) -> Any:
            value = holder(frame)
            if type(value) is usual_type:  # a Position's x or y, an object's origin: no checks to make
                return usual_field(value)  # type: ignore[misc]
            if name == "render" and isinstance(value, Instance):  # every object's method: its cells on the grid
                return self.render_method(value)
            try:
                return field_of(value, name)
            except AutumnError as err:
                raise AutumnError(err.message, expr.line, expr.column) from None

        return read

    def render_method(self, instance: Instance) -> Builtin:
        """``(.. obj render)``: a function of no arguments giving the object's cells on the grid."""
        return Builtin("render", lambda: tuple(self.cells_of(instance)), (0,))

    def _lambda(self, expr: SList) -> Code:
        if len(expr.items) != 3:
            raise AutumnError("a lambda is (--> params body)", expr.line, expr.column)
        params_expr = expr.items[1]
        if isinstance(params_expr, Symbol):
            params: tuple[str, ...] = (params_expr.name,)
        elif isinstance(params_expr, SList) and all(isinstance(p, Symbol) for p in params_expr.items):
            params = tuple(p.name for p in params_expr.items)  # type: ignore[union-attr]
        else:
            raise AutumnError("lambda parameters are a name or a list of names", expr.line, expr.column)
        body = self.compile(expr.items[2])
        made = Lambda(params, body, expr)
        return lambda frame: made

    def _list(self, expr: SList) -> Code:
        parts = [self.compile(item) for item in expr.items[1:]]
        return lambda frame: tuple(part(frame) for part in parts)

    def _prev(self, expr: SList) -> Code:
        if len(expr.items) != 2:
            raise AutumnError("prev takes one variable", expr.line, expr.column)
        target = expr.items[1]
        inner = self.compile(target)
        if isinstance(target, Text):  # (prev "name") reads the variable of that name, as officially
            return self._prev_by_name(target)
        if not isinstance(target, Symbol):
            return inner
        name = target.name

        def previous(frame: Frame) -> Any:
            if name in self.prev:
                return self.prev[name]
            return inner(frame)

        return previous

    def _prev_by_name(self, target: Text) -> Code:
        name = target.value

        def previous(frame: Frame) -> Any:
            if name in self.prev:
                return self.prev[name]
            if name in self.globals:  # while initializing, there is no previous state yet: the current value
                return self.globals[name]
            raise AutumnError(f"prev: no variable named {name!r}", target.line, target.column)

        return previous

    def _operator(self, expr: SList) -> Code:
        head = expr.items[0]
        assert isinstance(head, Symbol)
        op = head.name
        operands = [self.compile(item) for item in expr.items[1:]]
        if op in ("!", "-") and len(operands) == 1:
            (only,) = operands
            if op == "!":
                return lambda frame: not truthy(self._call_if_callable(only(frame)))
            return lambda frame: ARITHMETIC["-"](0, _integer(only(frame), "-", expr), expr)
        if len(operands) != 2:
            raise AutumnError(f"'{op}' takes two operands (operators are binary)", expr.line, expr.column)
        left, right = operands
        truth = self._truth
        if op in ("and", "&"):

            def both(frame: Frame) -> bool:
                a = left(frame)
                if a is False or (a is not True and not truth(a)):  # a boolean decides at once
                    return False
                b = right(frame)
                return b if b is True or b is False else truth(b)

            return both
        if op in ("or", "|"):

            def either(frame: Frame) -> bool:
                a = left(frame)
                if a is True or (a is not False and truth(a)):
                    return True
                b = right(frame)
                return b if b is True or b is False else truth(b)

            return either
        constant = _literal_integer(expr.items[2])  # (< x 3), (+ y 1): the literal needs no evaluation nor check
        if op in ("==", "!="):
            same = operator.eq if op == "==" else operator.ne
            if constant is not None:
                return lambda frame: same(left(frame), constant)
            return lambda frame: same(left(frame), right(frame))
        if op in COMPARISONS:  # never an error past the operands' checks: no error handler around it
            compare = COMPARISONS[op]
            if constant is not None:

                def compare_to_constant(frame: Frame) -> Any:
                    a = left(frame)
                    if type(a) is not int:  # an int (not a bool) passes at once, anything else is checked
                        _integer(a, op, expr)
                    return compare(a, constant)

                return compare_to_constant

            def compare_integers(frame: Frame) -> Any:
                a = left(frame)
                if type(a) is not int:
                    _integer(a, op, expr)
                b = right(frame)
                if type(b) is not int:
                    _integer(b, op, expr)
                return compare(a, b)

            return compare_integers
        if op in PLAIN_ARITHMETIC:  # + - *: the 64-bit check inline (the commonest operations of every program)
            combine = PLAIN_ARITHMETIC[op]
            if constant is not None:

                def compute_with_constant(frame: Frame) -> Any:
                    a = left(frame)
                    if type(a) is not int:
                        _integer(a, op, expr)
                    value = combine(a, constant)
                    if INT_MIN <= value <= INT_MAX:
                        return value
                    raise AutumnError(OVERFLOW, expr.line, expr.column)

                return compute_with_constant

            def compute_in_range(frame: Frame) -> Any:
                a = left(frame)
                if type(a) is not int:
                    _integer(a, op, expr)
                b = right(frame)
                if type(b) is not int:
                    _integer(b, op, expr)
                value = combine(a, b)
                if INT_MIN <= value <= INT_MAX:
                    return value
                raise AutumnError(OVERFLOW, expr.line, expr.column)

            return compute_in_range
        arithmetic = ARITHMETIC[op]

        def compute(frame: Frame) -> Any:
            a = left(frame)
            if type(a) is not int:
                _integer(a, op, expr)
            b = right(frame)
            if type(b) is not int:
                _integer(b, op, expr)
            return arithmetic(a, b, expr)

        return compute

    # Randomness (the official Lehmer generator)

    def random(self, n: int) -> int:
        """The next draw in 0..n-1."""
        if n <= 0:
            raise AutumnError(f"cannot draw from {n} choices")
        self.rng_state = ((48271 * self.rng_state) % 2**32) % (2**31 - 1)
        return self.rng_state % n


# The globals Autumn.cpp defines before a program's, in its order (the names only, for the order of its hash map
# of globals in compatibility mode): its native built-ins, then its standard library's definitions.
OFFICIAL_BUILTIN_NAMES = (
    "GRID_SIZE", "map", "concat", "filter", "foldl", "length", "head", "at", "tail", "renderAll", "defined",
    "arrayEqual", "sqrt", "prev", "any", "isList", "uniformChoice", "adjPositions", "addObj", "isFreePos", "range",
    "print", "removeObj", "updateObj", "randomPositions", "allPositions", "clicked", "left", "right", "up", "down",
    "isWithinBounds", "allObjs", "rotate",
)  # fmt: skip
OFFICIAL_LIBRARY_NAMES = (
    "GRID_SIZE", "FRAME_RATE", "background", "move", "moveRight", "moveLeft", "moveUp", "moveDown",
    "moveNoCollision", "moveCanCollision", "rotateNoCollision", "movePos", "moveRightPos", "moveLeftPos",
    "moveUpPos", "moveDownPos", "abs", "sign", "vcat", "deltaPos", "rect", "displacement", "deltaElem", "deltaObj",
    "adjacentElem", "adjacentPoss", "adjacentTwoObjs", "adjacentPossDiag", "adjacentTwoObjsDiag", "adjacentObjs",
    "adjacentObjsDiag", "adj", "objClicked", "sqdist", "unitVector", "unitVectorObjPos", "unitVectorSinglePos",
    "max", "min", "closest", "closestPos", "renderValue", "sum", "intersectsElems", "intersectsPosElems",
    "intersectsPosPoss", "intersects", "isFree", "in", "isFreeExcept", "isFreePosExceptObj",
    "isFreeRangeExceptObj", "moveLeftNoCollision", "moveRightNoCollision", "moveUpNoCollision",
    "moveDownNoCollision", "nextSolid", "nextLiquidClosestHole", "nextLiquid", "nextLiquidMoveClosestHole",
)  # fmt: skip
SPECIAL_FORMS = {
    "if": "_if",
    "let": "_let",
    "=": "_assign",
    "..": "_field",
    "-->": "_lambda",
    "fn": "_lambda",
    "list": "_list",
    "prev": "_prev",
}


def _bound_names(forms: list[Expr]) -> frozenset[str]:
    """Every name a scope other than the globals can bind in these forms: lambda parameters, assignments inside
    expressions (a ``let``'s, or any that finds no variable), object fields and ``origin``."""
    found: set[str] = set()
    for form in forms:
        if isinstance(form, SList):
            for statement in form.items[1:]:
                _statement_names(statement, found)
    return frozenset(found)


def _statement_names(statement: Expr, found: set[str]) -> None:
    if not isinstance(statement, SList) or not statement.items:
        return
    if _is_form(statement, "=") and len(statement.items) == 3:  # a global definition binds no local
        _expression_names(statement.items[2], found)
        return
    if _is_form(statement, "object"):
        found.add("origin")
        for field in statement.items[2:-1]:
            if isinstance(field, SList) and len(field.items) == 3 and isinstance(field.items[1], Symbol):
                found.add(field.items[1].name)
    if not _is_form(statement, ":"):
        for item in statement.items[1:]:
            _expression_names(item, found)


def _expression_names(expr: Expr, found: set[str]) -> None:
    if not isinstance(expr, SList) or not expr.items:
        return
    head, items = expr.items[0], expr.items
    if (_is_word(head, "-->") or _is_word(head, "fn")) and len(items) == 3:
        params = items[1]
        if isinstance(params, Symbol):
            found.add(params.name)
        elif isinstance(params, SList):
            found.update(p.name for p in params.items if isinstance(p, Symbol))
    elif _is_word(head, "=") and len(items) == 3:
        target = items[1]
        if isinstance(target, Symbol):
            found.add(target.name)
        elif isinstance(target, SList) and len(target.items) == 3 and isinstance(target.items[1], Symbol):
            found.add(target.items[1].name)  # (= (.. holder field) value) assigns the holder
    for item in items:
        _expression_names(item, found)


@cache
def _parsed_library(source: str) -> list[Expr]:
    """The standard library's forms, read once per process (forms are immutable, so every interpreter shares
    them)."""
    return parse(source)


def field_of(value: Any, name: str) -> Any:
    """``(.. value name)``."""
    if isinstance(value, Instance):
        return value.get(name)
    if isinstance(value, Position) and name in ("x", "y"):
        return value.x if name == "x" else value.y
    if isinstance(value, Cell):
        if name in ("position", "color"):
            return value.position if name == "position" else value.color
        if name in ("x", "y"):
            return value.position.x if name == "x" else value.position.y
    raise AutumnError(f"{describe(value)} has no field {name!r}")


def _instances(value: Any, found: list[Instance]) -> None:
    if isinstance(value, Instance):
        found.append(value)
    elif isinstance(value, tuple):
        for item in value:
            _instances(item, found)


def _same_kind(name: str, old: Any, new: Any, node: Node | None = None) -> None:
    """A global keeps its kind of value (a list may replace anything), as officially: AutumnError otherwise."""
    if (type(old) is type(new) and not isinstance(new, Instance)) or isinstance(new, tuple | None):
        return
    if old is None:  # null is discogym's (the official language has none): it may be replaced by anything
        return
    if isinstance(old, Instance) and isinstance(new, Instance) and old.type.name == new.type.name:
        return
    if isinstance(old, Lambda | Builtin) and isinstance(new, Lambda | Builtin):
        return
    where = (node.line, node.column) if node is not None else (0, 0)
    raise AutumnError(f"{name} holds {describe(old)} and cannot be given {describe(new)}", *where)


def _integer(value: Any, op: str, node: Node) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise AutumnError(f"'{op}' needs integers, got {describe(value)}", node.line, node.column)
    return value


def _checked(function: Callable[[int, int], Any]) -> Callable[[int, int, Node], Any]:
    def run(a: int, b: int, node: Node) -> Any:
        try:
            return function(a, b)
        except AutumnError as err:
            raise AutumnError(err.message, node.line, node.column) from None

    return run


USUAL_FIELDS: dict[str, tuple[type, Callable[[Any], Any]]] = {
    "x": (Position, operator.attrgetter("x")),
    "y": (Position, operator.attrgetter("y")),
    "origin": (Instance, operator.attrgetter("origin")),
}
PLAIN_ARITHMETIC: dict[str, Callable[[int, int], int]] = {"+": operator.add, "-": operator.sub, "*": operator.mul}
ARITHMETIC: dict[str, Callable[[int, int, Node], Any]] = {
    "+": _checked(lambda a, b: int64(a + b)),
    "-": _checked(lambda a, b: int64(a - b)),
    "*": _checked(lambda a, b: int64(a * b)),
    "/": _checked(c_div),
    "%": _checked(c_mod),
}
COMPARISONS: dict[str, Callable[[int, int], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _literal_integer(expr: Expr) -> int | None:
    """The value of an integer literal (a number as written, which is never a boolean), else None."""
    return expr.value if isinstance(expr, Number) else None


def _is_form(expr: Expr, head: str) -> bool:
    return isinstance(expr, SList) and bool(expr.items) and _is_word(expr.items[0], head)


def _is_word(expr: Expr, word: str) -> bool:
    return isinstance(expr, Symbol) and expr.name == word


def _event(action: Action) -> tuple[Any, ...] | None:
    if action is None or action == "noop":
        return None
    if isinstance(action, tuple):
        return action
    if action in ("left", "right", "up", "down"):
        return (action,)
    raise AutumnError(f"unknown action {action!r}")


def action_text(action: Action) -> str:
    """``None`` -> ``noop``, ``("click", 3, 4)`` -> ``click 3 4``."""
    if action is None:
        return "noop"
    if isinstance(action, tuple):
        return f"click {action[1]} {action[2]}"
    return action


def parse_action(text: str) -> Action:
    """The inverse of :func:`action_text`; ValueError for anything else."""
    words = text.split()
    if len(words) == 3 and words[0] == "click":
        return ("click", int(words[1]), int(words[2]))
    if text in ("noop", ""):
        return None
    if text in ("left", "right", "up", "down"):
        return text
    raise ValueError(f"not an action: {text!r}")


def parse_actions(text: str) -> list[Action]:
    """``"left; click 3 4; noop"`` as step actions."""
    actions: list[Action] = []
    for part in filter(None, (p.strip() for p in text.replace("\n", ";").split(";"))):
        try:
            actions.append(parse_action(part))
        except ValueError:
            raise AutumnError(f"unknown action {part!r}: noop, left, right, up, down or click X Y") from None
    return actions
