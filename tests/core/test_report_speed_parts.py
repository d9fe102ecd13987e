"""The pieces that make a report of many episodes fast: the paused collector, sums of usage made as one object,
version stamps taken from the episodes already read, and the redstone t interval without scipy.stats."""

import gc
import threading

import pytest
from scipy import stats

from discogym.core.model.agent import Usage
from discogym.core.running.storage import collector_paused
from discogym.suites.redstone.report import _t_interval


def test_the_collector_is_paused_inside_and_runs_again_after_the_last_pause():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()


def test_pauses_in_two_threads_end_with_the_last_one():
    entered, release = threading.Event(), threading.Event()

    def hold() -> None:
        with collector_paused():
            entered.set()
            release.wait(10)

    other = threading.Thread(target=hold)
    other.start()
    entered.wait(10)
    with collector_paused():
        pass
    assert not gc.isenabled()  # the other thread's pause is still on
    release.set()
    other.join(10)
    assert gc.isenabled()


def test_a_collector_turned_off_before_stays_off():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_total_of_usages_adds_every_field_and_skips_nothing_but_none():
    parts = [
        Usage(input_tokens=3, output_tokens=1, cached_tokens=2, cost_usd=0.5, cache_write_tokens=1, reasoning_tokens=4),
        None,
        Usage(input_tokens=10, output_tokens=5, cost_usd=0.25),
    ]
    assert Usage.total(parts) == Usage(
        input_tokens=13, output_tokens=6, cached_tokens=2, cost_usd=0.75, cache_write_tokens=1, reasoning_tokens=4
    )
    assert Usage.total([]) == Usage()
    assert parts[0] + parts[2] == Usage.total(parts)  # type: ignore[operator]


@pytest.mark.parametrize("samples", [[0.2, 0.4], [1.0, 0.0, 0.5], [0.1 * i for i in range(40)]])
def test_the_redstone_t_interval_is_scipys(samples):
    interval = _t_interval(samples)
    assert interval is not None
    low, high = stats.t.interval(0.95, len(samples) - 1, loc=stats.tmean(samples), scale=stats.sem(samples))
    assert interval == pytest.approx([low, high], rel=1e-12)
    assert _t_interval([0.5]) is None
