"""Start-up time of the ``discogym`` command: how long a user waits before anything happens.

Each figure is the wall-clock time from spawning a fresh process to the moment it has done its job, as the
median (with min and max) of several runs; nothing is asserted.

* ``--version``, ``--help``, ``list``, ``list --json``, ``petri --help``: until the process exits.
* ``mcp SUITE``: until the server has answered an MCP ``initialize`` request sent on its standard input the
  moment the process starts (the request waits in the pipe, so this is the time to a server ready to talk to
  its client). The server is then told to stop by closing its input.

A second table lists, for ``--version`` and ``list``, which heavy modules the process imported.

    python benchmarks/startup.py [--runs 5] [--suites petri redstone crafting autumn]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLI = "import sys; from discogym.interfaces.cli import main; sys.argv[0] = 'discogym'; main()"
HEAVY = ("numpy", "scipy", "matplotlib", "mcp", "openai", "anthropic")
SUITES = ("autumn", "crafting", "petri", "redstone")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "discogym-startup-benchmark", "version": "1"},
    },
}


def discogym_command() -> list[str]:
    """The installed ``discogym`` script next to this interpreter, or the same entry point through ``-c``."""
    script = Path(sys.executable).parent / "discogym"
    return [str(script)] if script.exists() else [sys.executable, "-c", CLI]


def time_exit(args: list[str]) -> float:
    """Seconds until ``discogym ARGS`` exits (its output is discarded)."""
    start = time.perf_counter()
    subprocess.run(discogym_command() + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def time_mcp_ready(suite: str, out: Path) -> float:
    """Seconds until ``discogym mcp SUITE`` on stdio answers an ``initialize`` request."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [*discogym_command(), "mcp", suite, "--out", str(out)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    process.stdin.flush()
    try:
        for line in process.stdout:
            if json.loads(line).get("id") == 1:
                return time.perf_counter() - start
        raise RuntimeError(f"discogym mcp {suite} exited without answering initialize")
    finally:
        process.stdin.close()
        process.wait(timeout=60)


def imported_heavy_modules(args: list[str]) -> list[str]:
    """Which of the heavy libraries and suite packages ``discogym ARGS`` imports."""
    probe = (
        "import sys, json\n"
        "from discogym.interfaces.cli import main\n"
        f"sys.argv = ['discogym', *{args!r}]\n"
        "try:\n    main()\n"
        "except SystemExit:\n    pass\n"
        f"names = [*{HEAVY!r}, *('discogym.suites.' + s for s in {SUITES!r})]\n"
        "sys.stderr.write(json.dumps([n for n in names if n in sys.modules]))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return list(json.loads(done.stderr.strip().splitlines()[-1]))


def summary(label: str, samples: list[float]) -> str:
    """One table row: median, min and max in seconds."""
    return f"| {label} | {statistics.median(samples):.2f} | {min(samples):.2f} | {max(samples):.2f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (the median is reported)")
    parser.add_argument("--suites", nargs="*", default=list(SUITES), help="suites whose MCP server to time")
    options = parser.parse_args()
    commands = [["--version"], ["--help"], ["list"], ["list", "--json"], ["petri", "--help"]]
    rows = ["| command | median s | min s | max s |", "| --- | --- | --- | --- |"]
    for args in commands:
        time_exit(args)  # warm the file-system cache so the first run is not an outlier
        rows.append(summary("discogym " + " ".join(args), [time_exit(args) for _ in range(options.runs)]))
    with tempfile.TemporaryDirectory() as scratch:
        for suite in options.suites:
            out = Path(scratch) / suite
            time_mcp_ready(suite, out)
            samples = [time_mcp_ready(suite, out) for _ in range(options.runs)]
            rows.append(summary(f"discogym mcp {suite} (initialize answered)", samples))
    print(f"discogym start-up, {options.runs} runs each, {os.cpu_count()} CPUs\n")
    print("\n".join(rows))
    print("\n| command | heavy modules imported |\n| --- | --- |")
    for args in (["--version"], ["--help"], ["list"]):
        print(f"| discogym {' '.join(args)} | {', '.join(imported_heavy_modules(args)) or '(none)'} |")


if __name__ == "__main__":
    main()
