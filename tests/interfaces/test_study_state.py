"""The study's state against the attacks of issue 46 that went for it: a huge log (N3), quota takeover (N6), two
servers on one folder (N8), a killed server (N9) and a deleted or damaged record (N10). Each test is a small client
of its own, as the attacker's were."""

import json
import signal
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from discogym.core import Termination, UserError, register_suite
from discogym.core.running.storage import RunDir
from discogym.interfaces.web import games
from discogym.interfaces.web.study import DATABASE, Study, load_study_file, prepare_study_folder
from discogym.interfaces.web.study_app import create_study_app
from tests.conftest import discogym_server, run_discogym
from tests.core.toy_suite import suite as toy
from tests.interfaces.conftest import raw_request, serving_app
from tests.interfaces.test_study import Participant, hidden_digit, study_server, write_study

TOY_SUITE = {"DISCOGYM_SUITES": "tests.core.toy_suite:suite"}


class Clock:
    """A clock the test moves by hand (seconds since the epoch, as ``time.time``)."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def open_study(tmp_path: Path, clock: Clock | None = None, **changes: object) -> Study:
    register_suite(toy)
    study_file = write_study(tmp_path, **changes)
    prepare_study_folder(study_file, tmp_path / "study")
    return Study(load_study_file(study_file), tmp_path / "study", clock=clock or time.time)


def history_of(page: str) -> list[dict[str, object]]:
    """The steps a play page embeds."""
    return json.loads(page.split('id="history-data" type="application/json">')[1].split("</script>")[0])  # type: ignore[no-any-return]


def reopen(tmp_path: Path) -> Study:
    """The study of ``tmp_path/study.yaml`` as a restarted server opens it."""
    return Study(load_study_file(tmp_path / "study.yaml"), tmp_path / "study")


def test_a_one_mib_action_is_refused_and_a_game_and_its_page_stay_bounded(tmp_path, monkeypatch):
    # N3: a 1 MB action string was stored twice (2.9 MiB a call), and reloading one's 114 MiB page starved others
    monkeypatch.setattr(games, "PAGE_STEPS", 3)
    monkeypatch.setattr(games, "MAX_GAME_ARGS_BYTES", 200)
    with study_server(write_study(tmp_path), tmp_path / "study") as (root, _study):
        person = Participant(root)
        person.begin("hoarder1")
        # declared, not sent: the server refuses it by its length and closes (a client still sending the 1 MB
        # could meet the closed connection before it reads the answer)
        declared = f"POST /api/p/{person.secret}/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000040\r\n\r\n"
        answer_text = raw_request(root, declared.encode())
        assert answer_text.startswith("HTTP/1.1 413") and "at most 16,384 bytes" in answer_text
        status, answer = person.call("probe", {"n": "x" * 17_000})
        assert status == 422 and "at most 16,384 bytes as JSON, not 17,008" in answer["error"]
        for n in range(6):
            assert person.call("probe", {"n": n})[0] == 200
        _, page = person.open(f"/p/{person.secret}")
        assert [step["step"] for step in history_of(page)] == [4, 5, 6]  # the last steps only
        monkeypatch.setattr(games, "PAGE_LOG_BYTES", 1)
        _, page = person.open(f"/p/{person.secret}")
        assert [step["step"] for step in history_of(page)] == [6]  # the last step, whatever its size
        status, answer = person.call("probe", {"n": "y" * 160})  # past the game's budget of argument bytes
        assert status == 409 and "carried 200 bytes already" in answer["error"]
        person.end()
    (episode,) = RunDir(tmp_path / "study" / "toy").iter_episodes()
    assert len(episode.events) == 6  # nothing refused was logged


def test_games_held_but_never_started_go_back_to_the_study(tmp_path):
    # N6: assignments made at consent were never freed: 144 addresses of one /64 filled the study in 56 s
    clock = Clock()
    study = open_study(tmp_path, clock, people_per_task=1, hold_minutes=10)  # 8 tasks, 2 each: 4 people fill it
    hoarders = []
    for i in range(4):
        record, _ = study.enter({"id": f"hoarder{i}"}, f"10.0.0.{i}")
        study.consent(record)
        hoarders.append(record.number)
    study.begin(hoarders[0], "g-started")  # one of them starts a game: it stays theirs
    with pytest.raises(UserError, match="all the participants it needs"):
        study.enter({"id": "late1"}, "10.0.1.1")
    clock.now += 10 * 60 + 1
    assert sum(study.given()) == 1  # only the game started is still given
    expired = study.participant(hoarders[1])
    assert expired is not None and expired.expired and expired.finished and not expired.completed
    with pytest.raises(UserError, match="time for your games ran out"):
        study.begin(hoarders[1], "g-late")
    newcomer, _ = study.enter({"id": "late2"}, "10.0.1.2")
    study.consent(newcomer)
    assert len(study.participant(newcomer.number).assigned) == 2  # type: ignore[union-attr]
    assert study.completion(expired) == "incomplete"


def test_an_expired_participant_is_told_and_gets_no_completion_code(tmp_path):
    clock = Clock()
    study = open_study(tmp_path, clock, hold_minutes=1, completion={"code": "DONE123", "incomplete_code": "NOPE9"})
    with serving_app(create_study_app(study)) as root:
        person = Participant(root)
        person.enter("latecomer")
        person.post(f"/p/{person.secret}/consent")
        clock.now += 61
        status, page = person.open(f"/p/{person.secret}")
        assert status == 200 and "The time for your games ran out" in page
        assert "NOPE9" in page and "DONE123" not in page
        status, page = person.post(f"/p/{person.secret}/start")
        assert status == 409 and "the time for your games ran out" in page


def test_a_second_server_on_one_study_folder_is_refused(tmp_path):
    # N8: two servers on one folder both gave out p00001; one record was overwritten, its link dead after a restart
    study_file = write_study(tmp_path)
    args = ["serve", "--study", str(study_file), "--out", str(tmp_path / "study")]
    with discogym_server(*args, **TOY_SUITE) as (port, _server):
        first = Participant(f"http://127.0.0.1:{port}")
        assert first.enter("first001")[0] == 200
        second = run_discogym(*args, "--port", "1", **TOY_SUITE)
        assert second.returncode != 0 and "another discogym server is serving the study" in second.stderr
    with discogym_server(*args, **TOY_SUITE) as (port, _server):  # once the first stopped, a restart serves it
        root = f"http://127.0.0.1:{port}"
        assert 'id="consent"' in Participant(root).open(f"/p/{first.secret}")[1]
        assert Participant(root).enter("second01")[0] == 200


def test_two_processes_sharing_the_database_never_share_a_number(tmp_path):
    # the database stays right without the server's lock too (a lock a network file system does not keep)
    writers = [open_study(tmp_path, people_per_task=100), open_study(tmp_path, people_per_task=100)]
    secrets: dict[str, str] = {}
    lock = threading.Lock()

    def arrive(writer: Study, first: int) -> None:
        for i in range(first, first + 20):
            record, secret = writer.enter({"id": f"person{i:03d}"}, f"10.1.{i}.1")
            writer.consent(record)
            with lock:
                secrets[record.platform_ids["id"]] = secret

    threads = [threading.Thread(target=arrive, args=(writers[i % 2], 20 * i)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    restarted = open_study(tmp_path, people_per_task=100)
    records = restarted.participants()
    assert sorted(r.number for r in records) == list(range(1, 81))
    for pid, secret in secrets.items():  # each link opens its own record, and no other
        record = restarted.by_secret(secret)
        assert record is not None and record.platform_ids == {"id": pid}


def test_a_killed_server_restores_its_games_and_counts_their_attempts(tmp_path):
    # N9: after SIGKILL the running games were not written, and the retry counted as a first attempt
    study_file = write_study(tmp_path, idle_minutes=0.03)
    args = ["serve", "--study", str(study_file), "--out", str(tmp_path / "study")]
    with discogym_server(*args, **TOY_SUITE) as (port, server):
        root = f"http://127.0.0.1:{port}"
        comes_back, leaves = Participant(root), Participant(root)
        for person, pid in ((comes_back, "phoenix1"), (leaves, "gone0001")):
            person.begin(pid)
            for n in (1, 2, 3):
                assert person.call("probe", {"n": n})[0] == 200
        time.sleep(1.5)  # the journals are written out every second: a kill loses at most the last second's calls
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=30)
    assert not RunDir(tmp_path / "study" / "toy").episode_paths()  # nothing written: it was killed
    study = reopen(tmp_path)
    assert len(study.running()) == 2  # both attempts stand
    study.close()
    with discogym_server(*args, **TOY_SUITE) as (port, server):
        root = f"http://127.0.0.1:{port}"
        comes_back.root = root
        _, page = comes_back.open(f"/p/{comes_back.secret}")
        assert "Game 1 of 2" in page and page.count("the hidden digit is") >= 3  # the game as it was
        digit = hidden_digit(reopen(tmp_path), 1)
        status, answer = comes_back.call("submit", {"n": digit})
        assert status == 200 and answer["over"] and answer["saved"]
        time.sleep(3)  # the other one's game, restored, waits for its participant, then is written as abandoned
    episodes = {e.key.agent_options["client"]: e for e in RunDir(tmp_path / "study" / "toy").iter_episodes()}
    assert [e.call.tool for e in episodes["p00001"].events] == ["probe"] * 3 + ["submit"]
    assert episodes["p00001"].outcome.termination == Termination.SUBMITTED and episodes["p00001"].score.success
    assert episodes["p00002"].outcome.termination == Termination.ABANDONED and len(episodes["p00002"].events) == 3
    study = reopen(tmp_path)
    assert [len(r.attempts) for r in study.participants()] == [1, 1] and not study.running()
    assert not list((tmp_path / "study" / "journal").iterdir())  # journals go once their episodes are written


def test_a_deleted_or_damaged_record_never_gives_two_people_one_record(tmp_path):
    # N10: with one record file deleted, every newcomer got the same number, and X's secret opened Y's record
    study = open_study(tmp_path)
    entered = [study.enter({"id": f"person{i}"}, f"10.2.0.{i}") for i in range(3)]
    with sqlite3.connect(tmp_path / "study" / DATABASE) as db:
        db.execute("DELETE FROM participants WHERE number = 2")
    newcomers = [study.enter({"id": f"newcomer{i}"}, f"10.2.1.{i}")[0].number for i in range(2)]
    assert newcomers == [4, 5]  # numbers are never given again
    assert study.by_secret(entered[1][1]) is None
    third = study.by_secret(entered[2][1])
    assert third is not None and third.platform_ids == {"id": "person2"}
    study.close()
    (tmp_path / "study" / DATABASE).write_bytes(b"not a database, but something else" * 200)
    for suffix in ("-wal", "-shm"):
        (tmp_path / "study" / (DATABASE + suffix)).unlink(missing_ok=True)
    with pytest.raises(UserError, match="cannot be used"):
        open_study(tmp_path)


def test_a_database_that_cannot_be_written_answers_503_with_a_clear_page_and_loses_nothing(tmp_path):
    # N4: on a full disk `enter`, `consent` and `end` answered 500 (here SQLite refuses every write, as it does on a
    # full disk: each change is then undone whole)
    study = open_study(tmp_path)
    with serving_app(create_study_app(study)) as root:
        first = Participant(root)
        first.enter("before01")
        study._db.execute("PRAGMA query_only = 1")
        status, page = Participant(root).enter("during01")
        assert status == 503 and "cannot save just now" in page
        status, page = first.post(f"/p/{first.secret}/consent")
        assert status == 503 and "cannot save just now" in page
        study._db.execute("PRAGMA query_only = 0")
        assert first.post(f"/p/{first.secret}/consent")[0] == 200
        assert Participant(root).enter("after001")[0] == 200
    assert [r.platform_ids["PROLIFIC_PID"] for r in reopen(tmp_path).participants()] == ["before01", "after001"]


def test_a_participant_reloading_their_page_in_a_loop_is_slowed(tmp_path, monkeypatch):
    # N3: reloading one's own play page as fast as the server answered took the server's time from every player
    monkeypatch.setattr(games, "PAGE_BURST", 5)  # entering, consenting and starting load it 3 times
    monkeypatch.setattr(games, "PAGES_PER_SECOND", 4.0)
    with study_server(write_study(tmp_path), tmp_path / "study") as (root, _study):
        person, other = Participant(root), Participant(root)
        person.begin("reloader")
        other.begin("bystander")
        statuses = [person.open(f"/p/{person.secret}")[0] for _ in range(4)]
        assert statuses[:2] == [200, 200] and statuses[-1] == 429
        assert "loaded too often" in person.open(f"/p/{person.secret}")[1]
        assert other.open(f"/p/{other.secret}")[0] == 200  # one participant's loop slows nobody else's pages
        time.sleep(0.3)
        assert person.open(f"/p/{person.secret}")[0] == 200  # and a moment later, their own page is back
        assert person.call("probe", {"n": 1})[0] == 200  # their calls were never limited by it


def test_a_game_whose_last_journaled_call_ended_it_is_booked_on_restart(tmp_path):
    # killed between a game's last call and its booking: the restart plays the journal, the game ends, and is booked
    study = open_study(tmp_path)
    record, _secret = study.enter({"id": "lastcall"}, "10.3.0.1")
    study.consent(record)
    slot = study.slots[study.begin(record.number, "g-last")]
    digit = next(int(t.ground_truth["digit"]) for t in toy.tasks(slot.split) if t.id == slot.task)
    journal = tmp_path / "study" / "journal" / "g-last.jsonl"
    journal.parent.mkdir(parents=True)
    calls = [{"tool": "probe", "args": {"n": 4}}, {"tool": "submit", "args": {"n": digit}}]
    journal.write_text("".join(json.dumps(line) + "\n" for line in [{"game_id": "g-last"}, *calls]))
    with serving_app(create_study_app(study)) as root:
        assert Participant(root).open("/")[0] == 200  # the server started: restoring it did not hang
    (attempt,) = reopen(tmp_path).participant(record.number).attempts  # type: ignore[union-attr]
    assert attempt.ending == "submitted" and attempt.completed and not journal.exists()
    (episode,) = RunDir(tmp_path / "study" / "toy").iter_episodes()
    assert [e.call.tool for e in episode.events] == ["probe", "submit"] and episode.score.success
