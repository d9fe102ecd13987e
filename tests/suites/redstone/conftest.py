"""Every redstone test runs on both engine backends: the Python reference and the compiled core."""

from collections.abc import Iterator

import pytest

from discogym.suites.redstone.engine import BACKEND_VARIABLE


@pytest.fixture(autouse=True, params=["python", "compiled"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The backend a test's simulators use when they do not name one."""
    monkeypatch.setenv(BACKEND_VARIABLE, request.param)
    yield request.param
