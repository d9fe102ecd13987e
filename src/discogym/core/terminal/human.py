"""A person at the terminal (``discogym play``): the ``human`` agent and the line syntax it reads.

Suites with a text syntax of their own (crafting's ``move: from [I2] to [A1] with quantity 1``) are played
in it. Other suites are played with one tool call per line, ``TOOL key=value ...`` (a value is JSON, or a
bare word taken as text) or ``TOOL {JSON arguments}``; the tools are listed as usage lines of that form.
"""

import base64
import json
import re
import sys
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from discogym.core.model.agent import Agent, AgentContext, AgentDecision, Turn
from discogym.core.model.errors import ToolError
from discogym.core.model.termination import Termination
from discogym.core.model.tools import ToolCall, ToolImage, ToolSpec, parse_json

QUIT = "quit"
REMINDER_WIDTH = 72  # the task's line above each prompt fits an 80-column terminal with its "task: "

_KEY = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)=")
_SPACE = re.compile(r"\s")
_BARE = re.compile(r"[A-Za-z_][\w.:-]*")  # text that can go unquoted: it never reads as JSON
_JSON_WORDS = {"true", "false", "null", "NaN", "Infinity"}
_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}


def _value_shape(schema: dict[str, Any]) -> str:
    """How a usage line shows a value of ``schema``: ``up|down``, ``N``, ``{NAME: NUMBER, ...}``, ..."""
    if "enum" in schema:
        return "|".join(str(value) for value in schema["enum"])
    options = [option for option in schema.get("anyOf", []) if option.get("type") != "null"]
    if options:
        return "|".join(_value_shape(option) for option in options)
    kind = schema.get("type")
    if kind == "integer":
        low, high = schema.get("minimum"), schema.get("maximum")
        return f"{low}..{high}" if low is not None and high is not None else "N"
    if kind == "object":
        values = schema.get("additionalProperties")
        inner = _value_shape(values) if isinstance(values, dict) else "VALUE"
        return f"{{NAME: {inner}, ...}}"
    if kind == "array":
        items = schema.get("items")
        return f"[{_value_shape(items) if isinstance(items, dict) else 'VALUE'}, ...]"
    return {"number": "NUMBER", "boolean": "true|false", "string": "TEXT"}.get(str(kind), "VALUE")


def usage_line(spec: ToolSpec) -> str:
    """A tool as a person types it, e.g. ``submit parameter=TEXT direction=up|down`` (optional arguments in
    brackets), derived from its JSON schema."""
    properties: dict[str, Any] = spec.parameters.get("properties", {})
    required = set(spec.parameters.get("required", []))
    words = [spec.name]
    for name, schema in properties.items():
        word = f"{name}={_value_shape(schema)}"
        words.append(word if name in required else f"[{word}]")
    return " ".join(words)


def tool_line(call: ToolCall) -> str:
    """A call written in the line syntax, e.g. ``probe n=3``; :func:`parse_tool_line` reads it back."""
    if not isinstance(call.args, dict):
        return f"{call.tool} {json.dumps(call.args)}"
    words = [call.tool]
    for key, value in call.args.items():
        bare = isinstance(value, str) and _BARE.fullmatch(value) and value not in _JSON_WORDS
        words.append(f"{key}={value if bare else json.dumps(value)}")
    return " ".join(words)


def parse_tool_line(line: str) -> ToolCall:
    """``TOOL key=value ...`` or ``TOOL {JSON arguments}`` as a call; ValueError saying what is wrong."""
    name, _, rest = line.strip().partition(" ")
    rest = rest.strip()
    if not rest:
        return ToolCall(tool=name, args={})
    if rest.startswith("{"):
        return ToolCall(tool=name, args=parse_json(rest, "arguments are"))
    return ToolCall(tool=name, args=_key_values(rest))


def _key_values(text: str) -> dict[str, Any]:
    decoder = json.JSONDecoder()
    args: dict[str, Any] = {}
    position = 0
    while position < len(text):
        key = _KEY.match(text, position)
        if key is None:
            raise ValueError(f"expected key=value at {text[position:].strip()!r}")
        start = key.end()
        space = _SPACE.search(text, start)
        word_end = len(text) if space is None else space.start()
        try:
            value, position = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            position = start
        if position == start or (position < len(text) and not text[position].isspace()):
            value, position = text[start:word_end], word_end  # not JSON (``mu``, ``true_1``): the word as text
        args[key.group(1)] = value
        while position < len(text) and text[position].isspace():
            position += 1
    return args


def _line_editing() -> None:
    """Give ``input()`` line editing and an in-memory history (for this game only), where the terminal
    allows it. Nothing is written to disk."""
    if sys.stdin.isatty():
        with suppress(ImportError):  # no readline on this platform: plain input
            import readline  # noqa: F401 - importing it is what turns editing on


class PictureFolder:
    """Where the pictures of a game go, one file per picture: ``brief.png``, ``step-003.png``, ..."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def save(self, images: Sequence[ToolImage], stem: str) -> list[Path]:
        """Write ``images`` as ``STEM.png`` (``STEM-2.png``, ... for more than one) and return their paths."""
        self.folder.mkdir(parents=True, exist_ok=True)
        paths = []
        for number, image in enumerate(images, start=1):
            suffix = "" if number == 1 else f"-{number}"
            path = self.folder / f"{stem}{suffix}.{_EXTENSIONS[image.media_type]}"
            path.write_bytes(base64.b64decode(image.data_base64))
            paths.append(path)
        return paths


class HumanAgent(Agent):
    """A person at the terminal: sees each result and types the next action, in the suite's own syntax when
    it has one (e.g. ``move: from [I1] to [A1] with quantity 1``), else ``TOOL key=value ...``.

    An empty line repeats the actions; ``quit`` ends the episode (``agent_stopped``); end of input (Ctrl-D)
    ends it as ``abandoned``. With ``pictures``, every picture shown is saved there and its path printed.
    """

    def __init__(
        self,
        read: Callable[[str], str] = input,
        write: Callable[[str], None] = print,
        pictures: PictureFolder | None = None,
    ) -> None:
        self.read = read
        self.write = write
        self.pictures = pictures
        self.context: AgentContext | None = None

    def start(self, context: AgentContext) -> None:
        self.context = context
        if self.read is input:
            _line_editing()
        self.write(context.brief)
        self._show_pictures(context.brief_images, "brief")
        self._help()
        self.write(self._how_to_play())

    def _how_to_play(self) -> str:
        assert self.context is not None
        example = self.context.example_action()
        if example is None and self.context.text_prompt is None:
            calls = self.context.valid_calls()
            example = tool_line(calls[0]) if calls else None
        shown = f", e.g. {example}" if example else ""
        return (
            f"Type one action per line{shown}. An empty line shows the actions again; "
            f"'{QUIT}' ends the episode, and so do Ctrl-D and Ctrl-C (it is saved and scored as it stands)."
        )

    def _help(self) -> None:
        assert self.context is not None
        if self.context.text_prompt is not None:
            self.write("\n" + self.context.text_prompt + "\n")
            return
        self.write("Actions (TOOL key=value ...; a value is JSON or a bare word):")
        for spec in self.context.tools:
            self.write(f"  {usage_line(spec)}\n      {spec.description}")

    def _show_pictures(self, images: Sequence[ToolImage], stem: str) -> None:
        if not images:
            return
        if self.pictures is None:
            self.write(f"({len(images)} picture(s) go with this observation; a terminal cannot show them)")
            return
        for path in self.pictures.save(images, stem):
            self.write(f"(picture: {path})")

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        assert self.context is not None
        if history:
            self.write(history[-1].result.text)
            self._show_pictures(history[-1].result.images, f"step-{len(history):03d}")
        while True:
            self.write(self._reminder())
            try:
                line = self.read("> ").strip()
            except EOFError:
                return AgentDecision(message="the player left", termination=Termination.ABANDONED)
            if line == QUIT:
                return AgentDecision(message="the player quit")
            if not line:
                self._help()
                continue
            try:
                return AgentDecision(call=self._parse(line))
            except (ValueError, ToolError) as err:
                self.write(f"not understood: {err}")

    def _reminder(self) -> str:
        """The task in one line above every prompt, since the actions' help and long observations scroll the
        brief off the screen: its first line, cut to REMINDER_WIDTH characters."""
        assert self.context is not None
        first = next((line.strip() for line in self.context.brief.splitlines() if line.strip()), "")
        cut = first if len(first) <= REMINDER_WIDTH else first[: REMINDER_WIDTH - 1] + "…"
        return f"task: {cut}"

    def _parse(self, line: str) -> ToolCall:
        assert self.context is not None
        if self.context.text_prompt is not None and self.context.parse_text_action is not None:
            return self.context.parse_text_action(line)
        return parse_tool_line(line)
