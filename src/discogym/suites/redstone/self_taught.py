"""The offline reference for the whole discovery-to-application loop: the ``self-taught`` agent.

As the engineer it starts with no knowledge of redstone timing. It works out which facts the reference
builder's design for its family needs (:data:`~discogym.suites.redstone.facts.NEEDED`), reads the knowledge
book for them, asks the scientist for each one missing, and builds the device from the book's numbers alone
(:func:`~discogym.suites.redstone.builder.build_device` with the book's
:class:`~discogym.suites.redstone.facts.Physics`), presses once and submits.

As the scientist (the sub-agent the harness makes of the same kind) it answers a question by a real experiment
in its lab: it builds a probe circuit, presses three times (four delay settings for repeaters), reads the event
stream and derives the number from the ticks it sees; then it files the eight-part report, states the finding
in the book's format and answers.
"""

import re
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from discogym.core import Agent, AgentContext, AgentDecision, ToolCall, ToolResult, Turn, UserError
from discogym.suites.redstone.agents import placement_order, set_block_call
from discogym.suites.redstone.builder import build_device
from discogym.suites.redstone.facts import FACTS, MINECRAFT, NEEDED, Fact, Physics, fact_for, known_facts
from discogym.suites.redstone.tasks import TaskSpec

REPEATS = 3  # presses per measurement, as the paper asks of its scientist
BOOK_HEADING = "The knowledge book"
Plan = Generator[ToolCall, ToolResult, str]  # yields calls, is sent their results, returns the final message


class SelfTaughtAgent(Agent):
    """The engineer or, when the harness makes it a sub-agent, the scientist (see the module's description)."""

    def __init__(self) -> None:
        self.plan: Plan | None = None

    def start(self, context: AgentContext) -> None:
        if context.role == "scientist":
            self.plan = scientist_plan(context)
            return
        if "spec" not in context.hints:
            raise UserError("the self-taught agent plays only the redstone suite's own tasks")
        self.plan = engineer_plan(TaskSpec.model_validate(context.hints["spec"]), context)

    def act(self, history: Sequence[Turn]) -> AgentDecision:
        assert self.plan is not None, "start() comes first"
        try:
            call = self.plan.send(history[-1].result) if history else next(self.plan)
        except StopIteration as end:
            return AgentDecision(message=str(end.value))
        return AgentDecision(call=call)


# The engineer


def engineer_plan(spec: TaskSpec, context: AgentContext) -> Plan:
    """Ask for the missing facts, build from the book, press once, submit."""
    needed = NEEDED[spec.family]
    book = book_text(context.brief)
    can_ask = any(tool.name == "ask_scientist" for tool in context.tools)
    for name in needed:
        if name in known_facts(book):
            continue
        if not can_ask:
            return f"I do not know {name.replace('_', ' ')} and have no scientist to ask; I build nothing"
        answer = yield ToolCall(tool="ask_scientist", args={"question": FACTS[name].question})
        book = book_text(answer.text)
    facts = known_facts(book)
    missing = [name for name in needed if name not in facts]
    if missing:
        return f"the knowledge book does not give {', '.join(missing)}; I build nothing"
    physics = Physics(**{**MINECRAFT.__dict__, **{name: facts[name] for name in needed}})  # others go unused
    try:
        device = build_device(spec, physics)
    except UserError as err:
        return f"with the book's numbers I cannot build this: {err}"
    for pos, block in placement_order(device):
        yield set_block_call(pos, block)
    yield ToolCall(tool="activate_button")
    yield ToolCall(tool="submit")
    return "the device is submitted"


def book_text(text: str) -> str:
    """The knowledge book's part of a brief or an ask_scientist result (all of it when there is no heading)."""
    start = text.rfind(BOOK_HEADING)
    return text[start:] if start >= 0 else text


# The scientist


@dataclass
class Change:
    """One line of the event stream."""

    tick: int
    pos: tuple[int, int, int]
    block: str

    def prop(self, name: str) -> str | None:
        found = re.search(rf"[\[,]{name}=([a-z0-9_]+)", self.block)
        return found.group(1) if found else None


@dataclass
class Trial:
    """One press: the tick the button went down and the changes after it."""

    pressed_at: int
    changes: list[Change] = field(default_factory=list)

    def first(self, pos: tuple[int, int, int], name: str, value: str) -> int | None:
        """The first tick ``pos`` took ``name=value``."""
        return next((c.tick for c in self.changes if c.pos == pos and c.prop(name) == value), None)

    def first_value(self, pos: tuple[int, int, int], name: str, wanted: Callable[[str], bool]) -> str | None:
        """The first value of ``name`` at ``pos`` that ``wanted`` accepts."""
        values = (c.prop(name) for c in self.changes if c.pos == pos)
        return next((value for value in values if value is not None and wanted(value)), None)


class BudgetSpent(Exception):
    """A press was refused: the trial budget is spent."""


def scientist_plan(context: AgentContext) -> Plan:
    """Read the question from the brief, measure, report, update the book, answer."""
    question = context.brief.split("\n", 1)[0].removeprefix("The engineer asks: ")
    fact = fact_for(question)
    tools = {tool.name for tool in context.tools}
    if fact is None:
        yield ToolCall(tool="write_report", args=unanswerable_report(question))
        topics = "; ".join(f.question for f in FACTS.values())
        yield ToolCall(tool="answer", args={"answer": f"I can investigate only these questions: {topics}"})
        return "answered"
    measurement = Measurement()
    try:
        value = yield from MEASURE[fact.name](measurement)
    except BudgetSpent:
        yield ToolCall(tool="write_report", args=measurement.report(fact, question, None))
        yield ToolCall(tool="answer", args={"answer": "The trial budget is spent; I could not finish the experiment."})
        return "answered"
    yield ToolCall(tool="write_report", args=measurement.report(fact, question, value))
    yield book_update(fact, value, measurement, tools, book_text(context.brief))
    yield ToolCall(tool="answer", args={"answer": fact.state(value)})
    return "answered"


class Measurement:
    """What one experiment did and saw, for its report."""

    def __init__(self) -> None:
        self.design = ""
        self.steps: list[str] = []
        self.record: list[str] = []

    def report(self, fact: Fact, question: str, value: int | None) -> dict[str, str]:
        found = "no result: the trial budget ran out" if value is None else fact.state(value)
        agreed = value is not None
        return {
            "research_question": question,
            "hypothesis": "The quantity is a fixed whole number of game ticks (or blocks), the same on every trial; "
            "I hold no prior value for it.",
            "design": self.design,
            "steps": "; ".join(self.steps),
            "record": "\n".join(self.record) or "(no trial completed)",
            "results": found,
            "analysis": (
                f"Every trial gave the same value, so the hypothesis of a fixed value holds: {found}"
                if agreed
                else "The experiment did not finish, so nothing is concluded."
            ),
            "next_steps": "Check the value again if a device built on it misbehaves.",
        }


def book_update(fact: Fact, value: int, measurement: Measurement, tools: set[str], book: str) -> ToolCall:
    """The call that records the finding in the book, in the format the lab offers."""
    proof = f"{measurement.design} Observations: " + " ".join(measurement.record)
    example = EXAMPLES[fact.name]
    if "update_claims" in tools:
        entry = {
            "title": fact.name.replace("_", " "),
            "claim": fact.state(value),
            "proof": proof,
            "constraints": "Measured in an empty lab on a stone floor; other surroundings were not tried.",
            "example": example,
        }
        return ToolCall(tool="update_claims", args={"entries": [entry]})
    if "update_findings" in tools:
        entry = {
            "title": fact.name.replace("_", " "),
            "finding": fact.state(value),
            "explanation": proof,
            "example": example,
        }
        return ToolCall(tool="update_findings", args={"entries": [entry]})
    previous = book.split("\n", 1)[1] if "\n" in book else ""
    previous = "" if previous.startswith("(the knowledge book is empty)") else previous.split("\n\nEarlier")[0]
    return ToolCall(tool="update_summary", args={"summary": f"{previous}\n- {fact.state(value)}".strip()})


EXAMPLES = {
    "button_pulse": "A button press alone makes a pulse of that many game ticks.",
    "repeater_delay": "To delay a signal by k redstone ticks, use a repeater at setting 2k divided by that number.",
    "torch_delay": "Two torches in a row invert twice and delay by twice the number.",
    "lamp_off_delay": "A lamp fed by a pulse stays lit for the pulse plus that many game ticks.",
    "dust_reach": "Put a repeater before the signal has run through that many dust blocks.",
    "lamp_conducts": "One fed lamp lights a cluster of up to four lamps in the same tick.",
    "dust_decay": "Count the dust blocks from the source to know the strength a branch starts with.",
    "repeater_locking": "A locked repeater holds a signal: a latch that remembers a press.",
}


# Lab procedures: each yields calls and returns the measured number.

BUTTON = (0, 4, 0)


def place(pos: tuple[int, int, int], block: str, **properties: Any) -> ToolCall:
    x, y, z = pos
    return ToolCall(tool="set_block", args={"x": x, "y": y, "z": z, "block": block, "properties": properties})


def floor_button(pos: tuple[int, int, int]) -> ToolCall:
    return place(pos, "minecraft:stone_button", face="floor")


def done(call: ToolCall) -> Generator[ToolCall, ToolResult, None]:
    """Make ``call``; a refusal is a bug of the procedure."""
    result = yield call
    if not result.ok:
        raise UserError(f"the lab refused {call.tool}: {result.text}")


def fresh_lab(*calls: ToolCall) -> Generator[ToolCall, ToolResult, None]:
    """Empty the lab, then build: make each call, a refusal being a bug of the procedure."""
    for call in (ToolCall(tool="clear_lab"), *calls):
        yield from done(call)


def press(measurement: Measurement) -> Generator[ToolCall, ToolResult, Trial]:
    """Press the lab's button and read the changes after the press."""
    result = yield ToolCall(tool="activate_button")
    if not result.ok:
        raise BudgetSpent(result.text)
    tick = int(re.search(r"at tick (\d+)", result.text).group(1))  # type: ignore[union-attr]
    events = yield ToolCall(tool="get_event_stream", args={"since": tick})
    trial = Trial(tick)
    for line in events.text.splitlines()[1:]:
        parts = line.split(" ", 4)
        if len(parts) == 5 and all(part.lstrip("-").isdigit() for part in parts[:4]):
            trial.changes.append(Change(int(parts[0]), (int(parts[1]), int(parts[2]), int(parts[3])), parts[4]))
    return trial


def repeated(measurement: Measurement, reading: str, read: Any) -> Generator[ToolCall, ToolResult, int]:
    """Press REPEATS times; ``read(trial)`` gives each trial's number; all must agree."""
    values = []
    for number in range(1, REPEATS + 1):
        trial = yield from press(measurement)
        value = read(trial)
        measurement.record.append(f"trial {number}: pressed at tick {trial.pressed_at}; {reading} {value}.")
        values.append(value)
    if len(set(values)) != 1 or values[0] is None:
        raise UserError(f"the trials disagree: {values}")
    return int(values[0])


def measure_button(m: Measurement) -> Generator[ToolCall, ToolResult, int]:
    m.design = "A stone button on the floor, nothing else; measured: game ticks from powered=true to powered=false."
    m.steps.append(f"placed a floor button at {BUTTON}; pressed it {REPEATS} times")
    yield from fresh_lab(floor_button(BUTTON))

    def pulse(trial: Trial) -> int | None:
        on, off = trial.first(BUTTON, "powered", "true"), trial.first(BUTTON, "powered", "false")
        return None if on is None or off is None else off - on

    return (yield from repeated(m, "the button stayed powered (game ticks)", pulse))


def measure_lamp_off(m: Measurement) -> Generator[ToolCall, ToolResult, int]:
    lamp = (1, 4, 0)
    m.design = "A lamp next to a floor button; measured: game ticks from the button's release to the lamp going dark."
    m.steps.append(f"placed a floor button at {BUTTON} and a lamp at {lamp}; pressed {REPEATS} times")
    yield from fresh_lab(floor_button(BUTTON), place(lamp, "minecraft:redstone_lamp"))

    def delay(trial: Trial) -> int | None:
        released, dark = trial.first(BUTTON, "powered", "false"), trial.first(lamp, "lit", "false")
        return None if released is None or dark is None else dark - released

    return (yield from repeated(m, "the lamp went dark after the release (game ticks)", delay))


def measure_torch(m: Measurement) -> Generator[ToolCall, ToolResult, int]:
    block, torch, button = (1, 4, 0), (1, 5, 0), (0, 4, 0)
    m.design = (
        "A torch on a stone block, a button on the block's west face; measured: game ticks from the press to the "
        "torch going out, and from the release to the torch relighting."
    )
    m.steps.append(f"stone at {block}, torch on it at {torch}, wall button at {button}; pressed {REPEATS} times")
    yield from fresh_lab(
        place(block, "minecraft:stone"),
        place(torch, "minecraft:redstone_torch"),
        place(button, "minecraft:stone_button", face="wall", facing="west"),
    )

    def delays(trial: Trial) -> int | None:
        pressed, out = trial.first(button, "powered", "true"), trial.first(torch, "lit", "false")
        released, relit = trial.first(button, "powered", "false"), trial.first(torch, "lit", "true")
        if None in (pressed, out, released, relit):
            return None
        off, on = out - pressed, relit - released  # type: ignore[operator]
        return off if off == on else None

    return (yield from repeated(m, "the torch switched after (game ticks, off and on alike)", delays))


def measure_repeater(m: Measurement) -> Generator[ToolCall, ToolResult, int]:
    repeater, lamp = (1, 4, 0), (2, 4, 0)
    m.design = (
        "A floor button, a repeater taking its input from the button, a lamp in front; varied: the delay setting "
        "1 to 4; measured: game ticks from the press to the lamp lighting, divided by the setting."
    )
    yield from fresh_lab(floor_button(BUTTON), place(lamp, "minecraft:redstone_lamp"))
    per_setting = []
    for setting in range(1, 5):
        m.steps.append(f"repeater at {repeater} facing west with delay {setting}; pressed {REPEATS} times")
        yield from done(place(repeater, "minecraft:redstone_repeater", facing="west", delay=str(setting)))

        def delay(trial: Trial, setting: int = setting) -> int | None:
            pressed, lit = trial.first(BUTTON, "powered", "true"), trial.first(lamp, "lit", "true")
            if pressed is None or lit is None or (lit - pressed) % setting:
                return None
            return (lit - pressed) // setting

        per_setting.append((yield from repeated(m, f"setting {setting}: game ticks per setting", delay)))
    if len(set(per_setting)) != 1:
        raise UserError(f"the settings disagree: {per_setting}")
    return per_setting[0]


def measure_dust(m: Measurement) -> Generator[ToolCall, ToolResult, int]:
    source, line = (-10, 4, 0), [(x, 4, 0) for x in range(-9, 9)]
    m.design = "A floor button at the west end of a straight line of 18 dust blocks; measured: how many carry power."
    m.steps.append(f"button at {source}, dust from {line[0]} to {line[-1]}; pressed {REPEATS} times")
    yield from fresh_lab(floor_button(source), *(place(pos, "minecraft:redstone_wire") for pos in line))

    def reach(trial: Trial) -> int:
        powered = {c.pos for c in trial.changes if c.pos in line and (c.prop("power") or "0") != "0"}
        return len(powered)

    return (yield from repeated(m, "dust blocks powered", reach))


def measure_conduction(m: Measurement) -> Generator[ToolCall, ToolResult, int]:
    dust, fed, neighbours = (1, 4, 0), (2, 4, 0), [(3, 4, 0), (2, 4, 1), (2, 4, -1)]
    m.design = (
        "A floor button, one dust pointing east into a lamp, three more lamps around that lamp (none next to the "
        "dust); measured: how many of the three light in the tick the fed lamp lights."
    )
    m.steps.append(f"button at {BUTTON}, dust at {dust}, fed lamp at {fed}, lamps at {neighbours}")
    lamps = [place(pos, "minecraft:redstone_lamp") for pos in [fed, *neighbours]]
    yield from fresh_lab(floor_button(BUTTON), place(dust, "minecraft:redstone_wire"), *lamps)

    def lit_with(trial: Trial) -> int:
        first = trial.first(fed, "lit", "true")
        return sum(first is not None and trial.first(pos, "lit", "true") == first for pos in neighbours)

    return (yield from repeated(m, "neighbouring lamps lit with the fed lamp", lit_with))


def measure_decay(m: Measurement) -> Generator[ToolCall, ToolResult, int]:
    source, line = (-10, 4, 0), [(x, 4, 0) for x in range(-9, -3)]
    m.design = (
        "A floor button at the west end of a line of 6 dust blocks; measured: each block's signal strength while "
        "the button is on, and the drop from one block to the next."
    )
    m.steps.append(f"button at {source}, dust from {line[0]} to {line[-1]}; pressed {REPEATS} times")
    yield from fresh_lab(floor_button(source), *(place(pos, "minecraft:redstone_wire") for pos in line))

    def drop(trial: Trial) -> int | None:
        read = [trial.first_value(pos, "power", lambda value: value != "0") for pos in line]
        powers = [int(value) for value in read if value is not None]
        if len(powers) != len(line) or powers[0] != 15:
            return None
        drops = {a - b for a, b in pairwise(powers)}
        return drops.pop() if len(drops) == 1 else None

    return (yield from repeated(m, "drop per block", drop))


def measure_locking(m: Measurement) -> Generator[ToolCall, ToolResult, int]:
    repeater, lamp, side, torch = (1, 4, 0), (2, 4, 0), (1, 4, 1), (1, 4, 2)
    m.design = (
        "A floor button, a repeater taking its input from it and a lamp in front; a second repeater pointing into "
        "the first one's side, powered by a torch behind it. Control: the same without the torch. Measured: "
        "whether the lamp follows the button."
    )
    m.steps.append(f"button at {BUTTON}, repeater at {repeater}, lamp at {lamp}, side repeater at {side}")
    yield from fresh_lab(
        floor_button(BUTTON),
        place(repeater, "minecraft:redstone_repeater", facing="west"),
        place(lamp, "minecraft:redstone_lamp"),
        place(side, "minecraft:redstone_repeater", facing="south"),
    )
    m.steps.append(f"control: no torch; pressed {REPEATS} times")
    follows = yield from repeated(
        m, "the lamp lit (1) or not (0):", lambda trial: int(trial.first(lamp, "lit", "true") is not None)
    )
    if follows != 1:
        raise UserError("the unlocked repeater did not pass the press on")
    m.steps.append(f"a torch at {torch} powers the side repeater; pressed {REPEATS} times")
    yield from done(place(torch, "minecraft:redstone_torch"))
    stayed = 0
    for number in range(1, REPEATS + 1):
        trial = yield from press(m)
        unchanged = trial.first(lamp, "lit", "true") is None
        m.record.append(
            f"locked trial {number}: pressed at tick {trial.pressed_at}; the lamp stayed dark: {unchanged}."
        )
        stayed += unchanged
    return stayed


MEASURE = {
    "button_pulse": measure_button,
    "lamp_off_delay": measure_lamp_off,
    "torch_delay": measure_torch,
    "repeater_delay": measure_repeater,
    "dust_reach": measure_dust,
    "lamp_conducts": measure_conduction,
    "dust_decay": measure_decay,
    "repeater_locking": measure_locking,
}


def unanswerable_report(question: str) -> dict[str, str]:
    text = "This scientist measures only the mechanics its probe circuits cover."
    parts = ("hypothesis", "design", "steps", "record", "results", "analysis", "next_steps")
    return {"research_question": question, **dict.fromkeys(parts, text)}


def make_self_taught(options: object) -> Agent:
    """The ``self-taught`` reference agent."""
    return SelfTaughtAgent()
