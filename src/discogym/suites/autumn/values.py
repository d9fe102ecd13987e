"""Autumn's runtime values: positions, cells, object types and instances, lambdas and built-ins.

Integers are Python ints, booleans Python bools, strings Python strs, lists tuples (Autumn lists are values:
nothing changes one in place) and null is None.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from discogym.suites.autumn.sexpr import AutumnError, Node


@dataclass(frozen=True, slots=True)
class Position:
    x: int
    y: int

    def __str__(self) -> str:
        return f"(Position {self.x} {self.y})"


@dataclass(frozen=True, slots=True)
class Cell:
    position: Position
    color: str

    def __str__(self) -> str:
        return f"(Cell {self.position.x} {self.position.y} {self.color})"


@dataclass(frozen=True, eq=False)
class ObjectType:
    """An ``(object Name (: field Type) ... CELLS)`` definition; ``cells`` evaluates the cell expression with the
    instance's fields in scope."""

    name: str
    fields: tuple[str, ...]
    cells: Callable[["Instance"], tuple[Cell, ...]]
    node: Node

    def __repr__(self) -> str:
        return f"<object type {self.name}>"


@dataclass(frozen=True, slots=True, eq=False)
class Instance:
    """An object: its type, identity, field values (in the type's order) and origin.

    Two objects are equal (``==``) when they have the same type, field values and origin, whatever their
    identity, as in the official interpreter; ``removeObj`` and ``clicked`` go by identity."""

    type: ObjectType
    id: int
    values: tuple[Any, ...]
    origin: Position

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Instance):
            return NotImplemented
        return self.type is other.type and self.origin == other.origin and self.values == other.values

    def __hash__(self) -> int:
        return hash(self.origin)  # (equal objects share an origin; no string is hashed)

    def get(self, name: str) -> Any:
        if name == "origin":
            return self.origin
        if name == "id":
            return self.id
        if name == "type":
            return self.type.name
        try:
            return self.values[self.type.fields.index(name)]
        except ValueError:
            raise AutumnError(f"{self.type.name} has no field {name!r}") from None

    def with_field(self, name: str, value: Any) -> "Instance":
        if name == "origin":
            if not isinstance(value, Position):
                raise AutumnError(f"origin must be a Position, not {describe(value)}")
            return Instance(self.type, self.id, self.values, value)
        if name not in self.type.fields:
            raise AutumnError(f"{self.type.name} has no field {name!r}")
        index = self.type.fields.index(name)
        return Instance(self.type, self.id, (*self.values[:index], value, *self.values[index + 1 :]), self.origin)

    def __str__(self) -> str:
        fields = " ".join(f"{n}={_short(v)}" for n, v in zip(self.type.fields, self.values, strict=True))
        return f"({self.type.name}#{self.id} {fields} at {self.origin.x},{self.origin.y})".replace("  ", " ")


@dataclass(eq=False)
class Lambda:
    """A function value. Scope is dynamic: a call's scope sits on the caller's."""

    params: tuple[str, ...]
    body: Callable[[Any], Any]
    node: Node
    name: str = "lambda"


@dataclass(eq=False)
class Builtin:
    """A native function. ``takes`` is the allowed argument counts (None: any)."""

    name: str
    function: Callable[..., Any]
    takes: tuple[int, ...] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def describe(value: Any) -> str:
    """A value's kind, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, tuple):
        return "a list"
    if isinstance(value, Position):
        return "a Position"
    if isinstance(value, Cell):
        return "a Cell"
    if isinstance(value, Instance):
        return f"a {value.type.name} object"
    if isinstance(value, ObjectType):
        return f"the object type {value.name}"
    if isinstance(value, Lambda | Builtin):
        return "a function"
    return type(value).__name__


def _short(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def show_value(value: Any) -> str:
    """A value as Autumn would print it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, tuple):
        return "(list " + " ".join(show_value(v) for v in value) + ")" if value else "(list)"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, Lambda | Builtin):
        return f"<function {value.name}>"
    return str(value)


def truthy(value: Any) -> bool:
    """Autumn truthiness: booleans are themselves, lists are true when non-empty, null is false, anything else
    (0 included) is true."""
    if value is True or value is False:
        return value
    if isinstance(value, tuple):
        return bool(value)
    return value is not None
