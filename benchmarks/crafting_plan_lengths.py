"""Crafting: environment actions per solved task, the planner's decomposition against the action-level optimizer.

For every possible example of each split, the planner's recipes (their count equals the dataset's
``optimal_path_length``) are laid out as the planner's decomposition and as the optimizer's rewrite of it;
both are played on a fresh table and must hold the target. Prints, per split, the tasks solved and the mean
action count per solved task of each, and how many tasks the optimizer shortens.

    python benchmarks/crafting_plan_lengths.py [--split test] [--split val] ...
"""

import argparse
import time

from discogym.suites.crafting import data
from discogym.suites.crafting.optimizer import optimize, play
from discogym.suites.crafting.recipes import recipe_book


def measure(split: str) -> dict[str, float]:
    """Tasks, solved, mean actions (decomposition, optimizer), tasks shortened, seconds, for one split."""
    book = recipe_book()
    started = time.perf_counter()
    possible = solved = shortened = decomposition = optimized = 0
    for example in data.load_split(split):
        if example.impossible:
            continue
        possible += 1
        slots = example.table()
        result = optimize(book, example.target, slots)
        if result is None or len(result.plan.recipes) != example.optimal_path_length:
            continue
        if play(book, example.target, slots, result.decomposition) != len(result.decomposition):
            continue
        if play(book, example.target, slots, result.actions) != len(result.actions):
            continue
        solved += 1
        decomposition += len(result.decomposition)
        optimized += len(result.actions)
        shortened += len(result.actions) < len(result.decomposition)
    return {
        "possible": possible,
        "solved": solved,
        "decomposition": decomposition / max(solved, 1),
        "optimizer": optimized / max(solved, 1),
        "shortened": shortened,
        "seconds": time.perf_counter() - started,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", action="append", help="a split (repeatable); default: test, val, train")
    args = parser.parse_args()
    print(f"{'split':<18}{'solved':>12}{'decomposition':>15}{'optimizer':>11}{'shortened':>11}{'seconds':>9}")
    for split in args.split or ["test", "val", "train"]:
        m = measure(split)
        print(
            f"{split:<18}{m['solved']:>6}/{m['possible']:<5}{m['decomposition']:>15.3f}{m['optimizer']:>11.3f}"
            f"{m['shortened']:>11}{m['seconds']:>9.2f}"
        )


if __name__ == "__main__":
    main()
