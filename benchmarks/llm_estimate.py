"""The cost estimate against a run: ``discogym estimate``'s input tokens beside those a run of the same calls bills.

Per suite: the reference agent plays the first ``--suite-tasks`` tasks of each suite's default set, the ``llm``
agent makes exactly those calls through the fake endpoint (``tests/llm/fake_endpoint.py``, a real HTTP server on
127.0.0.1), and the estimate replays the same calls offline. Both sides count a quarter of the characters, so a
tokenizer's own error is not in it; the fake bills them twice over: on the chat-completions wire it counts the
messages only, on the Anthropic wire the tool definitions, system prompt and messages, as providers bill. This is
the estimate's ``low`` case (the reference's calls, no words of the model's own): the error of replaying calls
offline, not of guessing what a model would do. Printed per suite and wire: requests, input tokens estimated and
billed with the error, output tokens.

Per context policy, for each autumn world (with the context window ``benchmarks/llm_context.py`` gives it), a fixed
list of calls (``--explore`` exploration acts, then the oracle's test calls, as there) is played twice: offline by
the estimate (:mod:`discogym.llm.estimate`: a quarter of the characters of what each request carries, tool
definitions included), and through ``--agent llm`` against the fake endpoint (``tests/llm/fake_endpoint.py``, which
bills a quarter of the characters of a JSON dump of the messages sent, and caches prefixes as OpenAI does).
Printed: requests and compactions of each, the input tokens of each and their ratio, the cached share of each, and
how long the estimate took.

    python benchmarks/llm_estimate.py [--suite-tasks 3] [--tasks gravity-1 --tasks weave-1] [--explore 300]
"""

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.llm_context import CONDITION, MOVES, POLICIES, SUMMARY, oracle_test_calls, play
from tests.llm.fake_endpoint import Calls, FakeEndpoint, Say

from discogym.core import AgentOptions, Suite, Task, ToolCall, Usage, get_suite
from discogym.core.running.planning import RunConfig, plan_episodes
from discogym.core.running.runner import Runner
from discogym.core.running.storage import RunDir
from discogym.llm.estimate import estimate_episode, llm_parts, reference_calls

SUITES = ["autumn", "crafting", "petri", "redstone"]
# How the fake endpoint bills a prompt: the chat-completions wire counts the messages only, the Anthropic wire its
# tool definitions, system prompt and messages (as providers bill them).
PROVIDERS = ["openai-compatible", "anthropic"]


def estimate(
    task: str, calls: list[tuple[str, str]], policy: dict[str, str], window: int
) -> tuple[int, int, int, int, float]:
    """The estimate's requests, compactions, input and cached tokens for ``calls``, and the seconds it took."""
    suite = get_suite("autumn")
    options = {"context_window": str(window), **policy}
    agent = AgentOptions(name="llm", model="openai/gpt-5", options=options)
    config = RunConfig.for_suite(suite, [AgentOptions(name="random")], tasks=[task], conditions=[CONDITION])
    (planned,) = plan_episodes(suite, config.model_copy(update={"agents": [agent]}))
    spec, settings, facts = llm_parts(agent)
    recorded = [ToolCall(tool=tool, args=json.loads(args)) for tool, args in calls]
    started = time.perf_counter()
    row = estimate_episode(suite, planned, recorded, spec, settings, facts, summary_tokens=len(SUMMARY) // 4)
    usage = row.usage
    return row.requests, row.compactions, usage.input_tokens, usage.cached_tokens, time.perf_counter() - started


@dataclass
class Tally:
    """One suite's estimated and billed requests and tokens, summed over its tasks."""

    tasks: int = 0
    requests_estimated: int = 0
    requests_billed: int = 0
    estimated: Usage = field(default_factory=Usage)
    billed: Usage = field(default_factory=Usage)


def agent_for(fake: FakeEndpoint, provider: str) -> AgentOptions:
    options = {"retries": "1", "timeout_s": "60", "backoff_s": "0.05", "context_window": "128000"}
    endpoint = fake.root if provider == "anthropic" else fake.url
    return AgentOptions(name="llm", model=f"{provider}/fake@{endpoint}", options=options)


def measure(suite: Suite, task: Task, provider: str, tally: Tally) -> None:
    """Bill a run of the reference's calls on ``task`` at the fake endpoint and estimate the same calls."""
    with FakeEndpoint(summary=SUMMARY, prefix_cache=True) as fake, tempfile.TemporaryDirectory() as folder:
        agent = agent_for(fake, provider)
        config = RunConfig.for_suite(suite, [agent], tasks=[task.id])
        (planned,) = plan_episodes(suite, config)
        calls = reference_calls(suite, planned)
        fake.script.extend([*(Calls([(call.tool, json.dumps(call.args))]) for call in calls), Say("done")])
        Runner(suite, config, Path(folder)).run()
        (episode,) = RunDir(Path(folder)).iter_episodes()
        spec, settings, facts = llm_parts(agent)
        row = estimate_episode(suite, planned, calls, spec, settings, facts, summary_tokens=len(SUMMARY) // 4)
        tally.tasks += 1
        tally.requests_billed += len(fake.requests)
        tally.requests_estimated += row.requests
        tally.billed += episode.usage()
        tally.estimated += row.usage


def suites_table(tasks: int) -> None:
    """The error of the estimate per suite, against each wire's bill."""
    print(
        f"{'suite':9} {'billed as':18} {'tasks':>5} {'requests est/billed':>20} {'input estimated':>16} "
        f"{'input billed':>13} {'error':>7} {'output est/billed':>18}"
    )
    for name in SUITES:
        suite = get_suite(name)
        for provider in PROVIDERS:
            tally = Tally()
            for task in suite.tasks(suite.splits()[0])[:tasks]:
                measure(suite, task, provider, tally)
            error = tally.estimated.input_tokens / max(tally.billed.input_tokens, 1) - 1
            print(
                f"{name:9} {provider:18} {tally.tasks:>5} "
                f"{f'{tally.requests_estimated:,}/{tally.requests_billed:,}':>20} "
                f"{tally.estimated.input_tokens:>16,} {tally.billed.input_tokens:>13,} {error:>+7.1%} "
                f"{f'{tally.estimated.output_tokens:,}/{tally.billed.output_tokens:,}':>18}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", action="append", help="autumn worlds (default gravity-1, gravity-2, weave-1)")
    parser.add_argument("--explore", type=int, default=300, help="exploration acts before the test")
    parser.add_argument("--suite-tasks", type=int, default=3, help="tasks per suite in the per-suite table (0: none)")
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_COMPATIBLE_API_KEY", "benchmark")
    os.environ.setdefault("ANTHROPIC_API_KEY", "benchmark")
    if args.suite_tasks:
        suites_table(args.suite_tasks)
        print()
    print(
        f"{'world':11} {'policy':19} {'requests':>13} {'compactions':>11} {'estimated':>11} {'billed':>11} "
        f"{'ratio':>6} {'cached est/billed':>17} {'seconds':>7}"
    )
    for task in args.tasks or ["gravity-1", "gravity-2", "weave-1"]:
        with tempfile.TemporaryDirectory() as folder:
            test = oracle_test_calls(task, Path(folder))
        calls = [("act", json.dumps({"action": MOVES[i % len(MOVES)]})) for i in range(args.explore)] + test
        for name, (policy, window) in POLICIES.items():
            requests, compactions, estimated, cached, seconds = estimate(task, calls, policy, window)
            run = play(task, calls, policy, window)
            real = int(str(run["input billed"]))
            print(
                f"{task:11} {name:19} {requests:>6}/{run['requests']:<6} {compactions:>4}/{run['compactions']:<6} "
                f"{estimated:>11,} {real:>11,} {estimated / real:>6.2f} "
                f"{cached / max(estimated, 1):>8.0%}/{float(str(run['cached share'])):<8.0%} {seconds:>7.1f}"
            )


if __name__ == "__main__":
    main()
