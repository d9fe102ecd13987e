"""``discogym mcp SUITE``: a suite's tools over the Model Context Protocol (official ``mcp`` SDK).

The server offers ``list_tasks``, ``start_task`` and ``end_task`` plus the running episode's own tools
(before any task starts, those of the split's first task). Each client session plays its own episode;
episodes are written to the run directory like the runner's. Nothing here is suite-specific.

The SDK's low-level :class:`mcp.server.Server` is used rather than ``MCPServer``, because the suites'
tools come with JSON schemas of their own (from their pydantic argument models), and ``MCPServer``
derives every schema from a Python function's signature.

The episodes themselves are :mod:`discogym.core.running.session`'s; this module only maps them onto the protocol.
Environment work runs in worker threads, one call at a time per session, so one session's slow call never
holds up another's requests.
"""

import json
import socket
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field, ValidationError

from discogym import __version__
from discogym.core import Suite, ToolArgs, ToolImage, ToolSpec
from discogym.core.model.mcp_content import MAX_REQUEST_BYTES, image_content, tool_result_content
from discogym.core.model.tools import MCP_HARNESS_TOOLS, args_schema, describe_validation_error
from discogym.core.running.session import UNKNOWN_CLIENT, ClientMistake, ExternalEpisodes, Session, StartedTask

SESSION_HEADER = "mcp-session-id"
MCP_AGENT = "mcp"  # the agent name of every episode played through the server
DEFAULT_IDLE_TIMEOUT = 600.0  # seconds an HTTP session may stay silent before it is freed
NEEDS_SESSION = (
    "this server gives each client its own episode through an HTTP session: connect with the initialize "
    "handshake (protocol 2025-11-25 or earlier; 'auto' clients fall back to it by themselves)"
)
T = TypeVar("T")


class ListTasksArgs(ToolArgs):
    """``list_tasks`` takes no arguments."""


class StartTaskArgs(ToolArgs):
    """Arguments of ``start_task``."""

    task_id: str = Field(description="a task id from list_tasks")
    condition: str | None = Field(default=None, description="a condition from list_tasks (default: the first)")


class EndTaskArgs(ToolArgs):
    """Arguments of ``end_task``."""

    message: str = Field(default="", description="your final answer or why you stop, kept in the episode log")


def _spec(name: str, description: str, args: type[BaseModel]) -> ToolSpec:
    return ToolSpec(name=name, description=description, parameters=args_schema(args))


HARNESS_TOOLS: dict[str, tuple[ToolSpec, type[ToolArgs]]] = {
    "list_tasks": (
        _spec("list_tasks", "List the tasks and conditions this server offers.", ListTasksArgs),
        ListTasksArgs,
    ),
    "start_task": (
        _spec(
            "start_task",
            "Start an episode of a task: returns its brief and the tools to act with. An episode still "
            "running is ended first.",
            StartTaskArgs,
        ),
        StartTaskArgs,
    ),
    "end_task": (
        _spec("end_task", "End the running episode now (it is recorded as you leave it).", EndTaskArgs),
        EndTaskArgs,
    ),
}


def _mcp_tool(spec: ToolSpec) -> types.Tool:
    return types.Tool(name=spec.name, description=spec.description, input_schema=spec.parameters)


def _text_result(
    text: str, *, error: bool = False, structured: BaseModel | None = None, images: list[ToolImage] | None = None
) -> types.CallToolResult:
    """A result whose text every client shows. Some clients (Codex) show only the structured content when
    there is any, so it repeats the text under ``text``, and is left out when the result carries images."""
    content: list[Any] = [types.TextContent(text=text), *image_content(images or [])]
    if structured is None or images:
        return types.CallToolResult(content=content, is_error=error)
    fields = {"text": text, **structured.model_dump(mode="json")}
    return types.CallToolResult(content=content, is_error=error, structured_content=fields)


@dataclass
class _Slot:
    """A client's session and the lock that keeps its calls in order (they run in worker threads)."""

    session: Session
    lock: anyio.Lock = field(default_factory=anyio.Lock)

    async def run(self, work: Callable[[], T]) -> T:
        """Run ``work`` (environment work) in a worker thread, after the session's earlier calls."""
        async with self.lock:
            return await anyio.to_thread.run_sync(work)


class Sessions:
    """The sessions of one server run: keyed by the HTTP session header, or one session on stdio (and for
    an in-process client, whose connection has a lifespan of its own)."""

    def __init__(self, episodes: ExternalEpisodes) -> None:
        self.episodes = episodes
        self.by_key: dict[str | None, _Slot] = {}

    def of(self, ctx: ServerRequestContext[Any, Any]) -> _Slot:
        """The session a request belongs to, made on first sight with the client's name. An HTTP session's
        episode is written as abandoned when the SDK closes the session (the client's DELETE, the idle
        timeout, the server stopping)."""
        key = _session_key(ctx)
        slot = self.by_key.get(key)
        if slot is None:
            params = ctx.session.client_params
            client = params.client_info.name if params is not None and params.client_info.name else UNKNOWN_CLIENT
            slot = self.by_key[key] = _Slot(self.episodes.session(client))
            connection = getattr(ctx.session, "_connection", None)  # the SDK keeps no public handle on it
            if key is not None and connection is not None:
                connection.exit_stack.push_async_callback(self.close, key)
        return slot

    async def close(self, key: str | None) -> None:
        """Free a session whose client went away, writing its running episode as abandoned."""
        slot = self.by_key.pop(key, None)
        if slot is not None:
            with anyio.CancelScope(shield=True):
                await slot.run(slot.session.leave)

    async def close_all(self) -> None:
        """Free every session (the server or the connection is going away)."""
        for key in list(self.by_key):
            await self.close(key)


def _session_key(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The HTTP session of a request; None for stdio and in-process clients (one client per connection).
    An HTTP request without one (the sessionless 2026-07-28 protocol) cannot be told from another client's,
    so it is refused with the protocol's "unsupported version" error, which makes 'auto' clients fall back
    to the handshake and its sessions."""
    if ctx.request is None:
        return None
    key = ctx.request.headers.get(SESSION_HEADER)
    if key is None:
        raise MCPError(
            code=types.UNSUPPORTED_PROTOCOL_VERSION,
            message=NEEDS_SESSION,
            data=types.UnsupportedProtocolVersionErrorData(
                supported=list(HANDSHAKE_PROTOCOL_VERSIONS), requested=ctx.protocol_version
            ).model_dump(mode="json"),
        )
    return str(key)


def build_server(suite: Suite, out: Path, *, split: str | None = None, seed: int = 0) -> Server[Any]:
    """An MCP server for ``suite`` writing episodes under ``out``."""
    episodes = ExternalEpisodes(suite, out, agent=MCP_AGENT, split=split, seed=seed)
    clashes = sorted(set(MCP_HARNESS_TOOLS) & {spec.name for spec in episodes.preview_tools()})
    if clashes:
        raise ValueError(f"suite '{suite.name}' has tools named like the server's own: {', '.join(clashes)}")
    bus = InMemorySubscriptionBus()

    @asynccontextmanager
    async def lifespan(server: Server[Any]) -> AsyncIterator[Sessions]:
        sessions = Sessions(episodes)
        try:
            yield sessions
        finally:
            await sessions.close_all()
            unsaved = episodes.retry_unsaved()  # finished episodes kept since a write error: a last try
            if unsaved:
                print(f"discogym mcp: {len(unsaved)} finished episodes could not be written: {', '.join(unsaved)}",
                      file=sys.stderr)  # fmt: skip

    async def discover(ctx: ServerRequestContext[Sessions, Any], params: types.RequestParams) -> types.DiscoverResult:
        _session_key(ctx)  # over HTTP: refused, so that the client falls back to the handshake
        return types.DiscoverResult(
            supported_versions=list(MODERN_PROTOCOL_VERSIONS),
            capabilities=server.get_capabilities(protocol_version=ctx.protocol_version),
            instructions=server.instructions,
        )

    async def list_tools(
        ctx: ServerRequestContext[Sessions, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        session = ctx.lifespan_context.of(ctx).session
        specs = [spec for spec, _ in HARNESS_TOOLS.values()] + session.tools()
        return types.ListToolsResult(tools=[_mcp_tool(spec) for spec in specs])

    async def call_tool(
        ctx: ServerRequestContext[Sessions, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        slot = ctx.lifespan_context.of(ctx)
        too_big = _oversized(params.arguments)
        if too_big:
            return _text_result(too_big, error=True)
        try:
            if params.name == "list_tasks":
                return _harness_call(episodes, slot.session, params.name, params.arguments)
            if params.name in HARNESS_TOOLS:
                result = await slot.run(partial(_harness_call, episodes, slot.session, params.name, params.arguments))
                if params.name == "start_task" and not result.is_error:
                    await ctx.session.send_tool_list_changed()  # clients of the handshake era
                    await bus.publish(ToolsListChanged())  # clients listening for changes (2026-07-28)
                return result
            return tool_result_content(await slot.run(partial(slot.session.call, params.name, params.arguments or {})))
        except ClientMistake as err:
            return _text_result(str(err), error=True)

    server: Server[Any] = Server(
        f"discogym-{suite.name}",
        version=__version__,
        instructions=(
            f"discogym suite '{suite.name}': {suite.description} Call list_tasks, then start_task with a task id; "
            "act with the tools it names until a result says the episode is over, or call end_task."
        ),
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(bus),
    )
    server.add_request_handler("server/discover", types.RequestParams, discover)
    return server


def _oversized(arguments: dict[str, Any] | None) -> str | None:
    """Why a call's arguments are refused for their size (the bound holds on every transport), or None."""
    size = len(json.dumps(arguments or {}, ensure_ascii=False).encode())
    if size <= MAX_REQUEST_BYTES:
        return None
    return f"the arguments take {size} bytes, more than the {MAX_REQUEST_BYTES} this server accepts: send less"


def _started_text(started: StartedTask) -> str:
    """The start of an episode as plain text: what was started, the tools, the suite's instructions, the brief
    (the same fields are in the result's structured content)."""
    header = (
        f"Episode {started.episode} started: task {started.task}, condition {started.condition}, "
        f"repeat {started.repeat}. Act with the tools {', '.join(started.tools)}."
    )
    return "\n\n".join(part for part in (header, started.instructions, started.brief) if part)


def _harness_call(
    episodes: ExternalEpisodes, session: Session, name: str, arguments: dict[str, Any] | None
) -> types.CallToolResult:
    args_model = HARNESS_TOOLS[name][1]
    try:
        args = args_model.model_validate(arguments or {})
    except ValidationError as err:
        return _text_result(describe_validation_error(name, err), error=True)
    if isinstance(args, StartTaskArgs):
        started = session.start(args.task_id, args.condition)
        return _text_result(_started_text(started), structured=started, images=session.brief_images())
    if isinstance(args, EndTaskArgs):
        written = session.end(args.message)
        return _text_result(f"The episode has ended and was recorded as {written}.")
    listing = episodes.list_tasks()
    return _text_result(listing.model_dump_json(indent=1), structured=listing)


def serve_stdio(server: Server[Any]) -> None:
    """Serve one client on standard input and output until it closes them."""

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            options = server.create_initialization_options(NotificationOptions(tools_changed=True))
            await server.run(read_stream, write_stream, options)

    anyio.run(run)


def serve_http(
    server: Server[Any], host: str, listener: socket.socket, *, idle_timeout: float = DEFAULT_IDLE_TIMEOUT
) -> None:
    """Serve streamable HTTP at ``http://HOST:PORT/mcp`` on ``listener`` (see :func:`bind_http`) until
    interrupted. A session silent for ``idle_timeout`` seconds is freed, its episode written as abandoned."""
    import uvicorn

    app = server.streamable_http_app(
        host=host, max_request_body_size=MAX_REQUEST_BYTES, session_idle_timeout=idle_timeout
    )
    config = uvicorn.Config(app, log_level="warning")
    uvicorn.Server(config).run(sockets=[listener])
