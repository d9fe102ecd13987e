"""Autumn expressions compiled to Python functions: each expression becomes the source of one Python expression,
compiled once by Python's own compiler, so that a step runs Python bytecode rather than a tree of closures.

The generated code keeps the interpreter's semantics exactly (the order of evaluation, the checks and their
messages, the places of errors): integers are checked and their arithmetic kept to 64 bits inline; a condition
decides at once when it is a boolean; ``let`` makes a scope and evaluates its parts in order (a tuple's items are
evaluated left to right); a name bound only in the globals is read from them directly, any other through the
scopes of its callers (scope is dynamic). What needs more than an expression (calls, assignments, errors) is a
call of the interpreter's own helpers, named in the namespace of the generated functions (:class:`Compiler`).

A program's names and texts enter the source only as Python literals (``repr``), never as code. The source of each
generated function is compiled once per process (:func:`_code_of`) and bound to each interpreter's namespace, so a
second interpreter of the same program (every task's reset) costs no compilation.
"""

from collections.abc import Callable
from functools import lru_cache
from types import CodeType
from typing import TYPE_CHECKING, Any, NamedTuple

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
    is_form,
    is_word,
    show,
)
from discogym.suites.autumn.values import Instance, Lambda, Position, describe

if TYPE_CHECKING:
    from discogym.suites.autumn.interpreter import Interpreter

Scope = dict[str, Any]  # a scope's names, and under PARENT the scope it sits on (the caller's, for a call)
PARENT = " parent"  # no Autumn name has a space
Code = Callable[[Scope], Any]
OPERATORS = {"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or", "&", "|", "!"}
COMPARISONS = {"<", "<=", ">", ">="}
NESTING = 16  # Autumn expressions nested in one generated function (Python's parser takes 200 parentheses)
USUAL_FIELDS = {"x": "Position", "y": "Position", "origin": "Instance"}  # read at once when the type is right


class Compiler:
    """Compiles the expressions of one interpreter. The generated functions find the interpreter's helpers and
    values (the globals, the built-ins, the lambdas the program writes) in :attr:`namespace`."""

    def __init__(self, interp: "Interpreter") -> None:
        self.interp = interp
        self.functions = 0
        self._recording: list[Step] | None = None  # the steps of the compile() under way, to replay
        self.namespace: dict[str, Any] = {
            "G": interp.globals,
            "Position": Position,
            "Instance": Instance,
            "apply": interp.apply,
            "look": interp.look_up,
            "builtin": interp.builtin,
            "B": interp.builtins_table,
            "assign": interp.assign_value,
            "assign_field": interp.assign_field,
            "field": interp.field,
            "integer": _integer,
            "overflow": _overflow,
            "truth": interp.truth,
            "negate": _negate,
            "divide": c_divide,
            "remainder": c_remainder,
            "P": interp.prev,
            "prev_named": interp.prev_named,
        }

    def compile(self, expr: Expr, reuse: bool = True) -> Code:
        """A function of a scope that evaluates ``expr`` in it. With ``reuse``, an expression compiled before at
        the same point of another interpreter's compiling (the same namespace size, function count and bound
        names: the same program and library) is not generated again: its recorded steps are replayed
        (:class:`_Plan`), making the same functions in this interpreter's namespace."""
        if not reuse:
            return self._function(expr)
        key = (id(expr), len(self.namespace), self.functions, self.interp.bound)
        plan = _PLANS.get(key)
        if plan is not None and plan.expr is expr:  # (the plan holds expr: its id is not another's)
            return plan.replay(self)
        outer, self._recording = self._recording, []
        try:
            function = self._function(expr)
            steps = self._recording
        finally:
            self._recording = outer
        if outer is not None:
            outer.extend(steps)
        if len(_PLANS) >= MAX_PLANS:
            _PLANS.clear()
        _PLANS[key] = _Plan(expr, tuple(steps))
        return function

    # Functions

    def _function(self, expr: Expr, local: bool = False) -> Code:
        """A generated function ``(frame) -> value`` for ``expr``; ``local``: the scope it is given is never the
        globals (a function's body, or a part of one)."""
        writer = _Writer()
        if local:
            writer.locals.add("frame")
        body = self._expression(expr, "frame", writer, 0)
        self.functions += 1
        name = f"autumn_{self.functions}"
        source = f"def {name}(frame):\n    return {body}\n"
        code = _code_of(source, name)
        exec(code, self.namespace)
        function: Code = self.namespace.pop(name)
        if self._recording is not None:
            self._recording.append(_Made(code, name))
        return function

    def _constant(self, value: Any) -> str:
        """A name in the namespace for ``value`` (a lambda the program writes, or a function made just before)."""
        name = f"k{len(self.namespace)}"
        self.namespace[name] = value
        if self._recording is not None:
            lambda_of = (value.params, value.node) if isinstance(value, Lambda) else (None, None)
            self._recording.append(_Named(name, *lambda_of))
        return name

    # Expressions

    def _expression(self, expr: Expr, frame: str, writer: "_Writer", depth: int) -> str:
        """Python source evaluating ``expr`` in the scope held by the variable ``frame``."""
        if depth > NESTING:  # deep nesting goes on in a function of its own
            return f"{self._constant(self._function(expr, writer.local(frame)))}({frame})"
        if isinstance(expr, Number):
            return f"({expr.value})"
        if isinstance(expr, Text):
            return repr(expr.value)
        if isinstance(expr, Symbol):
            return self._symbol(expr, frame, writer)
        if not expr.items:
            raise AutumnError("empty expression ()", expr.line, expr.column)
        head = expr.items[0]
        if isinstance(head, Symbol):
            special = SPECIAL_FORMS.get(head.name)
            if special is not None:
                return special(self, expr, frame, writer, depth + 1)
            if head.name in OPERATORS:
                return self._operator(expr, frame, writer, depth + 1)
        if len(expr.items) == 1:
            return self._single(expr, frame, writer, depth + 1)
        return self._call(expr, frame, writer, depth + 1)

    def _symbol(self, expr: Symbol, frame: str, writer: "_Writer") -> str:
        name = expr.name
        if name == "true":
            return "True"
        if name == "false":
            return "False"
        if name == "null":
            return "None"
        where = f"{expr.line}, {expr.column}"
        if name not in self.interp.bound:  # only the globals hold it: there, or a built-in
            if name in self.interp.builtins_table:  # (the table never changes)
                return f"(G[{name!r}] if {name!r} in G else B[{name!r}])"
            return f"(G[{name!r}] if {name!r} in G else builtin({name!r}, {where}))"
        if not writer.local(frame):  # the innermost scope at once, the others through look_up
            return f"({frame}[{name!r}] if {name!r} in {frame} else look({frame}, {name!r}, {where}))"
        outer = writer.temporary()  # a local scope has a parent: the two innermost at once
        return (
            f"({frame}[{name!r}] if {name!r} in {frame} else ({outer}[{name!r}] if {name!r} in ({outer} := "
            f"{frame}[{PARENT!r}]) else look({outer}, {name!r}, {where})))"
        )

    def _single(self, expr: SList, frame: str, writer: "_Writer", depth: int) -> str:
        """``(f)`` is the value of f; ``((f))`` calls f with no arguments."""
        only = expr.items[0]
        inner = self._expression(only, frame, writer, depth)
        if isinstance(only, Symbol):
            return inner
        return f"apply({inner}, (), {frame}, {expr.line}, {expr.column})"

    def _call(self, expr: SList, frame: str, writer: "_Writer", depth: int) -> str:
        function = self._expression(expr.items[0], frame, writer, depth)
        arguments = [self._expression(item, frame, writer, depth) for item in expr.items[1:]]
        return f"apply({function}, {_tuple(arguments)}, {frame}, {expr.line}, {expr.column})"

    def _operator(self, expr: SList, frame: str, writer: "_Writer", depth: int) -> str:
        head = expr.items[0]
        assert isinstance(head, Symbol)
        op = head.name
        operands = [self._expression(item, frame, writer, depth) for item in expr.items[1:]]
        where = f"{expr.line}, {expr.column}"
        if op in ("!", "-") and len(operands) == 1:
            (only,) = operands
            if op == "!":
                value = writer.temporary()
                return f"(not ({value} if ({value} := {only}) is True or {value} is False else truth({value})))"
            return f"negate({only}, {where})"
        if len(operands) != 2:
            raise AutumnError(f"'{op}' takes two operands (operators are binary)", expr.line, expr.column)
        left, right = operands
        if op in ("and", "&", "or", "|"):
            a, b = writer.temporary(), writer.temporary()
            right_truth = f"({b} if ({b} := {right}) is True or {b} is False else truth({b}))"
            if op in ("and", "&"):  # a boolean decides at once; anything else is made true or false
                return f"({right_truth} if ({a} := {left}) is True or ({a} is not False and truth({a})) else False)"
            return f"(True if ({a} := {left}) is True or ({a} is not False and truth({a})) else {right_truth})"
        if op in ("==", "!="):
            return f"({left} {op} {right})"
        checked = zip(expr.items[1:], operands, strict=True)
        a_int, b_int = (self._integer(item, source, op, where, writer) for item, source in checked)
        if op in COMPARISONS:
            return f"({a_int} {op} {b_int})"
        if op in ("+", "-", "*"):
            value = writer.temporary()
            return f"({value} if {INT_MIN} <= ({value} := {a_int} {op} {b_int}) <= {INT_MAX} else overflow({where}))"
        helper = "divide" if op == "/" else "remainder"
        return f"{helper}({a_int}, {b_int}, {where})"

    @staticmethod
    def _integer(item: Expr, operand: str, op: str, where: str, writer: "_Writer") -> str:
        """``operand`` (the source of ``item``) checked to be an integer (an int passes at once; a number as
        written needs no check)."""
        if isinstance(item, Number):
            return operand
        value = writer.temporary()
        return f"({value} if type({value} := {operand}) is int else integer({value}, {op!r}, {where}))"

    # Special forms

    def _if(self, expr: SList, frame: str, writer: "_Writer", depth: int) -> str:
        items = expr.items
        if len(items) != 6 or not is_word(items[2], "then") or not is_word(items[4], "else"):
            raise AutumnError("if is written (if CONDITION then A else B)", expr.line, expr.column)
        condition, yes, no = (self._expression(items[i], frame, writer, depth) for i in (1, 3, 5))
        value = writer.temporary()
        decided = f"({value} := {condition}) is True or ({value} is not False and truth({value}))"
        return f"({yes} if {decided} else {no})"

    def _let(self, expr: SList, frame: str, writer: "_Writer", depth: int) -> str:
        if len(expr.items) < 2:
            raise AutumnError("let needs at least one expression", expr.line, expr.column)
        inner = writer.temporary()
        writer.locals.add(inner)
        parts = [self._expression(item, inner, writer, depth) for item in expr.items[1:]]
        return f"(({inner} := {{{PARENT!r}: {frame}}}), {', '.join(parts)})[-1]"

    def _assign(self, expr: SList, frame: str, writer: "_Writer", depth: int) -> str:
        if len(expr.items) != 3:
            raise AutumnError("assignment is (= name EXPRESSION)", expr.line, expr.column)
        target = expr.items[1]
        value = self._expression(expr.items[2], frame, writer, depth)
        if isinstance(target, Symbol):
            return f"assign({frame}, {target.name!r}, {value})"
        if is_form(target, "..") and len(target.items) == 3:  # type: ignore[union-attr]
            holder, field_name = target.items[1], target.items[2]  # type: ignore[union-attr]
            if not isinstance(holder, Symbol) or not isinstance(field_name, Symbol):
                raise AutumnError("a field assignment is (= (.. variable field) EXPRESSION)", expr.line, expr.column)
            current = self._symbol(holder, frame, writer)  # evaluated after the value, as the arguments' order says
            where = f"{expr.line}, {expr.column}"
            return f"assign_field({frame}, {value}, {current}, {holder.name!r}, {field_name.name!r}, {where})"
        raise AutumnError(f"cannot assign to {show(target)}", expr.line, expr.column)

    def _field(self, expr: SList, frame: str, writer: "_Writer", depth: int) -> str:
        if len(expr.items) != 3 or not isinstance(expr.items[2], Symbol):
            raise AutumnError("field access is (.. object field)", expr.line, expr.column)
        holder, name = self._expression(expr.items[1], frame, writer, depth), expr.items[2].name
        general = f"field({{}}, {name!r}, {expr.line}, {expr.column})"
        usual = USUAL_FIELDS.get(name)
        if usual is None:
            return general.format(holder)
        value = writer.temporary()
        return f"({value}.{name} if type({value} := {holder}) is {usual} else {general.format(value)})"

    def _lambda(self, expr: SList, frame: str, writer: "_Writer", depth: int) -> str:
        if len(expr.items) != 3:
            raise AutumnError("a lambda is (--> params body)", expr.line, expr.column)
        params_expr = expr.items[1]
        if isinstance(params_expr, Symbol):
            params: tuple[str, ...] = (params_expr.name,)
        elif isinstance(params_expr, SList) and all(isinstance(p, Symbol) for p in params_expr.items):
            params = tuple(p.name for p in params_expr.items)  # type: ignore[union-attr]
        else:
            raise AutumnError("lambda parameters are a name or a list of names", expr.line, expr.column)
        return self._constant(Lambda(params, self._function(expr.items[2], local=True), expr))

    def _list(self, expr: SList, frame: str, writer: "_Writer", depth: int) -> str:
        return _tuple([self._expression(item, frame, writer, depth) for item in expr.items[1:]])

    def _prev(self, expr: SList, frame: str, writer: "_Writer", depth: int) -> str:
        if len(expr.items) != 2:
            raise AutumnError("prev takes one variable", expr.line, expr.column)
        target = expr.items[1]
        inner = self._expression(target, frame, writer, depth)
        if isinstance(target, Text):  # (prev "name") reads the variable of that name, as officially
            return f"prev_named({target.value!r}, {target.line}, {target.column})"
        if not isinstance(target, Symbol):
            return inner
        name = target.name
        return f"(P[{name!r}] if {name!r} in P else {inner})"


class _Writer:
    """The temporary variables of one generated function, and which of them hold local scopes."""

    def __init__(self) -> None:
        self.count = 0
        self.locals: set[str] = set()

    def local(self, frame: str) -> bool:
        """Whether the variable ``frame`` holds a local scope (one with a parent)."""
        return frame in self.locals

    def temporary(self) -> str:
        self.count += 1
        return f"t{self.count}"


SPECIAL_FORMS: dict[str, Callable[[Compiler, SList, str, _Writer, int], str]] = {
    "if": Compiler._if,
    "let": Compiler._let,
    "=": Compiler._assign,
    "..": Compiler._field,
    "-->": Compiler._lambda,
    "fn": Compiler._lambda,
    "list": Compiler._list,
    "prev": Compiler._prev,
}


class _Made(NamedTuple):
    """A step of compiling: a generated function made from ``code``, defining ``name``."""

    code: CodeType
    name: str


class _Named(NamedTuple):
    """A step of compiling: the function made just before, named ``name`` in the namespace as it is or, given the
    lambda's ``params`` and ``node``, as a lambda's body."""

    name: str
    params: tuple[str, ...] | None = None
    node: Node | None = None


Step = _Made | _Named
MAX_PLANS = 16_384  # plans kept (each holds its expression and code objects the code cache holds anyway)


class _Plan:
    """How one expression was compiled, to be done again in another interpreter's namespace."""

    def __init__(self, expr: Expr, steps: tuple[Step, ...]) -> None:
        self.expr = expr
        self.steps = steps

    def replay(self, compiler: Compiler) -> Code:
        namespace = compiler.namespace
        made: Any = None
        for step in self.steps:
            if isinstance(step, _Made):
                compiler.functions += 1
                exec(step.code, namespace)
                made = namespace.pop(step.name)
            elif step.params is None or step.node is None:
                namespace[step.name] = made
            else:
                namespace[step.name] = Lambda(step.params, made, step.node)
        function: Code = made
        return function


_PLANS: dict[tuple[int, int, int, frozenset[str]], _Plan] = {}


@lru_cache(maxsize=4096)  # some 150 programs (the library shared): tens of MB at most
def _code_of(source: str, name: str) -> CodeType:
    """The code of a generated function's definition, compiled once per process."""
    return compile(source, f"<autumn {name}>", "exec")


def _tuple(items: list[str]) -> str:
    if len(items) == 1:
        return f"({items[0]},)"
    return f"({', '.join(items)})"


def _integer(value: Any, op: str, line: int, column: int) -> int:
    """``value`` when it is an integer (not a boolean); AutumnError at the operator's place otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise AutumnError(f"'{op}' needs integers, got {describe(value)}", line, column)
    return value


def _overflow(line: int, column: int) -> int:
    raise AutumnError("integer overflow: the result is outside the 64-bit range", line, column)


def _negate(value: Any, line: int, column: int) -> int:
    """``(- x)``."""
    number = -_integer(value, "-", line, column)
    return number if INT_MIN <= number <= INT_MAX else _overflow(line, column)


def c_divide(a: int, b: int, line: int = 0, column: int = 0) -> int:
    """``(/ a b)``: integer division truncating toward zero (C)."""
    if b == 0:
        raise AutumnError("division by zero", line, column)
    quotient = abs(a) // abs(b)
    value = quotient if (a >= 0) == (b >= 0) else -quotient
    return value if INT_MIN <= value <= INT_MAX else _overflow(line, column)


def c_remainder(a: int, b: int, line: int = 0, column: int = 0) -> int:
    """``(% a b)``: the remainder with the dividend's sign (C)."""
    if b == 0:
        raise AutumnError("remainder by zero", line, column)
    return a - b * c_divide(a, b, line, column)
