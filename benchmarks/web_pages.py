"""The web app's browse pages on a run of 1,000 episodes (redstone's builder on the 25 tasks, 40 repeats): the
time to list the run's episodes (first visit, reading every file, then again from the kept rows), to filter
it, to open one episode's replay and its views (the calls played again for the screen's pictures, then kept),
and to show the report (built, then kept while the files are unchanged).
Served by uvicorn on 127.0.0.1, fetched with urllib.

    python benchmarks/web_pages.py [--repeats 40]
"""

import argparse
import socket
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import uvicorn

from discogym.core import AgentOptions
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir
from discogym.interfaces.web.app import create_app
from discogym.suites.redstone.suite import suite


def fetch(url: str) -> tuple[float, int]:
    """Seconds to fetch ``url`` whole, and its size in bytes."""
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as answer:
        body = answer.read()
    return time.perf_counter() - started, len(body)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=40)
    repeats = parser.parse_args().repeats
    with tempfile.TemporaryDirectory() as folder:
        runs = Path(folder)
        config = RunConfig.for_suite(suite, [AgentOptions(name="builder")], repeats=repeats)
        Runner(suite, config, runs / "big", workers=2).run()
        count = len(RunDir(runs / "big").episode_paths())
        stem = sorted(RunDir(runs / "big").episode_paths())[-1].stem
        listener = socket.create_server(("127.0.0.1", 0))
        server = uvicorn.Server(uvicorn.Config(create_app(runs), log_level="warning"))
        threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True).start()
        while not server.started:
            time.sleep(0.02)
        root = f"http://127.0.0.1:{listener.getsockname()[1]}"
        steps = len(next(e for e in RunDir(runs / "big").iter_episodes() if e.key.file_stem() == stem).events)
        print(f"a run of {count} episodes; the episode opened has {steps} steps")
        for label, path in [
            ("episode list, first visit", "/runs/big"),
            ("episode list, again", "/runs/big"),
            ("filtered (one task)", "/runs/big?task=C_sequential_activation_L5"),
            ("one episode's replay", f"/runs/big/episodes/{stem}"),
            ("its views, replayed", f"/api/runs/big/episodes/{stem}/views"),
            ("its views, again", f"/api/runs/big/episodes/{stem}/views"),
            ("the report, first visit", "/report/big"),
            ("the report, again", "/report/big"),
            ("home page", "/"),
        ]:
            seconds, size = fetch(root + path)
            print(f"{label:<28} {seconds:7.3f} s {size / 1024:9.0f} KiB")
        server.should_exit = True


if __name__ == "__main__":
    main()
