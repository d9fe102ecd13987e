"""A metering proxy between an agent CLI and its model endpoint, for one episode.

The CLIs report their tokens only when they end, so a ``--token-limit`` or ``--cost-limit`` could not stop
them in time. A :class:`Meter` is a small HTTP server on 127.0.0.1 (an ephemeral port, its own thread) that the
CLI takes for its model endpoint: it forwards every request to the real endpoint and streams the answer back
unchanged, reading the usage of each model answer as it passes (Anthropic ``/v1/messages``, as server-sent
events or one JSON message; OpenAI's Responses API, ``response.completed``). Once the running usage has reached
the episode's budget, it answers every further model request itself with an HTTP 400 error in the provider's
format, without calling the endpoint, and records which limit was reached in :attr:`Meter.exhausted`.

Only the episode's CLI may use it: its base URL (:attr:`Meter.url`) starts with a random secret path segment,
and a request whose path does not start with it gets a 403 without reaching the endpoint (other local users'
processes can reach the port, but not guess the secret). The CLI learns the URL from a private file or its own
environment, never its command line.

It asks the endpoint for unencoded answers (``accept-encoding: identity``); an answer compressed anyway is
passed on as it is, but its usage cannot be read. Forwarding uses the standard library's ``http.client``, so the
``cli`` agent needs no HTTP client package.
"""

import hmac
import http.client
import json
import secrets
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self, cast

from discogym.core import AgentOptions, Usage
from discogym.llm.models import Price

# Headers that belong to one connection, not to the request or answer (RFC 9110, 7.6.1), and the ones the
# proxy sets itself: the length and framing (bodies are re-framed in chunks).
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer"}
    | {"transfer-encoding", "upgrade", "host", "content-length"}
)
DROPPED_ANSWER_HEADERS = HOP_BY_HOP | {"date", "server"}
MODEL_PATHS = ("/messages", "/responses")  # a POST to a path ending so asks for a model answer
MAX_JSON_BYTES = 64 * 1024 * 1024  # a plain JSON answer larger than this is passed on without being read
TIMEOUT_S = 600.0  # the longest the endpoint may take to connect or to send the next piece of an answer
CHUNK = 64 * 1024


def is_model_request(method: str, path: str) -> bool:
    """Whether a request asks for a model answer (whose usage counts), not e.g. a token count."""
    return method == "POST" and path.split("?")[0].rstrip("/").endswith(MODEL_PATHS)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class UsageReader:
    """Reads the usage of one model answer from its body, chunk by chunk as it streams past.

    Anthropic reports usage in ``message_start`` (input, cache reads and writes) and ``message_delta``
    (output so far, sometimes the input again), each field replacing the earlier value; a plain JSON message
    has it whole. The Responses API reports it in the final ``response.completed`` (or ``.incomplete``/
    ``.failed``) event, or in the plain JSON response.
    """

    def __init__(self, content_type: str) -> None:
        self.streaming = content_type.split(";")[0].strip().lower() == "text/event-stream"
        self.anthropic: dict[str, int] = {}
        self.responses: dict[str, Any] | None = None
        self._pending = b""  # an incomplete line (SSE) or the body so far (JSON)
        self._data: list[str] = []  # the data lines of the current event

    def feed(self, chunk: bytes) -> None:
        """Read the next piece of the body."""
        if not self.streaming:
            if len(self._pending) + len(chunk) <= MAX_JSON_BYTES:
                self._pending += chunk
            return
        lines = (self._pending + chunk).split(b"\n")
        self._pending = lines.pop()
        for line in lines:
            self._line(line.rstrip(b"\r").decode("utf-8", errors="replace"))

    def _line(self, line: str) -> None:
        if line.startswith("data:"):
            self._data.append(line[5:].removeprefix(" "))
        elif not line and self._data:
            self._payload("\n".join(self._data))
            self._data = []

    def _payload(self, text: str) -> None:
        try:
            payload = json.loads(text)
        except ValueError:
            return
        if isinstance(payload, dict):
            self._read(payload)

    def _read(self, payload: dict[str, Any]) -> None:
        kind = payload.get("type")
        if kind == "message_start" and isinstance(payload.get("message"), dict):
            self._anthropic(payload["message"].get("usage"))
        elif kind in ("message_delta", "message"):
            self._anthropic(payload.get("usage"))
        elif isinstance(kind, str) and kind.startswith("response.") and isinstance(payload.get("response"), dict):
            self._responses(payload["response"].get("usage"))
        elif payload.get("object") == "response":
            self._responses(payload.get("usage"))

    def _anthropic(self, usage: Any) -> None:
        if isinstance(usage, dict):
            counts = {key: value for key, value in usage.items() if isinstance(value, int)}
            self.anthropic.update({key: _int(value) for key, value in counts.items()})

    def _responses(self, usage: Any) -> None:
        if isinstance(usage, dict):
            self.responses = usage

    def usage(self) -> Usage:
        """The answer's tokens (input counts cached ones too), zero when it said none."""
        if not self.streaming and self._pending:
            self._payload(self._pending.decode("utf-8", errors="replace"))
            self._pending = b""
        if self.responses is not None:
            details = self.responses.get("input_tokens_details")
            cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
            output_details = self.responses.get("output_tokens_details")
            reasoning = _int(output_details.get("reasoning_tokens")) if isinstance(output_details, dict) else 0
            return Usage(
                input_tokens=_int(self.responses.get("input_tokens")),
                output_tokens=_int(self.responses.get("output_tokens")),
                cached_tokens=cached,
                reasoning_tokens=reasoning,
            )
        counts = self.anthropic
        cached = counts.get("cache_read_input_tokens", 0)
        written = counts.get("cache_creation_input_tokens", 0)
        return Usage(
            input_tokens=counts.get("input_tokens", 0) + written + cached,
            output_tokens=counts.get("output_tokens", 0),
            cached_tokens=cached,
            cache_write_tokens=written,
        )


def error_body(path: str, message: str, code: str) -> bytes:
    """An error answer in the format of the provider whose API ``path`` belongs to."""
    if path.split("?")[0].rstrip("/").endswith("/messages"):
        return json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": message}}).encode()
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    return json.dumps({"error": error}).encode()


class Meter:
    """The metering proxy of one episode: forwards to ``upstream`` (a base URL: the request's path is appended),
    counts the usage of every model answer, prices it with ``price`` (None: no cost), and refuses model
    requests once ``budget`` (its ``token_limit`` and ``cost_limit``) is spent.

    Use :meth:`start`, give the CLI :attr:`url` as its base URL, and :meth:`close` at the end.
    """

    def __init__(self, upstream: str, budget: AgentOptions, price: Price | None) -> None:
        self.upstream = upstream.rstrip("/")
        parts = urllib.parse.urlsplit(self.upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) base URL: {upstream}")
        self._upstream = parts
        self.budget = budget
        self.price = price
        self.exhausted: str | None = None  # the limit a model request was refused for: token_limit or cost_limit
        self._spent = Usage()
        self._lock = threading.Lock()
        self.secret = secrets.token_urlsafe(32)  # the first path segment of every request the proxy accepts
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.meter = self
        self._thread = threading.Thread(target=self.server.serve_forever, name="discogym-meter", daemon=True)

    @property
    def url(self) -> str:
        """The base URL to give the CLI, secret included: the rest of its requests' paths is appended to
        :attr:`upstream`. Keep it off command lines (``ps`` shows them to every local user)."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/{self.secret}"

    @property
    def usage(self) -> Usage:
        """What the model answers that passed so far used, priced when there is a price."""
        with self._lock:
            spent = self._spent
        cost = self.price.cost(spent) if self.price is not None else 0.0
        return spent.model_copy(update={"cost_usd": cost})

    def start(self) -> Self:
        """Start serving on the proxy's own thread."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and free the port."""
        if self._thread.is_alive():
            self.server.shutdown()
        self.server.server_close()

    def connect(self) -> http.client.HTTPConnection:
        """A new connection to the endpoint (one per request: model calls are few and long)."""
        kind = http.client.HTTPSConnection if self._upstream.scheme == "https" else http.client.HTTPConnection
        return kind(self._upstream.hostname or "", self._upstream.port, timeout=TIMEOUT_S)

    def target(self, path: str) -> str | None:
        """The endpoint's path (and query) for a request the CLI sent to ``path``; None when ``path`` does not
        start with the secret segment (compared in constant time)."""
        prefix = f"/{self.secret}"
        rest = path[len(prefix) :]
        if not hmac.compare_digest(path[: len(prefix)].encode(), prefix.encode()) or rest[:1] not in ("", "/", "?"):
            return None
        return self._upstream.path + rest

    def refusal(self) -> str | None:
        """The limit a model request must be refused for now, or None; a refusal is recorded in
        :attr:`exhausted` and every later model request is refused too."""
        spent = self.usage
        with self._lock:
            if self.exhausted is None:
                self.exhausted = self.budget.over_budget(spent)
            return self.exhausted

    def add(self, usage: Usage) -> None:
        """Count one model answer's usage."""
        with self._lock:
            self._spent = self._spent + usage


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    meter: Meter


class _Handler(BaseHTTPRequestHandler):
    """Forwards one connection's requests to the meter's upstream."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # stream events go out as they come

    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def meter(self) -> Meter:
        return cast(_Server, self.server).meter

    def do_POST(self) -> None:
        self._forward()

    do_GET = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_POST

    def _forward(self) -> None:
        body = self._body()
        target = self.meter.target(self.path)
        if target is None:
            message = "discogym meter: this proxy serves only its episode's CLI (the secret path is missing or wrong)"
            self._send_error(403, error_body(self.path, message, "forbidden"))
            return
        model = is_model_request(self.command, self.path)
        limit = self.meter.refusal() if model else None
        if limit is not None:
            message = f"discogym: this episode's {limit.replace('_', ' ')} is spent; no more model requests"
            self._send_error(400, error_body(self.path, message, "budget_exhausted"))
            return
        headers = [(name, value) for name, value in self.headers.items() if name.lower() not in HOP_BY_HOP]
        # The answer is read as it passes, so it should come unencoded.
        headers = [(name, value) for name, value in headers if name.lower() != "accept-encoding"]
        headers += [("accept-encoding", "identity"), ("content-length", str(len(body)))]
        connection = self.meter.connect()
        try:
            try:
                connection.putrequest(self.command, target, skip_accept_encoding=True)
                for name, value in headers:
                    connection.putheader(name, value)
                connection.endheaders(body)
                answer = connection.getresponse()
            except (OSError, http.client.HTTPException) as err:
                message = f"discogym meter: the model endpoint was not reached: {type(err).__name__}: {err}"
                self._send_error(502, error_body(self.path, message, "upstream_unreachable"))
                return
            self._relay(answer, UsageReader(answer.getheader("content-type", "")) if model else None)
        finally:
            connection.close()

    def _body(self) -> bytes:
        """The request's body, sent with a length or in chunks."""
        if "chunked" not in self.headers.get("transfer-encoding", "").lower():
            return self.rfile.read(int(self.headers.get("content-length") or 0))
        parts = []
        while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
            parts.append(self.rfile.read(size))
            self.rfile.readline()
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):  # trailers
            pass
        return b"".join(parts)

    def _relay(self, answer: http.client.HTTPResponse, reader: UsageReader | None) -> None:
        """Send the answer on as it arrives, re-framed in chunks; a broken stream breaks the connection. The
        usage is counted before the answer's last byte goes out: once the CLI has its answer, it is counted."""
        has_body = self.command != "HEAD" and answer.status not in (204, 304)
        self.send_response_only(answer.status, answer.reason)
        for name, value in answer.getheaders():
            if name.lower() not in DROPPED_ANSWER_HEADERS:
                self.send_header(name, value)
        if not has_body:  # HEAD, 204 and 304 answers have none, whatever their headers say
            self.end_headers()
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            try:
                while chunk := answer.read1(CHUNK):
                    if reader is not None:
                        reader.feed(chunk)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            finally:
                if reader is not None:
                    self.meter.add(reader.usage())
            self.wfile.write(b"0\r\n\r\n")
        except (OSError, http.client.HTTPException):  # the endpoint or the CLI went away mid-answer
            self.close_connection = True

    def _send_error(self, code: int, payload: bytes) -> None:
        self.send_response_only(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
