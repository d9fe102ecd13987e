"""Request heads are bounded in the web apps' server (heads.BoundedHeads): in size, and in the time they take to
arrive, without cutting off an answer that takes long or a body that arrives with its head."""

import asyncio
import socket
import time
from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from discogym.interfaces.web import heads
from tests.interfaces.conftest import serving_app

HEAD_SECONDS = 0.5  # the tests' time for a head to arrive


async def echo(request: Request) -> PlainTextResponse:
    """Waits ``?wait=`` seconds, then answers with the length of the body."""
    await asyncio.sleep(float(request.query_params.get("wait", "0")))
    return PlainTextResponse(str(len(await request.body())))


@pytest.fixture
def address(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, int]]:
    monkeypatch.setattr(heads, "HEAD_SECONDS", HEAD_SECONDS)
    app = Starlette(routes=[Route("/", echo, methods=["GET", "POST"])])
    with serving_app(app) as root:
        host, port = root.removeprefix("http://").split(":")
        yield host, int(port)


def connect(address: tuple[str, int]) -> socket.socket:
    connection = socket.create_connection(address, timeout=10)
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return connection


def read_until_closed(connection: socket.socket) -> bytes:
    received = b""
    while chunk := connection.recv(65536):
        received += chunk
    return received


def request(path: str = "/", body: bytes = b"") -> bytes:
    method = "POST" if body else "GET"
    return f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body


def answer(connection: socket.socket) -> bytes:
    """One answer's status line and body (the body is short)."""
    received = b""
    while b"\r\n\r\n" not in received or not received.split(b"\r\n\r\n", 1)[1]:
        chunk = connection.recv(65536)
        assert chunk, f"closed after {received!r}"
        received += chunk
    return received


def test_a_head_larger_than_16_kib_is_refused_and_the_server_goes_on(address):
    connection = connect(address)
    connection.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    refused = b""
    for number in range(24):  # 24 headers of 1 KB, each in its own read
        try:
            connection.sendall(f"X-Pad-{number}: {'a' * 1000}\r\n".encode())
        except (BrokenPipeError, ConnectionResetError):
            break
        time.sleep(0.02)
    refused = read_until_closed(connection)
    assert refused.startswith(b"HTTP/1.1 400"), refused[:200]
    assert f"at most {heads.MAX_HEAD_BYTES} bytes".encode() in refused
    with connect(address) as whole:  # all of it in one read
        whole.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * 20_000 + b"\r\n\r\n")
        assert read_until_closed(whole).startswith(b"HTTP/1.1 400")
    with connect(address) as other:
        other.sendall(request())
        assert answer(other).startswith(b"HTTP/1.1 200")


def test_a_connection_that_sends_no_head_or_part_of_one_is_closed_after_the_head_time(address):
    silent = connect(address)
    trickling = connect(address)
    began = time.monotonic()
    for byte in b"GET / HTTP/1.1\r\nHost: 127":  # a byte every 50 ms: never idle for long, never done
        try:
            trickling.sendall(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            break
        time.sleep(0.05)
    assert read_until_closed(trickling) == b""
    assert read_until_closed(silent) == b""
    assert HEAD_SECONDS <= time.monotonic() - began < HEAD_SECONDS + 2.0


def test_an_answer_slower_than_the_head_time_is_not_cut_off_and_the_connection_is_kept(address):
    connection = connect(address)
    connection.sendall(request(f"/?wait={3 * HEAD_SECONDS}"))
    assert answer(connection).endswith(b"\r\n\r\n0")
    connection.sendall(request(body=b"x" * 10))  # the same connection, kept alive
    assert answer(connection).endswith(b"\r\n\r\n10")
    connection.close()


def test_a_large_body_that_arrives_with_its_head_is_not_taken_for_the_head(address):
    body = b"b" * 600_000
    with connect(address) as connection:
        connection.sendall(request(body=body))
        assert answer(connection).endswith(f"\r\n\r\n{len(body)}".encode())


def test_a_connection_beyond_the_cap_is_refused_and_those_open_are_still_answered(address, monkeypatch):
    # N5 of issue 46: a participant's 600 connections at once put the server over uvicorn's cap, and every player's
    # next frame, on a connection opened long before, was answered 503
    monkeypatch.setattr(heads, "MAX_CONNECTIONS", 3)
    players = [connect(address) for _ in range(3)]
    for player in players:
        player.sendall(request())
        assert answer(player).startswith(b"HTTP/1.1 200")
    flood = [connect(address) for _ in range(4)]
    for connection in flood:
        connection.sendall(request())
        assert read_until_closed(connection).startswith(b"HTTP/1.1 503")
    for player in players:  # the players' next calls, on their own connections, go through
        player.sendall(request())
        assert answer(player).startswith(b"HTTP/1.1 200")
    for connection in players + flood:
        connection.close()
    newcomer = connect(address)  # once the flood is gone, new connections are taken again
    newcomer.sendall(request())
    assert answer(newcomer).startswith(b"HTTP/1.1 200")
    newcomer.close()
