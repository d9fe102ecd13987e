"""uvicorn's httptools protocol with its request heads bounded in size and in time, and its connections capped.

uvicorn parses HTTP with httptools, a C parser (h11, in Python, took a quarter of the study server's time with
sixty people at a frame rate: benchmarks/study_load.py), but puts no limit on a request's head there: a client
could send headers without end, or open a connection and send nothing, and keep it (and one of the server's
connections) for ever. :class:`BoundedHeads` refuses a head larger than :data:`MAX_HEAD_BYTES` with 400, and
closes a connection whose next request head has not arrived :data:`HEAD_SECONDS` after the connection opened or
its last answer went.

Connections are capped at :data:`MAX_CONNECTIONS` (file descriptors stay free for writing episodes): a connection
opened beyond the cap is answered 503 and closed. uvicorn's own cap (``limit_concurrency``) answers 503 to every
request made while the server is over it, on connections opened long before too: a participant who opened 600
connections at once had every player's next frame refused."""

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

MAX_HEAD_BYTES = 16 * 1024
HEAD_SECONDS = 10.0
MAX_CONNECTIONS = 512


class HeadTooLarge(Exception):
    """A request head over :data:`MAX_HEAD_BYTES`, found once it is whole."""


class BoundedHeads(HttpToolsProtocol):
    """An HTTP/1.1 connection whose request heads are bounded: :data:`MAX_HEAD_BYTES` (refused as it arrives, or
    once whole when it came in one read), within :data:`HEAD_SECONDS`."""

    _head_open = True  # waiting for (the rest of) a request head
    _head_bytes = 0  # what arrived while the head was open
    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)  # adds it to self.connections
        if len(self.connections) > MAX_CONNECTIONS:
            self.limit_concurrency = 0  # uvicorn answers this connection's request 503 (and says so), and closes it
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._head_open:
            self._head_bytes += len(data)
        super().data_received(data)
        if self._head_open and self._head_bytes > MAX_HEAD_BYTES and not self.transport.is_closing():
            self.logger.warning("Request head larger than %d bytes.", MAX_HEAD_BYTES)
            self.send_400_response(f"A request head is at most {MAX_HEAD_BYTES} bytes.")

    def on_headers_complete(self) -> None:
        self._head_open = False
        self._head_bytes = 0
        self._stop_head_timer()
        if len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers) > MAX_HEAD_BYTES:
            self.logger.warning("Request head larger than %d bytes.", MAX_HEAD_BYTES)
            raise HeadTooLarge  # the parser stops, and uvicorn answers 400 (an invalid request) and closes
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._head_open = True  # bytes from here on are the next request's head

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.timeout_keep_alive_task is not None:  # idle: no request waits in the pipeline
            self._await_head()

    def _await_head(self) -> None:
        self._stop_head_timer()
        self._head_timer = self.loop.call_later(HEAD_SECONDS, self._head_too_slow)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if self._head_open and not self.transport.is_closing():
            self.transport.close()
