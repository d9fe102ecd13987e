"""Language-model agent overhead: model calls per second through the ``llm`` agent and the runner,
against a local fake endpoint, as a ratio of bare SDK requests to the same endpoint in the same run.

The fake endpoint (``tests/llm/fake_endpoint.py``, a real HTTP server on 127.0.0.1) answers at once, so
what is measured is the client side: building the conversation, the SDK's HTTP round trip, reading the
reply, the environment, the log and the episode file. A real model's seconds of latency dwarf all of it.
The baseline's conversation has two messages and the episodes' grow to about ten; the SDK's own request
building grows with it and is most of the difference (profile with cProfile to see).

    python benchmarks/llm_overhead.py [--episodes 40] [--requests 300]
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

import openai

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.core.toy_suite import suite
from tests.llm.fake_endpoint import FakeEndpoint

from discogym.core import AgentOptions
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir


def bare_sdk_requests_per_second(endpoint: FakeEndpoint, requests: int) -> float:
    """The baseline: the same SDK sending a fixed two-message conversation, nothing else."""
    client = openai.OpenAI(api_key="no-key", base_url=endpoint.url, max_retries=0)
    messages = [
        {"role": "system", "content": "You play the digit game."},
        {"role": "user", "content": "A digit from 0 to 9 is hidden."},
    ]
    tools = [{"type": "function", "function": {"name": "probe", "parameters": {"type": "object"}}}]
    started = time.perf_counter()
    for _ in range(requests):
        client.chat.completions.create(model="fake", messages=messages, tools=tools)  # type: ignore[arg-type]
    return requests / (time.perf_counter() - started)


def agent_calls_per_second(endpoint: FakeEndpoint, mode: str, episodes: int, out: Path) -> tuple[float, int]:
    """Model calls per second over whole episodes of the toy suite through the runner."""
    agent = AgentOptions(name="llm", model=f"openai-compatible/fake@{endpoint.url}", options={"mode": mode})
    tasks = [task.id for task in suite.tasks("dev")]
    repeats = max(1, episodes // len(tasks))
    config = RunConfig.for_suite(suite, [agent], split="dev", tasks=tasks, repeats=repeats)
    before = len(endpoint.requests)
    started = time.perf_counter()
    Runner(suite, config, out).run()
    elapsed = time.perf_counter() - started
    calls = len(endpoint.requests) - before
    played = len(RunDir(out).episode_paths())
    return calls / elapsed, played


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    with FakeEndpoint() as endpoint, tempfile.TemporaryDirectory() as scratch:
        bare_sdk_requests_per_second(endpoint, 20)  # warm up connections and imports
        baseline = bare_sdk_requests_per_second(endpoint, args.requests)
        print(f"{'measure':<44} {'model calls/s':>14} {'ratio':>7}")
        print(f"{'bare SDK request (baseline)':<44} {baseline:>14,.0f} {1.0:>7.3f}")
        for mode in ("native", "text"):
            rate, played = agent_calls_per_second(endpoint, mode, args.episodes, Path(scratch) / mode)
            label = f"llm agent, mode={mode}, runner ({played} episodes)"
            print(f"{label:<44} {rate:>14,.0f} {rate / baseline:>7.3f}")


if __name__ == "__main__":
    main()
