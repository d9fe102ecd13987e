"""Context policies on long episodes: what each request carries, what it bills, and how the episode ends.

A model-shaped endpoint (``tests/llm/fake_endpoint.py``, a real HTTP server on 127.0.0.1) plays a fixed list of
calls through ``--agent llm``: ``--explore`` exploration acts on an autumn world (a cycle of moves; condition
``people``, whose exploration is not cut at 200 steps), then the oracle's own test calls. It measures each prompt
as characters/4, refuses a request whose prompt is longer than the model's context window (128k or 32k tokens per
policy, or 1M for the cost of ``full`` uncut), caches prompts as OpenAI does (a shared run of leading messages,
1,024 tokens or more) and answers a request for a summary with about 400 tokens. Printed per world and policy:
requests, compactions, peak prompt, input tokens billed, the cached share, dollars at ``--price`` per million
input tokens (cache reads at a tenth), and how the episode ended.

    python benchmarks/llm_context.py [--tasks gravity-1 --tasks weave-1] [--explore 300]
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.llm.fake_endpoint import Calls, FakeEndpoint, Say, prompt_tokens

from discogym.core import AgentOptions, get_suite
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir

MOVES = ["up", "right", "down", "left", "noop"]
# Each policy, and the context window of the model it plays against.
POLICIES = {
    "full, 1M window": ({"context": "full"}, 1_000_000),
    "full": ({"context": "full"}, 128_000),
    "window (16 turns)": ({"context": "window", "window_turns": "16"}, 32_000),
    "compact (default)": ({}, 128_000),
    "compact, 32k window": ({}, 32_000),
}
CONDITION = "people"  # 1,500 exploration steps allowed, so that every exploration act is one
# What the endpoint answers when asked for a summary: about 400 tokens, the length of a model's summary of its
# exploration so far.
SUMMARY = " ".join(
    f"Try {i}: moving {MOVES[i % 4]} shifted the player one cell; the falling blocks kept their pace."
    for i in range(20)
)


def oracle_test_calls(task: str, out: Path) -> list[tuple[str, str]]:
    """The calls of the oracle's episode on ``task``: its way through the test."""
    suite = get_suite("autumn")
    config = RunConfig.for_suite(suite, [AgentOptions(name="oracle")], tasks=[task], conditions=[CONDITION])
    Runner(suite, config, out).run()
    (episode,) = RunDir(out).iter_episodes()
    return [(event.call.tool, json.dumps(event.call.args)) for event in episode.events]


def play(task: str, calls: list[tuple[str, str]], policy: dict[str, str], window: int | None) -> dict[str, object]:
    suite = get_suite("autumn")
    with (
        FakeEndpoint(context_window=window, summary=SUMMARY, prefix_cache=True) as fake,
        tempfile.TemporaryDirectory() as folder,
    ):
        fake.script.extend([*(Calls([call]) for call in calls), Say("done"), Say("done")])
        options = {"retries": "1", "timeout_s": "30", "backoff_s": "0.05", "context_window": str(window), **policy}
        agent = AgentOptions(name="llm", model=f"openai-compatible/fake@{fake.url}", options=options)
        config = RunConfig.for_suite(suite, [agent], tasks=[task], conditions=[CONDITION])
        Runner(suite, config, Path(folder)).run()
        (episode,) = RunDir(Path(folder)).iter_episodes()
        sent = [prompt_tokens(r.body, "chat") for r in fake.requests]
        usage = episode.usage()
    fresh = usage.input_tokens - usage.cached_tokens
    return {
        "requests": len(sent),
        "compactions": sum(m.kind == "compaction" for e in episode.events for m in e.memory),
        "peak prompt": max(sent),
        "input billed": usage.input_tokens,
        "cached share": usage.cached_tokens / max(usage.input_tokens, 1),
        "dollars": (fresh + usage.cached_tokens * 0.1) * PRICE / 1e6,
        "ending": episode.outcome.termination.value,
        "score": episode.score.value,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", action="append", help="autumn worlds (default gravity-1, gravity-2, weave-1)")
    parser.add_argument("--explore", type=int, default=300, help="exploration acts before the test")
    parser.add_argument("--price", type=float, default=3.0, help="dollars per million input tokens")
    args = parser.parse_args()
    global PRICE
    PRICE = args.price
    os.environ.setdefault("OPENAI_COMPATIBLE_API_KEY", "benchmark")
    print(
        f"{'world':11} {'policy':19} {'requests':>8} {'compact':>7} {'peak':>8} {'billed':>11} {'cached':>7} "
        f"{'dollars':>8}  ending"
    )
    for task in args.tasks or ["gravity-1", "gravity-2", "weave-1"]:
        with tempfile.TemporaryDirectory() as folder:
            test = oracle_test_calls(task, Path(folder))
        exploring = [("act", json.dumps({"action": MOVES[i % len(MOVES)]})) for i in range(args.explore)]
        for name, (policy, window) in POLICIES.items():
            row = play(task, exploring + test, policy, window)
            print(
                f"{task:11} {name:19} {row['requests']:>8} {row['compactions']:>7} {row['peak prompt']:>8,} "
                f"{row['input billed']:>11,} "
                f"{row['cached share']:>7.0%} {row['dollars']:>8.2f}  {row['ending']} (score {row['score']})"
            )


PRICE = 3.0

if __name__ == "__main__":
    main()
