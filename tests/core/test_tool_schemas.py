"""Tool schemas hold only what a model should read, and reach model APIs and MCP clients whole, ``$defs`` and
``$ref`` pointers included."""

import asyncio
import enum
from typing import Any

import pytest
from pydantic import Field

from discogym.core import Condition, NoArgs, Task, Tool, ToolArgs, ToolResult, ToolSpec, tool
from discogym.core.checks.conformance import tool_spec_problems
from discogym.core.model.tools import args_schema
from tests.core.toy_suite import DigitEnv, DigitSuite


class Colour(enum.Enum):
    """Developers' note on the colours."""

    RED = "red"
    BLUE = "blue"


class Corner(ToolArgs):
    """Developers' note on corners."""

    x: int = Field(ge=0, description="the column, from 0")
    y: int = Field(ge=0, description="the row, from 0")


class PaintArgs(ToolArgs):
    """Arguments of ``paint``: developers' text."""

    colour: Colour = Field(description="the paint")
    corners: list[Corner] = Field(min_length=1, description="the cells to paint")
    title: str = Field(default="", description="a caption for the painting")
    layer: int = Field(default=0, title="Layer number")


PAINT_SCHEMA: dict[str, Any] = {
    "$defs": {
        "Colour": {"enum": ["red", "blue"], "type": "string"},
        "Corner": {
            "additionalProperties": False,
            "properties": {
                "x": {"description": "the column, from 0", "minimum": 0, "type": "integer"},
                "y": {"description": "the row, from 0", "minimum": 0, "type": "integer"},
            },
            "required": ["x", "y"],
            "type": "object",
        },
    },
    "additionalProperties": False,
    "properties": {
        "colour": {"$ref": "#/$defs/Colour", "description": "the paint"},
        "corners": {
            "description": "the cells to paint",
            "items": {"$ref": "#/$defs/Corner"},
            "minItems": 1,
            "type": "array",
        },
        "title": {"default": "", "description": "a caption for the painting", "type": "string"},
        "layer": {"default": 0, "title": "Layer number", "type": "integer"},
    },
    "required": ["colour", "corners"],
    "type": "object",
}


def test_schemas_keep_what_suites_wrote_for_models_and_drop_made_up_titles_and_docstrings():
    schema = args_schema(PaintArgs)
    assert schema == PAINT_SCHEMA  # a field named "title" and a title set on purpose both stay
    assert tool_spec_problems(ToolSpec(name="paint", description="Paint cells.", parameters=schema)) == []


def test_a_tool_without_arguments_says_nothing_about_them():
    assert Tool("wait", "Wait.", NoArgs, "wait").parameters == {
        "additionalProperties": False,
        "properties": {},
        "type": "object",
    }


def test_the_schema_still_validates_calls_through_its_refs():
    jsonschema = pytest.importorskip("jsonschema")
    schema = args_schema(PaintArgs)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"colour": "red", "corners": [{"x": 1, "y": 2}]})
    assert not validator.is_valid({"colour": "green", "corners": [{"x": 1, "y": 2}]})
    assert not validator.is_valid({"colour": "red", "corners": [{"x": -1, "y": 2}]})


def test_problems_in_a_hand_written_spec_are_named():
    schema = PaintArgs.model_json_schema()  # pydantic's own: titles everywhere, docstrings as descriptions
    schema["properties"]["corners"]["items"] = {"$ref": "#/$defs/Cell"}
    problems = tool_spec_problems(ToolSpec(name="paint cells", description="See :func:`paint`.", parameters=schema))
    assert problems == [
        "its name is not 1-64 letters, digits, '_' or '-' (what model APIs accept)",
        "its description has developer markup: 'See :func:`paint`.'",
        "the argument model has a class title (developers' text): 'PaintArgs'",
        "the argument model has a class description (developers' text): \"Arguments of ``paint``: developers' text.\"",
        "$defs/Colour has a class title (developers' text): 'Colour'",
        "$defs/Colour has a class description (developers' text): \"Developers' note on the colours.\"",
        "$defs/Corner has a class title (developers' text): 'Corner'",
        "$defs/Corner has a class description (developers' text): \"Developers' note on corners.\"",
        "/properties/corners has the title pydantic makes up from its name: 'Corners'",
        "/properties/corners/items refers to '#/$defs/Cell', which is not in $defs",
        "/properties/title has the title pydantic makes up from its name: 'Title'",
        "/$defs/Corner/properties/x has the title pydantic makes up from its name: 'X'",
        "/$defs/Corner/properties/y has the title pydantic makes up from its name: 'Y'",
    ]


class PaintEnv(DigitEnv):
    @tool(PaintArgs)
    def paint(self, args: PaintArgs) -> ToolResult:
        """Paint cells."""
        return ToolResult(text=f"painted {len(args.corners)} cell(s) {args.colour.value}")


class PaintToy(DigitSuite):
    def make_env(self, task: Task, condition: Condition, seed: int) -> DigitEnv:
        return PaintEnv(task, condition, seed)


def test_mcp_clients_get_the_schema_with_its_defs_and_calls_through_it_work(tmp_path):
    mcp_server = pytest.importorskip("discogym.interfaces.mcp.server")
    import mcp_types as types
    from mcp import Client

    server = mcp_server.build_server(PaintToy(), tmp_path, split="tiny")

    async def play() -> tuple[dict[str, dict[str, Any]], types.CallToolResult]:
        async with Client(server, client_info=types.Implementation(name="tester", version="1")) as client:
            listed = {t.name: t.input_schema for t in (await client.list_tools()).tools}
            await client.call_tool("start_task", {"task_id": "tiny-00"})
            painted = await client.call_tool("paint", {"colour": "blue", "corners": [{"x": 0, "y": 3}]})
            return listed, painted

    listed, painted = asyncio.run(play())
    assert listed["paint"] == PAINT_SCHEMA
    assert listed["start_task"] == {
        "additionalProperties": False,
        "properties": {
            "task_id": {"description": "a task id from list_tasks", "type": "string"},
            "condition": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "description": "a condition from list_tasks (default: the first)",
            },
        },
        "required": ["task_id"],
        "type": "object",
    }
    assert not painted.is_error
    assert isinstance(painted.content[0], types.TextContent) and painted.content[0].text == "painted 1 cell(s) blue"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_model_apis_are_sent_the_schema_with_its_references_inlined(provider):
    pytest.importorskip("inspect_ai")
    from inspect_ai.model import ChatMessageUser

    from discogym.llm.engine import EngineOptions, ModelEngine, tool_info
    from discogym.llm.models import parse_model
    from tests.llm.fake_endpoint import FakeEndpoint

    spec = Tool("paint", "Paint cells.", PaintArgs, "paint").spec()
    with FakeEndpoint() as fake:
        url = fake.root if provider == "anthropic" else fake.url
        engine = ModelEngine(parse_model(f"{provider}/fake@{url}"), "sk-test", EngineOptions(retries=0))
        engine.complete([ChatMessageUser(content="Paint a cell.")], [tool_info(spec)])
        request = fake.requests[-1]
    sent = request.body["tools"][0]
    schema = sent["input_schema"] if provider == "anthropic" else sent["parameters"]  # OpenAI's Responses API
    # Inspect inlines references (keeping a reference's own description) and gives every argument a
    # description; the constraints the model needs arrive whole.
    corner = PAINT_SCHEMA["$defs"]["Corner"]
    assert schema["properties"]["colour"] == {"type": "string", "description": "the paint", "enum": ["red", "blue"]}
    assert schema["properties"]["corners"]["items"] == {"type": "object", **corner}
    assert schema["properties"]["title"] == {
        "type": "string",
        "description": "a caption for the painting",
        "default": "",
    }
    assert (schema["required"], schema["additionalProperties"]) == (["colour", "corners"], False)
