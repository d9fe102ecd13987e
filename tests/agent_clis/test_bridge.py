"""The tool bridge: an MCP client over HTTP calls an episode's tools, the test's thread plays the agent loop."""

import asyncio
import base64
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar
from urllib.parse import urlsplit

import mcp_types as types
import pytest
from mcp import Client

from discogym.agent_clis.bridge import STOP_TIMEOUT, ToolBridge
from discogym.core import ToolCall, ToolImage, ToolResult, ToolSpec
from tests.core.toy_suite import PICTURE

WAIT = 30.0  # seconds any one step may take before the test fails
T = TypeVar("T")
TOOLS = [
    ToolSpec(
        name="probe",
        description="Compare a digit with the hidden one.",
        parameters={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    ),
    ToolSpec(name="submit", description="Submit your answer.", parameters={"type": "object", "properties": {}}),
]


@pytest.fixture
def served() -> Iterator[tuple[ToolBridge, str]]:
    """A started bridge offering TOOLS and its URL; closed afterwards."""
    bridge = ToolBridge(TOOLS, instructions="Find the digit.")
    url = bridge.start()
    yield bridge, url
    bridge.close()


def connect(url: str, play: Callable[[Client], Awaitable[T]]) -> Future[T]:
    """Run ``play`` with a client connected to ``url`` (the handshake era, over HTTP) in a thread of its own."""

    async def session() -> T:
        client = Client(url, mode="legacy", client_info=types.Implementation(name="tester", version="1"))
        async with client:
            return await play(client)

    pool = ThreadPoolExecutor(1)
    future = pool.submit(asyncio.run, session())
    pool.shutdown(wait=False)
    return future


def call(url: str, tool: str, args: dict[str, Any]) -> Future[types.CallToolResult]:
    """One call of ``tool`` by a client of its own, under way in the background."""

    async def play(client: Client) -> types.CallToolResult:
        return await client.call_tool(tool, args)

    return connect(url, play)


def test_a_client_lists_the_tools_as_given_and_the_bridge_notes_that_it_connected(served):
    bridge, url = served
    assert url.startswith("http://127.0.0.1:") and "/episodes/" in url and url.endswith("/mcp")
    assert not bridge.tools_listed

    async def play(client: Client) -> tuple[types.Implementation | None, str | None, list[types.Tool]]:
        return client.server_info, client.instructions, (await client.list_tools()).tools

    info, instructions, tools = connect(url, play).result(WAIT)
    assert info is not None and (info.name, instructions) == ("discogym", "Find the digit.")
    assert [(t.name, t.description, t.input_schema) for t in tools] == [
        (s.name, s.description, s.parameters) for s in TOOLS
    ]
    assert bridge.tools_listed


def test_a_call_goes_to_the_agent_loop_and_its_answer_back_to_the_client_as_text_and_image(served):
    bridge, url = served
    pending = call(url, "probe", {"n": 4})
    assert bridge.next_call(WAIT) == ToolCall(tool="probe", args={"n": 4})
    bridge.answer(ToolResult(text="hi", images=[ToolImage.from_bytes(PICTURE)], data={"secret": 7}))
    result = pending.result(WAIT)
    assert not result.is_error and result.structured_content is None
    text, image = result.content
    assert isinstance(text, types.TextContent) and text.text == "hi"
    assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == PICTURE
    assert "secret" not in result.model_dump_json()  # data is for scorers, never for the agent


def test_a_failed_result_reaches_the_client_as_an_error(served):
    bridge, url = served
    pending = call(url, "teleport", {})
    assert bridge.next_call(WAIT) == ToolCall(tool="teleport", args={})
    bridge.answer(ToolResult.failure("unknown tool 'teleport'"))
    result = pending.result(WAIT)
    assert result.is_error
    assert [c.text for c in result.content if isinstance(c, types.TextContent)] == ["error: unknown tool 'teleport'"]


def test_concurrent_calls_are_taken_one_at_a_time_and_each_gets_its_own_answer(served):
    bridge, url = served

    async def play(client: Client) -> list[types.CallToolResult]:
        return list(await asyncio.gather(*(client.call_tool("probe", {"n": n}) for n in range(3))))

    pending = connect(url, play)
    seen = []
    for _ in range(3):
        taken = bridge.next_call(WAIT)
        assert taken is not None
        with pytest.raises(RuntimeError, match="answer the tool call"):
            bridge.next_call(0)
        seen.append(taken.args)
        bridge.answer(ToolResult(text=f"answer to {taken.args}"))
    assert sorted(arg["n"] for arg in seen) == [0, 1, 2]
    results = pending.result(WAIT)
    assert [r.content[0].text for r in results] == [f"answer to {{'n': {n}}}" for n in range(3)]  # type: ignore[union-attr]


def test_next_call_gives_none_when_no_call_comes_in_time_and_answer_needs_a_call(served):
    bridge, _ = served
    started = time.monotonic()
    assert bridge.next_call(0.05) is None
    assert time.monotonic() - started < WAIT
    with pytest.raises(RuntimeError, match="no tool call to answer"):
        bridge.answer(ToolResult(text="to nobody"))


def test_closing_while_a_client_waits_gives_it_an_error_and_returns_promptly():
    bridge = ToolBridge(TOOLS)
    url = bridge.start()
    pending = call(url, "probe", {"n": 1})
    assert bridge.next_call(WAIT) is not None
    started = time.monotonic()
    bridge.close()
    assert time.monotonic() - started < STOP_TIMEOUT  # the server thread ended before close() gave up on it
    result = pending.result(WAIT)
    assert result.is_error and "tool server has closed" in result.content[0].text  # type: ignore[union-attr]
    assert bridge.next_call(0) is None
    bridge.answer(ToolResult(text="too late"))  # the loop's answer to a call the client no longer waits on


def test_a_client_still_connected_does_not_hold_up_closing():
    bridge = ToolBridge(TOOLS)
    url = bridge.start()
    listed, release = threading.Event(), threading.Event()

    async def linger(client: Client) -> None:
        await client.list_tools()
        listed.set()
        await asyncio.to_thread(release.wait, WAIT)  # connected, its event stream open, until the bridge is gone

    pending = connect(url, linger)
    assert listed.wait(WAIT)
    started = time.monotonic()
    bridge.close()
    release.set()
    assert time.monotonic() - started < STOP_TIMEOUT  # the server thread ended before close() gave up on it
    pending.exception(WAIT)  # the client is done, however it took the server's going


def test_bridges_share_the_processs_one_server_each_episode_at_its_own_url():
    first, second = ToolBridge(TOOLS), ToolBridge(TOOLS[:1])
    try:
        urls = first.start(), second.start()
        assert urls[0] != urls[1]
        assert {urlsplit(url).netloc for url in urls} == {urlsplit(urls[0]).netloc}  # one server, one port

        async def names(client: Client) -> list[str]:
            return [tool.name for tool in (await client.list_tools()).tools]

        assert [connect(url, names).result(WAIT) for url in urls] == [["probe", "submit"], ["probe"]]
    finally:
        first.close()
        second.close()


def post(url: str) -> tuple[int, str]:
    """The status and body of an MCP ping POSTed to ``url``."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=WAIT) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def test_an_episode_is_not_served_under_another_token_nor_once_it_is_over():
    bridge = ToolBridge(TOOLS)
    url = bridge.start()
    assert post(url.replace("/episodes/", "/episodes/x"))[0] == 404
    assert post(url.removesuffix("/mcp"))[0] == 404
    assert post(url)[0] != 404
    bridge.close()
    assert post(url) == (404, "no such episode (or it is over)")
    with pytest.raises(Exception):  # noqa: B017 - the client's own error type for a 404 is its business
        connect(url, lambda client: client.list_tools()).result(WAIT)
