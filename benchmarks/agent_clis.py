"""Agent CLIs as agents: wall time per episode and per tool call through ``--agent cli`` (Claude Code, Codex),
against the ``llm`` agent playing the same scripted episode, measured in the same run.

Every agent plays the toy suite's tiny-00 (PROBES probes, then the right submission) against a scripted fake
model endpoint on 127.0.0.1 that answers at once (tests/agent_clis/fake_endpoints.py), through the runner, one
episode at a time. What differs is the path a tool call takes: the llm agent calls the environment in-process;
a CLI process talks to the episode's MCP server, whose call the agent hands to the episode loop. Needs the
CLIs (``make agents-cli``); a CLI that is missing is left out with a line saying so.

    python benchmarks/agent_clis.py [--episodes 5] [--probes 8]
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.agent_clis.fake_endpoints import AnthropicEndpoint, ResponsesEndpoint, ScriptedEndpoint
from tests.core.toy_suite import suite
from tests.llm.fake_endpoint import Calls, Say

from discogym.agent_clis.install import find_cli
from discogym.core import AgentOptions, UserError, register_suite
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir

DIGIT = int(suite.tasks("tiny")[0].ground_truth["digit"])


def script(endpoint: ScriptedEndpoint, episodes: int, probes: int) -> None:
    """Each episode: ``probes`` probes, the right submission, a last word."""
    for _ in range(episodes):
        endpoint.script.extend(Calls([("probe", json.dumps({"n": n % 10}))]) for n in range(probes))
        endpoint.script.extend([Calls([("submit", json.dumps({"n": DIGIT}))]), Say("done")])


def play(agent: AgentOptions, endpoint: ScriptedEndpoint, episodes: int, probes: int) -> tuple[float, int]:
    """Seconds per episode and tool calls made, over ``episodes`` episodes (each a repeat of tiny-00)."""
    script(endpoint, episodes, probes)
    config = RunConfig.for_suite(suite, [agent], split="tiny", tasks=["tiny-00"], repeats=episodes)
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        summary = Runner(suite, config, Path(out)).run()
        elapsed = time.perf_counter() - started
        assert summary.complete and summary.errors == 0, summary
        calls = sum(len(episode.events) for episode in RunDir(Path(out)).iter_episodes())
    return elapsed / episodes, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--probes", type=int, default=8)
    args = parser.parse_args()
    register_suite(suite)
    os.environ["ANTHROPIC_API_KEY"] = os.environ["OPENAI_API_KEY"] = "benchmark-key"
    rows = []
    with AnthropicEndpoint() as endpoint:
        os.environ["ANTHROPIC_BASE_URL"] = endpoint.root
        llm = AgentOptions(name="llm", model="anthropic/claude-sonnet-4-5")
        rows.append(("llm (anthropic)", *play(llm, endpoint, args.episodes, args.probes)))
    for cli, model, endpoint_class in (
        ("claude-code", "anthropic/claude-sonnet-4-5", AnthropicEndpoint),
        ("codex", "openai/gpt-5", ResponsesEndpoint),
    ):
        try:
            find_cli(cli)
        except UserError as err:
            print(f"{cli}: left out ({err})")
            continue
        with endpoint_class() as endpoint:
            os.environ["ANTHROPIC_BASE_URL"], os.environ["OPENAI_BASE_URL"] = endpoint.root, endpoint.url
            agent = AgentOptions(name="cli", model=model, options={"cli": cli})
            rows.append((f"cli={cli}", *play(agent, endpoint, args.episodes, args.probes)))
    baseline = rows[0][1]
    calls_each = args.probes + 1
    print(f"{args.episodes} episodes each, {calls_each} tool calls an episode, endpoint answering at once")
    print(f"{'agent':<18} {'s/episode':>10} {'s/call':>8} {'x llm':>7}")
    for name, per_episode, calls in rows:
        assert calls == args.episodes * calls_each, (name, calls)
        print(f"{name:<18} {per_episode:>10.2f} {per_episode / calls_each:>8.3f} {per_episode / baseline:>7.1f}")


if __name__ == "__main__":
    main()
