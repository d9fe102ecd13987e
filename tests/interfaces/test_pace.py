"""The server's pace of a game at a frame rate (pace.FramePace), on a clock of the test's own: a page faster than the
frame rate is held to it, a page on its own clock is not held because some frames came late, and no stretch of
time ever holds more than two frames over the rate."""

import itertools
import random

import pytest

from discogym.interfaces.web import pace
from discogym.interfaces.web.pace import FramePace

PERIOD = 0.125  # 8 frames a second


class Clock:
    """time.monotonic, and a sleep that moves the clock on."""

    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(pace, "time", fake)
    return fake


def run_frames(clock: Clock, arrivals: list[float]) -> list[float]:
    """The times a game at 8 frames a second runs frames that arrive at ``arrivals`` (seconds, one at a time)."""
    clock.now = 100.0
    game = FramePace(8)
    ran = []
    for arrival in arrivals:
        clock.now = max(clock.now, 100.0 + arrival)
        clock.sleep(game.early())  # what awaiting game.held() does, on the test's clock
        game.tick()
        ran.append(clock.now - 100.0)
    assert game.intervals == [round(b - a, 4) for a, b in itertools.pairwise(ran)]
    return ran


def test_a_page_faster_than_the_frame_rate_is_held_to_one_frame_a_period(clock):
    ran = run_frames(clock, [0.0] * 20)
    assert [b - a for a, b in itertools.pairwise(ran)] == pytest.approx([PERIOD] * 19)


def test_a_page_on_its_clock_is_never_held_because_frames_come_late(clock):
    rng = random.Random(7)
    arrivals = [0.0] + [k * PERIOD + rng.uniform(0.0, 0.06) for k in range(1, 400)]
    assert run_frames(clock, arrivals) == pytest.approx(arrivals, abs=1e-9)
    # a frame half a period late, then the next on time: it is not held for a whole period after the late one
    on_clock = [0.0, 0.125, 0.3125, 0.375, 0.5]
    assert run_frames(clock, on_clock) == on_clock


def test_no_stretch_of_time_holds_more_than_two_frames_over_the_rate_nor_frames_closer_than_half_a_period(clock):
    rng = random.Random(11)
    arrivals, now = [], 0.0
    for _ in range(2000):  # bursts, pauses and everything between
        now += rng.choice([0.0, 0.0, rng.uniform(0, PERIOD), rng.uniform(0, 4 * PERIOD)])
        arrivals.append(now)
    ran = run_frames(clock, arrivals)
    assert min(b - a for a, b in itertools.pairwise(ran)) >= PERIOD / 2 - 1e-9
    for first, last in itertools.combinations(range(0, len(ran), 7), 2):
        assert last - first + 1 <= (ran[last] - ran[first]) / PERIOD + 2 + 1e-9
