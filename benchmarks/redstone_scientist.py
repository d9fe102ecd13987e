"""The discovery-to-application loop offline: the self-taught agent (asking its scientist, which measures by
experiments in its lab) on all 25 tasks, curriculum and independent, against the builder (which knows the
mechanics) on the same tasks, measured in the same run through the runner.

    python benchmarks/redstone_scientist.py
"""

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from discogym.core import AgentOptions
from discogym.core.running.planning import Setting
from discogym.core.running.runner import RunConfig, Runner
from discogym.core.running.storage import RunDir
from discogym.suites.redstone.suite import suite


def timed(agent: str, setting: Setting) -> tuple[float, int, int, int]:
    """Seconds, tasks passed, all trials, ask_scientist sessions."""
    with tempfile.TemporaryDirectory() as out:
        config = RunConfig.for_suite(
            suite, [AgentOptions(name=agent)], split="official", conditions=["scientist"], setting=setting
        )
        started = time.perf_counter()
        Runner(suite, config, Path(out)).run()
        seconds = time.perf_counter() - started
        episodes = list(RunDir(Path(out)).iter_episodes())
    passed = sum(bool(e.score.success) for e in episodes)
    trials = sum(int(e.score.components["trials"]) + int(e.score.components["scientist_trials"]) for e in episodes)
    questions = sum(int(e.score.components["questions"]) for e in episodes)
    return seconds, passed, trials, questions


def main() -> None:
    timed("builder", "independent")  # warm-up: task files parsed and cached, the engine loaded
    baseline, *_ = timed("builder", "independent")
    print(f"{'agent, setting':<26} {'seconds':>8} {'x builder':>10} {'passed':>7} {'trials':>7} {'questions':>10}")
    print(f"{'builder, independent':<26} {baseline:>8.2f} {1.0:>10.1f} {'25/25':>7}")
    settings: list[Setting] = ["curriculum", "independent"]
    for setting in settings:
        seconds, passed, trials, questions = timed("self-taught", setting)
        label = f"self-taught, {setting}"
        print(f"{label:<26} {seconds:>8.2f} {seconds / baseline:>10.1f} {passed:>4}/25 {trials:>7} {questions:>10}")


if __name__ == "__main__":
    main()
