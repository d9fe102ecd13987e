"""Fixtures of the language-model tests: a fake endpoint and runs of the toy suite against it."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from discogym.core import AgentOptions, Episode
from discogym.core.running.runner import RunConfig, Runner, RunSummary
from discogym.core.running.storage import RunDir
from discogym.llm.models import CONTEXT_WINDOWS
from tests.core.toy_suite import suite
from tests.llm.fake_endpoint import FakeEndpoint

SECRET = "sk-test-0123456789-SECRET"
FAKE_WINDOW = 128_000


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeEndpoint]:
    """A running fake endpoint; the keys of every provider are set to :data:`SECRET`, and its models' context
    windows are known (as a real model's are), 128k tokens."""
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_COMPATIBLE_API_KEY"):
        monkeypatch.setenv(variable, SECRET)
    for provider in ("openai-compatible", "anthropic"):
        monkeypatch.setitem(CONTEXT_WINDOWS, f"{provider}/fake", FAKE_WINDOW)
    monkeypatch.delenv("DISCOGYM_PRICES", raising=False)
    with FakeEndpoint() as endpoint:
        yield endpoint


def model_for(fake: FakeEndpoint, provider: str = "openai-compatible") -> str:
    """The model string that points ``provider``'s SDK at the fake endpoint."""
    return f"{provider}/fake@{fake.root if provider == 'anthropic' else fake.url}"


def llm_options(
    fake: FakeEndpoint,
    provider: str = "openai-compatible",
    token_limit: int | None = None,
    cost_limit: float | None = None,
    **options: str,
) -> AgentOptions:
    """The ``llm`` agent against the fake, failing fast (one retry, short timeout) unless told otherwise."""
    settings = {"retries": "1", "timeout_s": "5", "backoff_s": "0.05", **options}
    return AgentOptions(
        name="llm",
        model=model_for(fake, provider),
        options=settings,
        token_limit=token_limit,
        cost_limit=cost_limit,
    )


def run_llm(
    out: Path, agent: AgentOptions, *, condition: str = "plain", split: str = "tiny", tasks: list[str] | None = None
) -> RunSummary:
    """Run the toy suite's ``split`` with ``agent`` into ``out``."""
    config = RunConfig.for_suite(suite, [agent], split=split, tasks=tasks, conditions=[condition])
    return Runner(suite, config, out).run()


def episodes(out: Path) -> list[Episode]:
    """The episodes written under ``out``, in file order."""
    return list(RunDir(out).iter_episodes())
