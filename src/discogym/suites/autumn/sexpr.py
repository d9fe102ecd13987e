"""Reading Autumn source: S-expressions with ``;`` comments, integers, strings and symbols, each with its line
and column so that every error can say where it is."""

from dataclasses import dataclass

MAX_NESTING = 100  # parentheses open at once; the shipped programs need at most 14
INT_MIN, INT_MAX = -(2**63), 2**63 - 1  # Autumn's integers are 64-bit (the official interpreter's C++ ints)


class AutumnError(Exception):
    """An error in an Autumn program, at a line and column (0 when unknown)."""

    def __init__(self, message: str, line: int = 0, column: int = 0) -> None:
        self.message = message
        self.line = line
        self.column = column
        super().__init__(self.describe())

    def describe(self) -> str:
        where = f"line {self.line}, column {self.column}: " if self.line else ""
        return where + self.message


@dataclass(frozen=True, slots=True)
class Node:
    """Where a piece of source starts."""

    line: int
    column: int


@dataclass(frozen=True, slots=True)
class Symbol(Node):
    name: str


@dataclass(frozen=True, slots=True)
class Number(Node):
    value: int


@dataclass(frozen=True, slots=True)
class Text(Node):
    value: str


@dataclass(frozen=True, slots=True)
class SList(Node):
    items: tuple["Expr", ...]


Expr = Symbol | Number | Text | SList


def parse(source: str) -> list[Expr]:
    """Every top-level expression of ``source``; AutumnError at the first problem (also for nesting deeper
    than :data:`MAX_NESTING` and integers outside 64 bits)."""
    return _Reader(source).read_all()


class _Reader:
    def __init__(self, source: str) -> None:
        self.text = source
        self.pos = 0
        self.line = 1
        self.column = 1

    def read_all(self) -> list[Expr]:
        found: list[Expr] = []
        while True:
            self._skip()
            if self.pos >= len(self.text):
                return found
            if self.text[self.pos] == ")":
                raise AutumnError("unexpected ')'", self.line, self.column)
            found.append(self._read(0))

    def _advance(self) -> str:
        char = self.text[self.pos]
        self.pos += 1
        if char == "\n":
            self.line += 1
            self.column = 1
        else:
            self.column += 1
        return char

    def _skip(self) -> None:
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == ";":
                while self.pos < len(self.text) and self.text[self.pos] != "\n":
                    self._advance()
            elif char.isspace():
                self._advance()
            else:
                return

    def _read(self, depth: int) -> Expr:
        line, column = self.line, self.column
        char = self.text[self.pos]
        if char == "(":
            if depth >= MAX_NESTING:
                raise AutumnError(f"expressions are nested more than {MAX_NESTING} deep", line, column)
            self._advance()
            items: list[Expr] = []
            while True:
                self._skip()
                if self.pos >= len(self.text):
                    raise AutumnError("'(' is never closed", line, column)
                if self.text[self.pos] == ")":
                    self._advance()
                    return SList(line, column, tuple(items))
                items.append(self._read(depth + 1))
        if char == '"':
            return self._read_text(line, column)
        start = self.pos
        while self.pos < len(self.text) and not self.text[self.pos].isspace() and self.text[self.pos] not in '();"':
            self._advance()
        atom = self.text[start : self.pos]
        if _is_integer(atom):
            return Number(line, column, _integer(atom, line, column))
        return Symbol(line, column, atom)

    def _read_text(self, line: int, column: int) -> Text:
        self._advance()
        chars: list[str] = []
        while self.pos < len(self.text) and self.text[self.pos] != '"':
            char = self._advance()
            if char == "\\" and self.pos < len(self.text):
                char = self._advance()
            chars.append(char)
        if self.pos >= len(self.text):
            raise AutumnError("string is never closed", line, column)
        self._advance()
        return Text(line, column, "".join(chars))


def _integer(atom: str, line: int, column: int) -> int:
    """An integer literal's value; AutumnError outside 64 bits (checked on the digits first: Python refuses
    to convert more than 4,300 of them)."""
    digits = atom.lstrip("-").lstrip("0")
    value = int(atom) if len(digits) <= 19 else None
    if value is None or not INT_MIN <= value <= INT_MAX:
        shown = atom if len(atom) <= 24 else f"{atom[:20]}... ({len(digits)} digits)"
        raise AutumnError(f"integer {shown} is outside the 64-bit range", line, column)
    return value


def _is_integer(atom: str) -> bool:
    digits = atom[1:] if atom[:1] == "-" else atom
    return digits.isdigit() and digits.isascii()


def show(expr: Expr) -> str:
    """The expression as source text (for messages)."""
    if isinstance(expr, Symbol):
        return expr.name
    if isinstance(expr, Number):
        return str(expr.value)
    if isinstance(expr, Text):
        return f'"{expr.value}"'
    return "(" + " ".join(show(item) for item in expr.items) + ")"


def is_form(expr: Expr, head: str) -> bool:
    """Whether ``expr`` is a list headed by the word ``head``: ``(head ...)``."""
    return isinstance(expr, SList) and bool(expr.items) and is_word(expr.items[0], head)


def is_word(expr: Expr, word: str) -> bool:
    """Whether ``expr`` is the symbol ``word``."""
    return isinstance(expr, Symbol) and expr.name == word


def symbols(expr: Expr) -> set[str]:
    """Every symbol in an expression."""
    if isinstance(expr, Symbol):
        return {expr.name}
    if isinstance(expr, SList):
        found: set[str] = set()
        for item in expr.items:
            found |= symbols(item)
        return found
    return set()
