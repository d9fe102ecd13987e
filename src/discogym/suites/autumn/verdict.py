"""The autumn verdict recomputed from an episode's log: walk WorldTest's phases through the logged calls.

The walk follows the environment's rules call by call: arguments validated as the environment validated them,
actions parsed by the interpreter's parser (a click must land on the grid), the interaction phase ended by
``go_to_test`` or the step cap of the condition, and the test ended by its answer, its goal or its step limit.
It reads the MFP option from the accepted ``answer`` call, the change-detection signal's frame and the chosen
frame from ``found_change`` and ``choose_frame``; for planning it replays the test's actions with the interpreter
from the start, with the challenge's seed (the task's ``ground_truth``: the seed the environment ran with), and
finds the first frame that shows the goal. The interaction phase changes no verdict, so it is not simulated.
"""

from collections.abc import Sequence
from functools import cache

from pydantic import BaseModel, Field

from discogym.core import Event, ToolCall
from discogym.core.running.crosscheck import accepted_args
from discogym.suites.autumn.challenges import OPTIONS, ChangeTask, MfpTask, PlanningTask, goal_reached
from discogym.suites.autumn.env import INTERACTION, TEST, ActArgs, IndexArgs, Presentation, WorldTestEnv
from discogym.suites.autumn.interpreter import Action, Interpreter, parse_action
from discogym.suites.autumn.sexpr import AutumnError
from discogym.suites.autumn.tasks import AutumnTask, new_world

TOOLS = WorldTestEnv.declared_tools()


@cache
def grid_size(source: str, seed: int) -> int:
    """The program's grid size (the environment checks clicks against it)."""
    return Interpreter(source, seed=seed).grid_size


class AutumnVerdict(BaseModel):
    """The fields of the environment's outcome that the score reads, recomputed from the log."""

    phase: str = INTERACTION
    interaction_actions: list[str] = Field(default_factory=list)
    resets: int = 0
    test_actions: list[str] = Field(default_factory=list)
    mfp_choice: int | None = None
    reached_at: int | None = None
    signalled_at: int | None = None
    chosen_frame: int | None = None


class WorldTestWalk:
    """The phases of one WorldTest episode, advanced by the logged calls."""

    def __init__(self, task: AutumnTask, source: str, presentation: Presentation) -> None:
        self.task = task
        self.challenge = task.challenge
        self.source = source
        self.presentation = presentation
        self.verdict = AutumnVerdict()
        self.done = False
        self._planning_world: Interpreter | None = None

    def apply(self, call: ToolCall) -> None:
        """Apply one logged call, as the environment applied it."""
        args = accepted_args(TOOLS, call)
        if isinstance(args, ActArgs):
            self._act(args.action.strip().lower())
        elif call.tool == "go_to_test" and args is not None and self.verdict.phase == INTERACTION:
            self._begin_test()
        elif isinstance(args, IndexArgs) and self.verdict.phase == TEST:
            self._choose(call.tool, args.index)
        elif call.tool == "found_change" and args is not None:
            self._signal()

    def _action(self, text: str) -> Action:
        """The action ``text`` names; ValueError when the environment refused it (reset is the callers' to handle)."""
        action = parse_action(text)
        if isinstance(action, tuple):
            size = grid_size(self.source, self.challenge.seed)  # loaded only when a click needs it
            if not (0 <= action[1] < size and 0 <= action[2] < size):
                raise ValueError(f"click off the {size} x {size} grid")
        return action

    def _act(self, text: str) -> None:
        if self.verdict.phase == INTERACTION:
            self._explore(text)
            return
        # The MFP test takes no actions, change detection none after the signal, and no test takes reset.
        if isinstance(self.challenge, MfpTask) or self.verdict.signalled_at is not None or text == "reset":
            return
        try:
            action = self._action(text)
        except ValueError:
            return
        self.verdict.test_actions.append(text)
        self._test_step(action)

    def _explore(self, text: str) -> None:
        verdict = self.verdict
        if text == "reset":
            verdict.resets += 1
        else:
            try:
                self._action(text)
            except ValueError:
                return
        verdict.interaction_actions.append(text)
        if len(verdict.interaction_actions) >= self.presentation.interaction_steps:
            self._begin_test()

    def _test_step(self, action: Action) -> None:
        challenge, verdict = self.challenge, self.verdict
        number = len(verdict.test_actions)  # the frame this action made; frame 0 is the start
        if isinstance(challenge, PlanningTask) and goal_reached(self._planning_step(action), challenge.goal):
            verdict.reached_at = number
            self.done = True
        elif isinstance(challenge, PlanningTask | ChangeTask) and number >= challenge.step_limit:
            self.done = True

    def _planning_step(self, action: Action) -> list[list[str]]:
        world = self._planning_world
        assert world is not None
        try:
            return world.step(action)
        except AutumnError:  # a program error: the frame stays, as in the environment
            return world.frame

    def _begin_test(self) -> None:
        self.verdict.phase = TEST
        if isinstance(self.challenge, PlanningTask):
            self._planning_world = new_world(self.task, self.source)

    def _choose(self, tool: str, index: int) -> None:
        verdict = self.verdict
        if tool == "answer" and isinstance(self.challenge, MfpTask) and index < OPTIONS:
            verdict.mfp_choice = index
            self.done = True
        elif tool == "choose_frame" and self._choosing() and index <= len(verdict.test_actions):  # frames 0..n
            verdict.chosen_frame = index
            self.done = True

    def _choosing(self) -> bool:
        """Whether the change-detection test waits for its frame (the change was signalled)."""
        return isinstance(self.challenge, ChangeTask) and self.verdict.signalled_at is not None

    def _signal(self) -> None:
        if self.verdict.phase == TEST and isinstance(self.challenge, ChangeTask) and self.verdict.signalled_at is None:
            self.verdict.signalled_at = len(self.verdict.test_actions)


def recompute(task: AutumnTask, source: str, presentation: Presentation, events: Sequence[Event]) -> AutumnVerdict:
    """What the logged calls did: the phase reached, the actions of each phase, and the test's answer."""
    walk = WorldTestWalk(task, source, presentation)
    max_steps = WorldTestEnv.limits.max_steps
    for event in events[:max_steps] if max_steps is not None else events:
        walk.apply(event.call)
        if walk.done:
            break
    return walk.verdict
