"""Small Autumn programs for the tests: run them and draw their frames as letters."""

from discogym.suites.autumn.interpreter import Interpreter, parse_actions

LETTERS = {
    "black": ".",
    "red": "r",
    "blue": "b",
    "green": "g",
    "yellow": "y",
    "white": "w",
    "gray": "a",
    "orange": "o",
    "purple": "p",
}


def program(*lines: str, size: int = 4) -> str:
    """A program on a ``size`` x ``size`` grid with the given statements."""
    return "(program (= GRID_SIZE {}) {})".format(size, " ".join(lines))


def draw(frame: list[list[str]]) -> str:
    """A frame as rows of letters joined by '/'."""
    return "/".join("".join(LETTERS.get(colour, "?") for colour in row) for row in frame)


def run(source: str, actions: str = "", seed: int = 1) -> list[str]:
    """The drawn frames: the initial one and one per action."""
    interpreter = Interpreter(source, seed=seed)
    return [draw(interpreter.frame)] + [draw(interpreter.step(a)) for a in parse_actions(actions)]


def value(source: str, name: str, actions: str = "", seed: int = 1) -> object:
    """A global's value after the actions."""
    interpreter = Interpreter(source, seed=seed)
    for action in parse_actions(actions):
        interpreter.step(action)
    return interpreter.globals[name]
