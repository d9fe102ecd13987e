"""The study behind Caddy, as examples/Caddyfile sets it up for the open internet: the shipped file is valid, and
a copy of it serving https://localhost with Caddy's own local CA carries a participant through the study over TLS,
with the participant's cookie Secure (the study server sees the https scheme), their address the one they came
from (and not one they claim), oversized bodies refused and plain HTTP not answered with the study."""

import contextlib
import http.client
import json
import shutil
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from discogym.core import Termination
from discogym.core.running.storage import RunDir
from discogym.interfaces.web.study import Study, load_study_file
from discogym.interfaces.web.study_app import COOKIE_PREFIX
from tests.conftest import REPO, discogym_server, free_port
from tests.interfaces.conftest import WAIT, exchanged
from tests.interfaces.test_study import TOY_STUDY, write_study

CADDY = shutil.which("caddy")
pytestmark = pytest.mark.skipif(
    CADDY is None, reason="caddy is not installed: make test installs it (apt-get install caddy)"
)
EXAMPLE = REPO / "examples" / "Caddyfile"
PUBLIC_SITE = "\nstudy.example.org {\n"
UPSTREAM = "reverse_proxy 127.0.0.1:8000 "


def caddy_environment(home: Path) -> dict[str, str]:
    """Caddy's environment with its data (certificates, the local CA) and config folders under ``home``, and
    nothing of the machine's own Caddy."""
    folders = {"HOME": home, "XDG_DATA_HOME": home / "data", "XDG_CONFIG_HOME": home / "config"}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", **{name: str(folder) for name, folder in folders.items()}}


def local_caddyfile(port: int, upstream: int, http_port: int) -> str:
    """examples/Caddyfile with its public name replaced by https://localhost:PORT under Caddy's own local CA
    (``tls internal``: no ACME, no network) and its upstream by the study server's port. The global options gain
    what a test needs: no admin endpoint, nothing installed in the system's trust store, and nothing on port 80."""
    text = EXAMPLE.read_text(encoding="utf-8")
    assert text.count(PUBLIC_SITE) == 1 and text.count(UPSTREAM) == 1 and text.count("\n{\n") == 1
    text = text.replace(PUBLIC_SITE, f"\nhttps://localhost:{port} {{\n\ttls internal\n")
    text = text.replace(UPSTREAM, f"reverse_proxy 127.0.0.1:{upstream} ")
    options = f"\tadmin off\n\tskip_install_trust\n\thttp_port {http_port}\n\tauto_https disable_redirects\n"
    return text.replace("\n{\n", "\n{\n" + options)


class Visitor:
    """A participant's browser talking HTTPS to Caddy from the local address ``source`` (127.0.0.x), trusting
    Caddy's local CA; its own cookies, redirects followed, every Set-Cookie header it was sent kept."""

    def __init__(self, root: str, context: ssl.SSLContext, source: str) -> None:
        self.root = root
        self.set_cookies: list[str] = []
        self.headers: dict[str, str] = {}  # the last answer's, names in lower case
        self.page_url = ""
        self.secret = ""
        visitor = self

        class FromSource(urllib.request.HTTPSHandler):
            def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
                return self.do_open(http.client.HTTPSConnection, req, context=context, source_address=(source, 0))

            def https_response(
                self, request: urllib.request.Request, response: http.client.HTTPResponse
            ) -> http.client.HTTPResponse:
                visitor.set_cookies.extend(response.headers.get_all("Set-Cookie") or [])
                return response

        self.opener = urllib.request.build_opener(FromSource(context=context), urllib.request.HTTPCookieProcessor())

    def open(self, path: str, data: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, str]:
        sent = {"origin": self.root} if data is not None else {}  # a browser's POST names its page's origin
        request = urllib.request.Request(self.root + path, data, {**sent, **(headers or {})})
        try:
            with self.opener.open(request, timeout=WAIT) as answer:
                self.page_url, self.headers = answer.url, {k.lower(): v for k, v in answer.headers.items()}
                return int(answer.status), answer.read().decode()
        except urllib.error.HTTPError as refused:
            self.headers = {k.lower(): v for k, v in refused.headers.items()}
            return refused.code, refused.read().decode()

    def enter(self, pid: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
        query = urllib.parse.urlencode({"PROLIFIC_PID": pid, "STUDY_ID": "s1", "SESSION_ID": "x" + pid})
        status, page = self.open(f"/enter?{query}", headers=headers)
        parts = [*urllib.parse.urlsplit(self.page_url).path.split("/"), "", ""]
        self.secret = parts[2] if parts[1] == "p" else ""
        return status, page

    def api(self, action: str, body: Any) -> tuple[int, dict[str, Any]]:
        data = json.dumps(body).encode()
        status, text = self.open(f"/api/p/{self.secret}/{action}", data, {"content-type": "application/json"})
        return status, json.loads(text)


def raw_tls(port: int, context: ssl.SSLContext, head: bytes, body_chunks: list[bytes]) -> str:
    """A request sent byte for byte over TLS to Caddy; its answer as text (what came before the connection
    closed)."""
    with (
        socket.create_connection(("127.0.0.1", port), timeout=WAIT) as plain,
        context.wrap_socket(plain, server_hostname="localhost") as connection,
    ):
        return exchanged(connection, head, body_chunks)


def plain_http(port: int) -> str:
    """A plain-HTTP request to Caddy's HTTPS port; the answer as text."""
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as connection:
        connection.sendall(f"GET /enter?PROLIFIC_PID=plain01 HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n".encode())
        answer = b""
        with contextlib.suppress(OSError):
            while chunk := connection.recv(65536):
                answer += chunk
        return answer.decode(errors="replace")


@contextlib.contextmanager
def caddy(caddyfile: Path, home: Path, port: int) -> Iterator[ssl.SSLContext]:
    """``caddy run`` with ``caddyfile``, ready to answer HTTPS on ``port``; yields an SSL context trusting its
    local CA. Stopped afterwards (killed if it does not stop)."""
    assert CADDY is not None
    env = caddy_environment(home)
    log = home / "caddy.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            [CADDY, "run", "--config", str(caddyfile), "--adapter", "caddyfile"],
            env=env,
            cwd=home,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    root_ca = home / "data" / "caddy" / "pki" / "authorities" / "local" / "root.crt"
    try:
        deadline = time.monotonic() + WAIT
        while True:
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, f"caddy did not answer over HTTPS in {WAIT} s: {log.read_text()}"
            if root_ca.exists():
                context = ssl.create_default_context(cafile=str(root_ca))
                with (
                    contextlib.suppress(OSError),  # refused, or its certificate not issued yet
                    socket.create_connection(("127.0.0.1", port), timeout=2) as plain,
                    context.wrap_socket(plain, server_hostname="localhost"),
                ):
                    break
            time.sleep(0.1)
        yield context
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def test_the_example_caddyfile_is_valid_and_formatted(tmp_path):
    # Validation provisions the configuration without starting it: no certificate is asked of Let's Encrypt, so
    # the shipped file, with its public name, is checked as it is, offline.
    assert CADDY is not None
    done = subprocess.run(
        [CADDY, "validate", "--adapter", "caddyfile", "--config", str(EXAMPLE)],
        env=caddy_environment(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "Valid configuration" in done.stdout + done.stderr, done.stderr
    # Caddy warns of a file not as `caddy fmt` writes it and of needless directives (header_up for the headers
    # it sets itself): none of that either.
    warnings = [line for line in done.stderr.splitlines() if '"level":"warn' in line]
    assert not warnings, warnings


def test_a_participant_plays_through_caddy_over_https(tmp_path):
    port, http_port = free_port(), free_port()
    # one participant per address: shows which address the study server saw
    study_file, folder = write_study(tmp_path, participants_per_address=1), tmp_path / "study"
    args = ["serve", "--study", str(study_file), "--out", str(folder), "--allowed-host", "localhost"]
    with discogym_server(*args, DISCOGYM_SUITES="tests.core.toy_suite:suite") as (upstream, _server):
        caddyfile = tmp_path / "Caddyfile"
        caddyfile.write_text(local_caddyfile(port, upstream, http_port), encoding="utf-8")
        with caddy(caddyfile, tmp_path / "caddy", port) as context:
            root = f"https://localhost:{port}"
            person = Visitor(root, context, "127.0.0.2")
            status, page = person.enter("5f0c1aa1b2")
            assert status == 200 and "You agree to play digit games." in page and person.secret
            assert person.headers["strict-transport-security"] == "max-age=31536000"
            # The cookie is Secure: the study server saw https in X-Forwarded-Proto from Caddy.
            cookies = [c for c in person.set_cookies if c.startswith(f"{COOKIE_PREFIX}{TOY_STUDY['name']}=")]
            for cookie in cookies:
                attributes = {part.strip().lower() for part in cookie.split(";")}
                assert {"secure", "httponly", "samesite=lax"} <= attributes, cookie
            assert cookies, person.set_cookies
            status, page = person.open(f"/p/{person.secret}/consent", b"")
            assert status == 200 and 'id="start"' in page
            status, page = person.open(f"/p/{person.secret}/start", b"")
            assert status == 200 and 'id="tools-data"' in page
            status, answer = person.api("call", {"tool": "probe", "args": {"n": 4}})
            assert status == 200 and answer["ok"]
            status, answer = person.api("end", {})
            assert status == 200 and answer == {"over": True, "written": None, "saved": True}
            status, page = person.open("/")  # the Secure cookie comes back over HTTPS: the participant's own page
            assert status == 200 and person.page_url.endswith(f"/p/{person.secret}") and "Game 2 of 2" in page

            # 2 MB bodies are refused with 413, by Caddy: one that declares its length before any of it is passed
            # on, one streamed in chunks once 1 MiB has passed.
            declared = f"POST /api/p/{person.secret}/call HTTP/1.1\r\nHost: localhost:{port}\r\n"
            chunk = b"x" * 100_000
            sized = raw_tls(port, context, f"{declared}Content-Length: 2000000\r\n\r\n".encode(), [chunk] * 20)
            assert sized.startswith("HTTP/1.1 413") and "at most 1048576 bytes" in sized, sized[:300]
            # Streamed to a page whose own limit is Caddy's (1 MiB): the study server never sees more than it takes,
            # so the refusal is Caddy's (to a game's calls, limited to 16 KiB, the server's 413 and closed connection
            # would race Caddy's writing: a 502 at times).
            streamed_chunk = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
            to_page = f"POST /p/{person.secret}/consent HTTP/1.1\r\nHost: localhost:{port}\r\n"
            head = f"{to_page}Transfer-Encoding: chunked\r\n\r\n".encode()
            streamed = raw_tls(port, context, head, [streamed_chunk] * 20 + [b"0\r\n\r\n"])
            assert streamed.startswith("HTTP/1.1 413") and "Content-Length: 0\r\n" in streamed, streamed[:300]

            # The study server counts participants by the address they came from (one each here), which Caddy
            # passes on; an address a client claims in its own X-Forwarded-For is not believed.
            assert Visitor(root, context, "127.0.0.3").enter("5f0c1aa1b3")[0] == 200
            claimed = {"x-forwarded-for": "203.0.113.9"}
            status, page = Visitor(root, context, "127.0.0.3").enter("5f0c1aa1b4", headers=claimed)
            assert status == 400 and "too many participants came from this network address" in page

            # Plain HTTP to the HTTPS port gets Caddy's refusal, not the study.
            refusal = plain_http(port)
            assert refusal.startswith("HTTP/1.0 400") and "discogym" not in refusal.lower(), refusal[:300]
    (episode,) = RunDir(folder / "toy").iter_episodes()
    assert episode.outcome.termination == Termination.AGENT_STOPPED and len(episode.events) == 1
    assert episode.key.agent_options["client"] == "p00001"
    assert len(Study(load_study_file(study_file), folder).participants()) == 2
