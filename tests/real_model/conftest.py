"""A real model behind a real server for the tests of this folder: llama.cpp's ``llama-server`` serving
SmolLM2-135M-Instruct on 127.0.0.1, as ``make test-real-model`` installs them (scripts/real_model.py), behind a
proxy that keeps the usage the server reported for each request. Without that install the tests skip, saying so.
"""

import json
import os
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

MODEL = "smollm2"  # the name the server serves it under (--alias)
TOOL_TEMPLATE = Path(__file__).with_name("tool_calls.jinja")  # SmolLM2's own template leaves the tools out
FOLDER = Path(os.environ.get("DISCOGYM_REAL_MODEL", ""))

if "DISCOGYM_REAL_MODEL" not in os.environ:  # minutes of a real model's replies: not part of make test
    pytest.skip("a real model's tests: make test-real-model installs the model and runs them", allow_module_level=True)
if not (FOLDER / "installed.json").exists():
    pytest.skip(f"no real model installed in {FOLDER}: make test-real-model installs one", allow_module_level=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Server:
    """A llama-server process and the proxy in front of it: ``url`` is the proxy's OpenAI-style base URL,
    ``usages`` what the server reported for each completion request since the last :meth:`clear`, ``answers``
    the messages it answered with (its own reading of the model's output)."""

    window: int
    process: subprocess.Popen[bytes]
    upstream: str
    proxy: ThreadingHTTPServer | None = None
    usages: list[dict[str, Any]] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    answers: list[dict[str, Any]] = field(default_factory=list)

    @property
    def url(self) -> str:
        assert self.proxy is not None
        return f"http://127.0.0.1:{self.proxy.server_address[1]}/v1"

    @property
    def model(self) -> str:
        """The model string discogym takes."""
        return f"openai-compatible/{MODEL}@{self.url}"

    def clear(self) -> None:
        self.usages.clear()
        self.bodies.clear()
        self.answers.clear()


def usage_of(body: bytes, content_type: str) -> dict[str, Any] | None:
    """The usage of a completion: the JSON answer's, or the last server-sent event's that has one."""
    if "text/event-stream" in content_type:
        found = None
        for line in body.decode().splitlines():
            if line.startswith("data: {"):
                found = json.loads(line[6:]).get("usage") or found
        return found
    document = json.loads(body)
    return document.get("usage") if isinstance(document, dict) else None


def answer_of(body: bytes, content_type: str) -> dict[str, Any]:
    """The message of a completion answered as JSON (empty for a stream: discogym asks for none)."""
    if "text/event-stream" in content_type:
        return {}
    return dict(json.loads(body)["choices"][0]["message"])


def proxy_for(server: Server) -> ThreadingHTTPServer:
    """A proxy that passes every request to the server and keeps each completion's usage."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._forward(None)

        def do_POST(self) -> None:
            self._forward(self.rfile.read(int(self.headers.get("content-length", 0))))

        def _forward(self, body: bytes | None) -> None:
            request = urllib.request.Request(server.upstream + self.path, data=body, method=self.command)
            request.add_header("content-type", self.headers.get("content-type", "application/json"))
            try:
                with urllib.request.urlopen(request, timeout=900) as answer:
                    status, kind, data = answer.status, answer.headers.get("content-type", ""), answer.read()
            except urllib.error.HTTPError as err:
                status, kind, data = err.code, err.headers.get("content-type", ""), err.read()
            if body is not None and self.path.endswith("/chat/completions"):
                server.bodies.append(json.loads(body))
                if status == 200:
                    server.usages.append(usage_of(data, kind) or {})
                    server.answers.append(answer_of(data, kind))
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    return proxy


def start_server(window: int, log: Path, template: Path | None) -> Server:
    port = free_port()
    command = [
        str(FOLDER / "bin" / "llama-server"),
        *("-m", str(FOLDER / "models" / "smollm2.gguf"), "--alias", MODEL, "--jinja"),
        *("--host", "127.0.0.1", "--port", str(port), "--ctx-size", str(window), "--parallel", "1", "--seed", "7"),
        *(("--chat-template-file", str(template)) if template else ()),
    ]
    libraries = {"LD_LIBRARY_PATH": str(FOLDER / "bin")}  # where a build with shared libraries keeps them
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **libraries})
    server = Server(window, process, f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, f"llama-server stopped: {log.read_text()[-2000:]}"
        try:
            with urllib.request.urlopen(server.upstream + "/health", timeout=5) as answer:
                if answer.status == 200:
                    break
        except (urllib.error.URLError, ConnectionError):
            pass
        time.sleep(0.5)
    else:
        raise AssertionError(f"llama-server did not come up: {log.read_text()[-2000:]}")
    server.proxy = proxy_for(server)
    return server


def serving(window: int, folder: Path, template: Path | None = TOOL_TEMPLATE) -> Iterator[Server]:
    """A server with ``window`` tokens of context and the chat ``template`` (None: the model's own), stopped at
    the end."""
    started = start_server(window, folder / "server.log", template)
    yield started
    assert started.proxy is not None
    started.proxy.shutdown()
    started.process.terminate()
    started.process.wait(30)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """SmolLM2 served with an 8k window and a template that shows it the tools."""
    yield from serving(8192, tmp_path_factory.mktemp("llama"))


@pytest.fixture(scope="session")
def compacting_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """SmolLM2 served with a window of 2,560 tokens: a crafting episode in native mode outgrows it in a few
    replies."""
    yield from serving(2560, tmp_path_factory.mktemp("llama-compacting"))


@pytest.fixture(scope="session")
def small_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """SmolLM2 served with a window of 1,024 tokens: crafting's first prompt in text mode (1,292 tokens) does not
    fit, whatever the model would answer."""
    yield from serving(1024, tmp_path_factory.mktemp("llama-small"), template=None)
