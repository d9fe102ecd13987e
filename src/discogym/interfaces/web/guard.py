"""What keeps other web sites out of the app on localhost: the Host header checked (against DNS rebinding),
the Origin of state-changing requests checked (against cross-site form posts), and headers that forbid framing
and inline script on every response. Request bodies are bounded in size and in time, and the server's own limits
(the parser, request heads, connections, shutdown) are in :data:`SERVER_LIMITS`.

A request without Origin and Referer is let through: browsers send Origin with every POST, so such a request
comes from a program on this machine (curl, a test), which the Host check and the loopback address already
trust."""

import asyncio
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI
from starlette.datastructures import Headers
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from discogym.core import UserError
from discogym.interfaces.web.heads import BoundedHeads

LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
WILDCARD_ADDRESSES = frozenset({"0.0.0.0", "::", "[::]", ""})

# Scripts and styles only from the app's own files (the pages' data travels in JSON blocks, which are not run),
# pictures also as data: URLs (the results' images), and no page of the app inside another site's frame.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",  # a game's URL holds its token: never sent to another site
    "cross-origin-resource-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
}

_SECURITY_RAW = [(name.encode(), value.encode()) for name, value in SECURITY_HEADERS.items()]
_SECURITY_NAMES = frozenset(name for name, _ in _SECURITY_RAW)


def allowed_hosts(extra: Iterable[str] = (), listen: str = "") -> list[str]:
    """The host names the app answers to: this machine's loopback names, the address it listens on (unless it
    listens on every interface), and ``extra`` (``--allowed-host``)."""
    names = [*LOCAL_HOSTS, *(host_name(name) for name in extra)]
    if listen.strip("[]") not in WILDCARD_ADDRESSES:
        names.append(host_name(listen))
    return list(dict.fromkeys(names))


def host_name(text: str) -> str:
    """``text`` as a Host header names it (lower case, an IPv6 address in brackets), or a UserError."""
    name = text.strip().lower()
    bare = name.strip("[]")
    if not bare or not all(c.isalnum() or c in ".-:" for c in bare):
        raise UserError(f"--allowed-host takes a host name or an address, like lab-pc.local (got {text!r})")
    return f"[{bare}]" if ":" in bare else bare


def cross_site(headers: Headers) -> str | None:
    """The other site a state-changing request came from (its Origin, or its Referer when it has no Origin), or
    None when it came from the page's own host or from no page at all."""
    source = headers.get("origin") or headers.get("referer")
    if source is None:
        return None
    host = headers.get("host", "").lower()
    if source == "null" or urlsplit(source).netloc.lower() != host:
        return source
    return None


class OriginCheck:
    """Refuses (403) a state-changing request that a page of another site sent."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] not in SAFE_METHODS:
            other = cross_site(Headers(scope=scope))
            if other is not None:
                refusal = f"refused: a {scope['method']} from another site ({other[:200]})"
                await PlainTextResponse(refusal, status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class SecurityHeaders:
    """Adds :data:`SECURITY_HEADERS` to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":  # each of them once, whatever the response had set
                kept = [header for header in message.get("headers", ()) if header[0].lower() not in _SECURITY_NAMES]
                message["headers"] = kept + _SECURITY_RAW
            await send(message)

        await self.app(scope, receive, send_with_headers)


MAX_BODY_BYTES = 1024 * 1024
SmallerLimit = Callable[[Scope], tuple[int, str] | None]  # a request's smaller limit on its body, and the refusal
BODY_SECONDS = 10.0  # a request's body must arrive within this time
# uvicorn's settings for both apps: HTTP parsed by httptools, with request heads of at most 16 KiB that must arrive
# within 10 s and connections capped (heads.BoundedHeads: 503 to a connection opened beyond the cap, never to one
# already open), the event loop uvloop's where it is installed (uvicorn's "auto"), idle keep-alive connections
# closed after 5 s, and at most 3 s of waiting for open connections when the server stops, so that games in
# progress are written soon after a SIGTERM.
SERVER_LIMITS: dict[str, Any] = {
    "http": BoundedHeads,
    "timeout_keep_alive": 5,
    "timeout_graceful_shutdown": 3,
}


class BodyLimit:
    """Reads a request's body before the app sees it: over its limit (by its Content-Length or as it arrives) it is
    refused with 413, and one that takes longer than :data:`BODY_SECONDS` to arrive with 408, so that no request
    holds a worker while a client trickles its body in. The limit is :data:`MAX_BODY_BYTES`, or what ``smaller``
    says for the request (a bound and the refusal's message): a body refused by its Content-Length is never read."""

    def __init__(self, app: ASGIApp, smaller: SmallerLimit = lambda scope: None) -> None:
        self.app = app
        self.smaller = smaller

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length", "0")
        if not declared.isdigit():
            await _refuse(400, "malformed Content-Length", scope, receive, send)
            return
        limit, too_big = self.smaller(scope) or (MAX_BODY_BYTES, f"a request body is at most {MAX_BODY_BYTES} bytes")
        if int(declared) > limit:
            await _refuse(413, too_big, scope, receive, send)
            return
        try:
            async with asyncio.timeout(BODY_SECONDS):  # a timer in this task (wait_for's task cost turns of the loop)
                body = await _read_body(receive, limit)
        except TimeoutError:
            await _refuse(408, f"the request body took more than {BODY_SECONDS:g} s to arrive", scope, receive, send)
            return
        except asyncio.CancelledError:
            # uvicorn cancels the requests still running a few seconds after it is told to stop: a body still on
            # its way is told so and the request ends here, rather than as "Exception in ASGI application"
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            await _refuse(503, "the server is stopping", scope, receive, send)
            return
        if body is None:
            await _refuse(413, too_big, scope, receive, send)
            return
        # after the body, the app's receive waits for the client to go away, as the server's would
        await self.app(scope, replayed({"type": "http.request", "body": body, "more_body": False}, receive), send)


def replayed(first: Message, receive: Receive) -> Receive:
    """``receive`` with ``first`` given before what it receives."""
    pending = [first]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None once it passes ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)  # the client went away: the app finds out on its own receive
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _refuse(status: int, message: str, scope: Scope, receive: Receive, send: Send) -> None:
    """A refusal that closes the connection: JSON for the pages' calls (``/api/``), as the apps' own refusals."""
    close = {"connection": "close"}
    if scope["path"].startswith("/api/"):
        await JSONResponse({"error": message}, status_code=status, headers=close)(scope, receive, send)
        return
    await PlainTextResponse(message, status_code=status, headers=close)(scope, receive, send)


def guard(app: FastAPI, hosts: list[str], smaller: SmallerLimit = lambda scope: None) -> None:
    """Put the checks in front of ``app``, outermost first: security headers on every answer (refusals too),
    the Host header (400 for a host not in ``hosts``), the Origin, then the body's size (``smaller``: the
    requests with a smaller limit than :data:`MAX_BODY_BYTES`) and time."""
    app.add_middleware(BodyLimit, smaller=smaller)
    app.add_middleware(OriginCheck)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=hosts, www_redirect=False)
    app.add_middleware(SecurityHeaders)
