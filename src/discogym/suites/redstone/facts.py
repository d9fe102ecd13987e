"""The redstone facts the reference builder's designs depend on, as the offline reference scientist states them
in the knowledge book and the ``self-taught`` engineer reads them back.

Each fact has the question an engineer asks, the sentence a scientist writes (with the measured number) and the
pattern that finds the number in a book's text, whatever its format. :class:`Physics` holds the numbers: the
builder's designs are parameterised by it, so a device built from a book with a wrong number is built wrong.
Two facts no design uses (how much dust decays per block, repeater locking) are measured all the same: the
scientist answers the questions it is asked, not only the reference engineer's.
"""

import re
from dataclasses import dataclass

from discogym.suites.redstone.tasks import Family


@dataclass(frozen=True)
class Physics:
    """The mechanics a design relies on, in game ticks (gt) where they are times."""

    button_pulse: int = 20  # gt a stone button stays on after a press
    repeater_delay: int = 2  # gt each delay setting of a repeater adds
    torch_delay: int = 2  # gt a torch takes to turn off once its block is powered (and on once it is not)
    lamp_off_delay: int = 4  # gt a lamp stays lit after losing power
    dust_reach: int = 15  # dust blocks a signal from a power source runs through
    lamp_conducts: int = 3  # how many of 3 lamps next to a lamp that dust points into light with it


MINECRAFT = Physics()  # Java Edition 1.21, as the simulator implements it (../shared/specs/redstone.md)


@dataclass(frozen=True)
class Fact:
    """One fact: the engineer's question, the scientist's sentence (``{value}`` for the number), and the
    pattern that reads the number back."""

    name: str
    question: str
    sentence: str
    pattern: str

    def state(self, value: int) -> str:
        return self.sentence.format(value=value)

    def read(self, text: str) -> int | None:
        """The number the last statement of this fact in ``text`` gives, or None."""
        found = re.findall(self.pattern, text)
        return int(found[-1]) if found else None


FACTS = {
    fact.name: fact
    for fact in (
        Fact(
            "button_pulse",
            "How long does a stone button stay powered after one press?",
            "A stone button stays powered for {value} game ticks after a press.",
            r"stone button stays powered for (\d+) game ticks",
        ),
        Fact(
            "repeater_delay",
            "How many game ticks of delay does each delay setting of a redstone repeater add?",
            "Each delay setting of a repeater adds {value} game ticks: set to d, it passes a signal on after "
            "{value}*d game ticks.",
            r"delay setting of a repeater adds (\d+) game ticks",
        ),
        Fact(
            "torch_delay",
            "How long does a redstone torch take to switch when the block it stands on is powered or unpowered?",
            "A redstone torch switches {value} game ticks after the block it stands on is powered or unpowered.",
            r"redstone torch switches (\d+) game ticks",
        ),
        Fact(
            "lamp_off_delay",
            "How long does a redstone lamp stay lit after it loses power?",
            "A redstone lamp lights in the tick it is powered and goes dark {value} game ticks after it loses power.",
            r"goes dark (\d+) game ticks after it loses power",
        ),
        Fact(
            "dust_reach",
            "How far along redstone dust does a signal from a button reach?",
            "Redstone dust loses one signal strength per block: a line fed by a button carries the signal through "
            "{value} dust blocks.",
            r"carries the signal through (\d+) dust blocks",
        ),
        Fact(
            "dust_decay",
            "By how much does the signal strength of redstone dust drop from one dust block to the next?",
            "Redstone dust drops {value} signal strength from one dust block to the next, starting from 15 next to "
            "a button.",
            r"dust drops (\d+) signal strength from one dust block to the next",
        ),
        Fact(
            "repeater_locking",
            "What does a powered repeater pointing into the side of another repeater do to it?",
            "A repeater with a powered repeater pointing into its side is locked: its output stayed as it was in "
            "{value} of 3 presses of its input (unlocked, it followed the input every time).",
            r"its output stayed as it was in (\d) of 3 presses",
        ),
        Fact(
            "lamp_conducts",
            "Does a lamp that redstone dust points into light the lamps next to it?",
            "A lamp that dust points into lights {value} of 3 lamps placed next to it, in the same tick.",
            r"lights (\d) of 3 lamps placed next to it",
        ),
    )
}

# The facts each family's design needs.
NEEDED: dict[Family, tuple[str, ...]] = {
    "A": ("dust_reach", "lamp_conducts"),
    "B": ("dust_reach", "lamp_conducts"),
    "C": ("repeater_delay",),
    "D": ("dust_reach", "lamp_conducts"),
    "E": ("button_pulse", "lamp_off_delay", "torch_delay", "repeater_delay", "dust_reach", "lamp_conducts"),
}


def known_facts(text: str) -> dict[str, int]:
    """Every fact ``text`` (a rendered knowledge book) states, by name."""
    return {name: value for name, fact in FACTS.items() if (value := fact.read(text)) is not None}


def fact_for(question: str) -> Fact | None:
    """The fact a question asks about, by the question's words (the reference scientist's reading)."""
    words = question.lower()
    if "repeater" in words and ("side" in words or "lock" in words):
        return FACTS["repeater_locking"]
    if "repeater" in words:
        return FACTS["repeater_delay"]
    if "torch" in words:
        return FACTS["torch_delay"]
    if "lamp" in words and ("next to" in words or "neighbo" in words):
        return FACTS["lamp_conducts"]
    if "lamp" in words:
        return FACTS["lamp_off_delay"]
    if "dust" in words and ("drop" in words or "decay" in words or "strength" in words):
        return FACTS["dust_decay"]
    if "dust" in words or "far" in words:
        return FACTS["dust_reach"]
    if "button" in words:
        return FACTS["button_pulse"]
    return None
