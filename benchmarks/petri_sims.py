"""petri simulations: the wall time of one experiment-sized batch (12 seeds x 2 configurations) per
simulation, vectorized across replicates, and its speed-up over running the same 24 replicates one by one.

The second configuration sets the simulation's first driver to its first test value, as an agent's
isolating experiment would. Times are the best of ``--repeats`` runs.

    python benchmarks/petri_sims.py [--repeats 3] [--sim NAME ...]
"""

import argparse
import time
from collections.abc import Callable

from discogym.suites.petri.sims.base import Simulation
from discogym.suites.petri.sims.registry import all_simulations

SEEDS = list(range(12))


def best_time(work: Callable[[], object], repeats: int) -> float:
    """The shortest wall time of ``repeats`` runs of ``work``."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def experiment_arms(sim: Simulation) -> list[dict[str, float]]:
    """Control, and control with the first driver at its first test value."""
    driver = next(param for param in sim.params if param.role == "driver")
    return [{}, {driver.name: driver.test_values[0]}]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sim", action="append", choices=sorted(all_simulations()))
    args = parser.parse_args()
    print(f"{'simulation':<10} {'batch 12x2 (s)':>15} {'24 one by one (s)':>18} {'speed-up':>9}")
    for name in args.sim or list(all_simulations()):
        sim = all_simulations()[name]
        arms = experiment_arms(sim)
        sim.run(arms[0], SEEDS[:2])  # warm-up: imports, caches

        def vectorized(sim: Simulation = sim, arms: list[dict[str, float]] = arms) -> None:
            for arm in arms:
                sim.run(arm, SEEDS)

        def one_by_one(sim: Simulation = sim, arms: list[dict[str, float]] = arms) -> None:
            for arm in arms:
                for seed in SEEDS:
                    sim.run(arm, [seed])

        batch = best_time(vectorized, args.repeats)
        single = best_time(one_by_one, args.repeats)
        print(f"{name:<10} {batch:>15.3f} {single:>18.3f} {single / batch:>8.2f}x")


if __name__ == "__main__":
    main()
