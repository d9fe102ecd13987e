"""Fixtures of the web app's tests: a runs folder with a toy run, the app serving it over real HTTP, and a browser."""

import contextlib
import json
import shutil
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from discogym.core import Episode
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir
from discogym.interfaces.web.app import create_app
from discogym.interfaces.web.guard import SERVER_LIMITS
from tests.conftest import run_discogym
from tests.core.toy_suite import suite as toy

WAIT = 30.0
CHROMIUM = shutil.which("chromium")
TIMEOUT_MS = 30_000
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed: make test installs it (apt-get install chromium)"
)


class Served:
    """A running app and a small client for it."""

    def __init__(self, root: str, runs: Path) -> None:
        self.root = root
        self.runs = runs.resolve()

    def get(self, path: str) -> tuple[int, str]:
        return self._send(urllib.request.Request(self.root + path))

    def post_form(self, path: str, fields: dict[str, str]) -> tuple[int, str, str]:
        """Status, body and the final URL (redirects followed)."""
        data = urllib.parse.urlencode(fields).encode()
        request = urllib.request.Request(self.root + path, data)
        try:
            with urllib.request.urlopen(request, timeout=WAIT) as answer:
                return answer.status, answer.read().decode(), answer.url
        except urllib.error.HTTPError as refused:
            return refused.code, refused.read().decode(), refused.url

    def post_json(self, path: str, body: Any, raw: bytes | None = None) -> tuple[int, dict[str, Any]]:
        data = raw if raw is not None else json.dumps(body).encode()
        request = urllib.request.Request(self.root + path, data, {"content-type": "application/json"})
        status, text = self._send(request)
        return status, json.loads(text)

    def _send(self, request: urllib.request.Request) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(request, timeout=WAIT) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as refused:
            return refused.code, refused.read().decode()


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """A runs folder holding one toy run of 4 episodes."""
    from discogym.core import register_suite

    register_suite(toy)
    config = RunConfig.for_suite(toy, ["bisect", "quitter"], split="tiny")
    Runner(toy, config, tmp_path / "runs" / "toy").run()
    return tmp_path / "runs"


@contextlib.contextmanager
def serving_app(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn (the web app's limits) in a thread on a free port of 127.0.0.1; yields its root URL,
    and stops it (its shutdown run) on leaving."""
    listener = socket.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", **SERVER_LIMITS))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(WAIT)


@contextlib.contextmanager
def serving(runs: Path) -> Iterator[Served]:
    """The app serving ``runs`` on a free port of 127.0.0.1, stopped (its shutdown run) on leaving."""
    with serving_app(create_app(runs)) as root:
        yield Served(root, runs)


@pytest.fixture
def served(runs: Path) -> Iterator[Served]:
    with serving(runs) as app:
        yield app


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's chromium, headless, driven by Playwright (tests using it are marked :data:`needs_chromium`)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser page (its own context: no cookies or storage shared between tests); the test fails if the
    browser refused anything under the app's Content-Security-Policy."""
    context = browser.new_context()
    opened = context.new_page()
    opened.set_default_timeout(TIMEOUT_MS)
    refused: list[str] = []
    opened.on(
        "console", lambda message: refused.append(message.text) if "Content Security Policy" in message.text else None
    )
    yield opened
    context.close()
    assert not refused, f"the browser refused under the CSP: {refused}"


def web_episode(runs: Path, suite: str) -> Episode:
    """The one episode people played of ``suite`` in the web app serving ``runs``."""
    (episode,) = RunDir(runs / "web" / suite).iter_episodes()
    return episode


def assert_played_alike(web: Episode, folder: Path, suite: str, task: str, lines: str, *options: str) -> None:
    """``discogym play SUITE TASK OPTIONS`` given ``lines`` at the terminal logs what the web game logged: the same
    calls, results and messages, step by step (timings are not in the log)."""
    done = run_discogym("play", suite, task, "--out", str(folder), *options, input=lines)
    assert done.returncode == 0, done.stderr
    (terminal,) = RunDir(folder).iter_episodes()
    assert len(web.events) == len(terminal.events)
    for in_browser, at_terminal in zip(web.events, terminal.events, strict=True):
        assert in_browser.model_dump(mode="json") == at_terminal.model_dump(mode="json")
    assert web.score == terminal.score


def raw_request(root: str, head: bytes, body_chunks: list[bytes] = ()) -> str:  # type: ignore[assignment]
    """Send a request byte for byte; the server's answer as text (what came before it closed the connection)."""
    host, port = urllib.parse.urlsplit(root).netloc.split(":")
    with socket.create_connection((host, int(port)), timeout=WAIT) as connection:
        return exchanged(connection, head, body_chunks)


def exchanged(connection: socket.socket, head: bytes, body_chunks: list[bytes]) -> str:
    """``head`` and ``body_chunks`` sent on ``connection``; the answer as text (what came before it closed)."""
    connection.sendall(head)
    with contextlib.suppress(OSError):  # the server may answer and close before the body is all sent
        for chunk in body_chunks:
            connection.sendall(chunk)
    answer = b""
    with contextlib.suppress(OSError):
        while chunk := connection.recv(65536):
            answer += chunk
    return answer.decode(errors="replace")
