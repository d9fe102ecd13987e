"""Sessions of externally driven episodes (core.session), without any protocol; and the next-free-repeat
rule they share with ``discogym play``."""

from pathlib import Path

import pytest

from discogym.core import AgentOptions, Episode, get_suite
from discogym.core.running.planning import plan_episode, plan_next_free
from discogym.core.running.session import STARTED_ANOTHER, ClientMistake, ExternalEpisodes, Session
from discogym.core.running.storage import RunDir
from tests.core.closing_suite import EVENTS, opened_and_closed, suite


@pytest.fixture(autouse=True)
def fresh_events():
    EVENTS.clear()
    yield
    EVENTS.clear()


def host(out: Path) -> ExternalEpisodes:
    return ExternalEpisodes(suite, out, agent="outside", split="tiny")


def episodes(out: Path) -> list[Episode]:
    return list(RunDir(out).iter_episodes())


def bisect(session: Session) -> str:
    """Play the digit game to the end; return the last result's text."""
    low, high = 0, 9
    while low < high:
        guess = (low + high) // 2
        relation = session.call("probe", {"n": guess}).text
        if "equal to" in relation:
            low = high = guess
        elif "higher than" in relation:
            low = guess + 1
        else:
            high = guess - 1
    return session.call("submit", {"n": low}).text


def assert_all_closed_once() -> None:
    opened, closed = opened_and_closed()
    assert opened and sorted(closed) == sorted(opened)


def test_a_session_plays_an_episode_to_the_end_and_it_is_written_like_a_run_s(tmp_path):
    session = host(tmp_path).session("alice")
    started = session.start("tiny-01")
    assert (started.task, started.condition, started.repeat) == ("tiny-01", "plain", 0)
    assert started.tools == ["probe", "roll", "submit", "outage"] and session.playing
    assert bisect(session).endswith("(The episode is over and has been recorded.)")
    assert not session.playing
    (episode,) = episodes(tmp_path)
    assert (episode.key.agent, episode.key.agent_options) == ("outside", {"client": "alice"})
    assert episode.score.value == 1.0 and episode.provenance.suite_version == suite.version
    same_world = plan_episode("closing", suite.tasks("tiny")[1], suite.condition("plain"), AgentOptions(name="x"), 0, 0)
    assert episode.provenance.env_seed == same_world.env_seed
    assert_all_closed_once()


def test_mistakes_are_client_mistakes_and_leave_nothing_running(tmp_path):
    session = host(tmp_path).session()
    with pytest.raises(ClientMistake, match="no task is running"):
        session.call("probe", {"n": 1})
    with pytest.raises(ClientMistake, match="split 'tiny' has no task 'nope'; tasks: tiny-00, tiny-01"):
        session.start("nope")
    with pytest.raises(ClientMistake, match="no condition 'loud'"):
        session.start("tiny-00", "loud")
    with pytest.raises(ClientMistake, match="no task is running"):
        session.end("bye")
    assert not session.playing and episodes(tmp_path) == []


def test_starting_another_task_writes_the_first_and_a_replay_gets_the_next_repeat(tmp_path):
    shared = host(tmp_path)
    session = shared.session("bob")
    session.start("tiny-00")
    session.call("probe", {"n": 4})
    second = session.start("tiny-00")
    assert second.repeat == 1
    other = shared.session("bob").start("tiny-00")  # the same client in a second session: its own repeat
    assert other.repeat == 2
    written = session.end("done")
    assert written.startswith("tiny-00_plain_outside")
    played = {e.key.repeat: e for e in episodes(tmp_path)}
    assert sorted(played) == [0, 1]
    assert played[0].outcome.agent_message == STARTED_ANOTHER and len(played[0].events) == 1
    assert played[1].outcome.termination == "agent_stopped" and played[1].outcome.agent_message == "done"


def test_abandoning_writes_nothing_closes_the_environment_and_frees_the_repeat(tmp_path):
    shared = host(tmp_path)
    session = shared.session()
    session.start("tiny-00")
    session.call("probe", {"n": 4})
    session.abandon()
    assert not session.playing and episodes(tmp_path) == []
    assert_all_closed_once()
    assert shared.session().start("tiny-00").repeat == 0


def test_environment_errors_are_recorded_and_faults_abandon_the_episode(tmp_path):
    session = host(tmp_path).session()
    with pytest.raises(ClientMistake, match="the environment failed to start"):
        session.start("tiny-00", "bad-brief")
    session.start("tiny-00", "buggy")
    with pytest.raises(ClientMistake, match=r"environment failed .*explode tool is broken.*was recorded"):
        session.call("explode", {})
    session.start("tiny-01")
    with pytest.raises(ClientMistake, match=r"infrastructure fault .*service is down.*abandoned"):
        session.call("outage", {})
    assert not session.playing
    terminations = sorted((e.key.condition, e.outcome.termination) for e in episodes(tmp_path))
    assert terminations == [("bad-brief", "env_error"), ("buggy", "env_error")]
    assert_all_closed_once()


def test_the_next_free_repeat_skips_every_taken_key(tmp_path):
    task, condition, agent = suite.tasks("tiny")[0], suite.condition("plain"), AgentOptions(name="human")
    taken = {plan_episode("closing", task, condition, agent, repeat, 7).key for repeat in (0, 1, 3)}
    planned = plan_next_free("closing", task, condition, agent, 7, taken.__contains__)
    assert planned == plan_episode("closing", task, condition, agent, 2, 7)


def test_views_are_kept_only_for_interfaces_that_draw_them(tmp_path):
    autumn = ExternalEpisodes(get_suite("autumn"), tmp_path, agent="human")
    plain, drawn = autumn.session("a"), autumn.session("b")
    drawn.keep_views = True
    for session in (plain, drawn):
        session.start("ball-1")
        session.call("act", {"action": "noop"})
    assert plain.last_view is None
    assert drawn.last_view is not None and drawn.last_view["frame_number"] == 1
