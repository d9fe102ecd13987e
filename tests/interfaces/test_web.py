"""The web app over real HTTP (uvicorn in a thread, urllib as the client): browsing runs, the report and an
episode's replay; playing a task through the play page's calls to a written, scored episode whose log equals
what `discogym play` writes for the same actions; and refusals (unknown task, malformed calls, paths outside
the runs folder) as clear messages."""

import json
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from discogym.core.running.storage import RunDir
from tests.conftest import cli_environment, discogym_command, free_port, run_discogym
from tests.interfaces.conftest import WAIT, Served, raw_request, serving


def error_of(page: str) -> str:
    """The message of an error page."""
    start = page.index('id="error">') + len('id="error">')
    return page[start : page.index("</p>", start)]


def test_the_home_page_lists_the_suites_and_the_runs(served):
    status, page = served.get("/")
    assert status == 200
    assert all(f'href="/play?suite={name}"' in page for name in ("autumn", "crafting", "petri", "redstone", "toy"))
    assert '<a href="/runs/toy">toy</a></td><td>4</td>' in page


def test_a_run_lists_its_episodes_filterable_and_each_replays_step_by_step(served, runs):
    status, page = served.get("/runs/toy")
    assert status == 200 and page.count('<tr class="') == 4
    _, quitters = served.get("/runs/toy?agent=quitter")
    assert quitters.count('<tr class="') == 2 and 'class="success"' not in quitters
    _, successes = served.get("/runs/toy?outcome=success")
    assert successes.count('<tr class="success">') == 2
    stem = next(p.stem for p in RunDir(runs / "toy").episode_paths() if "bisect" in p.name)
    status, replay = served.get(f"/runs/toy/episodes/{stem}")
    steps = json.loads(replay.split('id="steps-data" type="application/json">')[1].split("</script>")[0])
    episode = next(e for e in RunDir(runs / "toy").iter_episodes() if e.key.file_stem() == stem)
    assert status == 200 and [s["tool"] for s in steps] == [e.call.tool for e in episode.events]
    assert steps[-1]["text"] == episode.events[-1].result.text
    status, body = served.get(f"/api/runs/toy/episodes/{stem}/views")
    assert status == 200 and json.loads(body) == {"views": [], "pictures": [], "stopped": None}  # toy: no view


def test_the_report_page_shows_the_runs_tables(served):
    status, page = served.get("/report/toy")
    assert status == 200 and "<h2>All episodes</h2>" in page and "<h2>toy: episodes</h2>" in page
    assert "<h2>How the episodes ended</h2>" in page
    assert page.count("<td>bisect</td>") == 1 + 1 + 2  # its rows of All episodes and of the endings, the toy table's


@pytest.mark.parametrize(
    "path",
    [
        "/runs/..%2F..%2Fetc",
        "/runs/toy/episodes/..%2F..%2Frun",
        "/runs/toy/episodes/%2E%2E%2Frun",
        "/runs/toy/plots/..%2F..%2F..%2Fetc%2Fpasswd",
        "/report/..%2F",
        "/static/..%2Fapp.py",
        "/runs/%2Fetc",
        "/api/runs/toy/episodes/..%2F..%2Frun/views",
        "/api/runs/..%2F..%2Fetc/episodes/passwd/views",
    ],
)
def test_nothing_outside_the_runs_folder_is_served(served, path):
    request = urllib.request.Request(served.root + path)
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as answer:
            status, body = answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        status, body = refused.code, refused.read().decode()
    assert status == 404 and "root:" not in body and "import" not in body


def play_petri(served: Served, participant: str = "p017") -> tuple[str, list[tuple[int, dict[str, Any]]]]:
    status, page, url = served.post_form(
        "/play", {"suite": "petri", "split": "pilot-v0", "task": "market-1", "participant": participant}
    )
    assert status == 200 and "tools-data" in page, page
    token = url.rsplit("/", 1)[1]
    answers = [
        served.post_json(f"/api/play/{token}/call", {"tool": "experiment", "args": {}}),
        served.post_json(f"/api/play/{token}/call", {"tool": "probe", "args": {"guess": "nothing"}}),
        served.post_json(
            f"/api/play/{token}/call", {"tool": "submit", "args": {"parameter": "price_impact", "direction": "up"}}
        ),
    ]
    return token, answers


def test_a_person_plays_a_task_to_a_written_scored_episode_whose_log_equals_discogym_plays(served, runs, tmp_path):
    token, answers = play_petri(served)
    assert [status for status, _ in answers] == [200, 200, 200]
    assert not answers[1][1]["ok"] and answers[2][1]["over"]  # a refused call is an answer, not a crash
    written = runs / "web" / "petri" / "episodes" / answers[2][1]["written"]
    episode = json.loads(written.read_text())
    assert episode["key"]["agent"] == "human" and episode["key"]["agent_options"] == {"client": "p017"}
    assert episode["score"]["success"] is True and episode["outcome"]["termination"] == "submitted"
    lines = "experiment\nprobe guess=nothing\nsubmit parameter=price_impact direction=up\n"
    done = run_discogym("play", "petri", "market-1", "--split", "pilot-v0", "--out", str(tmp_path / "cli"), input=lines)
    assert done.returncode == 0, done.stderr
    (terminal,) = RunDir(tmp_path / "cli").iter_episodes()
    assert episode["events"] == [event.model_dump(mode="json", exclude_none=False) for event in terminal.events]
    status, after = served.post_json(f"/api/play/{token}/call", {"tool": "experiment", "args": {}})
    assert status == 409 and "the game is over" in after["error"]
    _, page = served.get(f"/play/{token}")  # a reload shows the game so far
    history = json.loads(page.split('id="history-data" type="application/json">')[1].split("</script>")[0])
    assert [step["tool"] for step in history] == ["experiment", "probe", "submit"]


def test_bad_input_gets_a_clear_message(served):
    status, page, _ = served.post_form(
        "/play", {"suite": "petri", "split": "pilot-v0", "task": "nope", "participant": "p1"}
    )
    assert status == 400 and "has no task 'nope'" in error_of(page).replace("&#39;", "'")
    status, page, _ = served.post_form(
        "/play", {"suite": "petri", "split": "pilot-v0", "task": "market-1", "participant": "../x"}
    )
    assert status == 400 and "participant id" in error_of(page)
    status, page, _ = served.post_form(
        "/play", {"suite": "autumn", "split": "all", "task": "ball-1", "participant": "p1", "mode": "fast"}
    )
    assert status == 400 and "mode is one of frame-rate, turns" in error_of(page)
    status, page = served.get("/play?suite=nosuch")
    assert status == 404 and "unknown suite" in error_of(page)
    token, _ = play_petri(served, "p2")
    status, answer = served.post_json(f"/api/play/{token}/call", None, raw=b'{"tool": "submit"')
    assert status == 422 and answer["error"].startswith("malformed request")
    status, answer = served.post_json("/api/play/not-a-game/call", {"tool": "experiment", "args": {}})
    assert status == 404 and "no such game" in answer["error"]
    # N3 of issue 46: a 1 MB action was stored twice per call; it is refused before it is read as JSON, and one
    # just over the cap before it reaches the game or its log
    body = json.dumps({"tool": "probe", "args": {"guess": "x" * 1_000_000}}).encode()
    head = f"POST /api/play/{token}/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n\r\n"
    answer = raw_request(served.root, head.encode(), [body])  # (answered, and closed, before the body is read)
    refusal = '{"error":"a call\'s arguments are at most 16,384 bytes as JSON"}'
    assert answer.startswith("HTTP/1.1 413") and answer.endswith(refusal)
    status, answer = served.post_json(f"/api/play/{token}/call", {"tool": "probe", "args": {"guess": "x" * 20_000}})
    assert status == 422 and "a call's arguments are at most 16,384 bytes as JSON, not 20,012" in answer["error"]
    _, page = served.get(f"/play/{token}")
    history = json.loads(page.split('id="history-data" type="application/json">')[1].split("</script>")[0])
    assert [step["tool"] for step in history] == ["experiment", "probe", "submit"]


def test_serve_binds_this_machine_only_by_default_and_says_so_when_the_port_is_taken(tmp_path):
    port = free_port()
    command = discogym_command("serve", "--runs", str(tmp_path), "--port", str(port))
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=cli_environment())
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert line.startswith(f"discogym serve: http://127.0.0.1:{port}/"), line
        assert listeners(port) == ["127.0.0.1"]
        busy = run_discogym("serve", "--runs", str(tmp_path), "--port", str(port))
        assert busy.returncode == 2 and busy.stderr.startswith(f"error: port {port} on 127.0.0.1 is in use")
    finally:
        process.terminate()
        process.wait(WAIT)


def listeners(port: int) -> list[str]:
    """The local addresses listening on TCP ``port``, from /proc/net/tcp (IPv4)."""
    addresses = []
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        host, hex_port = local.split(":")
        if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
            addresses.append(".".join(str(int(host[i : i + 2], 16)) for i in (6, 4, 2, 0)))
    return addresses


def test_a_game_still_running_when_the_server_stops_is_written_as_server_stopped(runs):
    with serving(runs) as served:
        fields = {"suite": "petri", "split": "pilot-v0", "task": "market-1", "participant": "p9"}
        _, _, url = served.post_form("/play", fields)
        served.post_json(f"/api/play/{url.rsplit('/', 1)[1]}/call", {"tool": "experiment", "args": {}})
    (episode,) = RunDir(runs / "web" / "petri").iter_episodes()
    assert episode.outcome.termination == "server_stopped" and [e.call.tool for e in episode.events] == ["experiment"]


def test_a_run_named_with_url_characters_is_linked_encoded_and_opens(served, runs):
    # F13 of issue 46: a run folder named "we#ird?x" was linked as href="/runs/we#ird?x", which opens another page
    (runs / "toy").rename(runs / "we#ird?x")
    _, home = served.get("/")
    assert 'href="/runs/we%23ird%3Fx"' in home and 'href="/runs/we#ird?x"' not in home
    status, page = served.get("/runs/we%23ird%3Fx")
    assert status == 200 and page.count('<tr class="') == 4
    stem = next(p.stem for p in RunDir(runs / "we#ird?x").episode_paths())
    assert f'href="/runs/we%23ird%3Fx/episodes/{stem}"' in page and 'href="/report/we%23ird%3Fx"' in page
    status, replay = served.get(f"/runs/we%23ird%3Fx/episodes/{stem}")
    assert status == 200 and f"/api/runs/we%23ird%3Fx/episodes/{stem}/views" in replay


def test_games_left_idle_are_written_as_abandoned_and_forgotten(runs, monkeypatch):
    # F8 of issue 46: 500 started games took the server from 88 to 350 MiB and never ended
    import time

    from discogym.interfaces.web import app as web_app

    monkeypatch.setattr(web_app, "IDLE_GAME_MINUTES", 0.5 / 60)
    monkeypatch.setattr(web_app, "TEND_SECONDS", 0.1)
    with serving(runs) as served:
        tokens = []
        for participant in ("p1", "p2", "p3"):
            _, _, url = served.post_form(
                "/play", {"suite": "petri", "split": "pilot-v0", "task": "market-1", "participant": participant}
            )
            tokens.append(url.rsplit("/", 1)[1])
        deadline = time.monotonic() + WAIT
        while len(RunDir(runs / "web" / "petri").episode_paths()) < 3:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        episodes = list(RunDir(runs / "web" / "petri").iter_episodes())
        assert sorted(e.key.agent_options["client"] for e in episodes) == ["p1", "p2", "p3"]
        assert {e.outcome.termination for e in episodes} == {"abandoned"}
        status, answer = served.post_json(f"/api/play/{tokens[0]}/call", {"tool": "experiment", "args": {}})
        assert status == 404 and "left idle" in answer["error"]
