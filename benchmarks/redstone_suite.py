"""The redstone suite's reference run: the builder places, presses and submits a device for each of the 25
tasks through the environment's tools, and the evaluator checks it. Timed in this process on both engine
backends (the compiled core is the default; the Python engine is the baseline measured in the same run)."""

import os
import time

from discogym.suites.redstone.agents import placement_order, set_block_call
from discogym.suites.redstone.builder import build_device
from discogym.suites.redstone.compiled import available
from discogym.suites.redstone.engine import BACKEND_VARIABLE
from discogym.suites.redstone.env import Presentation, RedstoneEnv
from discogym.suites.redstone.tasks import packaged_tasks


def reference_run() -> tuple[float, int, int]:
    """Seconds for all 25 episodes, tool calls made, tasks passed."""
    started = time.perf_counter()
    calls = passed = 0
    for spec in packaged_tasks():
        env = RedstoneEnv(spec, Presentation())
        for pos, block in placement_order(build_device(spec)):
            call = set_block_call(pos, block)
            env.call(call.tool, call.args)
        env.call("activate_button", {})
        env.call("submit", {})
        calls += env.steps
        passed += bool(env.outcome()["passed"])
    return time.perf_counter() - started, calls, passed


def main() -> None:
    if not available():
        print("the compiled core is not built; reinstall discogym (pip install -e .) with a C compiler")
        return
    seconds: dict[str, float] = {}
    for backend in ("compiled", "python"):
        os.environ[BACKEND_VARIABLE] = backend
        seconds[backend], calls, passed = reference_run()
        print(f"{backend:>8}: 25 tasks, {calls} tool calls, {passed}/25 pass, {seconds[backend]:.2f} s")
    print(f"python/compiled: {seconds['python'] / seconds['compiled']:.1f}x")


if __name__ == "__main__":
    main()
