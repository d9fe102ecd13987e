"""The MCP server under concurrent clients: SESSIONS streamable-HTTP sessions of ``discogym mcp petri`` at once,
each starting a task, running EXPERIMENTS experiments and ending it, while one more client keeps asking
``list_tasks``. Prints the wall time, how long ``list_tasks`` took meanwhile (median, 95th percentile, max) and
how many episodes were written; nothing is asserted.

    python benchmarks/mcp_sessions.py [--sessions 20] [--experiments 2] [--src OTHER_TREE/src]

``--src`` runs the server from another checkout's ``src`` (e.g. a ``git worktree`` of an older commit), so a
before/after comparison is made on one machine in one sitting.
"""

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import mcp_types as types
from mcp import Client

from discogym.core import get_suite
from discogym.core.terminal.human import parse_tool_line

SPLIT = "pilot-v0"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def experiments_of(task_id: str) -> dict[str, object]:
    """The arguments of one informative experiment on the task (its brief's example action)."""
    suite = get_suite("petri")
    task = next(t for t in suite.tasks(SPLIT) if t.id == task_id)
    env = suite.make_env(task, suite.conditions()[0], seed=0)
    example = env.example_action()
    assert example is not None
    args = parse_tool_line(example).args
    assert isinstance(args, dict)
    return args


def client(url: str, name: str) -> Client:
    return Client(url, mode="legacy", client_info=types.Implementation(name=name, version="1"))


async def play(url: str, name: str, task_id: str, args: dict[str, object], experiments: int) -> None:
    async with client(url, name) as session:
        await session.call_tool("start_task", {"task_id": task_id})
        for _ in range(experiments):
            await session.call_tool("experiment", args)
        await session.call_tool("end_task", {})


async def watch(url: str, done: asyncio.Event) -> list[float]:
    """``list_tasks`` latencies until ``done``."""
    latencies = []
    async with client(url, "watcher") as session:
        while not done.is_set():
            started = time.perf_counter()
            await session.call_tool("list_tasks", {})
            latencies.append(time.perf_counter() - started)
            await asyncio.sleep(0.05)
    return latencies


async def load(url: str, sessions: int, experiments: int) -> tuple[float, list[float]]:
    tasks = [task.id for task in get_suite("petri").tasks(SPLIT)]
    arguments = {task_id: experiments_of(task_id) for task_id in tasks}
    done = asyncio.Event()
    watcher = asyncio.create_task(watch(url, done))
    started = time.perf_counter()
    await asyncio.gather(
        *(
            play(url, f"client-{i}", tasks[i % len(tasks)], arguments[tasks[i % len(tasks)]], experiments)
            for i in range(sessions)
        )
    )
    wall = time.perf_counter() - started
    done.set()
    return wall, await watcher


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--experiments", type=int, default=2)
    parser.add_argument("--src", type=Path, help="serve from this source tree instead of the installed one")
    args = parser.parse_args()
    port = free_port()
    env = dict(os.environ)
    if args.src is not None:
        env["PYTHONPATH"] = str(args.src.resolve())
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "discogym", "mcp", "petri", "--transport", "http", "--port", str(port)]
        server = subprocess.Popen([*command, "--out", out], env=env, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
                    time.sleep(0.1)
            wall, latencies = asyncio.run(load(f"http://127.0.0.1:{port}/mcp", args.sessions, args.experiments))
        finally:
            server.terminate()
            server.wait(timeout=30)
        written = len(list((Path(out) / "episodes").glob("*.json")))
    latencies.sort()
    p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
    print(f"server from: {args.src or 'the installed discogym'}")
    print(f"{args.sessions} sessions x {args.experiments} experiments of petri {SPLIT}: {wall:.1f} s wall")
    print(
        f"list_tasks meanwhile ({len(latencies)} calls): median {statistics.median(latencies):.3f} s, "
        f"95th percentile {p95:.3f} s, max {latencies[-1]:.3f} s"
    )
    print(f"episodes written: {written} of {args.sessions}")


if __name__ == "__main__":
    main()
