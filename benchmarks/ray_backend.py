"""The Ray backend against the local one on this machine: the same run (crafting's random agent on a split by
default) played in process, by local worker processes, and as Ray tasks on a local Ray instance with 1 and 2
CPUs; the time of each, the overhead per episode of Ray against the local backend with as many workers, and the
time to start and stop the Ray instance (paid once per run). Every run's episode files are checked identical.

    python benchmarks/ray_backend.py [--suite crafting] [--split val.small] [--agent random]
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ray

from discogym.core import get_suite
from discogym.core.running.ray_executor import RayExecutor
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir


def files(out: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(RunDir(out).episode_paths())}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--suite", default="crafting")
    parser.add_argument("--split", default="val.small")
    parser.add_argument("--agent", default="random")
    args = parser.parse_args()
    suite = get_suite(args.suite)
    config = RunConfig.for_suite(suite, [args.agent], split=args.split)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        seconds: dict[str, float] = {}

        def timed(label: str, **options: object) -> None:
            started = time.perf_counter()
            Runner(suite, config, root / label, **options).run()  # type: ignore[arg-type]
            seconds[label] = time.perf_counter() - started

        timed("local, in process")
        timed("local, 2 workers", workers=2)
        for cpus in (1, 2):
            started = time.perf_counter()
            RayExecutor(workers=cpus)._connect()
            startup = time.perf_counter() - started
            timed(f"ray, {cpus} CPU", executor=RayExecutor(workers=cpus))
            started = time.perf_counter()
            ray.shutdown()
            seconds[f"ray start and stop ({cpus} CPU)"] = startup + time.perf_counter() - started
        count = len(files(root / "local, in process"))
        reference = files(root / "local, in process")
        same = all(files(root / label) == reference for label in seconds if not label.startswith("ray start"))
        print(f"{args.suite} {args.split}, agent {args.agent}: {count} episodes; files identical in every run: {same}")
        for label, value in seconds.items():
            per = "" if label.startswith("ray start") else f"   {value / count * 1000:7.1f} ms/episode"
            print(f"{label:<28} {value:7.2f} s{per}")
        for cpus, local in ((1, "local, in process"), (2, "local, 2 workers")):
            extra = (seconds[f"ray, {cpus} CPU"] - seconds[local]) / count * 1000
            print(f"ray overhead, {cpus} CPU vs {local}: {extra:+.1f} ms/episode")
        print(f"ray scaling, 1 to 2 CPUs: {seconds['ray, 1 CPU'] / seconds['ray, 2 CPU']:.2f}x")


if __name__ == "__main__":
    main()
