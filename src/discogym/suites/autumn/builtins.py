"""Autumn's native built-ins, and the standard library, which is written in Autumn (``stdlib.sexp``)."""

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from discogym.suites.autumn.sexpr import AutumnError
from discogym.suites.autumn.values import (
    Builtin,
    Cell,
    Instance,
    Lambda,
    ObjectType,
    Position,
    describe,
    show_value,
    truthy,
)

if TYPE_CHECKING:
    from discogym.suites.autumn.interpreter import Interpreter

PRELUDE = (Path(__file__).parent / "stdlib.sexp").read_text(encoding="utf-8")
MAX_LIST = 1_000_000  # elements a built-in may make at once (range, allPositions, draws)
# Besides, every list a built-in makes is charged, element by element, to the step's operation budget
# (interpreter.OPS_BUDGET), so that no single call escapes it: e.g. concat doubling a list every step.


def make(interp: "Interpreter") -> dict[str, Builtin]:
    """The built-ins of one interpreter (some read its state: events, the last frame, the generator)."""
    registry = _Registry(interp)
    families = (_events, _constructors, _lists, _numbers_and_output, _grid, _objects, _randomness, _free_space)
    for family in families:
        family(registry)
    return registry.table


class _Registry:
    """The table being filled for one interpreter, and what the built-ins need to call back into it."""

    def __init__(self, interp: "Interpreter") -> None:
        self.interp = interp
        self.table: dict[str, Builtin] = {}

    def define(
        self, name: str, takes: tuple[int, ...] | None = None
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """A decorator registering a function as the built-in ``name`` taking ``takes`` arguments."""

        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self.table[name] = Builtin(name, function, takes)
            return function

        return register

    def made(self, values: tuple[Any, ...]) -> tuple[Any, ...]:
        """``values``, a list a built-in made, after charging its elements to the step's budget."""
        self.interp.charge(len(values))
        return values

    def call(self, function: Any, *args: Any) -> Any:
        """Apply an Autumn function value (a lambda or a built-in) from inside a built-in."""
        node = function.node if isinstance(function, Lambda) else _NOWHERE
        return self.interp.apply(function, args, self.interp.caller, node.line, node.column)

    def calling(self, function: Any) -> tuple[Callable[..., Any], Any, int, int]:
        """What :meth:`call` passes on besides the arguments: ``apply(function, args, scope, line, column)`` for a
        built-in that calls ``function`` once per element of a list."""
        node = function.node if isinstance(function, Lambda) else _NOWHERE
        return self.interp.apply, self.interp.caller, node.line, node.column

    @staticmethod
    def truth(value: Any) -> bool:
        """Autumn's truthiness."""
        return truthy(value)


def _events(registry: _Registry) -> None:
    """``left``, ``right``, ``up``, ``down`` and ``clicked`` (any click, or a click on an object or a list)."""
    interp = registry.interp
    for direction in ("left", "right", "up", "down"):
        registry.table[direction] = Builtin(direction, _event_check(interp, direction), (0,))

    @registry.define("clicked", (0, 1))
    def clicked(*target: Any) -> bool:
        if interp.event is None or interp.event[0] != "click":
            return False
        if interp.global_map is not None:  # officially `click` becomes a global when clicked sees a click
            interp.global_map.insert("click")
        if not target:
            return True
        spot = Position(interp.event[1], interp.event[2])
        instances = target[0] if isinstance(target[0], tuple) else (target[0],)
        return any(
            cell.position == spot for obj in instances if isinstance(obj, Instance) for cell in interp.cells_of(obj)
        )


def _constructors(registry: _Registry) -> None:
    """The built-in classes ``Position x y`` and ``Cell x y colour`` (or ``Cell position colour``)."""

    def position(x: Any, y: Any) -> Position:
        if type(x) is int and type(y) is int:  # the common case, checked at once
            return Position(x, y)
        return Position(_int(x, "Position"), _int(y, "Position"))

    registry.table["Position"] = Builtin("Position", position, (2,))

    @registry.define("Cell", (2, 3))
    def cell(*args: Any) -> Cell:
        if len(args) == 2:
            if not isinstance(args[0], Position):
                raise AutumnError("Cell takes x, y and a colour (or a Position and a colour)")
            return Cell(args[0], _text(args[1], "Cell"))
        return Cell(Position(_int(args[0], "Cell"), _int(args[1], "Cell")), _text(args[2], "Cell"))


def _lists(registry: _Registry) -> None:
    """The list built-ins: higher-order ones, accessors, ``concat``, ``range`` and ``allPositions``."""
    interp, define, call, truth, made = registry.interp, registry.define, registry.call, registry.truth, registry.made

    @define("map", (2,))
    def map_(function: Any, items: Any) -> tuple[Any, ...]:
        apply, scope, line, column = registry.calling(function)
        return made(tuple(apply(function, (item,), scope, line, column) for item in _list(items, "map")))

    @define("filter", (2,))
    def filter_(function: Any, items: Any) -> tuple[Any, ...]:
        apply, scope, line, column = registry.calling(function)
        kept = (item for item in _list(items, "filter") if truth(apply(function, (item,), scope, line, column)))
        return made(tuple(kept))

    @define("foldl", (3,))
    def foldl(function: Any, start: Any, items: Any) -> Any:
        value = start
        for item in _list(items, "foldl"):
            value = call(function, value, item)
        return value

    @define("any", (2,))
    def any_(function: Any, items: Any) -> bool:
        apply, scope, line, column = registry.calling(function)
        return any(truth(apply(function, (item,), scope, line, column)) for item in _list(items, "any"))

    define("length", (1,))(lambda items: len(_list(items, "length")))
    define("head", (1,))(lambda items: _nonempty(items, "head")[0])
    define("tail", (1,))(lambda items: _nonempty(items, "tail")[-1])  # the last element, as the official one
    define("isList", (1,))(lambda value: isinstance(value, tuple))
    define("arrayEqual", (2,))(lambda a, b: _list(a, "arrayEqual") == _list(b, "arrayEqual"))

    @define("at", (2,))
    def at(items: Any, index: Any) -> Any:
        values = _list(items, "at")
        position = _int(index, "at")
        if not 0 <= position < len(values):
            raise AutumnError(f"at: index {position} is outside a list of {len(values)}")
        return values[position]

    @define("concat", (1,))
    def concat(items: Any) -> tuple[Any, ...]:
        parts = [item if isinstance(item, tuple) else (item,) for item in _list(items, "concat")]
        interp.charge(sum(map(len, parts)))
        return tuple(value for part in parts for value in part)

    @define("range", (2,))
    def range_(start: Any, stop: Any) -> tuple[int, ...]:
        first, last = _int(start, "range"), _int(stop, "range")
        count = max(last - first, 0)
        if count > MAX_LIST:
            raise AutumnError(f"range: {count:,} is more than the {MAX_LIST:,} elements a list may have")
        interp.charge(count)
        return tuple(range(first, last))

    @define("allPositions", (0, 1))
    def all_positions(*size: Any) -> tuple[Position, ...]:
        n = _int(size[0], "allPositions", size=True) if size else interp.grid_size
        if n * n > MAX_LIST:
            raise AutumnError(f"allPositions {n} would make more than {MAX_LIST:,} positions")
        interp.charge(max(n, 0) ** 2)
        return tuple(Position(x, y) for x in range(n) for y in range(n))


def _numbers_and_output(registry: _Registry) -> None:
    """``sqrt`` (the integer floor) and ``print`` (kept in the interpreter's output)."""
    interp = registry.interp

    @registry.define("sqrt", (1,))
    def sqrt(value: Any) -> int:
        number = _int(value, "sqrt")
        if number < 0:
            raise AutumnError(f"sqrt of a negative number ({number})")
        return math.isqrt(number)

    @registry.define("print", (1,))
    def print_(value: Any) -> Any:
        interp.output.append(show_value(value))
        return value


def _grid(registry: _Registry) -> None:
    """The built-ins that read the grid: neighbours, occupancy, bounds, the objects and their cells."""
    interp, define = registry.interp, registry.define

    @define("adjPositions", (1,))
    def adj_positions(pos: Any) -> tuple[Position, ...]:
        p = _position(pos, "adjPositions")
        inside = range(interp.grid_size)
        x, y = p.x, p.y
        return tuple(
            Position(a, b) for a, b in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)) if a in inside and b in inside
        )

    @define("isFreePos", (1,))
    def is_free_pos(pos: Any) -> bool:
        p = _position(pos, "isFreePos")
        return (p.x, p.y) not in interp.occupied  # off the grid counts as free, as in the official one

    @define("isWithinBounds", (1,))
    def is_within_bounds(value: Any) -> bool:
        if isinstance(value, Instance | tuple):
            return all(_inside(interp, c.position.x, c.position.y) for c in rendered(interp, value))
        p = _position(value, "isWithinBounds")  # officially any Position is within bounds (it has no cells)
        return _inside(interp, p.x, p.y)

    define("allObjs", (0,))(lambda: tuple(interp.all_objects()))
    define("renderAll", (0,))(lambda: tuple(c for obj in interp.objects() for c in interp.cells_of(obj)))

    @define("render", (1,))
    def render(value: Any) -> tuple[Cell, ...]:
        if not isinstance(value, Instance):
            raise AutumnError(f"render takes an object, not {describe(value)}")
        return tuple(interp.cells_of(value))

    @define("defined", (1,))
    def defined(name: Any) -> bool:
        return _text(name, "defined") in interp.globals

    @define("rotate", (1,))
    def rotate(pos: Any) -> Position:
        if isinstance(pos, Instance):
            raise AutumnError("rotate of an object (turning its cells) is not supported; rotate takes a Position")
        p = _position(pos, "rotate")
        return Position(-p.y, p.x)


def _objects(registry: _Registry) -> None:
    """``updateObj``, ``addObj`` and ``removeObj`` in all their forms."""
    interp, define, call, truth, made = registry.interp, registry.define, registry.call, registry.truth, registry.made

    @define("updateObj", (2, 3))
    def update_obj(target: Any, *rest: Any) -> Any:
        if isinstance(target, Instance):
            if len(rest) == 2:
                return target.with_field(_text(rest[0], "updateObj"), rest[1])
            return _instance(call(rest[0], target), "updateObj")
        items = _list(target, "updateObj")
        function = rest[0]
        if len(rest) == 1:
            return made(tuple(call(function, item) for item in items))
        return made(tuple(call(function, item) if truth(call(rest[1], item)) else item for item in items))

    @define("addObj", (2,))
    def add_obj(items: Any, new: Any) -> tuple[Any, ...]:
        return made(_list(items, "addObj") + (new if isinstance(new, tuple) else (new,)))

    @define("removeObj", (1, 2))
    def remove_obj(target: Any, *rest: Any) -> Any:
        if not rest:  # the one-argument form removes the global variable that holds this object
            obj = _instance(target, "removeObj")
            for name, value in list(interp.globals.items()):
                if isinstance(value, Instance) and value.id == obj.id:
                    interp.forget(name)
            return None
        items = _list(target, "removeObj")
        which = rest[0]
        if isinstance(which, Instance):
            return made(tuple(item for item in items if not (isinstance(item, Instance) and item.id == which.id)))
        return made(tuple(item for item in items if not truth(call(which, item))))


def _randomness(registry: _Registry) -> None:
    """``uniformChoice`` and ``randomPositions``, drawing from the interpreter's Lehmer generator."""
    interp = registry.interp

    @registry.define("uniformChoice", (1, 2))
    def uniform_choice(items: Any, *count: Any) -> Any:
        values = _nonempty(items, "uniformChoice")
        if not count:
            return values[interp.random(len(values))]
        draws = _int(count[0], "uniformChoice", size=True)
        interp.charge(max(draws, 0))
        return tuple(values[interp.random(len(values))] for _ in range(draws))

    @registry.define("randomPositions", (2,))
    def random_positions(size: Any, count: Any) -> tuple[Position, ...]:
        n = _int(size, "randomPositions")
        draws = _int(count, "randomPositions", size=True)
        interp.charge(max(draws, 0))
        found = []
        for _ in range(draws):
            x = interp.random(n)
            y = interp.random(n)
            found.append(Position(x, y))
        return tuple(found)


def _free_space(registry: _Registry) -> None:
    """The standard library's functions about free cells and moving, native because each takes the official
    form and discogym's older one (told apart by the arguments' kinds or count): ``isFree``, ``isFreeExcept``,
    ``moveNoCollision``, ``unitVector`` and ``adjacentObjs``."""
    interp, define = registry.interp, registry.define

    def free(p: Position) -> bool:
        return (p.x, p.y) not in interp.occupied

    @define("isFree", (1,))
    def is_free(value: Any) -> bool:
        if isinstance(value, Position):  # discogym's form: a free cell of the grid
            return _inside(interp, value.x, value.y) and free(value)
        return all(free(c.position) for c in rendered(interp, value))  # official: every cell free

    @define("isFreeExcept", (2,))
    def is_free_except(value: Any, other: Any) -> bool:
        if isinstance(value, Position):  # discogym's form: a free cell, or one of the object's own
            return is_free(value) or any(c.position == value for c in rendered(interp, other))
        own = set(rendered(interp, other))  # official: cells not among the other's (same place and colour) free
        return all(free(c.position) for c in rendered(interp, value) if c not in own)

    @define("moveNoCollision", (2, 3))
    def move_no_collision(obj: Any, *offset: Any) -> Any:
        target = _instance(obj, "moveNoCollision")
        if len(offset) == 1:  # discogym's form (obj dir): every cell lands on the grid, free or its own
            step = _position(offset[0], "moveNoCollision")
            own = {c.position for c in interp.cells_of(target)}
            for cell in own:
                p = Position(cell.x + step.x, cell.y + step.y)
                if not (p in own or is_free(p)):
                    return target
            return _moved(target, step)
        moved = _moved(target, Position(_int(offset[0], "moveNoCollision"), _int(offset[1], "moveNoCollision")))
        return moved if is_free_except(moved, target) else target  # official (obj x y): no bounds check

    @define("unitVector", (2,))
    def unit_vector(a: Any, b: Any) -> Position:
        if isinstance(a, Position):  # discogym's form: the signs of the displacement between two positions
            d = Position(b.x - a.x, b.y - a.y)
            return Position(_sign(d.x), _sign(d.y))
        dx = _sign(_instance(b, "unitVector").origin.x - _instance(a, "unitVector").origin.x)
        dy = _sign(b.origin.y - a.origin.y)
        return Position(dx, 0) if dx and dy else Position(dx, dy)  # official: a diagonal keeps only its x

    @define("adjacentObjs", (2,))
    def adjacent_objs(obj: Any, second: Any) -> tuple[Any, ...]:
        if isinstance(second, tuple):  # discogym's form (obj objs): those one step from obj's origin
            o = _instance(obj, "adjacentObjs").origin
            return tuple(x for x in second if isinstance(x, Instance) and _manhattan(x.origin, o) == 1)
        reach = _int(second, "adjacentObjs")  # official (obj unitSize): every object within reach, itself too
        near = obj if isinstance(obj, tuple) else (obj,)
        origins = [_instance(n, "adjacentObjs").origin for n in near]
        return registry.made(
            tuple(x for x in interp.all_objects() if any(_manhattan(x.origin, o) <= reach for o in origins))
        )


def rendered(interp: "Interpreter", value: Any) -> list[Cell]:
    """The official ``renderValue``: an object's cells on the grid, a list's objects' cells in order, and no
    cells for anything else."""
    if isinstance(value, Instance):
        return interp.cells_of(value)
    if isinstance(value, tuple):
        return [cell for item in value for cell in rendered(interp, item)]
    return []


def _moved(obj: Instance, step: Position) -> Instance:
    return obj.with_field("origin", Position(obj.origin.x + step.x, obj.origin.y + step.y))


def _sign(n: int) -> int:
    return (n > 0) - (n < 0)


def _manhattan(a: Position, b: Position) -> int:
    return abs(a.x - b.x) + abs(a.y - b.y)


class _Nowhere:
    line = 0
    column = 0


_NOWHERE: Any = _Nowhere()


def _event_check(interp: "Interpreter", direction: str) -> Callable[[], bool]:
    return lambda: interp.event is not None and interp.event[0] == direction


def _inside(interp: "Interpreter", x: int, y: int) -> bool:
    size = interp.grid_size
    return 0 <= x < size and 0 <= y < size


def _int(value: Any, where: str, size: bool = False) -> int:
    """An integer argument; with ``size``, one that makes at most :data:`MAX_LIST` elements."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise AutumnError(f"{where} needs an integer, not {describe(value)}")
    if size and value > MAX_LIST:
        raise AutumnError(f"{where}: {value:,} is more than the {MAX_LIST:,} elements a list may have")
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise AutumnError(f"{where} needs a string, not {describe(value)}")
    return value


def _list(value: Any, where: str) -> tuple[Any, ...]:
    if not isinstance(value, tuple):
        raise AutumnError(f"{where} needs a list, not {describe(value)}")
    return value


def _nonempty(value: Any, where: str) -> tuple[Any, ...]:
    values = _list(value, where)
    if not values:
        raise AutumnError(f"{where} of an empty list")
    return values


def _position(value: Any, where: str) -> Position:
    if not isinstance(value, Position):
        raise AutumnError(f"{where} needs a Position, not {describe(value)}")
    return value


def _instance(value: Any, where: str) -> Instance:
    if not isinstance(value, Instance):
        raise AutumnError(f"{where} needs an object, not {describe(value)}")
    return value


__all__ = ["PRELUDE", "ObjectType", "make"]
