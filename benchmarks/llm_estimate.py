"""The cost estimate against a run: ``discogym estimate``'s input tokens beside those a run of the same calls bills.

For each autumn world and context policy (with the context window ``benchmarks/llm_context.py`` gives it), a fixed
list of calls (``--explore`` exploration acts, then the oracle's test calls, as there) is played twice: offline by
the estimate (:mod:`discogym.llm.estimate`: a quarter of the characters of what each request carries, tool
definitions included), and through ``--agent llm`` against the fake endpoint (``tests/llm/fake_endpoint.py``, which
bills a quarter of the characters of a JSON dump of the messages sent, and caches prefixes as OpenAI does).
Printed: requests and compactions of each, the input tokens of each and their ratio, the cached share of each, and
how long the estimate took.

    python benchmarks/llm_estimate.py [--tasks gravity-1 --tasks weave-1] [--explore 300]
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.llm_context import CONDITION, MOVES, POLICIES, SUMMARY, oracle_test_calls, play

from discogym.core import AgentOptions, ToolCall, get_suite
from discogym.core.running.planning import RunConfig, plan_episodes
from discogym.llm.estimate import estimate_episode, llm_parts


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", action="append", help="autumn worlds (default gravity-1, gravity-2, weave-1)")
    parser.add_argument("--explore", type=int, default=300, help="exploration acts before the test")
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_COMPATIBLE_API_KEY", "benchmark")
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
