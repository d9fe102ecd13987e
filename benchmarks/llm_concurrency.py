"""--concurrency for agents that wait on a model: 64 episodes of the ``llm`` agent in flight in one process,
against a local fake endpoint that answers every request after 1 s.

The toy suite's digit game takes a few requests per episode, one after another, so with every episode in flight
at once the ideal wall time is the longest episode's requests x the delay. Printed: episodes, requests per
episode, that ideal, the wall time of the run with ``--concurrency`` = episodes and its ratio to the ideal, the
process's peak memory (RSS; the fake endpoint runs in a process of its own, so it is not counted), and whether
the episode files are byte-identical to a ``--concurrency 1`` run of the same episodes. That run takes
requests x delay per episode, so by default it plays only the first ``--compare-episodes`` episodes (8); ``--full``
compares all of them.

    python benchmarks/llm_concurrency.py [--episodes 64] [--delay 1.0] [--compare-episodes 8 | --full] [--workers 1]

With ``--workers W`` the episodes are shared by W worker processes, each with ``--concurrency`` episodes / W.
"""

import argparse
import math
import multiprocessing
import os
import resource
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.core.toy_suite import suite
from tests.llm.fake_endpoint import FakeEndpoint

from discogym.core import AgentOptions, Episode
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir

SPLIT = "dev"  # eight tasks; repeats make up the episodes


def serve(delay: float, told: Connection) -> None:
    """The fake endpoint, in a process of its own: says its URL, then the requests it got whenever asked, until
    the benchmark says it is done (or is gone)."""
    with FakeEndpoint(answer_delay_s=delay) as endpoint:
        told.send(endpoint.url)
        while told.recv() == "count":
            told.send(len(endpoint.requests))


def requests_of(episode: Episode) -> int:
    """The model requests an episode made: one per reply, whose usage is booked on the reply's first call, plus
    the reply that ended the episode without a call."""
    return sum(event.usage is not None for event in episode.events) + (episode.outcome.final_usage is not None)


def files(out: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in RunDir(out).episode_paths()}


def requests_made(endpoint: Connection) -> int:
    endpoint.send("count")
    count: int = endpoint.recv()
    return count


def timed_run(config: RunConfig, out: Path, concurrency: int, workers: int = 1) -> float:
    started = time.perf_counter()
    summary = Runner(suite, config, out, workers=workers, concurrency=concurrency).run()
    elapsed = time.perf_counter() - started
    if not summary.complete:
        raise SystemExit(f"the run into {out} did not finish: {summary.faults}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=64, help="episodes in flight at once (default 64)")
    parser.add_argument("--delay", type=float, default=1.0, help="seconds before each answer (default 1.0)")
    parser.add_argument(
        "--compare-episodes", type=int, default=8, help="episodes replayed one at a time to compare (default 8)"
    )
    parser.add_argument("--full", action="store_true", help="replay and compare every episode")
    parser.add_argument(
        "--workers", type=int, default=1, help="worker processes sharing the episodes in flight (default 1)"
    )
    args = parser.parse_args()

    tasks = [task.id for task in suite.tasks(SPLIT)]
    repeats = max(1, args.episodes // len(tasks))
    tasks = tasks[: min(len(tasks), args.episodes)]
    os.environ.setdefault("OPENAI_COMPATIBLE_API_KEY", "no-key")

    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    server = context.Process(target=serve, args=(args.delay, theirs), daemon=True)
    server.start()
    url = ours.recv()
    agent = AgentOptions(name="llm", model=f"openai-compatible/fake@{url}", options={"retries": "1", "timeout_s": "30"})
    config = RunConfig.for_suite(suite, [agent], split=SPLIT, tasks=tasks, repeats=repeats)
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            concurrency = math.ceil(len(tasks) * repeats / args.workers)
            warm_up = config.model_copy(update={"tasks": tasks[:1], "repeats": 1})
            start_up = timed_run(warm_up, root / "warm-up", 1)  # imports, the model's client: paid once per process
            before = requests_made(ours)
            wall = timed_run(config, root / "many", concurrency, args.workers)
            made = requests_made(ours) - before
            peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
            worker_peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest ended child
            played = list(RunDir(root / "many").iter_episodes())
            requests = [requests_of(episode) for episode in played]
            ideal = max(requests) * args.delay
            low, high, mean = min(requests), max(requests), sum(requests) / len(requests)

            compared_tasks = tasks if args.full else tasks[: max(1, math.ceil(args.compare_episodes / repeats))]
            compared = config.model_copy(update={"tasks": compared_tasks})
            one_wall = timed_run(compared, root / "one", 1)
            one = files(root / "one")
            many = files(root / "many")
            same = all(many.get(name) == content for name, content in one.items())

            print(f"{'first episode, one at a time (start-up included)':<48} {start_up:>9.2f}s")
            print(f"{'episodes':<48} {len(played):>10}")
            print(f"{'requests (counted by the endpoint)':<48} {made:>10}")
            print(f"{'requests per episode (min / mean / max)':<48} {f'{low} / {mean:.2f} / {high}':>10}")
            if sum(requests) != made:
                print(f"  (the episodes' logs count {sum(requests)} requests: the ideal below may be off)")
            print(f"{'answer delay':<48} {args.delay:>9.2f}s")
            print(f"{'ideal wall time (max requests x delay)':<48} {ideal:>9.2f}s")
            how = f"--concurrency {concurrency}" + (f" --workers {args.workers}" if args.workers > 1 else "")
            print(f"{f'wall time, {how}':<48} {wall:>9.2f}s")
            print(f"{'ratio to ideal (target <= 1.5)':<48} {wall / ideal:>10.2f}")
            print(f"{'peak memory of this process (RSS, target < 1 GB)':<48} {peak_mb:>8.0f}MB")
            if args.workers > 1:
                print(f"{'peak memory of the largest worker process (RSS)':<48} {worker_peak_mb:>8.0f}MB")
            one_label = f"wall time, --concurrency 1, {len(one)} episodes"
            print(f"{one_label:<48} {one_wall:>9.2f}s")
            which = (
                "every episode" if args.full else f"the first {len(one)} episodes (tasks {', '.join(compared_tasks)})"
            )
            verdict = "identical" if same and len(one) else "DIFFERENT"
            print(f"episode files of {which}, --concurrency 1 against {how}: {verdict}")
    finally:
        ours.send("done")
        server.join(10)


if __name__ == "__main__":
    main()
