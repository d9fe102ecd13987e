"""Plancraft's own environment stepped on given text actions (run by gym_throughput.py --plancraft, in a venv of its
own that holds the ``plancraft`` package; it imports nothing of discogym).

    python plancraft_steps.py ACTIONS.json [--no-render]

ACTIONS.json maps test-split example ids to action texts. For each example, a ``PlancraftGymWrapper`` is built on a
copy of the example (the wrapper has no reset(), and it changes the inventory it is given) and asked for its first
observation, neither timed; then each action is one timed ``step``, until the list or the episode ends. With
``--no-render`` the crafting-table drawing is stubbed out (the game's state never reads it), for a comparison with
text observations. Prints ``{"steps", "seconds", "ended"}`` as JSON: ``ended`` lists the examples whose episode ended
before their actions did.
"""

import argparse
import copy
import json
import time
from pathlib import Path


def stub_the_drawing() -> None:
    """The crafting-table picture drawn by nothing: Plancraft renders it at every step and has no switch."""
    from plancraft.environment import env as plancraft_env

    gui = plancraft_env.CraftingTableGUI
    gui.__init__ = lambda self, resolution="high": None
    gui.add_item_to_slot = lambda self, item_name, slot, quantity=1: None
    gui.remove_item_from_slot = lambda self, slot: None
    gui.clear = lambda self: None
    gui.frame = property(lambda self: None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("actions", type=Path)
    parser.add_argument("--no-render", action="store_true")
    args = parser.parse_args()
    if args.no_render:
        stub_the_drawing()
    from plancraft.simple import PlancraftGymWrapper, get_plancraft_examples

    plans: dict[str, list[str]] = json.loads(args.actions.read_text(encoding="utf-8"))
    examples = {example.id: example for example in get_plancraft_examples(split="test")}
    steps, seconds, ended = 0, 0.0, []
    for example_id, actions in sorted(plans.items()):
        wrapper = PlancraftGymWrapper(example=copy.deepcopy(examples[example_id]), max_steps=len(actions) + 1)
        wrapper.step(None)  # the first observation, as reset() would give it
        for position, action in enumerate(actions):
            started = time.perf_counter()
            _, _, terminated, truncated, _ = wrapper.step(action)
            seconds += time.perf_counter() - started
            steps += 1
            if terminated or truncated:
                if position + 1 < len(actions):
                    ended.append(example_id)
                break
    print(json.dumps({"steps": steps, "seconds": seconds, "ended": ended}))


if __name__ == "__main__":
    main()
