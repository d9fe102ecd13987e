"""SciCrafter's build lab: a flat floor, the task's palette, the block tools, the button, the event stream and the
verification trials. The engineer's environment (:mod:`discogym.suites.redstone.env`) and the scientist's
(:mod:`discogym.suites.redstone.scientist`) are both build labs, each with tools of its own.

The world runs as the game would between the agent's actions: after every edit it runs on until nothing is
scheduled (at most :data:`EDIT_RUN_LIMIT` gt), and a verification trial presses the device's button and runs
until quiet (at most :data:`evaluator.RUN_LIMIT` gt). The agent sees raw block states and state changes only.
"""

from typing import Any, Literal

from pydantic import Field

from discogym.core import Env, NoArgs, ToolArgs, ToolCall, ToolError, ToolResult, UserError, tool
from discogym.core.terminal.human import parse_tool_line, usage_line
from discogym.suites.redstone import evaluator
from discogym.suites.redstone.blocks import AIR, BUTTON, COMPUTED, Block, Pos, make_block, parse_block, placed_part
from discogym.suites.redstone.engine import Change, Simulator
from discogym.suites.redstone.lab import lab_world, the_button
from discogym.suites.redstone.pictures import text_layers
from discogym.suites.redstone.tasks import TaskSpec
from discogym.suites.redstone.world import format_pos

TRIAL_BUDGET = 50
EDIT_RUN_LIMIT = 100  # gt the world runs on after an edit, unless it is quiet earlier
EVENT_LIMIT = 2000  # changes listed per get_event_stream call


class TrialBudget:
    """The task's verification trials, shared by the engineer and its scientists."""

    def __init__(self, limit: int = TRIAL_BUDGET) -> None:
        self.limit = limit
        self.used = 0

    @property
    def left(self) -> int:
        return self.limit - self.used


class SetBlockArgs(ToolArgs):
    x: int
    y: int
    z: int
    block: str = Field(description="a block id of the palette, e.g. minecraft:redstone_repeater (air removes)")
    properties: dict[str, str | int | bool] = Field(
        default_factory=dict, description="block-state properties, e.g. {'facing': 'west', 'delay': '2'}"
    )


class PositionArgs(ToolArgs):
    x: int
    y: int
    z: int


class ScanArgs(ToolArgs):
    center: list[int] | None = Field(
        default=None, min_length=3, max_length=3, description="[x, y, z]; the lab's anchor if left out"
    )
    radius: int = Field(default=10, ge=0, le=16, description="half the side of the cube scanned")
    view: Literal["list", "layers"] = Field(
        default="list", description="'list': one line per block; 'layers': a text grid per y layer"
    )


class EventArgs(ToolArgs):
    since: int = Field(default=0, ge=0, description="the first game tick to list")


class BuildLab(Env):
    """A lab to build and test a device in, for one task, spending from a trial budget (the engineer's own, or the
    one its scientists share with it)."""

    def __init__(self, spec: TaskSpec, budget: TrialBudget | None = None) -> None:
        self.spec = spec
        self.region = evaluator.region_of(spec)
        self.device: dict[Pos, Block] = {}
        self.sim = Simulator(lab_world({}, self.region))
        self.budget = budget or TrialBudget()
        self.trials = 0  # this lab's own presses (the engineer's, or one scientist session's)
        self.rebuilds = 0
        self.edits = 0
        self._edited_since_trial = False
        self.last_press: int | None = None  # the game tick of this lab's last press

    # Tools

    @tool(SetBlockArgs)
    def set_block(self, args: SetBlockArgs) -> ToolResult:
        """Place a block (or minecraft:air to remove one) at x, y, z with the given block-state properties."""
        pos = (args.x, args.y, args.z)
        block = self.parse_block(args.block, args.properties)
        if not self.region.contains(pos):
            raise ToolError(f"{format_pos(pos)} is outside the build region ({self.region.describe()})")
        if block.id == AIR and pos not in self.device:
            return ToolResult(text=f"{format_pos(pos)} is already air", data={"pos": list(pos), "changed": False})
        try:
            dropped = self.sim.set_block(pos, block)
        except UserError as err:
            raise ToolError(str(err)) from None
        if block.id == AIR:
            self.device.pop(pos, None)
        else:
            self.device[pos] = block
        for gone in dropped:
            self.device.pop(gone, None)
        self._count_edit()
        start = self.sim.time
        self.sim.run_until_quiet(EDIT_RUN_LIMIT)
        text = f"{'removed the block' if block.id == AIR else f'placed {block}'} at {format_pos(pos)}"
        if dropped:
            text += f"; without support, these dropped: {', '.join(map(format_pos, dropped))}"
        text += f"; the world ran from tick {start} to {self.sim.time}"
        return ToolResult(
            text=text, data={"pos": list(pos), "block": str(block), "dropped": [list(p) for p in dropped]}
        )

    @tool(PositionArgs)
    def get_block_state(self, args: PositionArgs) -> ToolResult:
        """The block at x, y, z with its current state (air if empty)."""
        pos = (args.x, args.y, args.z)
        block = self.sim.block(pos)
        return ToolResult(text=f"{format_pos(pos)} {block} (tick {self.sim.time})", data={"block": str(block)})

    @tool(ScanArgs)
    def scan_redstone_area(self, args: ScanArgs) -> ToolResult:
        """Every block (the floor left out) in the cube of the given radius around center, with its state."""
        cx, cy, cz = args.center or self.region.anchor
        r = args.radius
        found = {
            pos: self.sim.block(pos)
            for pos in sorted(self.device)
            if abs(pos[0] - cx) <= r and abs(pos[1] - cy) <= r and abs(pos[2] - cz) <= r
        }
        header = f"{len(found)} blocks within {r} of {format_pos((cx, cy, cz))} at tick {self.sim.time}"
        if args.view == "layers":
            layers = sorted({y for _, y, _ in found})
            body = text_layers(lab_world(found, self.region), layers) if found else ""
        else:
            body = "\n".join(f"{x} {y} {z} {block}" for (x, y, z), block in found.items())
        return ToolResult(text=f"{header}\n{body}".rstrip(), data={"blocks": len(found)})

    @tool(NoArgs)
    def activate_button(self, args: NoArgs) -> ToolResult:
        """Press the device's button and run the world until it is quiet (one verification trial)."""
        button = the_button(self.device)
        if isinstance(button, str):
            raise ToolError(f"cannot press: {button}")
        if self.budget.left <= 0:
            raise ToolError(f"all {self.budget.limit} verification trials are used")
        self.sim.run_until_quiet(EDIT_RUN_LIMIT)  # a button still on from an edit's run comes up first
        self.sim.run(1)  # the press gets a tick of its own, after the edits' changes
        self.trials += 1
        self.budget.used += 1
        self._edited_since_trial = False
        pressed_at = self.last_press = self.sim.time
        before = self.sim.change_count()
        self.sim.press(button)
        self.sim.run_until_quiet(evaluator.RUN_LIMIT, at_least=evaluator.QUIET_AFTER)
        changes = self.sim.change_count() - before
        text = (
            f"trial {self.budget.used} of {self.budget.limit}: pressed the button at {format_pos(button)} "
            f"at tick {pressed_at}; "
            f"the world ran to tick {self.sim.time} with {changes} block-state changes "
            f"(get_event_stream since={pressed_at} lists them; typed: events {pressed_at})"
        )
        return ToolResult(text=text, data={"trial": self.trials, "pressed_at": pressed_at, "changes": changes})

    @tool(EventArgs)
    def get_event_stream(self, args: EventArgs) -> ToolResult:
        """The block-state changes from game tick `since` on: tick, position and the block's new state."""
        events = list(self.sim.changes_since(args.since))
        shown = events[:EVENT_LIMIT]
        lines = [_event_line(change) for change in shown]
        if len(events) > len(shown):
            since = shown[-1].tick + 1
            lines.append(f"... {len(events) - len(shown)} more; ask again with since={since} (typed: events {since})")
        header = f"{len(events)} changes since tick {args.since} (now tick {self.sim.time})"
        return ToolResult(text="\n".join([header, *lines]), data={"events": len(events)})

    def text_prompt(self) -> str:
        others = [usage_line(spec) for spec in self.tool_specs() if spec.name not in SYNTAX_TOOLS]
        if not others:
            return TEXT_SYNTAX
        return "\n".join([TEXT_SYNTAX, "and, as TOOL key=value:", *(f"  {line}" for line in others)])

    def parse_text_action(self, text: str) -> ToolCall:
        verb = text.split(maxsplit=1)[0] if text.strip() else ""
        if verb in {tool.name for tool in self.tools()} - SYNTAX_TOOLS:  # the scientist's tools, ask_scientist
            try:
                return parse_tool_line(text)
            except ValueError as err:
                raise ToolError(f"{err}; write {verb} as TOOL key=value") from None
        return parse_action(text)

    def example_action(self) -> str | None:
        x, y, z = self.region.anchor
        lamp = "minecraft:redstone_lamp"
        block = lamp if lamp in self.spec.allowed_blocks else self.spec.allowed_blocks[0]
        return f"place {x} {y} {z} {block.removeprefix('minecraft:')}"

    def parse_block(self, name: str, properties: dict[str, str | int | bool]) -> Block:
        """The block a ``set_block`` call names (a palette id and its properties), or a ToolError saying why it is
        refused; the rescorer replays edits through it."""
        full = name.strip() if name.strip().startswith("minecraft:") else f"minecraft:{name.strip()}"
        if "[" in full:
            raise ToolError("give the block id alone and its properties in 'properties'")
        allowed = set(self.spec.allowed_blocks) | {AIR}
        if "minecraft:redstone_torch" in allowed:
            allowed.add("minecraft:redstone_wall_torch")
        if full not in allowed:
            raise ToolError(f"{full} is not an allowed block; allowed: {', '.join(sorted(allowed))}")
        try:
            values = {
                key: str(value).lower() if isinstance(value, bool) else str(value) for key, value in properties.items()
            }
            return placed_part(make_block(full, **values))  # computed properties are the world's to set
        except UserError as err:
            raise ToolError(str(err)) from None

    def _count_edit(self) -> None:
        self.edits += 1
        if self.trials and not self._edited_since_trial:
            self.rebuilds += 1
        self._edited_since_trial = True

    def format_text_action(self, call: ToolCall) -> str | None:
        args = call.args if isinstance(call.args, dict) else {}
        properties = args.get("properties", {})
        if call.tool == "set_block" and args.keys() >= {"x", "y", "z", "block"} and isinstance(properties, dict):
            where = f"{args['x']} {args['y']} {args['z']}"
            block = str(args["block"])
            if block == AIR and not properties:
                return f"remove {where}"
            state = ",".join(f"{key}={str(value).lower()}" for key, value in properties.items())
            return f"place {where} {block.removeprefix('minecraft:')}" + (f"[{state}]" if state else "")
        plain = {"activate_button": "press", "submit": "submit", "scan_redstone_area": "scan"}
        if call.tool in plain and args in ({}, {"view": "list"}):
            return plain[call.tool]
        return None

    def valid_calls(self) -> list[ToolCall]:
        """Placements of each palette block at the anchor's column, a scan, a trial and submit; for the random
        agent."""
        ax, ay, az = self.region.anchor
        calls = [
            ToolCall(tool="set_block", args={"x": ax + dx, "y": ay, "z": az + dz, "block": block})
            for dx in range(-2, 3)
            for dz in range(-2, 3)
            for block in ("minecraft:redstone_wire", "minecraft:redstone_lamp", "minecraft:stone")
        ]
        calls += [ToolCall(tool="set_block", args={"x": ax, "y": ay, "z": az, "block": BUTTON, "properties": {}})]
        calls += [ToolCall(tool="scan_redstone_area", args={}), ToolCall(tool="submit", args={})]
        if not isinstance(the_button(self.device), str):
            calls.append(ToolCall(tool="activate_button", args={}))
        return calls


SYNTAX_TOOLS = {"set_block", "get_block_state", "scan_redstone_area", "activate_button", "get_event_stream", "submit"}
TEXT_SYNTAX = """Actions, one per line (coordinates are integers; blocks as in Minecraft commands):
  place X Y Z BLOCK          e.g. place 1 4 0 redstone_repeater[facing=west,delay=2]
  remove X Y Z               put air there
  get X Y Z                  the block and its state
  scan [X Y Z] [R]           every block within R (default 10) of X Y Z (default: the anchor)
  layers [X Y Z] [R]         the same as a text grid per y layer
  press                      one verification trial: press the button, run until quiet
  events [SINCE]             the block-state changes from game tick SINCE (default 0)
  submit                     hand the device to the evaluator (ends the episode)"""


def parse_action(text: str) -> ToolCall:
    """One line of the text syntax as a tool call; ToolError with the syntax when it is not one."""
    words = text.split()
    if not words:
        raise ToolError("empty action; " + TEXT_SYNTAX)
    verb, rest = words[0].lower(), words[1:]
    try:
        if verb == "place" and len(rest) == 4:
            block = parse_block(rest[3])
            props = {name: value for name, value in block.props if name not in COMPUTED}
            return ToolCall(tool="set_block", args={**_xyz(rest), "block": block.id, "properties": props})
        if verb == "remove" and len(rest) == 3:
            return ToolCall(tool="set_block", args={**_xyz(rest), "block": AIR})
        if verb == "get" and len(rest) == 3:
            return ToolCall(tool="get_block_state", args=_xyz(rest))
        if verb in ("scan", "layers") and len(rest) in (0, 1, 3, 4):
            args: dict[str, Any] = {"view": "list" if verb == "scan" else "layers"}
            if len(rest) >= 3:
                args["center"] = [int(word) for word in rest[:3]]
            if len(rest) in (1, 4):
                args["radius"] = int(rest[-1])
            return ToolCall(tool="scan_redstone_area", args=args)
        if verb == "press" and not rest:
            return ToolCall(tool="activate_button", args={})
        if verb == "events" and len(rest) <= 1:
            return ToolCall(tool="get_event_stream", args={"since": int(rest[0])} if rest else {})
        if verb == "submit" and not rest:
            return ToolCall(tool="submit", args={})
    except ValueError:
        raise ToolError(f"coordinates, radius and ticks are integers: {text.strip()!r}") from None
    except UserError as err:
        raise ToolError(str(err)) from None
    raise ToolError(f"not an action: {text.strip()!r}\n{TEXT_SYNTAX}")


def _xyz(words: list[str]) -> dict[str, int]:
    x, y, z = (int(word) for word in words[:3])
    return {"x": x, "y": y, "z": z}


def _event_line(change: Change) -> str:
    x, y, z = change.pos
    return f"{change.tick} {x} {y} {z} {change.after}"
