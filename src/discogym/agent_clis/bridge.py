"""One episode's tools as an MCP server whose calls the agent loop answers.

An agent CLI (Claude Code, Codex) is an MCP client: it decides what to call, and discogym's agent loop, which
owns the episode, runs each call and hands the result back. :class:`ToolBridge` joins the two: it serves the
episode's tools over streamable HTTP on 127.0.0.1 in a thread of its own, queues each incoming call for the
loop's :meth:`ToolBridge.next_call` and returns the loop's :meth:`ToolBridge.answer` to the waiting client.
"""

import asyncio
import queue
import socket
import threading
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
import uvicorn
from mcp.server import Server, ServerRequestContext
from starlette.types import ASGIApp, Receive, Scope, Send

from discogym import __version__
from discogym.core.tools import ToolCall, ToolResult, ToolSpec
from discogym.interfaces.mcp.server import MAX_REQUEST_BYTES, tool_result_content

SERVER_NAME = "discogym"
START_TIMEOUT = 30.0  # seconds the server may take to start accepting connections
STOP_TIMEOUT = 5.0  # seconds close() waits for the server thread
CLOSED_TEXT = "the episode is over: its tool server has closed"


@dataclass
class _Pending:
    """A client's call waiting for the agent loop's answer."""

    call: ToolCall
    answered: threading.Event = field(default_factory=threading.Event)
    result: ToolResult | None = None

    def settle(self, result: ToolResult) -> None:
        """Give the waiting client ``result``."""
        self.result = result
        self.answered.set()


class _Uvicorn(uvicorn.Server):
    """A uvicorn server that says when it has started (or failed to), and that ends its MCP sessions when
    it stops: uvicorn waits for open responses to end, and a client's event stream never does."""

    def __init__(self, app: ASGIApp) -> None:
        super().__init__(uvicorn.Config(self._tracked, log_level="warning", interface="asgi3"))
        self._app = app
        self.startup_done = threading.Event()
        self._posts: set[asyncio.Task[Any]] = set()  # requests in flight that are not event streams

    async def _tracked(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app, noting which POST requests (tool calls among them) are in flight."""
        task = asyncio.current_task()
        if scope["type"] != "http" or scope["method"] != "POST" or task is None:
            return await self._app(scope, receive, send)
        self._posts.add(task)
        try:
            await self._app(scope, receive, send)
        finally:
            self._posts.discard(task)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """Start as uvicorn does, then tell the waiting thread."""
        try:
            await super().startup(sockets)
        finally:
            self.startup_done.set()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Let the calls in flight send their answers, end the MCP sessions (and with them their event
        streams), then stop as uvicorn does."""
        if self._posts:
            await asyncio.wait(set(self._posts), timeout=STOP_TIMEOUT / 2)
        await self.lifespan.shutdown()
        await super().shutdown(sockets)


class ToolBridge:
    """An MCP server (streamable HTTP on 127.0.0.1, an ephemeral port, in its own thread with its own event
    loop) offering one episode's tools. Each tool call a client makes is handed to the agent loop:
    next_call() returns it, answer() sends its result back to the waiting client.

    Calls are taken one at a time: a second call made while one is waiting for its answer waits its turn.
    """

    def __init__(self, tools: list[ToolSpec], *, instructions: str = "") -> None:
        self._tools = [types.Tool(name=t.name, description=t.description, input_schema=t.parameters) for t in tools]
        self._instructions = instructions
        self._calls: queue.Queue[_Pending] = queue.Queue()
        self._current: _Pending | None = None  # the call next_call() returned last, until answered
        self._state = threading.Lock()  # guards _closed against calls queued while close() drains
        self._closed = False
        self._turn = anyio.Lock()  # used on the server's event loop only
        self._listed = threading.Event()
        self._server: _Uvicorn | None = None
        self._thread: threading.Thread | None = None

    @property
    def tools_listed(self) -> bool:
        """True once a client has listed the tools (the CLI did connect)."""
        return self._listed.is_set()

    def start(self) -> str:
        """Start the server; return its URL, ``http://127.0.0.1:PORT/mcp``, once it accepts connections."""
        if self._thread is not None:
            raise RuntimeError("the tool bridge has already been started")
        listener = socket.create_server(("127.0.0.1", 0))
        port = int(listener.getsockname()[1])
        app = self._mcp_server().streamable_http_app(host="127.0.0.1", max_request_body_size=MAX_REQUEST_BYTES)
        self._server = server = _Uvicorn(app)
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [listener]}, name=f"discogym-bridge-{port}", daemon=True
        )
        self._thread.start()
        if not server.startup_done.wait(START_TIMEOUT) or not server.started:
            self.close()
            listener.close()
            raise RuntimeError(f"the tool bridge did not start serving on port {port}")
        return f"http://127.0.0.1:{port}/mcp"

    def next_call(self, timeout: float) -> ToolCall | None:
        """The next call a client made, or None if none came within ``timeout`` seconds (or the bridge is
        closed). Each call returned must be answered with :meth:`answer` before the next one comes."""
        if self._current is not None:
            raise RuntimeError("answer the tool call before taking the next one")
        if self._closed:
            return None
        try:
            pending = self._calls.get(timeout=timeout)
        except queue.Empty:
            return None
        self._current = pending
        return pending.call

    def answer(self, result: ToolResult) -> None:
        """Send ``result`` to the client waiting on the call :meth:`next_call` returned last (after
        :meth:`close`, nobody waits: the result is dropped)."""
        pending, self._current = self._current, None
        if pending is None and self._closed:
            return
        if pending is None:
            raise RuntimeError("there is no tool call to answer")
        pending.settle(result)

    def close(self) -> None:
        """Stop the server. A client still waiting for an answer gets an error result first."""
        with self._state:
            self._closed = True
            waiting = [self._current] if self._current is not None else []
            self._current = None
            while not self._calls.empty():
                waiting.append(self._calls.get_nowait())
        for pending in waiting:
            if not pending.answered.is_set():
                pending.settle(ToolResult.failure(CLOSED_TEXT))
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(STOP_TIMEOUT)

    def _mcp_server(self) -> Server[Any]:
        """The MCP server: the tools as given, each call handed over to the agent loop."""

        async def list_tools(
            ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            self._listed.set()
            return types.ListToolsResult(tools=self._tools)

        async def call_tool(
            ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
        ) -> types.CallToolResult:
            call = ToolCall(tool=params.name, args=params.arguments or {})
            async with self._turn:
                return tool_result_content(await self._hand_over(call))

        return Server(
            SERVER_NAME,
            version=__version__,
            instructions=self._instructions or None,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
        )

    async def _hand_over(self, call: ToolCall) -> ToolResult:
        """Queue ``call`` for the agent loop and wait (in a worker thread, off the event loop) for its answer."""
        pending = _Pending(call)
        with self._state:
            if self._closed:
                return ToolResult.failure(CLOSED_TEXT)
            self._calls.put(pending)
        await anyio.to_thread.run_sync(pending.answered.wait, abandon_on_cancel=True)
        assert pending.result is not None  # set before the event
        return pending.result
