"""The redstone verdict recomputed from an episode's log: rebuild the submitted device, run the evaluator.

The device is rebuilt from the task's empty lab and the logged ``set_block`` calls (air removes), in order, with
the environment's own rules: the arguments are validated as the environment validated them, the block is parsed
by the environment's parser, a block outside the build region or without support changes nothing, and blocks
that lose their support drop with the edit (:meth:`~discogym.suites.redstone.world.World.place`). The world's
dynamics are not replayed: what happens between edits never changes which blocks stand where. Trials are the
``activate_button`` calls made while the device had exactly one button and the budget was not spent; the budget is
shared with the scientist's sessions logged inside ``ask_scientist`` calls, whose labs are replayed the same way.
The walk stops where the environment stopped taking calls: after ``submit`` or at the step limit. The evaluator
(:func:`~discogym.suites.redstone.evaluator.evaluate`) then presses the rebuilt device's button and checks the
contract.
"""

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from discogym.core import Event, ToolError, UserError
from discogym.core.running.crosscheck import accepted_args
from discogym.suites.redstone import evaluator
from discogym.suites.redstone.blocks import AIR, Block, Pos
from discogym.suites.redstone.book import ScientistNotes
from discogym.suites.redstone.build_lab import BuildLab, SetBlockArgs, TrialBudget
from discogym.suites.redstone.env import MAX_STEPS, Presentation, RedstoneEnv
from discogym.suites.redstone.lab import lab_world, the_button
from discogym.suites.redstone.scientist import LAB_STEPS, ScientistLab
from discogym.suites.redstone.tasks import TaskSpec


@dataclass
class DeviceLog:
    """What the log says the agent did to the device: the blocks standing at the end and the counters."""

    device: dict[Pos, Block] = field(default_factory=dict)
    submitted: bool = False
    trials: int = 0
    scientist_trials: int = 0
    rebuilds: int = 0
    edits: int = 0
    edited_since_trial: bool = False

    def count_edit(self) -> None:
        """One edit that changed the device; the first after a trial starts a rebuild."""
        self.edits += 1
        if self.trials and not self.edited_since_trial:
            self.rebuilds += 1
        self.edited_since_trial = True


class DeviceReplay:
    """Replays the device-changing calls of a log on the task's empty lab (the engineer's, or a scientist's)."""

    def __init__(self, spec: TaskSpec, env: BuildLab, budget: TrialBudget) -> None:
        self.spec = spec
        self.region = evaluator.region_of(spec)
        self.world = lab_world({}, self.region)
        self._env = env  # its tools' argument models and its block parser, never its simulator
        self.budget = budget
        self.log = DeviceLog()

    def apply(self, event: Event) -> None:
        """Apply one logged call (and the scientist's session it ran), as the environment applied it."""
        call = event.call
        args = accepted_args(self._env.tools(), call)
        if isinstance(args, SetBlockArgs):
            self._set_block(args)
        elif call.tool == "activate_button" and args is not None:
            self._trial()
        elif call.tool == "submit" and args is not None:
            self.log.submitted = True
        elif call.tool == "clear_lab" and args is not None:
            self.world = lab_world({}, self.region)
            self.log.device.clear()
        elif call.tool == "ask_scientist" and args is not None and event.session is not None:
            self._scientist(event.session.events)

    def _scientist(self, events: list[Event]) -> None:
        lab = DeviceReplay(self.spec, ScientistLab(self.spec, TrialBudget(), ScientistNotes(), ""), self.budget)
        for event in events[:LAB_STEPS]:
            lab.apply(event)
        self.log.scientist_trials += lab.log.trials

    def _set_block(self, args: SetBlockArgs) -> None:
        pos = (args.x, args.y, args.z)
        try:
            block = self._env.parse_block(args.block, args.properties)
        except ToolError:
            return
        if not self.region.contains(pos) or (block.id == AIR and pos not in self.log.device):
            return
        try:
            dropped = self.world.place(pos, block)
        except UserError:  # no support: nothing changes
            return
        if block.id == AIR:
            self.log.device.pop(pos, None)
        else:
            self.log.device[pos] = block
        for gone in dropped:
            self.log.device.pop(gone, None)
        self.log.count_edit()

    def _trial(self) -> None:
        if isinstance(the_button(self.log.device), str) or self.budget.left <= 0:
            return
        self.log.trials += 1
        self.budget.used += 1
        self.log.edited_since_trial = False


def replay_device(spec: TaskSpec, events: list[Event], presentation: Presentation | None = None) -> DeviceLog:
    """The device and counters the logged calls produce, up to the submit or the step limit."""
    replay = DeviceReplay(spec, RedstoneEnv(spec, presentation or Presentation()), TrialBudget())
    for event in events[:MAX_STEPS]:
        replay.apply(event)
        if replay.log.submitted:
            break
    return replay.log


class RedstoneVerdict(BaseModel):
    """The fields of the environment's outcome, recomputed from the log."""

    submitted: bool
    check: dict[str, Any]
    passed: bool
    trials: int
    rebuilds: int
    edits: int
    blocks: int
    device: list[str]
    scientist_trials: int


def recompute(spec: TaskSpec, events: list[Event], presentation: Presentation | None = None) -> RedstoneVerdict:
    """The evaluator's verdict on the device the log rebuilds, whether it was submitted and passed, and the
    counters."""
    log = replay_device(spec, events, presentation)
    report = evaluator.evaluate(spec, log.device)
    return RedstoneVerdict(
        submitted=log.submitted,
        check=report.document(),
        passed=log.submitted and report.passed,
        trials=log.trials,
        rebuilds=log.rebuilds,
        edits=log.edits,
        blocks=len(log.device),
        device=[f"{x} {y} {z} {block}" for (x, y, z), block in sorted(log.device.items())],
        scientist_trials=log.scientist_trials,
    )
