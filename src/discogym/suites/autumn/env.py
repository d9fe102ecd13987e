"""WorldTest's two phases as an environment: reward-free interaction, then the test of the task's type.

Interaction: ``act`` with ``noop``, ``up``, ``down``, ``left``, ``right``, ``click X Y`` or ``reset`` (back to the
initial state); ``go_to_test`` ends the phase (so does the step cap). The brief says only what the paper's
interface tells a participant while exploring: the grid, the actions, and that a test follows; never the
environment's rules (the catalogue's description is for docs and reports) nor the test's kind, which is
announced when the test begins. Test:

- masked frame prediction: ``show_frame N`` steps or rewinds through the masked frames of a fixed action
  sequence; ``answer K`` picks one of six options for the masked rectangle of the last frame;
- planning: ``act`` until the goal's cells show the goal's colours (or the step limit);
- change detection: ``act`` in the environment, whose rules change at some point; ``found_change`` signals it,
  then ``choose_frame N`` picks the frame where the change first showed.

Observations are the grid as rows of colour names (row 0 at the top, x left to right), with frame numbers.
"""

from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from discogym.core import Env, Limits, NoArgs, Termination, ToolArgs, ToolCall, ToolError, ToolResult, tool
from discogym.suites.autumn.challenges import OPTIONS, ChangeTask, MfpTask, PlanningTask, goal_reached, masked, play
from discogym.suites.autumn.interpreter import Interpreter, parse_action
from discogym.suites.autumn.sexpr import AutumnError
from discogym.suites.autumn.tasks import AutumnTask, new_world

INTERACTION = "interaction"
TEST = "test"
DEFAULT_FRAME_RATE = 8
TASK_BRIEF = "A grid world to explore without reward (act, reset); a test follows, told to you only when it begins."


class Presentation(BaseModel):
    """A condition: the interaction phase's step cap and frame stacking."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    interaction_steps: int = Field(default=200, ge=0)
    frame_stacking: bool = False


class ActArgs(ToolArgs):
    action: str = Field(description="noop, up, down, left, right, click X Y, or reset (interaction phase only)")


NOTES_LIMIT = 20_000  # characters the scratchpad holds in all: every call's result repeats them, and is logged


class NoteArgs(ToolArgs):
    note: str = Field(
        description=f"anything you want to remember; every note so far comes back (at most {NOTES_LIMIT} "
        "characters of notes in all)"
    )


class IndexArgs(ToolArgs):
    """A number the test asks for: a frame (show_frame, choose_frame) or an option (answer)."""

    index: int = Field(ge=0, description="a frame number or an option number")


class ShowFrameArgs(IndexArgs):
    index: int = Field(ge=0, description="which frame of the replayed sequence to show: 0 is the start")


class AnswerArgs(IndexArgs):
    index: int = Field(ge=0, description=f"the option (0 to {OPTIONS - 1}) that fills the masked rectangle")


class ChooseFrameArgs(IndexArgs):
    index: int = Field(ge=0, description="the number of the test frame where the change first became visible")


def _mask_words(challenge: MfpTask) -> str:
    """Where the mask is, as the test's introduction says it."""
    x, y, width, height = challenge.mask
    box = f"x {x}..{x + width - 1}, y {y}..{y + height - 1}"
    if challenge.frames is not None:
        return (
            f"towards the end, cells are masked (shown as mask) within the rectangle {box}; an option gives the "
            "rectangle's content"
        )
    return f"the rectangle {box} is masked in every frame"


def grid_text(frame: list[list[str]]) -> str:
    """The grid as rows of colour names."""
    return "\n".join(" ".join(row) for row in frame)


class WorldTestEnv(Env):
    """One task: explore the environment without reward, then take its test."""

    limits: ClassVar[Limits] = Limits(max_steps=2000)

    def __init__(self, task: AutumnTask, source: str, presentation: Presentation) -> None:
        self.task = task
        self.source = source
        self.presentation = presentation
        self.challenge = task.challenge
        self.phase = INTERACTION
        self.interaction_actions: list[str] = []
        self.interaction_frames = 1  # frames shown so far in the interaction phase; the brief shows frame 0
        self.resets = 0
        self.test_actions: list[str] = []
        self.mfp_choice: int | None = None
        self.reached_at: int | None = None
        self.signalled_at: int | None = None
        self.chosen_frame: int | None = None
        self.errors: list[str] = []
        self.notes: list[str] = []
        self.rng = np.random.default_rng([self.challenge.seed, 5])
        self.world = self._start(source)
        self.test_frames: list[list[list[str]]] = []
        self.mfp_shown: int | None = None  # the masked frame shown last (None: the last frame, shown at the start)
        self._masked_frames: list[list[list[str]]] | None = None  # the masked-frame test's frames, computed once

    def _start(self, source: str) -> Interpreter:
        return new_world(self.task, source)

    # What the agent reads

    def brief(self) -> str:
        """The grid, the actions and the promise of a test: nothing about the rules or which test it is."""
        size = self.world.grid_size
        cap = self.presentation.interaction_steps
        return "\n".join(
            [
                f"A grid world of {size} x {size} cells, shown as rows of colour names (row 0 at the top).",
                "Interaction phase: there is no reward and nothing to achieve. Act to learn how the world behaves: "
                "act(action) with noop, up, down, left, right, click X Y (x from the left, y from the top, from 0), "
                f"or reset (to the initial state). After at most {cap} actions, or when you call go_to_test, a test "
                "begins that asks you to use what you learned; you are told what it is then.",
                "",
                self._observe(0, self.world.frame),
            ]
        )

    def example_action(self) -> str | None:
        middle = self.world.grid_size // 2
        return f"click {middle} {middle}"

    def _observe(self, number: int, frame: list[list[str]]) -> str:
        return f"frame {number}:\n{grid_text(frame)}"

    # Tools

    @tool(ActArgs)
    def act(self, args: ActArgs) -> ToolResult:
        """Take an action (interaction phase, planning and change-detection tests)."""
        text = args.action.strip().lower()
        if self.phase == INTERACTION:
            return self._interact(text)
        if self.challenge.kind == "mfp":
            raise ToolError("this test replays fixed frames: use show_frame and answer")
        if self.challenge.kind == "cd" and self.signalled_at is not None:
            raise ToolError("you signalled the change: now choose_frame the frame where it first showed")
        action = self._parse(text, allow_reset=False)
        self.test_actions.append(text)
        frame = self._step(action)
        self.test_frames.append(frame)
        number = len(self.test_frames) - 1
        result = self._observe(number, frame)
        if isinstance(self.challenge, PlanningTask):
            if goal_reached(frame, self.challenge.goal):
                self.reached_at = number
                self.finish(Termination.GOAL_REACHED)
                return ToolResult(text=result + "\nThe goal is reached.", data={"frame": frame}, done=True)
            if len(self.test_actions) >= self.challenge.step_limit:
                self.finish(Termination.STEP_LIMIT)
                return ToolResult(text=result + "\nThe step limit is reached.", data={"frame": frame}, done=True)
        elif isinstance(self.challenge, ChangeTask) and len(self.test_actions) >= self.challenge.step_limit:
            self.finish(Termination.STEP_LIMIT)
            return ToolResult(text=result + "\nThe step limit is reached.", data={"frame": frame}, done=True)
        return ToolResult(text=result, data={"frame": frame})

    @tool(NoArgs)
    def go_to_test(self, args: NoArgs) -> ToolResult:
        """End the interaction phase and begin the test."""
        if self.phase != INTERACTION:
            raise ToolError("the test has begun already")
        return self._begin_test("")

    @tool(ShowFrameArgs)
    def show_frame(self, args: ShowFrameArgs) -> ToolResult:
        """Masked frame prediction test: show frame `index` of the replayed sequence, the masked rectangle hidden;
        frames can be shown in any order, again and again."""
        mfp = self._mfp()
        frames = self._mfp_frames()
        if args.index >= len(frames):
            raise ToolError(f"frames are numbered 0 to {len(frames) - 1}")
        action = "start" if args.index == 0 else f"after {mfp.actions[args.index - 1]}"
        self.mfp_shown = args.index
        return ToolResult(text=f"frame {args.index} ({action}):\n{grid_text(frames[args.index])}")

    @tool(AnswerArgs)
    def answer(self, args: AnswerArgs) -> ToolResult:
        """Masked frame prediction test: answer with option `index`, the one that fills the masked rectangle of
        the last frame; ends the test."""
        self._mfp()
        if args.index >= OPTIONS:
            raise ToolError(f"options are numbered 0 to {OPTIONS - 1}")
        self.mfp_choice = args.index
        self.finish(Termination.ANSWERED)
        return ToolResult(text=f"you chose option {args.index}; the test is over", done=True)

    @tool(NoArgs)
    def found_change(self, args: NoArgs) -> ToolResult:
        """Change detection: signal that the rules have changed."""
        if self.phase != TEST or self.challenge.kind != "cd":
            raise ToolError("found_change belongs to the change-detection test")
        if self.signalled_at is None:
            self.signalled_at = len(self.test_frames) - 1
        last = len(self.test_frames) - 1
        return ToolResult(text=f"noted at frame {last}; now choose_frame N (0 to {last}): where did it first show?")

    @tool(ChooseFrameArgs)
    def choose_frame(self, args: ChooseFrameArgs) -> ToolResult:
        """Change detection test, after found_change: choose frame `index`, the test frame where the change
        first became visible; ends the test."""
        if self.phase != TEST or self.challenge.kind != "cd" or self.signalled_at is None:
            raise ToolError("choose_frame comes after found_change, in the change-detection test")
        if args.index >= len(self.test_frames):
            raise ToolError(f"frames are numbered 0 to {len(self.test_frames) - 1}")
        self.chosen_frame = args.index
        self.finish(Termination.FRAME_CHOSEN)
        return ToolResult(text=f"you chose frame {args.index}; the test is over", done=True)

    @tool(NoteArgs)
    def scratchpad(self, args: NoteArgs) -> ToolResult:
        """Write a note (no time passes); returns every note so far."""
        used = sum(len(note) for note in self.notes)
        if used + len(args.note) > NOTES_LIMIT:
            raise ToolError(
                f"the scratchpad is full: it holds {NOTES_LIMIT} characters of notes, {used} are used and this "
                f"note has {len(args.note)}; write a shorter note"
            )
        self.notes.append(args.note)
        return ToolResult(text="notes:\n" + "\n".join(f"{i}. {n}" for i, n in enumerate(self.notes, start=1)))

    # The text syntax (a person at the terminal, or a model with --agent-opt mode=suite)

    def text_prompt(self) -> str:
        return TEXT_SYNTAX

    def parse_text_action(self, text: str) -> ToolCall:
        return parse_text(text)

    def format_text_action(self, call: ToolCall) -> str | None:
        return format_text(call)

    # Phases

    def _interact(self, text: str) -> ToolResult:
        action = self._parse(text, allow_reset=True)
        self.interaction_actions.append(text)
        if text == "reset":
            self.resets += 1
            self.world = self._start(self.source)
            frames = [self.world.frame]
        else:
            frames = [self._step(action)]
            if self.presentation.frame_stacking:
                frames += [self._step(None) for _ in range(self.frame_rate() - 1)]
        first = self.interaction_frames
        self.interaction_frames += len(frames)
        text_frames = "\n".join(self._observe(first + i, f) for i, f in enumerate(frames))
        if len(self.interaction_actions) >= self.presentation.interaction_steps:
            return self._begin_test(text_frames + "\nThe interaction phase is over (step cap).\n")
        return ToolResult(text=text_frames, data={"frame": frames[-1]})

    def _begin_test(self, before: str) -> ToolResult:
        self.phase = TEST
        challenge = self.challenge
        if isinstance(challenge, MfpTask):
            frames = self._mfp_frames()
            lines = [
                "Test: masked frame prediction. A fixed sequence of actions was taken from the start; "
                f"{_mask_words(challenge)}. Which option is the masked content of the last frame (frame "
                f"{len(frames) - 1})? Use show_frame N to see frames, answer K to choose.",
                "actions: " + "; ".join(challenge.actions),
                *(
                    f"option {i}: " + " / ".join(" ".join(row) for row in option)
                    for i, option in enumerate(challenge.options)
                ),
                "",
                f"frame {len(frames) - 1}:\n{grid_text(frames[-1])}",
            ]
            return ToolResult(text=before + "\n".join(lines))
        self.world = self._start(challenge.modified if isinstance(challenge, ChangeTask) else self.source)
        self.test_frames = [self.world.frame]
        if isinstance(challenge, PlanningTask):
            goal = ", ".join(f"({x},{y}) {colour}" for x, y, colour in challenge.goal)
            intro = (
                f"Test: planning. From the start, act until these cells show these colours: {goal}. You have "
                f"{challenge.step_limit} actions; reset is not available."
            )
        else:
            intro = (
                "Test: change detection. You act in the environment from the start; at some point its rules change. "
                "When you notice, call found_change, then choose_frame N for the frame where the change first "
                f"became visible. You have {challenge.step_limit} actions; reset is not available."
            )
        return ToolResult(text=before + intro + "\n\n" + self._observe(0, self.world.frame))

    def _mfp(self) -> MfpTask:
        if self.phase != TEST or not isinstance(self.challenge, MfpTask):
            raise ToolError("show_frame and answer belong to the masked-frame-prediction test")
        return self.challenge

    def _mfp_frames(self) -> list[list[list[str]]]:
        """The masked-frame test's frames, replayed once per episode: a slider that shows frame after frame (the
        web app's) must not replay the world for each one."""
        assert isinstance(self.challenge, MfpTask)
        if self.challenge.frames is not None:  # the official split: the published frames
            return self.challenge.frames
        if self._masked_frames is None:
            frames = play(self.source, [parse_action(a) for a in self.challenge.actions], self.challenge.seed)
            self._masked_frames = [masked(frame, self.challenge.mask) for frame in frames]
        return self._masked_frames

    def _parse(self, text: str, allow_reset: bool) -> Any:
        if text == "reset":
            if not allow_reset:
                raise ToolError("reset is only available in the interaction phase")
            return None
        try:
            action = parse_action(text)
        except ValueError:
            raise ToolError(f"unknown action {text!r}: noop, up, down, left, right, click X Y or reset") from None
        if isinstance(action, tuple):
            size = self.world.grid_size
            if not (0 <= action[1] < size and 0 <= action[2] < size):
                raise ToolError(f"click X Y takes a cell of the {size} x {size} grid (0 to {size - 1})")
        return action

    def _step(self, action: Any) -> list[list[str]]:
        try:
            return self.world.step(action)
        except AutumnError as err:  # a program error: the frame stays, the episode goes on
            self.errors.append(err.describe())
            return self.world.frame

    # What a person sees (the web app's grid screen)

    def frame_rate(self) -> int:
        """Frames a second when people play in real time: the program's FRAME_RATE, else 8 (the paper's 3 to 8)."""
        return max(1, int(self.world.globals.get("FRAME_RATE", DEFAULT_FRAME_RATE)))

    def view(self) -> dict[str, Any]:
        """The grid and the controls of the phase: what the text shows an agent, as data for a canvas."""
        shown: dict[str, Any] = {
            "kind": "grid",
            "size": self.world.grid_size,
            "phase": self.phase,
            "frame_rate": self.frame_rate(),
        }
        if self.phase == INTERACTION:
            cap = self.presentation.interaction_steps
            return shown | {
                "frame": self.world.frame,
                "frame_number": self.interaction_frames - 1,
                "steps_left": cap - len(self.interaction_actions),
            }
        challenge = self.challenge
        if isinstance(challenge, MfpTask):
            frames = self._mfp_frames()
            index = len(frames) - 1 if self.mfp_shown is None else self.mfp_shown
            return shown | {
                "test": "mfp",
                "frame": frames[index],
                "frame_number": index,
                "frames": len(frames),
                "actions": challenge.actions,
                "mask": list(challenge.mask),
                "options": [[list(row) for row in option] for option in challenge.options],
            }
        shown |= {
            "frame": self.world.frame,
            "frame_number": len(self.test_frames) - 1,
            "steps_left": challenge.step_limit - len(self.test_actions),
        }
        if isinstance(challenge, PlanningTask):
            return shown | {"test": "planning", "goal": [[x, y, colour] for x, y, colour in challenge.goal]}
        signalled = self.signalled_at is not None
        return shown | {"test": "cd", "signalled": signalled, "frames": self.test_frames if signalled else None}

    # The record

    def outcome(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "interaction_actions": self.interaction_actions,
            "resets": self.resets,
            "test_actions": self.test_actions,
            "mfp_choice": self.mfp_choice,
            "reached_at": self.reached_at,
            "signalled_at": self.signalled_at,
            "chosen_frame": self.chosen_frame,
            "program_errors": self.errors[:20],
        }

    def valid_calls(self) -> list[ToolCall]:
        """The paper's random agent: the six action types with equal weight (a click at a random cell), plus the
        test's own choices."""
        size = self.world.grid_size
        x, y = (int(v) for v in self.rng.integers(size, size=2))
        actions = ["noop", "up", "down", "left", "right", f"click {x} {y}"]
        if self.phase == INTERACTION:
            return [ToolCall(tool="act", args={"action": a}) for a in actions] + [ToolCall(tool="go_to_test", args={})]
        if isinstance(self.challenge, MfpTask):
            return [ToolCall(tool="answer", args={"index": i}) for i in range(OPTIONS)]
        calls = [ToolCall(tool="act", args={"action": a}) for a in actions]
        if isinstance(self.challenge, ChangeTask):
            if self.signalled_at is None:
                calls.append(ToolCall(tool="found_change", args={}))
            else:
                calls = [ToolCall(tool="choose_frame", args={"index": int(self.rng.integers(len(self.test_frames)))})]
        return calls


TEXT_SYNTAX = """Actions, one per line:
  noop | up | down | left | right | click X Y | reset     act (reset only while exploring)
  test                                                   go to the test
  frame N | answer K                                     masked frame prediction: view frame N, choose option K
  found | choose N                                       change detection: signal the change, pick frame N
  note TEXT                                              write a note in the scratchpad"""


def parse_text(text: str) -> ToolCall:
    """The action in a reply: its last line that is an action in the text syntax (a model may reason first);
    ToolError with the syntax when no line is one."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        call = _parse_line(line)
        if call is not None:
            return call
    shown = lines[-1] if lines else ""
    raise ToolError(f"not an action: {shown!r}\n{TEXT_SYNTAX}")


_WORDS = {"go_to_test": "test", "found_change": "found", "show_frame": "frame", "answer": "answer"}


def format_text(call: ToolCall) -> str | None:
    """``call`` as a line of the text syntax (what :func:`parse_text` reads back), or None for an unknown tool."""
    args = call.args if isinstance(call.args, dict) else {}
    if call.tool == "act":
        return str(args.get("action", ""))
    if call.tool == "scratchpad":
        return f"note {args.get('note', '')}"
    if call.tool in ("go_to_test", "found_change"):
        return _WORDS[call.tool]
    if call.tool in ("show_frame", "answer"):
        return f"{_WORDS[call.tool]} {args.get('index')}"
    if call.tool == "choose_frame":
        return f"choose {args.get('index')}"
    return None


def _parse_line(line: str) -> ToolCall | None:
    words = line.split()
    verb = words[0].lower()
    if verb in ("noop", "up", "down", "left", "right", "reset") and len(words) == 1:
        return ToolCall(tool="act", args={"action": verb})
    if verb == "click" and len(words) == 3 and all(w.lstrip("-").isdigit() for w in words[1:]):
        return ToolCall(tool="act", args={"action": " ".join(words).lower()})
    if verb == "test" and len(words) == 1:
        return ToolCall(tool="go_to_test", args={})
    if verb == "found" and len(words) == 1:
        return ToolCall(tool="found_change", args={})
    if verb == "note" and len(words) > 1:
        return ToolCall(tool="scratchpad", args={"note": line[len(words[0]) :].strip()})
    tools = {"frame": "show_frame", "answer": "answer", "choose": "choose_frame"}
    if verb in tools and len(words) == 2 and words[1].isdigit():
        return ToolCall(tool=tools[verb], args={"index": int(words[1])})
    return None
