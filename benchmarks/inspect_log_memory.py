"""Peak memory of ``discogym report LOG.eval`` on the worst log the reader's caps admit and on a real log.

* The real log: autumn's longest episodes, the way AutumnBench's agents play them (exploration to the condition's
  step cap, then the oracle's test: the suite's ``model_calls``, played by the replay agent), exported by
  discogym; the people condition's 1,500-step exploration gives the largest sample of any suite.
* The worst log: a small real sample (crafting's reference agent on one task) copied as many times as the total
  cap allows (1 GiB), each copy padded to both entry caps with what costs the most memory: its values as a
  model_usage of empty entries, its bytes as a string with one emoji (see ``MAX_LOG_ENTRY_BYTES``).

Each figure is the peak resident memory (VmHWM) of one fresh ``discogym report LOG --no-plots`` process; the
sizes of the largest sample entry of each log are printed too.

    python benchmarks/inspect_log_memory.py [--tasks weave-3] [--entries N]   # about 3 minutes
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from discogym.core import AgentOptions, get_suite
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir
from discogym.interfaces.inspect.log_entries import (
    MAX_LOG_BYTES,
    MAX_LOG_ENTRY_BYTES,
    MAX_LOG_ENTRY_VALUES,
    VALUE_MARKS,
    is_sample,
)
from discogym.interfaces.inspect.logs import export_run

PEAK = """
import re, sys
from discogym.interfaces.cli import main
try:
    main(["report", sys.argv[1], "--no-plots"])
except SystemExit:
    pass
with open("/proc/self/status") as status:
    print(re.search(r"VmHWM:\\s+(\\d+) kB", status.read()).group(1))
"""
CONDITIONS = ("people", "framestack", "text")


def explored_run(tasks: list[str], scratch: Path) -> Path:
    """Autumn's ``tasks`` under each condition, explored to the step cap and then tested, one agent (the replay
    agent, its transcript rewritten before each episode); the run's folder."""
    suite = get_suite("autumn")
    oracle = RunConfig.for_suite(suite, ["reference"], split="all", tasks=tasks, conditions=list(CONDITIONS))
    Runner(suite, oracle, scratch / "oracle").run()
    conditions = {condition.name: condition for condition in suite.conditions()}
    transcript = scratch / "transcript.json"
    agent = AgentOptions(name="replay", options={"transcript": str(transcript)})
    for episode in RunDir(scratch / "oracle").iter_episodes():
        condition = conditions[episode.key.condition]
        calls, _ = suite.model_calls(episode.task, condition, [event.call for event in episode.events])
        transcript.write_text(json.dumps([call.model_dump(mode="json") for call in calls]))
        config = RunConfig.for_suite(suite, [agent], split="all", tasks=[episode.key.task], conditions=[condition.name])
        Runner(suite, config, scratch / "explored").run()
    return scratch / "explored"


def small_sample_log(scratch: Path) -> Path:
    """A log of one crafting episode (the reference agent on the first test task), quick to replay."""
    suite = get_suite("crafting")
    config = RunConfig.for_suite(suite, ["reference"], split="test", tasks=[suite.tasks("test")[0].id])
    Runner(suite, config, scratch / "crafting").run()
    (log,) = export_run(scratch / "crafting", scratch / "crafting-log")
    return log


def values(data: bytes) -> int:
    """The most JSON values and keys ``data`` may hold, as the reader counts them."""
    return sum(data.count(mark) for mark in VALUE_MARKS)


def at_the_caps(sample: dict[str, Any], epoch: int) -> bytes:
    """``sample`` as epoch ``epoch``, padded to both entry caps: values in a model_usage of empty entries (the most
    memory a value takes, validated), bytes in a string with one emoji (the most a byte takes, parsed)."""
    sample = {**sample, "epoch": epoch, "target": ""}
    sample["model_usage"] = {
        str(n): {} for n in range((MAX_LOG_ENTRY_VALUES - values(json.dumps(sample).encode())) // 3)
    }
    fill = MAX_LOG_ENTRY_BYTES - len(json.dumps(sample, ensure_ascii=False).encode()) - 4
    return json.dumps({**sample, "target": "x" * fill + "\U0001f600"}, ensure_ascii=False).encode()


def worst_log(base: Path, out: Path, entries: int | None) -> Path:
    """``base`` with its one sample copied, each copy at the entry caps, as many as fit in :data:`MAX_LOG_BYTES`."""
    out.write_bytes(base.read_bytes())
    with zipfile.ZipFile(out) as archive:
        (name,) = [entry for entry in archive.namelist() if is_sample(entry)]
        sample = json.loads(archive.read(name))
        room = MAX_LOG_BYTES - sum(info.file_size for info in archive.infolist())
    count = room // MAX_LOG_ENTRY_BYTES if entries is None else entries
    with zipfile.ZipFile(out, "a", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for epoch in range(2, count + 2):
            archive.writestr(name.replace("_epoch_1.json", f"_epoch_{epoch}.json"), at_the_caps(sample, epoch))
    return out


def largest_sample(log: Path) -> str:
    """The largest sample entry of ``log``: its bytes and values."""
    with zipfile.ZipFile(log) as archive:
        entry = max((info for info in archive.infolist() if is_sample(info.filename)), key=lambda info: info.file_size)
        data = archive.read(entry)
    return f"largest sample {entry.filename}: {len(data):,} bytes, {values(data):,} values"


def peak_of_report(log: Path) -> tuple[float, float]:
    """The peak memory (MB) and wall seconds of a fresh ``discogym report LOG --no-plots``."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PEAK, str(log)], capture_output=True, text=True, check=True)
    if any(line.startswith("error") for line in done.stderr.splitlines()):
        raise SystemExit(f"the report of {log} failed: {done.stderr.strip()}")
    return int(done.stdout.strip().splitlines()[-1]) * 1024 / 1e6, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=["weave-3"], help="autumn tasks of the real log")
    parser.add_argument("--entries", type=int, default=None, help="samples at the caps (default: what 1 GiB holds)")
    args = parser.parse_args()
    print(f"caps: {MAX_LOG_ENTRY_BYTES:,} bytes and {MAX_LOG_ENTRY_VALUES:,} values an entry, {MAX_LOG_BYTES:,} a log")
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        started = time.perf_counter()
        (real,) = export_run(explored_run(args.tasks, scratch), scratch / "logs")
        worst = worst_log(small_sample_log(scratch), scratch / "worst.eval", args.entries)
        print(f"logs written in {time.perf_counter() - started:.0f} s")
        for label, log in (("real log", real), ("worst log", worst)):
            with zipfile.ZipFile(log) as archive:
                samples = sum(is_sample(name) for name in archive.namelist())
            peak, wall = peak_of_report(log)
            print(f"{label}: {samples} samples, {log.stat().st_size / 1e6:.1f} MB on disk; {largest_sample(log)}")
            print(f"  discogym report: peak {peak:.0f} MB, {wall:.0f} s")


if __name__ == "__main__":
    main()
