"""``discogym autumn check``: static checks of an Autumn program, then a trial initialization.

The checks: the program parses; every statement has its form; every name used is bound somewhere (a global,
an object type or field, a built-in, the standard library, a lambda parameter or an assignment anywhere,
since scope is dynamic and a function may read its caller's names); operators get two operands; built-ins,
object constructors and lambdas called by name get a number of arguments they accept. Then the program is
loaded and initialized, which reports errors in the initial values.
"""

from collections.abc import Iterator
from typing import Any, cast

from discogym.suites.autumn import builtins
from discogym.suites.autumn.builtins import PRELUDE
from discogym.suites.autumn.compiler import OPERATORS
from discogym.suites.autumn.interpreter import Interpreter
from discogym.suites.autumn.sexpr import AutumnError, Expr, SList, Symbol, parse, show

KEYWORDS = {"true", "false", "null", "then", "else", "click", "origin"}
SPECIAL = {"if", "let", "=", "..", "-->", "fn", "list", "prev", "initnext", "program", "object", ":", "on"}


def check_program(source: str) -> list[AutumnError]:
    """Every problem found, in source order (empty: the program is fine)."""
    try:
        forms = parse(source)
    except AutumnError as err:
        return [err]
    problems = list(_static_problems(forms))
    if not problems:
        try:
            Interpreter(source)
        except AutumnError as err:
            problems.append(err)
    return sorted(problems, key=lambda e: (e.line, e.column))


def _static_problems(forms: list[Expr]) -> Iterator[AutumnError]:
    everything = [*parse(PRELUDE), *forms]
    known = KEYWORDS | _bound_names(everything)
    arities = _arities(everything)
    for form in forms:
        yield from _visit(form, known, arities)


def _bound_names(forms: list[Expr]) -> set[str]:
    """Names any statement, assignment, lambda or object field binds, and the built-ins."""
    names = set(builtins.make(cast(Any, None)))  # the built-ins only read the interpreter when called
    stack: list[Expr] = list(forms)
    while stack:
        expr = stack.pop()
        if not isinstance(expr, SList) or not expr.items:
            continue
        head = expr.items[0]
        if isinstance(head, Symbol):
            if head.name in ("=", ":", "object") and len(expr.items) > 1 and isinstance(expr.items[1], Symbol):
                names.add(expr.items[1].name)
            if head.name in ("-->", "fn") and len(expr.items) > 1:
                params = expr.items[1]
                if isinstance(params, Symbol):
                    names.add(params.name)
                elif isinstance(params, SList):
                    names |= {p.name for p in params.items if isinstance(p, Symbol)}
        stack.extend(expr.items)
    return names


def _arities(forms: list[Expr]) -> dict[str, tuple[int, ...]]:
    """Argument counts of object constructors and of globals defined as lambdas."""
    counts: dict[str, tuple[int, ...]] = {}
    for form in forms:
        if not isinstance(form, SList):
            continue
        for stmt in form.items[1:]:
            if not isinstance(stmt, SList) or len(stmt.items) < 3 or not isinstance(stmt.items[0], Symbol):
                continue
            head, name = stmt.items[0].name, stmt.items[1]
            if head == "object" and isinstance(name, Symbol):
                counts[name.name] = (len(stmt.items) - 3 + 1,)
            if head == "=" and isinstance(name, Symbol) and isinstance(stmt.items[2], SList):
                value = stmt.items[2]
                if value.items and isinstance(value.items[0], Symbol) and value.items[0].name in ("-->", "fn"):
                    params = value.items[1] if len(value.items) > 1 else None
                    if isinstance(params, Symbol):
                        counts[name.name] = (-1,)
                    elif isinstance(params, SList):
                        counts[name.name] = (-len(params.items),)
    return counts


def _accepts(counts: tuple[int, ...], given: int) -> bool:
    """Whether ``given`` arguments fit ``counts``: exact counts, or -n for "n or more" (a lambda ignores extra
    arguments, as the official interpreter does; too few crash it)."""
    return any(given == c or (c < 0 and given >= -c) for c in counts)


def _counts_text(counts: tuple[int, ...]) -> str:
    return " or ".join(str(c) if c >= 0 else f"at least {-c}" for c in counts)


def _visit(expr: Expr, known: set[str], arities: dict[str, tuple[int, ...]]) -> Iterator[AutumnError]:
    if isinstance(expr, Symbol):
        if expr.name not in known:
            yield AutumnError(f"unknown name '{expr.name}'", expr.line, expr.column)
        return
    if not isinstance(expr, SList) or not expr.items:
        return
    head = expr.items[0]
    rest = expr.items[1:]
    if isinstance(head, Symbol):
        name = head.name
        if name in OPERATORS and len(rest) != 2 and not (name in ("-", "!") and len(rest) == 1):
            yield AutumnError(f"'{name}' takes two operands (operators are binary)", expr.line, expr.column)
        if name == ".." and len(rest) == 2:
            rest = rest[:1]  # the field name is not a variable
        elif name in (":", "object") and rest:
            rest = rest[1:]
            if name == ":":
                return
        elif name == "if":
            rest = tuple(item for item in rest if not (isinstance(item, Symbol) and item.name in ("then", "else")))
        elif (
            name not in SPECIAL
            and name not in OPERATORS
            and name in arities
            and rest
            and not _accepts(arities[name], len(rest))
        ):
            wanted = _counts_text(arities[name])
            yield AutumnError(
                f"{name} takes {wanted} argument(s), got {len(rest)}: {show(expr)}", expr.line, expr.column
            )
        if name not in SPECIAL and name not in OPERATORS:
            yield from _visit(head, known, arities)
    else:
        yield from _visit(head, known, arities)
    for item in rest:
        if isinstance(item, SList) and item.items and isinstance(item.items[0], Symbol) and item.items[0].name == ":":
            continue
        yield from _visit(item, known, arities)
