"""What keeps other web sites out of the app on localhost: the Host header checked (against DNS rebinding),
the Origin of state-changing requests checked (against cross-site form posts), and headers that forbid framing
and inline script on every response.

A request without Origin and Referer is let through: browsers send Origin with every POST, so such a request
comes from a program on this machine (curl, a test), which the Host check and the loopback address already
trust."""

from collections.abc import Iterable
from urllib.parse import urlsplit

from fastapi import FastAPI
from starlette.datastructures import Headers, MutableHeaders
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from discogym.core import UserError

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
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)


def guard(app: FastAPI, hosts: list[str]) -> None:
    """Put the checks in front of ``app``, outermost first: security headers on every answer (refusals too),
    the Host header (400 for a host not in ``hosts``), then the Origin."""
    app.add_middleware(OriginCheck)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=hosts, www_redirect=False)
    app.add_middleware(SecurityHeaders)
