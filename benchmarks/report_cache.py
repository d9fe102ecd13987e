"""``discogym report`` of 1,000 redstone episodes: the first read (every episode scored from its log), a second
read (the scores remembered in RUN/.cache), and a read after one episode file changed (its stored score edited:
that one episode is scored again, and the edit is caught).

The episodes are real: the reference agent plays the 25 official tasks with 40 repeats each (a few minutes;
``--out DIR`` keeps them for the next time). Each read is a fresh ``discogym report RUN --json --no-plots``
process, timed in wall-clock and CPU seconds.

    python benchmarks/report_cache.py [--repeats 40] [--out DIR] [--baseline OLD_CHECKOUT/src]

With ``--baseline``, the read after one change is also timed with another discogym (an older checkout's ``src``
folder), alternating with this one, and the ratio printed.
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from discogym.core import AgentOptions, get_suite
from discogym.core.reporting.score_cache import CACHE_DIR
from discogym.core.running.agent_lookup import resolve_agent_name
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir


def play(out: Path, repeats: int) -> int:
    """The reference agent on every official redstone task, ``repeats`` times each; the episodes in ``out``."""
    suite = get_suite("redstone")
    agent = AgentOptions(name=resolve_agent_name(suite, "reference"))
    config = RunConfig.for_suite(suite, [agent], split="official", repeats=repeats)
    Runner(suite, config, out).run()
    return len(RunDir(out).episode_paths())


def timed_report(run: Path, source: Path | None = None) -> tuple[float, float, dict[str, Any]]:
    """Wall and CPU seconds of one ``discogym report`` process (of the discogym in ``source``, a checkout's ``src``
    folder, if given), and its JSON report."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    environment = {**os.environ, "PYTHONPATH": str(source)} if source is not None else None
    done = subprocess.run(
        [sys.executable, "-m", "discogym", "report", str(run), "--json", "--no-plots"],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    report: dict[str, Any] = json.loads(done.stdout)
    return wall, cpu, report


def change_one(path: Path, value: float = 0.25) -> None:
    """Edit the stored score of an episode file (what a tampered file looks like)."""
    document = json.loads(path.read_bytes())
    document["score"].update(value=value, success=False)
    path.write_text(json.dumps(document), encoding="utf-8")


def compare(run: Path, changed: Path, baseline: Path, rounds: int = 3) -> None:
    """The read after one change (``changed`` edited anew before each read), by the baseline's discogym and this
    one in turn: the best of ``rounds`` each."""
    times: dict[str, list[float]] = {"baseline": [], "this": []}
    for turn in range(rounds):
        for name, source in (("baseline", baseline), ("this", None)):
            change_one(changed, 0.25 + (2 * turn + (name == "this")) / 1000)
            times[name].append(timed_report(run, source)[1])
    best = {name: min(values) for name, values in times.items()}
    print(
        f"after one change, CPU, best of {rounds} alternating: baseline ({baseline}) {best['baseline']:.2f} s, "
        f"this {best['this']:.2f} s: {best['baseline'] / best['this']:.1f}x faster"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--out", type=Path, default=None, help="keep the episodes here (reused when there)")
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="also time the read after one change with the discogym of this src folder (e.g. an older checkout's), "
        "alternating with this one",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        run = args.out or Path(scratch) / "run"
        started = time.perf_counter()
        episodes = play(run, args.repeats)
        print(f"{episodes} redstone episodes in {run} ({time.perf_counter() - started:.0f} s to play or find)")
        shutil.rmtree(run / CACHE_DIR, ignore_errors=True)
        first = timed_report(run)
        second = timed_report(run)
        changed = RunDir(run).episode_paths()[0]
        original = changed.read_bytes()
        change_one(changed)
        try:
            third = timed_report(run)
            if args.baseline is not None:
                compare(run, changed, args.baseline)
        finally:
            changed.write_bytes(original)  # as played, for the next time
        caught = [line for line in third[2]["warnings"] if changed.stem in line and "stored score" in line]
        for label, (wall, cpu, _) in (
            ("first read (no cache)", first),
            ("second read (cached)", second),
            ("after one episode changed", third),
        ):
            print(f"{label:<28} {wall:6.2f} s wall  {cpu:6.2f} s CPU")
        print(f"the changed episode caught: {'yes' if caught else 'NO'}")
        same = first[2]["tables"] == second[2]["tables"] == third[2]["tables"]
        print(f"the same tables on every read: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
