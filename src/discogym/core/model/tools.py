"""Tools: how every interaction between an agent and an environment is expressed."""

import base64
import copy
import enum
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, get_origin

import annotated_types
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema

from discogym.core.model.jsonsafe import JsonDict, JsonValue

# Above this many argument combinations a tool is too large to enumerate for the random agent.
MAX_ENUMERATED_CALLS = 10_000
MAX_INT_RANGE = 1_000


class ToolArgs(BaseModel):
    """Base class of tool argument models: unknown fields are rejected with a clear message."""

    model_config = ConfigDict(extra="forbid")


class NoArgs(ToolArgs):
    """Arguments of a tool that takes none."""


class ToolSpec(BaseModel):
    """What an agent is told about a tool: its name, what it does, and its arguments' JSON schema."""

    name: str
    description: str
    parameters: dict[str, Any]


class ToolCall(BaseModel):
    """A request to run a tool. ``args`` is whatever the agent sent, malformed or not."""

    tool: str
    args: JsonValue = Field(default_factory=dict)


class ToolImage(BaseModel):
    """A picture an environment shows the agent (a rendered GUI, a frame), sent to multimodal models."""

    model_config = ConfigDict(frozen=True)

    media_type: Literal["image/png", "image/jpeg", "image/gif", "image/webp"] = "image/png"
    data_base64: str = Field(description="the image file's bytes, base64-encoded")

    @classmethod
    def from_bytes(cls, data: bytes, media_type: str = "image/png") -> "ToolImage":
        """An image from a file's bytes."""
        return cls.model_validate({"media_type": media_type, "data_base64": base64.b64encode(data).decode("ascii")})


class ToolResult(BaseModel):
    """What a tool call returns: text for the agent, structured data for the log, optional images.

    ``ok`` is false when the call was rejected (unknown tool, bad arguments, refused request); the
    message is in ``error`` and repeated in ``text``. ``done`` tells the agent the episode is over.
    """

    ok: bool = True
    text: str
    data: JsonDict = Field(default_factory=dict)
    images: list[ToolImage] = Field(default_factory=list)
    error: str | None = None
    done: bool = False

    @classmethod
    def failure(cls, message: str, **data: Any) -> "ToolResult":
        """An error result carrying ``message`` for the agent."""
        return cls(ok=False, text=f"error: {message}", error=message, data=data)


class _ModelFacingSchema(GenerateJsonSchema):
    """pydantic's schema generator without the titles it makes up from field names ("Slot From")."""

    def field_title_should_be_set(self, schema: object) -> bool:
        return False


def args_schema(args_model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a tool's arguments, holding only what a model should read.

    The fields' descriptions (and any title a suite gave a field on purpose) are kept: they are written for
    the model. Left out are the titles pydantic makes up from field names ("Slot From"), and the title and
    description of the argument model itself and of every model or enum under ``$defs``: class names and
    docstrings are for developers. ``$defs`` and the ``$ref`` pointers into them are kept as they are.
    """
    schema = args_model.model_json_schema(schema_generator=_ModelFacingSchema)
    for class_schema in [schema, *schema.get("$defs", {}).values()]:
        class_schema.pop("title", None)
        class_schema.pop("description", None)
    return schema


@dataclass(frozen=True)
class Tool:
    """A tool of an environment: its public description plus the name of the method that runs it.

    The method is looked up on the environment at call time, so a subclass may override it.
    """

    name: str
    description: str
    args_model: type[BaseModel]
    method: str

    @cached_property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments as a model reads it (computed once per tool): see :func:`args_schema`."""
        return args_schema(self.args_model)

    def spec(self) -> ToolSpec:
        """The agent-facing description of this tool."""
        return ToolSpec(name=self.name, description=self.description, parameters=copy.deepcopy(self.parameters))


TOOL_MARKER = "__discogym_tool__"

MCP_HARNESS_TOOLS: tuple[str, ...] = ("list_tasks", "start_task", "end_task")
"""The tools the MCP server (``discogym mcp``) offers beside a suite's own: no suite tool may take one of
these names. Kept here, in core, so that checks can read it without importing the mcp package."""


def tool(
    args: type[BaseModel] = NoArgs, *, name: str | None = None, description: str | None = None
) -> Callable[[Callable[[Any, Any], ToolResult]], Callable[[Any, Any], ToolResult]]:
    """Mark an :class:`~discogym.core.model.env.Env` method as a tool.

    The method takes the validated argument model and returns a :class:`ToolResult`. The tool's name
    defaults to the method's name and its description to the method's docstring.
    """

    def mark(method: Callable[[Any, Any], ToolResult]) -> Callable[[Any, Any], ToolResult]:
        doc = description if description is not None else (method.__doc__ or "").strip()
        setattr(method, TOOL_MARKER, Tool(name or method.__name__, doc, args, method.__name__))
        return method

    return mark


UNREADABLE_TOOL = "(unreadable)"


def unreadable(reply: str) -> ToolCall:
    """What a suite's text parser returns for a message that is no action, when the suite's protocol answers
    such messages and counts them as steps (as Plancraft does) instead of rejecting them outright.
    The environment answers the call with ``reply``, verbatim, as a failed step."""
    return ToolCall(tool=UNREADABLE_TOOL, args={"reply": reply})


def parse_json(text: str, subject: str) -> Any:
    """``text`` as JSON, or a ValueError that says what was wrong, starting with ``subject`` ("arguments are")."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{subject} not valid JSON ({err.msg} at position {err.pos})") from None
    except RecursionError:
        raise ValueError(f"{subject} nested too deeply") from None


def parse_args_object(args: Any) -> dict[str, Any]:
    """Accept ``None``, a dict, or a JSON object in a string; raise ValueError otherwise."""
    if args is None:
        return {}
    if isinstance(args, str):
        args = parse_json(args.strip() or "{}", "arguments are")
    if not isinstance(args, dict):
        raise ValueError(f"arguments must be a JSON object, got {type(args).__name__}")
    return args


def describe_validation_error(tool_name: str, err: ValidationError) -> str:
    """One readable sentence per problem, e.g. ``argument 'n': Input should be a valid integer``."""
    problems = []
    for item in err.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "(arguments)"
        message = item["msg"]
        if item["type"] == "extra_forbidden":
            message = "unknown argument"
        problems.append(f"argument '{where}': {message}")
    return f"invalid arguments for tool '{tool_name}': " + "; ".join(problems)


def _field_domain(info: FieldInfo) -> list[Any] | None:
    """The finite set of values a field accepts, or None when it is not small and finite."""
    annotation = info.annotation
    if get_origin(annotation) is Literal:
        return list(annotation.__args__)  # type: ignore[union-attr]
    if annotation is bool:
        return [False, True]
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return [member.value for member in annotation]
    if annotation is int:
        low = high = None
        step = 1
        for meta in info.metadata:
            if isinstance(meta, annotated_types.Ge):
                low = int(meta.ge)  # type: ignore[call-overload]
            elif isinstance(meta, annotated_types.Gt):
                low = int(meta.gt) + 1  # type: ignore[call-overload]
            elif isinstance(meta, annotated_types.Le):
                high = int(meta.le)  # type: ignore[call-overload]
            elif isinstance(meta, annotated_types.Lt):
                high = int(meta.lt) - 1  # type: ignore[call-overload]
            elif isinstance(meta, annotated_types.MultipleOf):
                step = int(meta.multiple_of)  # type: ignore[call-overload]
        if low is not None and high is not None and 0 <= high - low < MAX_INT_RANGE:
            return [value for value in range(low, high + 1) if value % step == 0]
    return None


def enumerate_calls(tool_name: str, args_model: type[BaseModel]) -> list[ToolCall] | None:
    """Every valid call of a tool whose arguments all have small finite domains.

    A field without a finite domain but with a default takes its default. Returns None when the
    tool cannot be enumerated this way (the environment must then list its valid calls itself).
    """
    names: list[str] = []
    domains: list[list[Any]] = []
    for field_name, info in args_model.model_fields.items():
        domain = _field_domain(info)
        if domain is None:
            if info.is_required():
                return None
            continue
        names.append(field_name)
        domains.append(domain)
    combos = 1
    for domain in domains:
        combos *= len(domain)
    if combos > MAX_ENUMERATED_CALLS:
        return None
    return [
        ToolCall(tool=tool_name, args=dict(zip(names, values, strict=True))) for values in itertools.product(*domains)
    ]
