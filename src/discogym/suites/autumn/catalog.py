"""The catalogue of discogym's Autumn environments: name, category, a one-line description and the program, and
the paper's Table B.1 statistics computed from each program (never typed by hand).

The statistics (:func:`env_stats`), each counted on the environment's own program (the standard library is not
part of it, except to follow calls into it for stochasticity):

- ``objects`` (#Obj): the ``(object Name ...)`` statements of the program.
- ``latent`` (#Latent): the state variables (``(= name (initnext INIT NEXT))``) whose initial value, after the
  program is initialized (seed 1), is neither an object nor a list of objects, i.e. the state variables that are
  not drawn. A list whose elements are all objects is drawn, so an initially empty list counts as drawn (every
  such variable in our programs later holds objects). Plain globals (``(= name EXPR)``) are constants and are not
  counted.
- ``length`` (Length): the lines of the program file that are neither blank nor only a comment (a line starting
  with ``;`` once its indentation is removed). A line with code and a trailing comment counts; so does the line
  holding only the program's closing parenthesis.
- ``on_clauses`` (#On Clauses): the ``(on CONDITION EXPR)`` statements of the program.
- ``stochastic`` (Stochastic): the program refers to ``uniformChoice`` or ``randomPositions`` anywhere in its code,
  or to a standard-library function that does, directly or through other standard-library functions
  (``randomPosition``), unless the program defines that name itself. This is a property of the text: a random
  draw in a branch that never runs still counts.
- ``colors`` (#Colors): the distinct colour names (lower-cased, as the renderer does) that can reach the colour
  argument of a ``Cell`` (its last argument) anywhere in the program. A string literal is a colour when it flows
  there: directly; through ``if`` branches, the last expression of a ``let``, the elements of a ``list``,
  ``prev``, both parts of an ``initnext``, the list arguments of ``at``, ``head``, ``tail``, ``uniformChoice``,
  ``concat``, ``filter``, ``addObj`` and ``removeObj``, the results of ``map`` and ``foldl`` (their function's
  body, and ``foldl``'s start); through names (every value assigned to the name anywhere, with ``=`` or as an
  ``initnext``, and for a parameter of a named lambda every argument passed at its call sites, for a parameter of
  a lambda written inside ``map``, ``filter``, ``any`` or ``foldl`` the list it walks, and for ``foldl``'s
  accumulator its start and the lambda's body); through calls of named lambdas (their body); and through object
  fields: inside an object's cell expression a field name stands for every value given to that field (the
  constructor's argument in that position, ``(updateObj x "field" v)`` and ``(= (.. x field) v)`` anywhere, by
  field name). Strings that only serve as field names (``updateObj``'s second argument), comparisons with a
  string (``(== (.. light color) "green")``: the result is a boolean) and the ``background`` are not colours
  reaching a Cell. The background is not counted (the paper's one-object, one-colour environments suggest it is
  not). Names are followed once each (a cycle adds nothing new).
- ``grid_size`` (Grid Size): ``GRID_SIZE`` after initialization (16, the standard library's, when the program
  does not set it).
"""

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Literal

from discogym.core import UserError
from discogym.suites.autumn.builtins import PRELUDE
from discogym.suites.autumn.interpreter import Interpreter
from discogym.suites.autumn.sexpr import Expr, Number, SList, Symbol, Text, parse, symbols
from discogym.suites.autumn.values import Instance

__all__ = [
    "CATALOG",
    "CATEGORIES",
    "PROGRAMS_DIR",
    "Category",
    "EnvInfo",
    "EnvStats",
    "catalog_rows",
    "env_info",
    "env_stats",
    "program_source",
    "program_stats",
]

PROGRAMS_DIR = Path(__file__).parent / "programs"
Category = Literal["physical", "emergent", "multi-agent", "logic", "game", "tool-use"]
CATEGORIES: tuple[Category, ...] = ("physical", "emergent", "multi-agent", "logic", "game", "tool-use")
RANDOM_BUILTINS = frozenset({"uniformChoice", "randomPositions"})


@dataclass(frozen=True)
class EnvInfo:
    """One environment: its name (the program file's stem), category, description and program file. The
    description states the rules, so it is for docs and reports only: no agent-facing text carries it."""

    name: str
    category: Category
    description: str
    program_file: Path


def _env(name: str, category: Category, description: str) -> EnvInfo:
    return EnvInfo(name, category, description, PROGRAMS_DIR / f"{name}.sexp")


CATALOG: tuple[EnvInfo, ...] = (
    _env("gravity", "physical", "Clicks drop blocks at the top of a column; they fall and stack; up clears them."),
    _env("water", "physical", "A tap over a walled basin opens and closes with a click; down drains the basin."),
    _env("ball", "physical", "A ball flies around the grid; a click reverses it, left and right change its speed."),
    _env("particles", "physical", "Particles wander about; a click releases a new one where it lands."),
    _env("life", "emergent", "A pattern of live cells changes every step; a click toggles a cell, up clears."),
    _env("wind", "emergent", "Leaves appear and drift; the arrows and a click change how they drift."),
    _env("counter", "logic", "A bar and a lamp answer clicks; left starts over."),
    _env("paint", "logic", "A click paints a cell; left and right change the colour shown in the corner."),
    _env("collector", "game", "An agent moves with the arrows and picks up coins; a bar at the top grows."),
    _env(
        "push",
        "game",
        "An agent moves with the arrows in a walled room with a box and a target; a click puts the box back.",
    ),
    _env(
        "chase",
        "multi-agent",
        "An agent moves with the arrows among a red wolf and yellow sheep; a click adds or removes a rock.",
    ),
    _env(
        "traffic",
        "multi-agent",
        "Cars drive along a two-lane road past a crossing; a click works the light; the arrows move a walker.",
    ),
    _env(
        "keydoor",
        "tool-use",
        "An agent moves with the arrows in two rooms with a key, a door and a goal; a click starts over.",
    ),
    _env(
        "bucket",
        "tool-use",
        "An agent with a bucket moves with the arrows between a pond and fires; a click starts a fire.",
    ),
    _env(
        "lightsout",
        "logic",
        "A 5 x 5 board of lights answers clicks; a corner lamp; left, right and down change the puzzle.",
    ),
    _env("dunes", "physical", "Left and right move a spout; a click drops sand that falls, slides and piles up."),
    _env("rink", "physical", "An arrow sends a puck sliding over the ice until a rock stops it; a click resets."),
    _env("clouds", "physical", "Clouds drift with the wind the arrows set and rain; a click on the sun stops it."),
    _env("magnet", "physical", "Left and right move a magnet along the top; a click turns it on and off."),
    _env("thaw", "physical", "A click on the stove lights it or puts it out; a thermometer and a tray of ice."),
    _env("forest", "emergent", "A click sets a tree alight or plants one; fire spreads and trees regrow."),
    _env("weave", "emergent", "A row of stitches rewrites itself every step; arrows, clicks on the top row, down."),
    _env("crystal", "emergent", "A crystal grows in branches every step; a click seeds a new one, up melts all."),
    _env("dominoes", "emergent", "A click tips a domino or stands a new one; up stands them all up again."),
    _env("trail", "emergent", "Ants wander from their nest and carry food home; a click lays food, up adds an ant."),
    _env(
        "guards", "multi-agent", "Guards pace their rows; an agent moves with the arrows toward a flag; a click resets."
    ),
    _env("ducks", "multi-agent", "A mother duck walks with the arrows and gathers ducklings; a click makes them sit."),
    _env("bees", "multi-agent", "Bees fly between their hive and flowers and make honey; a click plants or picks one."),
    _env("fish", "multi-agent", "Fish swim about; a click drops a pellet and they race for it; up starts over."),
    _env("switches", "logic", "Four switches answer clicks, some only in certain states; a lamp; left resets."),
    _env("combo", "logic", "Three coloured dials answer clicks; a lamp above them; left sets them back."),
    _env("sorter", "logic", "Eight bars of different heights; a click on one swaps bars; a lamp; up and down deal."),
    _env("order", "logic", "Four coloured buttons and a row of pips that answer clicks; left starts over."),
    _env("snake", "game", "A snake crawls on; the arrows turn it, it eats apples and grows; a click pauses it."),
    _env("meteor", "game", "Meteors fall; left and right move a ship, up fires; a score bar at the top."),
    _env("sweeper", "game", "A field of covered tiles hides mines; a click uncovers a tile; down deals again."),
    _env("frog", "game", "A frog hops with the arrows across a road with cars and a river with logs."),
    _env("bricks", "game", "Left and right move a paddle, up launches a ball at a wall of bricks."),
    _env("stones", "game", "Three piles of stones; a click takes stones, then the computer takes its turn."),
    _env("bridge", "tool-use", "An agent walks with the arrows, carries planks and crosses a river to a star."),
    _env(
        "pickaxe", "tool-use", "An agent walks with the arrows; a pickaxe, a ring of rocks round a gem; a click resets."
    ),
    _env("ladder", "tool-use", "Side view: an agent walks, a ladder on the ground, a gem on a high ledge."),
    _env("garden", "tool-use", "An agent walks with the arrows to a well and beds where clicks plant seeds that grow."),
)
_BY_NAME = {info.name: info for info in CATALOG}


def env_info(name: str) -> EnvInfo:
    """The catalogue entry of ``name``; UserError listing the names when there is none."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UserError(f"unknown Autumn environment {name!r}; known: {', '.join(sorted(_BY_NAME))}") from None


def program_source(name: str) -> str:
    """The Autumn program of environment ``name``."""
    return env_info(name).program_file.read_text(encoding="utf-8")


@dataclass(frozen=True)
class EnvStats:
    """The paper's Table B.1 columns for one program (see the module docstring for how each is counted), with
    the colour names and latent variables behind the two counts."""

    objects: int
    latent: int
    length: int
    on_clauses: int
    stochastic: bool
    colors: int
    grid_size: int
    color_names: tuple[str, ...] = field(default=())
    latent_names: tuple[str, ...] = field(default=())


@cache
def env_stats(name: str) -> EnvStats:
    """The statistics of environment ``name``'s program."""
    return program_stats(program_source(name))


def program_stats(source: str) -> EnvStats:
    """The statistics of an Autumn program (its source text)."""
    statements = _statements(source)
    interpreter = Interpreter(source, seed=1)
    latent = tuple(var.name for var in interpreter.state_vars if not _drawn(interpreter.globals.get(var.name)))
    colours = tuple(sorted(_colours(statements)))
    return EnvStats(
        objects=sum(1 for s in statements if _head(s) == "object"),
        latent=len(latent),
        length=sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith(";")),
        on_clauses=sum(1 for s in statements if _head(s) == "on"),
        stochastic=_stochastic(statements),
        colors=len(colours),
        grid_size=interpreter.grid_size,
        color_names=colours,
        latent_names=latent,
    )


def catalog_rows() -> list[dict[str, object]]:
    """One row per environment, in catalogue order: name, category, description and the statistics."""
    rows: list[dict[str, object]] = []
    for info in CATALOG:
        stats = env_stats(info.name)
        rows.append(
            {
                "name": info.name,
                "category": info.category,
                "description": info.description,
                "objects": stats.objects,
                "latent": stats.latent,
                "length": stats.length,
                "on_clauses": stats.on_clauses,
                "stochastic": stats.stochastic,
                "colors": stats.colors,
                "grid_size": stats.grid_size,
            }
        )
    return rows


# ----------------------------------------------------------------------------------------------
# Counting helpers


def _statements(source: str) -> list[Expr]:
    """The statements of a ``(program ...)`` form."""
    forms = parse(source)
    program = forms[0] if forms else None
    if not isinstance(program, SList) or _head(program) != "program":
        return []
    return list(program.items[1:])


def _head(expr: Expr) -> str | None:
    if isinstance(expr, SList) and expr.items and isinstance(expr.items[0], Symbol):
        return expr.items[0].name
    return None


def _drawn(value: object) -> bool:
    """An object, or a list of objects (an empty list included): what the renderer paints."""
    if isinstance(value, Instance):
        return True
    return isinstance(value, tuple) and all(isinstance(item, Instance) for item in value)


def _definitions(statements: list[Expr]) -> dict[str, Expr]:
    """The value expressions of the top-level ``(= name EXPR)`` statements."""
    found: dict[str, Expr] = {}
    for statement in statements:
        if _head(statement) == "=" and isinstance(statement, SList) and len(statement.items) == 3:
            target = statement.items[1]
            if isinstance(target, Symbol):
                found[target.name] = statement.items[2]
    return found


def _stochastic(statements: list[Expr]) -> bool:
    """The program refers to a random built-in, or to a standard-library function that draws (transitively)."""
    own = _definitions(statements)
    library = {name: value for name, value in _definitions(_statements(PRELUDE)).items() if name not in own}
    random_names = set(RANDOM_BUILTINS)
    changed = True
    while changed:
        changed = False
        for name, value in library.items():
            if name not in random_names and symbols(value) & random_names:
                random_names.add(name)
                changed = True
    used: set[str] = set()
    for statement in statements:
        used |= symbols(statement)
    return bool(used & random_names)


# Colour flow ------------------------------------------------------------------------------------

# Built-ins whose result holds elements of their list arguments, by argument position (1 = first argument).
_LIST_PASSING = {
    "at": (1,),
    "head": (1,),
    "tail": (1,),
    "uniformChoice": (1,),
    "concat": (1,),
    "filter": (2,),
    "addObj": (1, 2),
    "removeObj": (1,),
}
_WALKERS = {"map": 2, "filter": 2, "any": 2, "foldl": 3}  # their lambda's (last) parameter walks this argument


@dataclass
class _Flow:
    """Where values come from, collected from the whole program and the standard library, by name."""

    assigned: dict[str, list[tuple[Expr, tuple[str, ...]]]] = field(default_factory=dict)  # name -> values
    lambdas: dict[str, list[SList]] = field(default_factory=dict)  # global name -> its lambda
    constructed: dict[str, list[tuple[tuple[Expr, ...], tuple[str, ...]]]] = field(default_factory=dict)
    field_set: dict[str, list[tuple[Expr, tuple[str, ...]]]] = field(default_factory=dict)  # field -> values
    fields: dict[str, tuple[str, ...]] = field(default_factory=dict)  # object type -> its fields
    cells: list[tuple[Expr, tuple[str, ...]]] = field(default_factory=list)  # Cell colour arguments

    def add(
        self, table: dict[str, list[tuple[Expr, tuple[str, ...]]]], key: str, value: Expr, ctx: tuple[str, ...]
    ) -> None:
        table.setdefault(key, []).append((value, ctx))


def _lambda_params(expr: SList) -> list[str]:
    params = expr.items[1] if len(expr.items) > 1 else None
    if isinstance(params, Symbol):
        return [params.name]
    if isinstance(params, SList):
        return [p.name for p in params.items if isinstance(p, Symbol)]
    return []


def _is_lambda(expr: Expr) -> bool:
    return _head(expr) in ("-->", "fn") and isinstance(expr, SList) and len(expr.items) == 3


def _collect(expr: Expr, flow: _Flow, ctx: tuple[str, ...]) -> None:
    """Record assignments, lambdas, constructor calls, field updates and Cell colours in ``expr``."""
    if not isinstance(expr, SList) or not expr.items:
        return
    head = _head(expr)
    items = expr.items
    if head == "object" and len(items) >= 3 and isinstance(items[1], Symbol):
        fields = tuple(
            f.items[1].name
            for f in items[2:-1]
            if isinstance(f, SList) and len(f.items) == 3 and isinstance(f.items[1], Symbol)
        )
        flow.fields[items[1].name] = fields
        _collect(items[-1], flow, fields)
        return
    if head == ":":
        return
    if head == "=" and len(items) == 3:
        target, value = items[1], items[2]
        if isinstance(target, Symbol):
            flow.add(flow.assigned, target.name, value, ctx)
            if _is_lambda(value):
                assert isinstance(value, SList)
                flow.lambdas.setdefault(target.name, []).append(value)
        elif _head(target) == ".." and isinstance(target, SList) and len(target.items) == 3:
            name = target.items[2]
            if isinstance(name, Symbol):
                flow.add(flow.field_set, name.name, value, ctx)
    if head == "Cell" and len(items) in (3, 4):
        flow.cells.append((items[-1], ctx))
    if head == "updateObj" and len(items) == 4 and isinstance(items[2], Text):
        flow.add(flow.field_set, items[2].value, items[3], ctx)
    if head in _WALKERS and len(items) == _WALKERS[head] + 1 and _is_lambda(items[1]):
        function = items[1]
        assert isinstance(function, SList)
        params = _lambda_params(function)
        if params:
            flow.add(flow.assigned, params[-1], items[_WALKERS[head]], ctx)
        if head == "foldl" and len(params) == 2:
            flow.add(flow.assigned, params[0], items[2], ctx)
            flow.add(flow.assigned, params[0], function.items[2], ctx)
    if head is not None and head not in ("-->", "fn", "..", "if", "let", "=", "list", "prev", "initnext"):
        flow.constructed.setdefault(head, []).append((items[1:], ctx))
    for item in items:
        _collect(item, flow, ctx)


def _colours(statements: list[Expr]) -> set[str]:
    """The string literals that can reach a Cell's colour argument (module docstring)."""
    flow = _Flow()
    own = _definitions(statements)
    library = [s for s in _statements(PRELUDE) if not (_head(s) == "=" and _defined_name(s) in own)]
    for statement in [*library, *statements]:
        _collect(statement, flow, ())
    seen: set[tuple[str, str]] = set()
    found: set[str] = set()
    for colour, ctx in flow.cells:
        found |= _sources(colour, ctx, flow, seen)
    return {text.lower() for text in found}


def _defined_name(statement: Expr) -> str | None:
    if isinstance(statement, SList) and len(statement.items) > 1 and isinstance(statement.items[1], Symbol):
        return statement.items[1].name
    return None


def _once(key: tuple[str, str], seen: set[tuple[str, str]]) -> bool:
    """True the first time ``key`` is followed."""
    if key in seen:
        return False
    seen.add(key)
    return True


def _field_sources(name: str, flow: _Flow, seen: set[tuple[str, str]]) -> set[str]:
    found: set[str] = set()
    if not _once(("field", name), seen):
        return found
    for kind, fields in flow.fields.items():
        if name in fields:
            index = fields.index(name)
            for args, ctx in flow.constructed.get(kind, []):
                if index < len(args):
                    found |= _sources(args[index], ctx, flow, seen)
    for value, ctx in flow.field_set.get(name, []):
        found |= _sources(value, ctx, flow, seen)
    return found


def _name_sources(name: str, flow: _Flow, seen: set[tuple[str, str]]) -> set[str]:
    found: set[str] = set()
    if not _once(("name", name), seen):
        return found
    for value, ctx in flow.assigned.get(name, []):
        found |= _sources(value, ctx, flow, seen)
    # a parameter of a named lambda: the arguments at its call sites
    for function_name, functions in flow.lambdas.items():
        for function in functions:
            params = _lambda_params(function)
            if name in params:
                index = params.index(name)
                for args, ctx in flow.constructed.get(function_name, []):
                    if index < len(args):
                        found |= _sources(args[index], ctx, flow, seen)
    return found


def _call_sources(name: str, flow: _Flow, seen: set[tuple[str, str]]) -> set[str]:
    found: set[str] = set()
    if not _once(("call", name), seen):
        return found
    for function in flow.lambdas.get(name, []):
        found |= _sources(function.items[2], (), flow, seen)
    return found


def _sources(expr: Expr, ctx: tuple[str, ...], flow: _Flow, seen: set[tuple[str, str]]) -> set[str]:
    """The string literals that ``expr``'s value may be or contain (ctx: the fields of the object whose cell
    expression this is)."""
    if isinstance(expr, Text):
        return {expr.value}
    if isinstance(expr, Number):
        return set()
    if isinstance(expr, Symbol):
        if expr.name in ctx:
            return _field_sources(expr.name, flow, seen)
        return _name_sources(expr.name, flow, seen)
    if not expr.items:
        return set()
    head = _head(expr)
    items = expr.items
    parts: list[Expr] = []
    if head == "if" and len(items) == 6:
        parts = [items[3], items[5]]
    elif head == "let" and len(items) > 1:
        parts = [items[-1]]
    elif head in ("list", "prev", "initnext"):
        parts = list(items[1:])
    elif head == "=" and len(items) == 3:
        parts = [items[2]]
    elif head == ".." and len(items) == 3 and isinstance(items[2], Symbol):
        return _field_sources(items[2].name, flow, seen)
    elif head in _LIST_PASSING:
        parts = [items[i] for i in _LIST_PASSING[head] if i < len(items)]
    elif head in ("map", "foldl") and len(items) > 1:
        function = items[1]
        found = set()
        if _is_lambda(function):
            assert isinstance(function, SList)
            found |= _sources(function.items[2], ctx, flow, seen)
        elif isinstance(function, Symbol):
            found |= _call_sources(function.name, flow, seen)
        if head == "foldl" and len(items) == 4:
            found |= _sources(items[2], ctx, flow, seen)
        return found
    elif head is not None and head in flow.lambdas:
        return _call_sources(head, flow, seen)
    elif head is None and isinstance(items[0], SList):
        inner = items[0]
        if _is_lambda(inner):
            return _sources(inner.items[2], ctx, flow, seen)
        if len(inner.items) == 1 and isinstance(inner.items[0], Symbol):  # ((f)): a call of f
            return _call_sources(inner.items[0].name, flow, seen)
    found = set()
    for part in parts:
        found |= _sources(part, ctx, flow, seen)
    return found
