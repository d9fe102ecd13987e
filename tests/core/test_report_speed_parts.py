"""The pieces that make a report of many episodes fast: sums of usage made as one object, version stamps taken
from the episodes already read, and the redstone t interval without scipy.stats (the paused collector: test_process)."""

import pytest
from scipy import stats

from discogym.core.model.agent import Usage
from discogym.suites.redstone.report import _t_interval


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
