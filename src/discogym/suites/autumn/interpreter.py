"""The Autumn interpreter: programs compiled once to Python functions (compiler.py), then stepped and rendered.

A step (the spec's "A time step"): the step's input is set; the state is copied for ``prev``; the ``on``
clauses run in program order, each seeing what earlier ones assigned; every state variable no clause
assigned takes its NEXT value; the input is cleared (``click`` keeps its last position); the frame is
rendered. Runtime errors carry the line and column of the expression that failed; a step has an operation
budget (calls, and the elements of every list a built-in makes), a wall-clock budget and a call-depth budget;
integers are 64-bit (a result outside that range is an error, not a huge number).
"""

import operator
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from discogym.suites.autumn import builtins
from discogym.suites.autumn.compat import DEFAULT_FLAVOR, Flavor, OfficialMap, official_order
from discogym.suites.autumn.compiler import OPERATORS, PARENT, Code, Compiler, Scope
from discogym.suites.autumn.sexpr import AutumnError, Expr, Node, SList, Symbol, is_form, is_word, parse, show, symbols
from discogym.suites.autumn.values import Builtin, Cell, Instance, Lambda, ObjectType, Position, describe, truthy

Action = str | tuple[str, int, int] | None  # None is noop; ("click", x, y)
Order = Literal["program", "official"]
Stdlib = Literal["discogym", "official"]
MAX_DEPTH = 120  # nested calls of Autumn functions in one evaluation
OPS_BUDGET = 2_000_000  # function calls and list elements made, per step (and for initialization)
TIME_BUDGET = 5.0  # seconds per step
MADE_CELLS = 4096  # the cells kept per object type (for field values seen before)
CELL_WORDS = {"Cell", "Position", "true", "false", "null", "if", "then", "else", "list", "..", *OPERATORS}
PLAIN_VALUES = {str, int, bool, Position}


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
        self.globals: Scope = {}  # the outermost scope: every scope's chain of parents ends there
        self.root = self.globals
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
        self._compiler = Compiler(self)
        self._user_names: dict[str, None] = {}  # the program's own names, in first-definition order
        self.global_map: OfficialMap | None = None  # compatibility mode: the official map of globals
        self._all_objects: tuple[list[str], list[Any], list[Instance]] | None = None  # the last all_objects()
        library, library_bound = _parsed(builtins.PRELUDE if prelude is None else prelude)
        forms, program_bound = _parsed(source)
        # names only the globals can hold are looked up there directly (scope is dynamic: any other is searched
        # for through every calling scope)
        self.bound = library_bound | program_bound
        self._load(library, user=False)
        if prelude is None and stdlib == "official":  # the one name whose two meanings cannot live side by side
            self._load(_parsed("(program (= nextLiquid officialNextLiquid))")[0], user=False)
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
        self.prev.clear()
        self.updated, self.event = set(), None
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
        if len(forms) != 1 or not is_form(forms[0], "program"):
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
        if is_form(value, "initnext"):
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
            if not is_form(item, ":") or len(item.items) != 3 or not isinstance(item.items[1], Symbol):  # type: ignore[union-attr]
                raise AutumnError(f"object {name}: a field is (: name Type)", item.line, item.column)
            fields.append(item.items[1].name)  # type: ignore[union-attr]
        cell_code = self.compile(items[-1])
        field_names = tuple(fields)
        root, globals_ = self.root, self.globals
        used = symbols(items[-1])
        # cells that only the fields (and the origin) decide are made once per field values: most objects' are
        fixed = used <= CELL_WORDS | {*field_names, "origin"}
        by_origin = "origin" in used
        made: dict[Any, tuple[Cell, ...]] = {}

        def cells(instance: Instance) -> tuple[Cell, ...]:
            key = None
            if fixed and "Cell" not in globals_ and "Position" not in globals_:  # (a program may name a global so)
                values = instance.values
                kinds = tuple(map(type, values))  # part of the key: True == 1, but a bool and an int differ
                if PLAIN_VALUES.issuperset(kinds):
                    key = (values, kinds, instance.origin) if by_origin else (values, kinds)
                    found = made.get(key)
                    if found is not None:
                        return found
            names = dict(zip(field_names, instance.values, strict=True))
            names["origin"] = instance.origin
            names[PARENT] = root
            value = cell_code(names)
            found = value if isinstance(value, tuple) else (value,)
            for cell in found:
                if not isinstance(cell, Cell):
                    raise AutumnError(f"object {name}'s cells must be Cells, not {describe(cell)}")
            if key is not None:
                if len(made) >= MADE_CELLS:
                    made.clear()
                made[key] = found
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
        self._painted = self.rendered_names()  # (loading is over: the names stay)
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
        self.prev.clear()  # the same dict throughout: compiled code holds it
        self.prev.update(self.globals)
        self.updated = set()
        self._start_budget()
        for clause in self.on_clauses:
            if self._condition(clause):  # at the top of a body, as officially, a new name is a new global
                self._guard(clause.body, self.root)
        state = self._state
        globals_ = self.globals
        for name in self.state_order:  # a variable removed (removeObj) is no longer defined: no NEXT for it
            if name not in self.updated and name in globals_:
                value = self._guard(state[name].next, {PARENT: self.root})
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
        self.bound |= names  # its lambdas' parameters are local names
        self._start_budget()
        code = self._compiler.compile(expr, reuse=False)  # (a new text each time: nothing to reuse)
        return self._call_if_callable(self._guard(code, {PARENT: self.root}))

    def _condition(self, clause: OnClause) -> bool:
        """An ``on`` clause's condition: true or false (a function is called first); anything else is an error,
        as officially."""
        value = self._call_if_callable(self._guard(clause.condition, {PARENT: self.root}))
        if value is True or value is False:
            return value
        where = clause.node
        raise AutumnError(
            f"an on clause's condition must be true or false, not {describe(value)}", where.line, where.column
        )

    def _guard(self, code: Code, frame: Scope) -> Any:
        try:
            return code(frame)
        except RecursionError:
            raise AutumnError(f"recursion too deep (more than {MAX_DEPTH} nested calls)") from None

    def _start_budget(self) -> None:
        self._ops = 0
        self._depth = 0
        self._deadline = time.perf_counter() + TIME_BUDGET

    def _tick(self, line: int, column: int) -> None:
        """Check the step's budgets (the caller has counted the operation in ``_ops``)."""
        if self._ops > OPS_BUDGET:
            raise AutumnError(f"the step made more than {OPS_BUDGET:,} calls and list elements", line, column)
        if self._ops & 4095 == 0 and time.perf_counter() > self._deadline:
            raise AutumnError(f"the step ran longer than {TIME_BUDGET:g} s", line, column)

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
        if type(size) is not int or not 1 <= size <= 256:  # (an int subclass, a bool say, is no size)
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
        for name in self._painted:
            _instances(self.globals.get(name), found)
        return found

    def all_objects(self) -> list[Instance]:
        """``(allObjs)``: every object held by a global; in compatibility mode in the order of the official
        interpreter's hash map of globals (compat.OfficialMap), else in paint order. The list is shared between
        calls: not to be changed."""
        if self.global_map is None:
            return self.objects()
        names = self.global_map.names()
        values = list(map(self.globals.get, names))
        kept = self._all_objects
        # values never change in place: the same value objects under the same names hold the same objects
        if kept is not None and kept[0] == names and all(map(operator.is_, kept[1], values)):
            return kept[2]
        found: list[Instance] = []
        for value in values:
            _instances(value, found)
        self._all_objects = (names, values, found)
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
        for instance in self.objects():  # as cells_of places them, without making a Cell for each
            origin = instance.origin
            for cell in instance.type.cells(instance):
                x, y = origin.x + cell.position.x, origin.y + cell.position.y
                occupied.add((x, y))  # off the grid too: isFreePos there is false, as in the official one
                if 0 <= x < size and 0 <= y < size:
                    grid[y][x] = cell.color.lower()
        self.occupied = frozenset(occupied)
        return grid

    # ------------------------------------------------------------------------------------------
    # Compiling expressions, and what the compiled code calls

    def compile(self, expr: Expr) -> Code:
        """A function that evaluates ``expr`` in a scope (compiler.py)."""
        return self._compiler.compile(expr)

    def look_up(self, frame: Scope, name: str, line: int, column: int) -> Any:
        """A name that a local scope may bind: the innermost scope holding it, through every calling scope to the
        globals, then the built-ins."""
        current, root = frame, self.root
        while current is not root:
            if name in current:
                return current[name]
            current = current[PARENT]
        if name in root:
            return root[name]
        return self.builtin(name, line, column)

    @property
    def builtins_table(self) -> dict[str, Builtin]:
        """The built-ins by name (not to be changed)."""
        return self._builtins

    def builtin(self, name: str, line: int, column: int) -> Any:
        """The built-in ``name``; AutumnError at the name's place when there is none."""
        found = self._builtins.get(name)
        if found is None:
            raise AutumnError(f"unknown name '{name}'", line, column)
        return found

    def apply(self, function: Any, args: tuple[Any, ...], frame: Scope, line: int, column: int) -> Any:
        """Call a function value with evaluated arguments; errors get the place (line, column) of the call."""
        ops = self._ops = self._ops + 1
        if ops > OPS_BUDGET or not ops & 4095:
            self._tick(line, column)
        try:
            kind = type(function)
            if kind is Lambda:
                params = function.params
                if len(args) < len(params):  # too many are ignored, as officially; too few crash Autumn.cpp
                    raise AutumnError(f"{function.name} takes {len(params)} argument(s), got {len(args)}")
                depth = self._depth
                if depth >= MAX_DEPTH:
                    raise AutumnError(f"recursion too deep (more than {MAX_DEPTH} nested calls)")
                self._depth = depth + 1
                try:
                    if len(params) == 1:
                        return function.body({params[0]: args[0], PARENT: frame})
                    scope = dict(zip(params, args, strict=False))  # extra arguments are dropped
                    scope[PARENT] = frame
                    return function.body(scope)
                finally:
                    self._depth = depth
            if kind is Builtin:
                takes = function.takes
                if takes is not None and len(args) not in takes:
                    counts = " or ".join(map(str, takes))
                    raise AutumnError(f"{function.name} takes {counts} argument(s), got {len(args)}")
                outer, self.caller = self.caller, frame  # functions a built-in calls sit on this scope
                try:
                    return function.function(*args)
                finally:
                    self.caller = outer
            if kind is ObjectType:
                return self.construct(function, args)
            raise AutumnError(f"cannot call {describe(function)}")
        except AutumnError as err:
            if not err.line:
                err.line, err.column = line, column
                err.args = (err.describe(),)
            raise
        except (TypeError, ValueError, AttributeError, IndexError) as err:
            raise AutumnError(f"{err}", line, column) from None

    def construct(self, kind: ObjectType, args: tuple[Any, ...]) -> Instance:
        """``(Name field ... origin)``."""
        if len(args) != len(kind.fields) + 1:
            raise AutumnError(f"{kind.name} takes {len(kind.fields)} field value(s) and an origin, got {len(args)}")
        origin = args[-1]
        if not isinstance(origin, Position):
            raise AutumnError(f"{kind.name}'s last argument is its origin Position, not {describe(origin)}")
        self.next_id += 1
        return Instance(kind, self.next_id, tuple(args[:-1]), origin)

    def truth(self, value: Any) -> bool:
        """A condition's value as true or false (a boolean at once; a function value is called first)."""
        if value is True or value is False:
            return value
        return truthy(self._call_if_callable(value))

    def _call_if_callable(self, value: Any) -> Any:
        """In conditions and logical operators a function value is called with no arguments."""
        if isinstance(value, Lambda | Builtin) and (isinstance(value, Builtin) or not value.params):
            line, column = (value.node.line, value.node.column) if isinstance(value, Lambda) else (0, 0)
            return self.apply(value, (), self.root, line, column)
        return value

    def assign_value(self, frame: Scope, name: str, value: Any) -> Any:
        """``(= name value)``: :meth:`assign` (its search of the local scopes inline), and the value."""
        current, root = frame, self.root
        while current is not root:
            if name in current:
                current[name] = value
                return value
            current = current[PARENT]
        self._assign_outside(name, value, frame)
        return value

    def assign_field(
        self, frame: Scope, value: Any, current: Any, holder: str, field: str, line: int, column: int
    ) -> Any:
        """``(= (.. holder field) value)``, the holder's value being ``current``: the holder given a copy of its
        object with the field changed; the value."""
        if not isinstance(current, Instance):
            raise AutumnError(f"{holder} holds {describe(current)}, not an object", line, column)
        self.assign(holder, current.with_field(field, value), frame)
        return value

    def assign(self, name: str, value: Any, frame: Scope) -> None:
        """A local already bound in an enclosing scope is updated there; else a global is updated (and counts
        as updated this step); else the name is bound in the innermost scope."""
        current, root = frame, self.root
        while current is not root:
            if name in current:
                current[name] = value
                return
            current = current[PARENT]
        self._assign_outside(name, value, frame)

    def _assign_outside(self, name: str, value: Any, frame: Scope) -> None:
        """The assignment of a name that no local scope binds: to the global, or a new name in ``frame``."""
        if name in self.globals:
            _same_kind(name, self.globals[name], value)
            self.globals[name] = value
            self.updated.add(name)
            return
        frame[name] = value
        if frame is self.root and self.global_map is not None:  # a new global (e.g. one removeObj removed)
            self.global_map.insert(name)

    def field(self, value: Any, name: str, line: int, column: int) -> Any:
        """``(.. value name)`` (an object's ``render`` is a method: its cells on the grid)."""
        if name == "render" and isinstance(value, Instance):
            return self.render_method(value)
        try:
            return field_of(value, name)
        except AutumnError as err:
            raise AutumnError(err.message, line, column) from None

    def render_method(self, instance: Instance) -> Builtin:
        """``(.. obj render)``: a function of no arguments giving the object's cells on the grid."""
        return Builtin("render", lambda: tuple(self.cells_of(instance)), (0,))

    def prev_named(self, name: str, line: int, column: int) -> Any:
        """``(prev "name")``: the variable of that name at the start of the step."""
        if name in self.prev:
            return self.prev[name]
        if name in self.globals:  # while initializing, there is no previous state yet: the current value
            return self.globals[name]
        raise AutumnError(f"prev: no variable named {name!r}", line, column)

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
    if is_form(statement, "=") and len(statement.items) == 3:  # a global definition binds no local
        _expression_names(statement.items[2], found)
        return
    if is_form(statement, "object"):
        found.add("origin")
        for field in statement.items[2:-1]:
            if isinstance(field, SList) and len(field.items) == 3 and isinstance(field.items[1], Symbol):
                found.add(field.items[1].name)
    if not is_form(statement, ":"):
        for item in statement.items[1:]:
            _expression_names(item, found)


def _expression_names(expr: Expr, found: set[str]) -> None:
    if not isinstance(expr, SList) or not expr.items:
        return
    head, items = expr.items[0], expr.items
    if (is_word(head, "-->") or is_word(head, "fn")) and len(items) == 3:
        params = items[1]
        if isinstance(params, Symbol):
            found.add(params.name)
        elif isinstance(params, SList):
            found.update(p.name for p in params.items if isinstance(p, Symbol))
    elif is_word(head, "=") and len(items) == 3:
        target = items[1]
        if isinstance(target, Symbol):
            found.add(target.name)
        elif isinstance(target, SList) and len(target.items) == 3 and isinstance(target.items[1], Symbol):
            found.add(target.items[1].name)  # (= (.. holder field) value) assigns the holder
    for item in items:
        _expression_names(item, found)


@lru_cache(maxsize=256)
def _parsed(source: str) -> tuple[list[Expr], frozenset[str]]:
    """A program's (or the standard library's) forms and the names they bind (:func:`_bound_names`), worked out
    once per process (forms are immutable, so every interpreter of the source shares them)."""
    forms = parse(source)
    return forms, _bound_names(forms)


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
    if type(value) is Instance:
        found.append(value)
    elif isinstance(value, tuple):
        for item in value:  # a list of objects at once, a list in it by a call
            if type(item) is Instance:
                found.append(item)
            elif isinstance(item, tuple):
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
