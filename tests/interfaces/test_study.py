"""A study for the open internet (``discogym serve --study``) over real HTTP: participants enter from their links,
consent, play their assigned games and get the completion code; they reach nothing else; and the server keeps
every game (write errors, idle players, time limits, SIGTERM with slow clients) and refuses what a hostile
participant sends (big bodies, internal tools, forged or look-alike ids, many participants from one address)."""

import contextlib
import http.cookiejar
import json
import signal
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
import yaml

from discogym.core import Episode, Termination, get_suite, register_suite
from discogym.core.running.storage import RunDir
from discogym.interfaces.web import games, guard, study_app
from discogym.interfaces.web.study import Study, load_study_file, prepare_study_folder
from discogym.interfaces.web.study_app import create_study_app
from tests.conftest import discogym_server, run_discogym
from tests.core.toy_suite import suite as toy
from tests.interfaces.conftest import WAIT, raw_request, serving, serving_app

TOY_STUDY: dict[str, Any] = {
    "name": "toy-study",
    "seed": 3,
    "games": [{"suite": "toy", "split": "dev"}],
    "tasks_per_participant": 2,
    "people_per_task": 2,
    "minutes_per_game": 30,
    "idle_minutes": 30,
    "participants_per_address": 50,
    "consent": "You agree to play digit games.",
    "instructions": "Find the hidden digit.",
    "completion": {"code": "DONE123", "redirect": "https://example.org/done?cc=DONE123"},
}


def write_study(folder: Path, **changes: Any) -> Path:
    path = folder / "study.yaml"
    path.write_text(yaml.safe_dump({**TOY_STUDY, **changes}), encoding="utf-8")
    return path


class Participant:
    """A browser of one participant: its own cookies, redirects followed."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self.page_url = ""
        self.secret = ""

    def open(self, path: str, data: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, str]:
        request = urllib.request.Request(path if path.startswith("http") else self.root + path, data, headers or {})
        try:
            with self.opener.open(request, timeout=WAIT) as answer:
                self.page_url = answer.url
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as refused:
            return refused.code, refused.read().decode()

    def enter(self, pid: str) -> tuple[int, str]:
        """Arrive from a Prolific link; the participant's secret is then in the address of their page."""
        query = urllib.parse.urlencode({"PROLIFIC_PID": pid, "STUDY_ID": "s1", "SESSION_ID": "x" + pid})
        status, page = self.open(f"/enter?{query}")
        parts = [*urllib.parse.urlsplit(self.page_url).path.split("/"), "", ""]
        self.secret = parts[2] if parts[1] == "p" else ""
        return status, page

    def begin(self, pid: str) -> None:
        """Enter from a Prolific link, consent, and start the first game."""
        self.enter(pid)
        self.post(f"/p/{self.secret}/consent")
        self.post(f"/p/{self.secret}/start")

    def post(self, path: str) -> tuple[int, str]:
        return self.open(path, b"")

    def call(self, tool: str, args: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        body = json.dumps({"tool": tool, "args": args}).encode()
        status, text = self.open(f"/api/p/{self.secret}/call", body, {"content-type": "application/json"})
        return status, json.loads(text)

    def end(self) -> tuple[int, dict[str, Any]]:
        status, text = self.open(f"/api/p/{self.secret}/end", b"{}", {"content-type": "application/json"})
        return status, json.loads(text)


@contextlib.contextmanager
def study_server(study_file: Path, folder: Path) -> Iterator[tuple[str, Study]]:
    """The study's app on a free port of 127.0.0.1 (uvicorn in a thread), stopped (games written) on leaving."""
    register_suite(toy)
    prepare_study_folder(study_file, folder)
    study = Study(load_study_file(study_file), folder)
    with serving_app(create_study_app(study)) as root:
        yield root, study


@pytest.fixture
def toy_study(tmp_path: Path) -> Iterator[tuple[str, Study]]:
    with study_server(write_study(tmp_path), tmp_path / "study") as served:
        yield served


def hidden_digit(study: Study, number: int) -> int:
    """The digit of the participant's current toy task (the test plays it straight to the answer)."""
    record = study.participant(number)
    assert record is not None and record.running is not None
    slot = study.slots[record.running.slot]
    return next(int(t.ground_truth["digit"]) for t in toy.tasks(slot.split) if t.id == slot.task)


def play_through(person: Participant, study: Study, number: int) -> None:
    """Consent, then play every assigned game to its answer, one probe first; a reload in the middle of each."""
    assert person.post(f"/p/{person.secret}/consent")[0] == 200
    while True:
        status, page = person.open(f"/p/{person.secret}")
        if "completion-code" in page:
            return
        assert 'id="start"' in page
        assert person.post(f"/p/{person.secret}/start")[0] == 200
        status, answer = person.call("probe", {"n": 4})
        assert status == 200 and answer["ok"]
        status, reloaded = person.open(f"/p/{person.secret}")  # a reload resumes the game, its step shown
        assert status == 200 and "the hidden digit is" in reloaded and 'id="tools-data"' in reloaded
        status, answer = person.call("submit", {"n": hidden_digit(study, number)})
        assert status == 200 and answer["over"] and answer["saved"] is True


def test_two_participants_play_their_games_and_get_the_completion_code(toy_study, tmp_path):
    root, study = toy_study
    for number, pid in enumerate(["5f0c1aa1b2", "5f0c1aa1b3"], start=1):
        person = Participant(root)
        status, consent = person.enter(pid)
        assert status == 200 and "You agree to play digit games." in consent and 'id="consent"' in consent
        play_through(person, study, number)
        status, done = person.open(f"/p/{person.secret}")
        assert "DONE123" in done and "https://example.org/done?cc=DONE123" in done
        status, again = person.open("/")  # the cookie brings the participant back to their own page
        assert "DONE123" in again
    episodes = [e for suite in ("toy",) for e in RunDir(tmp_path / "study" / suite).iter_episodes()]
    assert len(episodes) == 4 and all(e.score.success for e in episodes)
    assert sorted(e.key.agent_options["client"] for e in episodes) == ["p00001", "p00001", "p00002", "p00002"]
    assert [len(r.played) for r in study.participants()] == [2, 2]
    stored = b"".join(p.read_bytes() for p in (tmp_path / "study").glob("study.sqlite3*"))
    assert person.secret.encode() not in stored and person.secret.encode() not in b"".join(  # only its hash
        p.read_bytes() for p in (tmp_path / "study").rglob("*") if p.is_file()
    )


def test_the_researchers_dashboard_shows_progress_completion_and_exclusions(toy_study, tmp_path):
    root, study = toy_study
    finished, left = Participant(root), Participant(root)
    finished.enter("5f0c1aa1b2")
    play_through(finished, study, 1)
    left.begin("5f0c1aa1b9")
    left.call("probe", {"n": 1})
    study_folder = tmp_path / "study"
    with serving(study_folder) as researcher:
        status, home = researcher.get("/")
        assert 'href="/study"' in home
        status, page = researcher.get("/study")
    assert status == 200 and "toy-study" in page and "1 finished" in page
    assert "PROLIFIC_PID=5f0c1aa1b2" in page and "submitted, submitted" in page and "0 of 2" in page
    assert '<a href="/report/toy">toy</a>' in page
    (tmp_path / "runs").mkdir()
    with serving(tmp_path / "runs") as elsewhere:
        assert elsewhere.get("/study")[0] == 404  # not a study's folder


def test_the_dashboard_counts_one_person_in_the_singular(tmp_path):
    with study_server(write_study(tmp_path, people_per_task=1), tmp_path / "study") as (root, _study):
        Participant(root).enter("5f0c1aa1c3")
    with serving(tmp_path / "study") as researcher:
        status, page = researcher.get("/study")
    assert status == 200 and "1 participant, 0 finished" in page
    assert "Each participant plays 2 games; each game needs 1 person." in page


def test_a_participant_reaches_nothing_but_their_own_pages(toy_study):
    root, _study = toy_study
    person, other = Participant(root), Participant(root)
    person.enter("aaaaaa1")
    other.enter("bbbbbb2")
    elsewhere = ["/runs/toy", "/report/toy", "/play", "/play?suite=toy", "/api/runs/toy/episodes/x/views", "/study"]
    guessed = [
        f"/p/{other.secret[:-1]}{'B' if other.secret.endswith('A') else 'A'}",
        "/p/",
        "/p/x/../" + other.secret,
        "/runs/study/episodes/x",
    ]
    for path in elsewhere + guessed:
        status, page = person.open(path)
        assert status in (404, 405), (path, status)
        assert other.secret not in page
    status, _ = person.post(f"/p/{other.secret[:-1]}{'B' if other.secret.endswith('A') else 'A'}/consent")
    assert status == 404


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"PROLIFIC_PID": "5f0c\u0430bc"}, "PROLIFIC_PID is 1 to 64 ASCII letters"),  # a Cyrillic a
        ({"PROLIFIC_PID": "x" * 500}, "x" * 36 + "...)"),  # quoted, cut to 40 characters
        ({"id": "a b"}, "id is 1 to 64 ASCII letters"),
        ({}, "open the study from the link your study platform gave you"),
    ],
)
def test_ids_are_ascii_and_echoed_shortened(toy_study, query, message):
    root, _ = toy_study
    status, page = Participant(root).open("/enter?" + urllib.parse.urlencode(query))
    assert status == 400 and message in page and "x" * 100 not in page


def test_an_id_already_entered_cannot_be_taken_over(toy_study):
    root, study = toy_study
    first, intruder = Participant(root), Participant(root)
    first.enter("victim01")
    status, page = intruder.enter("victim01")
    assert status == 400 and "entered the study already" in page
    assert len(study.participants()) == 1


def test_participants_from_one_address_are_capped(tmp_path):
    with study_server(write_study(tmp_path, participants_per_address=2), tmp_path / "study") as (root, study):
        statuses = [Participant(root).enter(f"pid{i:04d}")[0] for i in range(4)]
    assert statuses == [200, 200, 400, 400] and len(study.participants()) == 2


def test_an_ipv6_slash_64_is_one_address_and_the_cap_holds_across_a_restart(tmp_path):
    # N6 of issue 46: 144 addresses of one /64 filled a study in 56 s, and the cap was forgotten on restart
    from discogym.interfaces.web.study import address_group

    assert address_group("2001:db8:1:2:aaaa::1") == address_group("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert address_group("::ffff:192.0.2.7") == "192.0.2.7" and address_group("-") == "-"
    register_suite(toy)
    study_file = write_study(tmp_path, participants_per_address=2)
    prepare_study_folder(study_file, tmp_path / "study")

    def enter(study: Study, pid: str, address: str) -> bool:
        try:
            study.enter({"PROLIFIC_PID": pid}, address)
        except Exception:
            return False
        return True

    study = Study(load_study_file(study_file), tmp_path / "study")
    assert enter(study, "pid0001", "2001:db8:1:2::1") and enter(study, "pid0002", "2001:db8:1:2::2")
    assert not enter(study, "pid0003", "2001:db8:1:2:ffff::3")  # the same /64
    assert enter(study, "pid0004", "2001:db8:1:3::1")  # the next /64
    restarted = Study(load_study_file(study_file), tmp_path / "study")
    assert not enter(restarted, "pid0005", "2001:db8:1:2::5")
    assert enter(restarted, "pid0006", "2001:db8:1:3::6") and not enter(restarted, "pid0007", "2001:db8:1:3::7")
    stored = b"".join(p.read_bytes() for p in (tmp_path / "study").rglob("*") if p.is_file())
    assert b"2001:db8" not in stored  # no record holds an address


def test_assignments_are_balanced_and_follow_the_seed(tmp_path):
    register_suite(toy)
    given = []
    for folder in ("a", "b"):
        study = Study(load_study_file(write_study(tmp_path, people_per_task=3)), tmp_path / folder)
        for i in range(12):
            record, _ = study.enter({"id": f"person{i}"}, f"10.0.0.{i}")
            study.consent(record)
        given.append([record.assigned for record in study.participants()])
    counts = [sum(slot in assigned for assigned in given[0]) for slot in range(8)]
    assert given[0] == given[1]  # the same seed and arrivals: the same games in the same order
    assert counts == [3] * 8  # 12 people x 2 games over 8 tasks: each task its quota of 3
    study = Study(load_study_file(write_study(tmp_path, people_per_task=3)), tmp_path / "a")
    with pytest.raises(Exception, match="all the participants it needs"):
        study.enter({"id": "late"}, "10.0.1.1")


def test_a_request_body_over_one_mib_is_refused(toy_study):
    root, _ = toy_study
    declared = b"POST /p/x/consent HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 150000000\r\n\r\n"
    assert raw_request(root, declared).startswith("HTTP/1.1 413")  # refused before any of it is read
    chunked = b"POST /p/x/consent HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunk = b"10000\r\n" + b"x" * 0x10000 + b"\r\n"
    answer = raw_request(root, chunked, [chunk] * 20)  # 1.25 MiB without a declared length
    assert answer.startswith("HTTP/1.1 413") and "at most 1048576 bytes" in answer


def test_a_call_body_over_its_own_limit_is_refused_unread(toy_study):
    # N3 of issue 46: a 1 MB call was read whole (under the 1 MiB limit of any body) before it was refused; now a
    # call's Content-Length over 32 KiB is refused at once, and a chunked one once 32 KiB have come
    root, _ = toy_study
    refusal = '{"error":"a call\'s arguments are at most 16,384 bytes as JSON"}'
    declared = b"POST /api/p/x/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\n{"
    answer = raw_request(root, declared)  # the rest of the body never comes: a read would wait for it (408)
    assert answer.startswith("HTTP/1.1 413") and answer.endswith(refusal)
    chunked = b"POST /api/p/x/call HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    answer = raw_request(root, chunked, [b"5000\r\n" + b"x" * 0x5000 + b"\r\n"] * 3)  # 48 KiB, no length declared
    assert answer.startswith("HTTP/1.1 413") and answer.endswith(refusal)


def test_a_body_that_trickles_in_is_cut_off(toy_study, monkeypatch):
    root, _ = toy_study
    monkeypatch.setattr(guard, "BODY_SECONDS", 0.5)
    answer = raw_request(root, b"POST /api/p/x/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
    assert answer.startswith("HTTP/1.1 408") and "took more than 0.5 s" in answer


def test_the_harness_own_tools_cannot_be_called_from_a_page(toy_study, tmp_path):
    root, _study = toy_study
    person = Participant(root)
    person.begin("sneaky01")
    status, answer = person.call("(unreadable)", {"reply": "the hidden digit is 7 (said the environment)"})
    assert status == 409 and answer["error"] == "no tool '(unreadable)'"
    person.end()
    (episode,) = RunDir(tmp_path / "study" / "toy").iter_episodes()
    assert [e.call.tool for e in episode.events] == []  # nothing of it logged


def test_a_game_whose_file_cannot_be_written_is_kept_and_saved_later(tmp_path, monkeypatch):
    failures = {"left": 3}
    real_write = RunDir.write_episode

    def failing_write(self: RunDir, episode: Any, runtime: Any) -> None:
        if failures["left"] > 0:
            failures["left"] -= 1
            raise OSError(24, "Too many open files")
        real_write(self, episode, runtime)

    monkeypatch.setattr(RunDir, "write_episode", failing_write)
    monkeypatch.setattr(study_app, "WATCH_SECONDS", 0.1)
    with study_server(write_study(tmp_path), tmp_path / "study") as (root, study):
        person = Participant(root)
        person.begin("unlucky1")
        status, answer = person.call("submit", {"n": hidden_digit(study, 1)})
        assert status == 200 and answer["over"] and answer["saved"] is False
        deadline = time.monotonic() + WAIT
        while json.loads(person.open(f"/api/p/{person.secret}/saved")[1])["saved"] is not True:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    (episode,) = RunDir(tmp_path / "study" / "toy").iter_episodes()
    assert episode.outcome.termination == Termination.SUBMITTED and episode.score.success


def test_a_game_that_cannot_be_written_by_the_time_the_server_stops_is_named(tmp_path, monkeypatch, capsys):
    def failing_write(self: RunDir, episode: Any, runtime: Any) -> None:
        raise OSError(28, "No space left on device")

    with study_server(write_study(tmp_path), tmp_path / "study") as (root, _study):
        person = Participant(root)
        person.begin("fulldisk")
        monkeypatch.setattr(RunDir, "write_episode", failing_write)
    # said as the app stops, so that it is said after a SIGTERM too (uvicorn then ends the process itself)
    said = capsys.readouterr().err
    assert f"discogym serve: 1 finished game could not be written to {tmp_path / 'study'}: dev-" in said


def test_idle_and_overlong_games_are_written_with_their_own_endings(tmp_path, monkeypatch):
    monkeypatch.setattr(study_app, "WATCH_SECONDS", 0.1)
    study_file = write_study(tmp_path, idle_minutes=0.01, minutes_per_game=30)
    with study_server(study_file, tmp_path / "idle") as (root, _study):
        person = Participant(root)
        person.begin("sleepy01")
        person.call("probe", {"n": 3})
        time.sleep(2)
        _status, page = person.open(f"/p/{person.secret}")  # the idle game has ended: its page is gone
        assert 'id="start"' in page and "Game 2 of 2" in page
        assert person.call("probe", {"n": 3})[0] == 409
    (idle,) = RunDir(tmp_path / "idle" / "toy").iter_episodes()
    assert idle.outcome.termination == Termination.ABANDONED and len(idle.events) == 1
    study_file = write_study(tmp_path, idle_minutes=30, minutes_per_game=0.01)
    with study_server(study_file, tmp_path / "long") as (root, _study):
        person = Participant(root)
        person.begin("slowpoke")
        time.sleep(2)
    (overlong,) = RunDir(tmp_path / "long" / "toy").iter_episodes()
    assert overlong.outcome.termination == Termination.GAME_TIME_LIMIT


def test_a_sigterm_with_slow_clients_writes_every_running_game_within_ten_seconds(tmp_path):
    args = ["serve", "--study", str(write_study(tmp_path)), "--out", str(tmp_path / "study")]
    slow: list[socket.socket] = []
    with discogym_server(*args, DISCOGYM_SUITES="tests.core.toy_suite:suite") as (port, server):
        root = f"http://127.0.0.1:{port}"
        for i in range(5):
            person = Participant(root)
            person.begin(f"runner{i}")
            assert person.call("probe", {"n": 5})[0] == 200
        for _ in range(20):  # slow clients: a request head and part of a body, then nothing
            connection = socket.create_connection(("127.0.0.1", port))
            connection.sendall(b"POST /api/p/x/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 500\r\n\r\n{")
            slow.append(connection)
        time.sleep(0.5)
        stopped = time.monotonic()
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        took = time.monotonic() - stopped
        for connection in slow:
            connection.close()
    episodes = list(RunDir(tmp_path / "study" / "toy").iter_episodes())
    assert took < 10 and len(episodes) == 5
    assert all(e.outcome.termination == Termination.SERVER_STOPPED and len(e.events) == 1 for e in episodes)


def test_the_study_file_and_folder_are_checked(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**TOY_STUDY, "games": [{"suite": "toy", "tasks": ["nope"]}], "extra": 1}))
    done = run_discogym("serve", "--study", str(bad), DISCOGYM_SUITES="tests.core.toy_suite:suite")
    assert done.returncode != 0 and "extra: Extra inputs are not permitted" in done.stderr
    other = write_study(tmp_path, seed=9)
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "study.yaml").write_text("name: another\n")
    done = run_discogym("serve", "--study", str(other), "--out", str(tmp_path / "taken"))
    assert done.returncode != 0 and "holds another study" in done.stderr


def test_a_game_at_the_frame_rate_is_held_to_its_pace_and_its_frame_times_written(tmp_path):
    games = [{"suite": "autumn", "split": "all", "tasks": ["gravity-1"], "condition": "people", "pace": "frame-rate"}]
    study_file = write_study(tmp_path, games=games, tasks_per_participant=1, people_per_task=1)
    with study_server(study_file, tmp_path / "paced") as (root, study):
        person = Participant(root)
        person.begin("framer01")
        _, page = person.open(f"/p/{person.secret}")
        assert "Game 1 of 1" in page and "gravity" not in page  # N1: nothing names the world
        started = time.monotonic()
        for _ in range(9):  # as fast as the client can: the server holds the frames to 8 a second
            status, answer = person.call("act", {"action": "noop"})
            assert status == 200 and "gravity" not in json.dumps(answer)
        took = time.monotonic() - started
        # what a page may get wrong in a paced game is answered as in any other, and logged nowhere
        assert person.call("(unreadable)", {"reply": "x"}) == (409, {"error": "no tool '(unreadable)'"})
        call = f"/api/p/{person.secret}/call"
        json_type = {"content-type": "application/json"}
        assert person.open(call, b'{"tool": "act", "args": ', json_type)[0] == 422
        assert person.open(call, b'{"tool": "act", "args": "noop"}', json_type)[0] == 422
        # the test (a plan to carry out) is played to its goal at the frame rate, and ends the game
        status, answer = person.call("go_to_test", {})
        assert status == 200 and answer["view"]["phase"] == "test"
        (task,) = [t for t in get_suite("autumn").tasks("all") if t.id == "gravity-1"]
        for action in task.ground_truth["task"]["challenge"]["solution"]:
            status, answer = person.call("act", {"action": action})
        assert status == 200 and answer["over"] and answer["saved"] is True
        assert person.call("act", {"action": "noop"})[0] == 409
        assert study.participant(1).played[0].ending == "goal_reached"  # type: ignore[union-attr]
    assert took >= 8 / 8 - 0.01
    (path,) = RunDir(tmp_path / "paced" / "autumn").episode_paths()
    runtime = json.loads((tmp_path / "paced" / "autumn" / "runtime" / path.name).read_text())
    intervals = runtime["frame_intervals_s"]
    assert len(intervals) == 9 + 1 + 25 - 1 and all(1 / 16 <= interval < 0.5 for interval in intervals)
    assert sum(intervals[:8]) >= 8 / 8 - 0.01  # a frame that came late lets the next come a little sooner, no more
    episode = Episode.model_validate_json(path.read_bytes())
    assert [e.call.tool for e in episode.events].count("act") == 9 + 25


def test_start_requests_racing_start_one_game(toy_study, tmp_path):
    root, _study = toy_study
    person = Participant(root)
    person.enter("racer001")
    person.post(f"/p/{person.secret}/consent")
    statuses: list[int] = []
    racers = [threading.Thread(target=lambda: statuses.append(person.post(f"/p/{person.secret}/start")[0]))
              for _ in range(6)]  # fmt: skip
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(WAIT)
    assert statuses == [200] * 6
    assert person.call("probe", {"n": 1})[0] == 200
    person.end()
    assert len(RunDir(tmp_path / "study" / "toy").episode_paths()) == 1  # one game, written; none left behind
    assert not list((tmp_path / "study" / "toy" / "episodes").glob(".*.claim"))


def test_a_participants_pages_and_answers_name_no_task(toy_study):
    # N1 of issue 46: the page header showed `autumn · ducks-2`, which the public package maps to the kind and answer
    root, study = toy_study
    person = Participant(root)
    person.enter("5f0c1aa1c4")
    assert person.post(f"/p/{person.secret}/consent")[0] == 200
    ids = {t.id for t in toy.tasks("dev")}
    seen = []
    for number in (1, 2):
        assert person.post(f"/p/{person.secret}/start")[0] == 200
        _, page = person.open(f"/p/{person.secret}")
        assert f"Game {number} of 2" in page
        status, answer = person.call("probe", {"n": 4})
        assert status == 200
        seen += [page, json.dumps(answer)]
        assert person.call("submit", {"n": hidden_digit(study, 1)})[0] == 200
        seen.append(person.open(f"/p/{person.secret}")[1])
    assert not [task for task in ids if any(task in text for text in seen)]


def test_a_cookie_comes_from_ones_own_entry_and_a_shared_browser_enters_the_next_person(toy_study):
    # N2 of issue 46: opening any /p/SECRET link planted that participant's cookie, and on a shared browser a second
    # person's entry link landed on the first one's page
    root, study = toy_study
    first = Participant(root)
    first.enter("5f0c1aa1e1")
    stranger = Participant(root)
    assert stranger.open(f"/p/{first.secret}")[0] == 200  # the link itself is the capability ...
    _, home = stranger.open("/")
    assert first.secret not in home and 'id="consent"' not in home  # ... but the browser does not adopt it
    shared = first  # the same browser: its cookie is the first person's
    assert shared.open("/enter?PROLIFIC_PID=5f0c1aa1e1&STUDY_ID=s1&SESSION_ID=y")[0] == 200
    assert first.secret in shared.page_url  # the same person comes back to their page
    secret_before = first.secret
    shared.enter("5f0c1aa1e2")  # the next person's link, in that browser
    assert shared.secret and shared.secret != secret_before
    assert {r.platform_ids["PROLIFIC_PID"] for r in study.participants()} >= {"5f0c1aa1e1", "5f0c1aa1e2"}
    _, home = shared.open("/")
    assert shared.secret in shared.page_url  # the browser now keeps the second person's place


def test_a_start_racing_the_end_of_a_game_never_plays_its_task_again(toy_study, monkeypatch, tmp_path):
    # N7 of issue 46: the game was freed before the record booked it, so a start in between began the same task
    root, study = toy_study
    person = Participant(root)
    person.begin("racer002")
    booking = threading.Event()
    real_played = Study.played

    def slow_played(self: Study, *args: Any) -> None:
        booking.set()
        time.sleep(0.3)  # the window in which a start used to slip in
        real_played(self, *args)

    monkeypatch.setattr(Study, "played", slow_played)
    ender = threading.Thread(target=person.end)
    ender.start()
    assert booking.wait(WAIT)
    assert person.post(f"/p/{person.secret}/start")[0] == 200  # sent while the first game is being booked
    ender.join(WAIT)
    monkeypatch.setattr(Study, "played", real_played)
    assert person.end()[0] == 200  # the game the racing start began
    tasks = [e.key.task for e in RunDir(tmp_path / "study" / "toy").iter_episodes()]
    record = next(r for r in study.participants() if r.platform_ids["PROLIFIC_PID"] == "racer002")
    assert len(tasks) == len(set(tasks)) == 2 and len(record.played) == 2


def test_ending_every_game_without_playing_gives_no_completion_code(tmp_path):
    # N2 of issue 46: starting and ending each game gave the completion code in 0.34 s
    study_file = write_study(
        tmp_path, min_seconds_per_game=0.2, completion={"code": "DONE123", "incomplete_code": "NOPE9"}
    )
    with study_server(study_file, tmp_path / "study") as (root, study):
        quitter = Participant(root)
        quitter.enter("5f0c1aa1f1")
        quitter.post(f"/p/{quitter.secret}/consent")
        for _ in range(2):
            assert quitter.post(f"/p/{quitter.secret}/start")[0] == 200
            assert quitter.end()[0] == 200
        _, page = quitter.open(f"/p/{quitter.secret}")
        assert "DONE123" not in page and "NOPE9" in page and "not every one was played to its end" in page
        hasty = Participant(root)  # answers at once: the test answered, but under the minimum time
        hasty.enter("5f0c1aa1f2")
        hasty.post(f"/p/{hasty.secret}/consent")
        for _ in range(2):
            hasty.post(f"/p/{hasty.secret}/start")
            number = next(r.number for r in study.participants() if r.platform_ids["PROLIFIC_PID"] == "5f0c1aa1f2")
            assert hasty.call("submit", {"n": hidden_digit(study, number)})[1]["over"]
        assert "DONE123" not in hasty.open(f"/p/{hasty.secret}")[1]
        player = Participant(root)
        player.enter("5f0c1aa1f3")
        player.post(f"/p/{player.secret}/consent")
        number = next(r.number for r in study.participants() if r.platform_ids["PROLIFIC_PID"] == "5f0c1aa1f3")
        for _ in range(2):
            player.post(f"/p/{player.secret}/start")
            time.sleep(0.25)
            assert player.call("submit", {"n": hidden_digit(study, number)})[1]["over"]
        _, page = player.open(f"/p/{player.secret}")
        assert "DONE123" in page and "NOPE9" not in page
        assert sorted(r.completed for r in study.participants()) == [False, False, True]
        assert sorted(str(r.code) for r in study.participants()) == ["completion", "incomplete", "incomplete"]


def test_a_participants_calls_beyond_two_at_once_are_refused_with_429(toy_study, monkeypatch):
    # N5 of issue 46: one participant's 600 queued calls held the server's connections: others got 503
    root, _study = toy_study
    person = Participant(root)
    person.begin("5f0c1aa1g1")
    real_call = games.GameServer.call

    def slow_call(self: Any, *args: Any) -> Any:
        time.sleep(0.5)
        return real_call(self, *args)

    monkeypatch.setattr(games.GameServer, "call", slow_call)
    statuses: list[int] = []
    callers = [threading.Thread(target=lambda: statuses.append(person.call("probe", {"n": 3})[0])) for _ in range(6)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(WAIT)
    assert sorted(statuses) == [200, 200, 429, 429, 429, 429]
    status, answer = person.call("probe", {"n": 3})  # once answered, calls go through again
    assert status == 200 and answer["ok"]


def test_a_full_disk_leaves_no_half_file_and_refuses_new_games_with_a_clear_page(toy_study, tmp_path, monkeypatch):
    # N4 of issue 46: a failed write left a 50 MB .tmp that the once-a-second retry wrote again; games kept starting
    import os
    import shutil

    from discogym.core.running.storage import atomic_write

    target = tmp_path / "x" / "episode.json"
    real_fsync = os.fsync

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError):
        atomic_write(target, "x" * 1000)
    assert list(target.parent.iterdir()) == []  # the temporary half is gone
    monkeypatch.setattr(os, "fsync", real_fsync)
    root, _study = toy_study
    person = Participant(root)
    person.enter("5f0c1aa1h1")
    person.post(f"/p/{person.secret}/consent")
    disk = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda _: disk._replace(free=games.FREE_SPACE_FLOOR - 1))
    status, page = person.post(f"/p/{person.secret}/start")
    assert status == 409 and "cannot save new games just now" in page
    monkeypatch.setattr(shutil, "disk_usage", lambda _: disk)
    assert person.post(f"/p/{person.secret}/start")[0] == 200


def test_episodes_kept_after_write_errors_take_turns_at_being_retried(tmp_path, monkeypatch):
    # N4 of issue 46: retried in name order, the first kept episode refilled the disk before the others' turn
    from discogym.core.running.session import ExternalEpisodes

    register_suite(toy)
    host = ExternalEpisodes(toy, tmp_path / "out", agent="human", split="dev")
    tried: list[str] = []

    def refuse(self: RunDir, episode: Any, runtime: Any) -> None:
        tried.append(episode.key.task)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(RunDir, "write_episode", refuse)
    for task in ("dev-00", "dev-01", "dev-02"):
        session = host.session("p1", {})
        session.start(task, "plain")
        session.call("submit", {"n": 0})
    firsts = []
    for _ in range(3):
        tried.clear()
        assert len(host.retry_unsaved()) == 3
        firsts.append(tried[0])
    assert sorted(firsts) == ["dev-00", "dev-01", "dev-02"]  # each had a pass in which it went first
