"""The web app on localhost against other sites and damaged files, over real HTTP: the Host header checked (DNS
rebinding), cross-site POSTs refused, security headers on every answer and no inline script in any page, files
outside the runs folder never served through a link, a damaged episode a one-line notice (and skipped, with a
warning, by its run's list and report), "End" and a call racing on one game, and no absolute path on a page."""

import json
import os
import re
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request

import pytest

from discogym.core.running.storage import RunDir
from discogym.interfaces.web.guard import CONTENT_SECURITY_POLICY
from tests.conftest import cli_environment, discogym_command, free_port, run_discogym
from tests.interfaces.conftest import WAIT, Served

TOY_GAME = {"suite": "toy", "split": "tiny", "task": "tiny-00", "participant": "p1"}


def send(
    served: Served, path: str, data: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], str]:
    """Status, headers (lower-case names) and body of one request; redirects are not followed."""

    class Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    request = urllib.request.Request(served.root + path, data, headers or {})
    opener = urllib.request.build_opener(Stay)
    try:
        with opener.open(request, timeout=WAIT) as answer:
            return answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, {k.lower(): v for k, v in refused.headers.items()}, refused.read().decode()


def start_form(fields: dict[str, str] = TOY_GAME) -> bytes:
    return urllib.parse.urlencode(fields).encode()


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("127.0.0.1", 200),
        ("127.0.0.1:8000", 200),
        ("localhost:5", 200),
        ("LOCALHOST", 200),
        ("[::1]:8000", 200),
        ("evil.example", 400),
        ("127.0.0.1.evil.example:80", 400),
        ("localhost.", 400),
        ("[::2]", 400),
    ],
)
def test_only_this_machines_names_are_served(served, host, status):
    got, headers, body = send(served, "/runs/toy", headers={"Host": host})
    assert got == status
    if status == 400:
        assert body == "Invalid host header" and "bisect" not in body
        assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY  # refusals carry the headers too


def test_a_name_given_with_allowed_host_is_served_and_a_bad_one_is_one_line(runs, tmp_path):
    port = free_port()
    command = discogym_command("serve", "--runs", str(runs), "--port", str(port), "--allowed-host", "Lab-PC.local")
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=cli_environment())
    try:
        assert process.stderr is not None and process.stderr.readline().startswith("discogym serve:")
        served = Served(f"http://127.0.0.1:{port}", runs)
        assert send(served, "/", headers={"Host": f"lab-pc.local:{port}"})[0] == 200
        assert send(served, "/", headers={"Host": "other.local"})[0] == 400
    finally:
        process.terminate()
        process.wait(WAIT)
    bad = run_discogym("serve", "--runs", str(tmp_path), "--allowed-host", "evil/x")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--allowed-host takes a host name" in bad.stderr


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Referer": "http://evil.example/page.html"},
        {"Origin": "http://127.0.0.1:1"},  # another port is another origin
    ],
)
def test_a_cross_site_post_is_refused_and_starts_no_game(served, runs, headers):
    status, _, body = send(served, "/play", start_form(), headers)
    assert status == 403 and body.startswith("refused: a POST from another site")
    assert not (runs / "web").exists()


def test_same_origin_posts_and_posts_without_origin_are_served(served, runs):
    status, headers, _ = send(served, "/play", start_form(), {"Origin": served.root})
    assert status == 303 and headers["location"].startswith("/play/")
    status, headers, _ = send(served, "/play", start_form(), {"Referer": served.root + "/play?suite=toy"})
    assert status == 303
    status, headers, _ = send(served, "/play", start_form())  # curl, a script: no Origin, no Referer
    assert status == 303
    token = headers["location"].rsplit("/", 1)[1]
    status, _, body = send(served, f"/api/play/{token}/end", b"", {"Origin": "http://evil.example"})
    assert status == 403
    status, _, body = send(served, f"/api/play/{token}/end", b"", {"Origin": served.root})
    assert status == 200 and json.loads(body)["over"]


def test_every_answer_carries_the_security_headers_and_no_page_runs_inline_script(served, runs):
    _, headers, _ = send(served, "/play", start_form())
    pages = ["/", "/play?suite=toy", headers["location"], "/runs/toy", "/report/toy", "/nowhere", "/static/play.js"]
    stem = RunDir(runs / "toy").episode_paths()[0].stem
    pages.append(f"/runs/toy/episodes/{stem}")
    for path in pages:
        _, headers, body = send(served, path)
        assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY, path
        assert headers["x-frame-options"] == "DENY" and headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "same-origin"
        for tag in re.findall(r"<script[^>]*>", body):  # each script a file of the app's own, or data
            assert ' src="/static/' in tag or 'type="application/json"' in tag, (path, tag)
        assert not re.search(r"<[^>]*\son[a-z]+=", body), path  # no inline event handler either
    assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY and "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY


def test_links_out_of_the_runs_folder_are_not_followed(served, runs, tmp_path):
    plots = runs / "toy" / "plots"
    plots.mkdir()
    (plots / "h.png").symlink_to("/etc/hostname")
    (plots / "loop.png").symlink_to(plots / "loop.png")
    status, _, body = send(served, "/runs/toy/plots/h.png")
    assert status == 404 and "no plot 'h.png'" in body.replace("&#39;", "'")
    assert "h.png" not in send(served, "/report/toy")[2] and send(served, "/runs/toy/plots/loop.png")[0] == 404
    outside = tmp_path / "outside"
    outside.mkdir()
    episode = RunDir(runs / "toy").episode_paths()[0]
    (outside / episode.name).write_bytes(episode.read_bytes())
    episode.unlink()
    episode.symlink_to(outside / episode.name)  # an episode file linked to one outside
    assert send(served, f"/runs/toy/episodes/{episode.stem}")[0] == 404
    (runs / "elsewhere").symlink_to(runs / "toy", target_is_directory=True)  # inside: still served
    (plots / "inside.png").symlink_to(runs / "toy" / "run.json")
    assert send(served, "/runs/toy/plots/inside.png")[0] == 200


@pytest.mark.parametrize(
    ("content", "notice"),
    [(b"{not json", "it is not valid JSON"), (b'{"hello": 1}', "not an episode (")],
)
def test_a_damaged_episode_is_a_one_line_notice_and_skipped_with_a_warning(served, runs, content, notice):
    (runs / "toy" / "episodes" / "broken.json").write_bytes(content)
    status, _, page = send(served, "/runs/toy/episodes/broken")
    message = page.split('id="error">')[1].split("</p>")[0]
    assert status == 422 and message.startswith("episode file broken.json is damaged: " + notice), message
    assert "\n" not in message and "hello" not in message  # never the file's content
    status, _, body = send(served, "/api/runs/toy/episodes/broken/views")
    assert status == 422 and json.loads(body)["error"] == message.replace("&#39;", "'")
    status, _, page = send(served, "/runs/toy")
    assert status == 200 and page.count('<tr class="') == 4  # the 4 good episodes still listed
    assert "warning: episode file broken.json is damaged" in page
    status, _, page = send(served, "/report/toy")
    assert status == 200 and "<h2>All episodes</h2>" in page
    assert "warning: toy/episodes/broken.json is not a valid episode file" in page and "it is not counted" in page


def race(served: Served, token: str, calls: list[tuple[str, bytes]]) -> list[tuple[str, int, dict[str, object]]]:
    """The answers to ``calls`` (``end`` or ``call`` and its body) on game ``token``, all sent at once."""
    answers: list[tuple[str, int, dict[str, object]]] = []

    def request(kind: str, data: bytes) -> None:
        status, _, body = send(served, f"/api/play/{token}/{kind}", data, {"content-type": "application/json"})
        answers.append((kind, status, json.loads(body)))

    threads = [threading.Thread(target=request, args=call) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    return answers


def test_end_and_calls_racing_on_one_game_get_one_answer_each(served, runs):
    probe = json.dumps({"tool": "probe", "args": {"n": 3}}).encode()
    for attempt in range(6):
        fields = {**TOY_GAME, "participant": f"p{attempt}", "condition": "slow"}  # slow: a call takes 50 ms
        _, headers, _ = send(served, "/play", start_form(fields))
        answers = race(served, headers["location"].rsplit("/", 1)[1], [("end", b"")] * 2 + [("call", probe)] * 2)
        assert len(answers) == 4 and all(status in (200, 409) for _, status, _ in answers), answers
        ends = [body for kind, status, body in answers if kind == "end"]
        assert all(body["over"] for body in ends) and len({body["written"] for body in ends}) == 1
        over = {"error": f"the game is over; its episode is {ends[0]['written']}"}
        assert all(status == 200 or body == over for kind, status, body in answers if kind == "call")
    assert len(RunDir(runs / "web" / "toy").episode_paths()) == 6  # each game written once


def test_pages_show_no_absolute_path(served, runs):
    (runs / "toy" / "episodes" / "broken.json").write_bytes(b"[]")
    absolute = str(runs.resolve())
    for path in ["/", "/runs/toy", "/report/toy", "/runs/nope", "/runs/toy/episodes/broken", "/report/nope"]:
        status, _, page = send(served, path)
        assert absolute not in page and os.sep + "tmp" not in page, (path, status)
