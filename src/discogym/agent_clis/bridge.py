"""Episodes' tools as MCP servers whose calls the agent loop answers.

An agent CLI (Claude Code, Codex) is an MCP client: it decides what to call, and discogym's agent loop, which
owns the episode, runs each call and hands the result back. :class:`ToolBridge` joins the two: it offers one
episode's tools at a URL of its own, queues each incoming call for the loop's :meth:`ToolBridge.next_call` and
returns the loop's :meth:`ToolBridge.answer` to the waiting client.

All bridges of a process share one streamable-HTTP server on 127.0.0.1 (an ephemeral port, a thread and event
loop of its own, started with the first bridge): a run has one server, or one per worker process with
``--workers N``. Each episode is served under a path holding an unguessable token, ``/episodes/TOKEN/mcp``,
only while the episode lasts: a client cannot reach another episode's tools, nor its own once it is over.
"""

import asyncio
import atexit
import os
import queue
import secrets
import socket
import threading
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import mcp_types as types
import uvicorn
from mcp.server import Server, ServerRequestContext
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

from discogym import __version__
from discogym.core import ToolCall, ToolResult, ToolSpec
from discogym.core.model.mcp_content import MAX_REQUEST_BYTES, tool_result_content

SERVER_NAME = "discogym"
START_TIMEOUT = 30.0  # seconds the server, or an episode's sessions, may take to start
STOP_TIMEOUT = 5.0  # seconds closing an episode waits for its calls in flight and sessions to end
CLOSED_TEXT = "the episode is over: its tool server has closed"
EPISODE_PATH = "/episodes/{token}/mcp"
T = TypeVar("T")


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


@dataclass
class _Mounted:
    """An episode's MCP app as the shared server serves it."""

    app: Starlette
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    posts: set["asyncio.Task[Any]"] = field(default_factory=set)  # requests in flight that are not event streams
    holder: "asyncio.Task[None] | None" = None  # the task inside the app's lifespan (its MCP sessions)


class _Uvicorn(uvicorn.Server):
    """A uvicorn server that says when it has started (or failed to)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.startup_done = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """Start as uvicorn does, then tell the waiting thread."""
        self.loop = asyncio.get_running_loop()
        try:
            await super().startup(sockets)
        finally:
            self.startup_done.set()


class _SharedServer:
    """The process's HTTP server for every episode's tools: routes ``/episodes/TOKEN/...`` to the episode
    mounted under TOKEN, anything else to 404."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(listener.getsockname()[1])
        self._episodes: dict[str, _Mounted] = {}  # touched on the server's event loop only
        config = uvicorn.Config(self._dispatch, log_level="warning", interface="asgi3", lifespan="off")
        self._server = server = _Uvicorn(config)
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [listener]}, name=f"discogym-tools-{self.port}", daemon=True
        )
        self._thread.start()
        if not server.startup_done.wait(START_TIMEOUT) or not server.started:
            self.stop()
            listener.close()
            raise RuntimeError(f"the episodes' tool server did not start serving on port {self.port}")

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and not self._server.should_exit

    def mount(self, token: str, app: Starlette) -> None:
        """Serve ``app`` (its MCP sessions started) under ``/episodes/TOKEN``."""
        self._run(self._mount(token, app), START_TIMEOUT)

    def unmount(self, token: str) -> None:
        """Stop serving ``token``: new requests get 404, calls in flight send their answers, open sessions (and
        with them their event streams, which never end by themselves) are ended."""
        self._run(self._unmount(token), STOP_TIMEOUT)

    def stop(self) -> None:
        """Stop the server (at the process's exit)."""
        self._server.should_exit = True
        self._thread.join(STOP_TIMEOUT)

    def _run(self, work: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run ``work`` on the server's event loop and wait for it."""
        assert self._server.loop is not None  # set before startup_done
        return asyncio.run_coroutine_threadsafe(work, self._server.loop).result(timeout)

    async def _mount(self, token: str, app: Starlette) -> None:
        mounted = _Mounted(app)
        entered = asyncio.Event()

        async def hold() -> None:
            async with app.router.lifespan_context(app):
                entered.set()
                await mounted.stop.wait()

        mounted.holder = asyncio.create_task(hold())
        waiting = asyncio.create_task(entered.wait())
        await asyncio.wait({mounted.holder, waiting}, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        if mounted.holder.done():
            mounted.holder.result()  # the sessions failed to start: raise why
        self._episodes[token] = mounted

    async def _unmount(self, token: str) -> None:
        mounted = self._episodes.pop(token, None)
        if mounted is None:
            return
        if mounted.posts:
            await asyncio.wait(set(mounted.posts), timeout=STOP_TIMEOUT / 2)
        mounted.stop.set()
        assert mounted.holder is not None
        await asyncio.wait({mounted.holder}, timeout=STOP_TIMEOUT / 2)

    async def _dispatch(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Hand the request to its episode's app, noting which POST requests (tool calls among them) are in
        flight."""
        parts = scope.get("path", "").split("/")
        mounted = self._episodes.get(parts[2]) if len(parts) > 2 and parts[1] == "episodes" else None
        if scope["type"] != "http" or mounted is None:
            if scope["type"] == "http":
                await PlainTextResponse("no such episode (or it is over)", status_code=404)(scope, receive, send)
            return
        task = asyncio.current_task()
        if scope["method"] != "POST" or task is None:
            return await mounted.app(scope, receive, send)
        mounted.posts.add(task)
        try:
            await mounted.app(scope, receive, send)
        finally:
            mounted.posts.discard(task)


_shared: _SharedServer | None = None
_shared_lock = threading.Lock()


def _shared_server() -> _SharedServer:
    """The process's tool server, started the first time it is needed (again in a forked child)."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared.pid != os.getpid() or not _shared.alive:
            _shared = _SharedServer()
            atexit.register(_shared.stop)
        return _shared


class ToolBridge:
    """One episode's tools, served by the process's MCP server at a URL of the episode's own. Each tool call
    a client makes is handed to the agent loop: next_call() returns it, answer() sends its result back to the
    waiting client.

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
        self._server: _SharedServer | None = None
        self._token = secrets.token_urlsafe(16)

    @property
    def tools_listed(self) -> bool:
        """True once a client has listed the tools (the CLI did connect)."""
        return self._listed.is_set()

    def start(self) -> str:
        """Start serving; return the episode's URL, ``http://127.0.0.1:PORT/episodes/TOKEN/mcp``, once it
        accepts connections."""
        if self._server is not None:
            raise RuntimeError("the tool bridge has already been started")
        path = EPISODE_PATH.format(token=self._token)
        app = self._mcp_server().streamable_http_app(
            streamable_http_path=path, host="127.0.0.1", max_request_body_size=MAX_REQUEST_BYTES
        )
        server = _shared_server()
        server.mount(self._token, app)
        self._server = server
        return f"http://127.0.0.1:{server.port}{path}"

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
        """Stop serving the episode. A client still waiting for an answer gets an error result first."""
        with self._state:
            self._closed = True
            waiting = [self._current] if self._current is not None else []
            self._current = None
            while not self._calls.empty():
                waiting.append(self._calls.get_nowait())
        for pending in waiting:
            if not pending.answered.is_set():
                pending.settle(ToolResult.failure(CLOSED_TEXT))
        server, self._server = self._server, None
        if server is not None and server.alive:
            server.unmount(self._token)

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
