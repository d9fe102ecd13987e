"""Steps per second of every suite as a Gymnasium environment (``discogym.gym``), against the suite's own
environment stepped bare in the same run.

Each suite is played with a fixed policy: at every step the action at a seeded random index of the valid actions
(``DiscogymEnv.valid_actions()``, text in the suite's syntax), the split's next task when an episode ends (a
vector's environments draw their tasks). Rows:

- ``bare``: the suite's ``Env.call`` with the same policy over its ``valid_calls()`` (no episode driver, no text),
  the baseline;
- ``gym``: ``gymnasium.make(ID)``: text parsed, the call logged by the episode driver, scored at the end;
- ``gym, written``: the same with ``out=FOLDER``: every episode written as a run's;
- ``sync x4``, ``async x4``: ``gymnasium.make_vec(ID, num_envs=4, vectorization_mode=...)``.

Each suite is warmed first (a second of ``bare``). Only ``step`` is timed (choosing actions and resetting are
not, but a vector resets inside ``step``); steps/s per core divides a vector's rate by the
cores it can use (its environments, at most this machine's cores). Ratios are against ``bare`` of the same suite.

With ``--plancraft``, crafting is also compared with Plancraft's own environment (``plancraft.simple.
PlancraftGymWrapper``, version 0.4.9, in a venv of its own under the cache made on first use) on the same action
texts: the first 20 test examples, each played by the fixed policy in ``discogym/Crafting-v0`` for up to 30
steps (``impossible`` left out), then both environments step those texts, only ``step`` timed. Plancraft draws the
crafting table at every step with no switch to stop it: its rows are with the drawing (beside our ``image-high``
condition, which draws the same picture) and with the drawing stubbed out (beside our text condition).

With ``--autumn-cpp BUILD --autumn-programs DIR``, autumn's interpreter is also compared with Autumn.cpp's built
module on the programs of DIR (Autumn.cpp's own ``tests/``: discogym's programs are mostly not its dialect, and it
has no environment wrapper), as ``benchmarks/autumn_interpreter.py --official`` does: per program both
interpreters' time over the same seeded random actions, the same frames checked, and the median ratio.

    python benchmarks/gym_throughput.py [--seconds 3] [--suites crafting --suites autumn] [--plancraft]
    python benchmarks/gym_throughput.py --suites autumn --autumn-cpp BUILD --autumn-programs DIR
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gymnasium
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv

import discogym.gym
from discogym.core import AgentOptions, get_suite
from discogym.core.running.planning import plan_episode

SUITES = {suite: env_id for env_id, suite in discogym.gym.ENV_IDS.items()}
VECTOR = 4


def bare(suite_name: str, seconds: float) -> tuple[int, float]:
    """Steps and seconds of ``Env.call`` over the suite's valid calls."""
    suite = get_suite(suite_name)
    tasks = suite.tasks(suite.splits()[0])
    condition = suite.conditions()[0]
    rng = random.Random(0)
    steps, spent, episode = 0, 0.0, 0
    while spent < seconds:
        task = tasks[episode % len(tasks)]
        seed = plan_episode(suite.name, task, condition, AgentOptions(name="gym"), 0, episode).env_seed
        env = suite.make_env(task, condition, seed)
        env.brief()
        while not env.done and spent < seconds:
            calls = env.valid_calls()
            call = calls[rng.randrange(len(calls))]
            started = time.perf_counter()
            env.call(call.tool, call.args)
            spent += time.perf_counter() - started
            steps += 1
        env.close()
        episode += 1
    return steps, spent


def single(env_id: str, seconds: float, out: str | None) -> tuple[int, float]:
    """Steps and seconds of one environment made by ``gymnasium.make``."""
    env = gymnasium.make(env_id, out=out) if out else gymnasium.make(env_id)
    suite = get_suite(discogym.gym.ENV_IDS[env_id])
    tasks = suite.tasks(suite.splits()[0])
    rng = random.Random(0)
    episode = 0
    env.reset(seed=episode, options={"task": tasks[0].id})
    steps, spent = 0, 0.0
    while spent < seconds:
        actions = env.unwrapped.valid_actions()  # type: ignore[attr-defined]
        action = actions[rng.randrange(len(actions))]
        started = time.perf_counter()
        _, _, terminated, truncated, _ = env.step(action)
        spent += time.perf_counter() - started
        steps += 1
        if terminated or truncated:
            episode += 1
            env.reset(seed=episode, options={"task": tasks[episode % len(tasks)].id})
    env.close()
    return steps, spent


def vector(env_id: str, seconds: float, mode: str) -> tuple[int, float]:
    """Environment steps and seconds of ``VECTOR`` environments made by ``gymnasium.make_vec``."""
    envs = gymnasium.make_vec(env_id, num_envs=VECTOR, vectorization_mode=mode)
    assert isinstance(envs, SyncVectorEnv | AsyncVectorEnv)
    rng = random.Random(0)
    envs.reset(seed=0)
    steps, spent = 0, 0.0
    while spent < seconds:
        choices = envs.call("valid_actions")
        actions = tuple(options[rng.randrange(len(options))] if options else "" for options in choices)
        started = time.perf_counter()
        envs.step(actions)
        spent += time.perf_counter() - started
        steps += VECTOR
    envs.close()
    return steps, spent


def measures(suite: str, env_id: str, seconds: float, folder: str) -> dict[str, Callable[[], tuple[int, float]]]:
    """The rows of one suite, each a measurement to make."""
    return {
        "bare": lambda: bare(suite, seconds),
        "gym": lambda: single(env_id, seconds, None),
        "gym, written": lambda: single(env_id, seconds, folder),
        "sync x4": lambda: vector(env_id, seconds, "sync"),
        "async x4": lambda: vector(env_id, seconds, "async"),
    }


PLANCRAFT = "plancraft==0.4.9"
# what plancraft.simple needs to import: its other requirements (pandas, wandb, openai, ...) are for its own agents
PLANCRAFT_NEEDS = ["pydantic", "pydantic-settings", "numpy", "pillow", "loguru", "networkx"]
PLANCRAFT_EXAMPLES = 20
PLANCRAFT_STEPS = 30


def plancraft_python() -> Path:
    """The python of a venv holding Plancraft's package, made in the cache the first time."""
    from discogym.core.model.cache import cache_dir

    venv = cache_dir() / "benchmarks" / "plancraft-0.4.9"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(python), "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, "--no-deps", PLANCRAFT], check=True)
        subprocess.run([*pip, *PLANCRAFT_NEEDS], check=True)
    return python


def plancraft_actions() -> dict[str, list[str]]:
    """The fixed policy's action texts on the first test examples, in ``discogym/Crafting-v0``."""
    env = gymnasium.make("discogym/Crafting-v0", split="test")
    rng = random.Random(0)
    plans: dict[str, list[str]] = {}
    for task in get_suite("crafting").tasks("test")[:PLANCRAFT_EXAMPLES]:
        env.reset(seed=0, options={"task": task.id})
        plans[task.id] = []
        for _ in range(PLANCRAFT_STEPS):
            options = [a for a in env.unwrapped.valid_actions() if not a.startswith("impossible")]  # type: ignore[attr-defined]
            action = options[rng.randrange(len(options))]
            plans[task.id].append(action)
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                break
    env.close()
    return plans


def ours_on(plans: dict[str, list[str]], condition: str) -> tuple[int, float]:
    """Steps and seconds of ``discogym/Crafting-v0`` under ``condition`` on the given action texts."""
    env = gymnasium.make("discogym/Crafting-v0", split="test", condition=condition)
    steps, spent = 0, 0.0
    for task_id, actions in sorted(plans.items()):
        env.reset(seed=0, options={"task": task_id})
        for action in actions:
            started = time.perf_counter()
            env.step(action)
            spent += time.perf_counter() - started
            steps += 1
    env.close()
    return steps, spent


def plancraft_on(python: Path, actions_file: Path, render: bool) -> tuple[int, float]:
    """Steps and seconds of Plancraft's wrapper on the same texts (benchmarks/plancraft_steps.py in its venv)."""
    script = Path(__file__).resolve().parent / "plancraft_steps.py"
    command = [str(python), str(script), str(actions_file), *([] if render else ["--no-render"])]
    result = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    if result["ended"]:
        raise SystemExit(f"Plancraft ended episodes ours did not: {result['ended']}")
    return result["steps"], result["seconds"]


def compare_with_plancraft() -> None:
    """Crafting against Plancraft's own environment on the same action texts (rows printed as the others)."""
    python = plancraft_python()
    plans = plancraft_actions()
    with tempfile.TemporaryDirectory() as folder:
        actions_file = Path(folder) / "actions.json"
        actions_file.write_text(json.dumps(plans), encoding="utf-8")
        pairs = [
            ("text", ours_on(plans, "mst-se-i"), plancraft_on(python, actions_file, render=False)),
            ("image-high", ours_on(plans, "image-high"), plancraft_on(python, actions_file, render=True)),
        ]
    print(f"{'crafting':9} {'vs Plancraft':13} {'steps':>7} {'ours/s':>9} {'theirs/s':>9} {'ratio':>8}")
    for name, (steps, spent), (their_steps, their_spent) in pairs:
        assert steps == their_steps, (steps, their_steps)
        ours, theirs = steps / spent, their_steps / their_spent
        print(f"{'crafting':9} {name:13} {steps:7,} {ours:9,.0f} {theirs:9,.0f} {ours / theirs:7.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds of stepping per row")
    parser.add_argument("--suites", action="append", choices=sorted(SUITES), help="suites (default: all)")
    parser.add_argument("--plancraft", action="store_true", help="crafting against Plancraft's own environment too")
    parser.add_argument("--autumn-cpp", metavar="BUILD", type=Path, help="autumn against Autumn.cpp's module too")
    parser.add_argument("--autumn-programs", metavar="DIR", type=Path, help="with --autumn-cpp: the programs")
    parser.add_argument("--autumn-stdlib", metavar="FILE", type=Path, help="with --autumn-cpp: its standard library")
    args = parser.parse_args()
    if args.autumn_cpp is not None and args.autumn_programs is None:
        parser.error("--autumn-cpp needs --autumn-programs (Autumn.cpp's tests/, say)")
    cores = os.cpu_count() or 1
    print(f"{'suite':9} {'row':13} {'steps':>7} {'steps/s':>9} {'per core':>9} {'vs bare':>8}")
    for suite in args.suites or sorted(SUITES):
        with tempfile.TemporaryDirectory() as folder:
            rows = measures(suite, SUITES[suite], args.seconds, folder)
            bare(suite, 1.0)  # warm: the first episodes fill the suite's caches (petri's simulations, say)
            cores_used = {"async x4": min(VECTOR, cores)}
            baseline = 0.0
            for name, measure in rows.items():
                steps, spent = measure()
                used = cores_used.get(name, 1)
                rate = steps / spent
                baseline = baseline or rate
                print(f"{suite:9} {name:13} {steps:7,} {rate:9,.0f} {rate / used:9,.0f} {rate / baseline:7.2f}x")
    if args.plancraft:
        compare_with_plancraft()
    if args.autumn_cpp is not None:
        print("\nautumn's interpreter against Autumn.cpp (benchmarks/autumn_interpreter.py --official):", flush=True)
        # in a process of its own: the heap the rows above left would slow the collector, and so ours
        command = [sys.executable, str(Path(__file__).with_name("autumn_interpreter.py")), "--official"]
        command += [str(args.autumn_cpp), "--programs", str(args.autumn_programs)]
        if args.autumn_stdlib is not None:
            command += ["--stdlib", str(args.autumn_stdlib)]
        subprocess.run(command, check=True)


if __name__ == "__main__":
    main()
