"""The papers' own scaffolds as presets of the ``llm`` agent (``--agent-opt scaffold=NAME``).

A preset is the way one paper's agent talked to its model, on that paper's suite: its default options (an option
given with ``--agent-opt`` still wins), what it adds to the system prompt, the worked examples it shows as past
turns, how it reads the action out of a reply, and what a reply does to its scratchpad.

- ``plancraft`` (crafting): the suite's text prompt, then Plancraft's few-shot demonstration as past turns, then
  the episode; a window of the newest 40 messages after the system prompt (``context=messages``), so the
  demonstration scrolls out after some ten steps; only the first line of a reply is the action; replies of at
  most 256 tokens at temperature 0.6.
- ``autumnbench`` (autumn): the suite's text prompt with AutumnBench's reply format (think in ``<think>``, act in
  ``<action>``) and its scratchpad (``<scratchpad_add>`` and ``<scratchpad_del>`` tags, applied to every reply and
  shown after the head whenever the context policy is not ``full``); the whole history by default; replies of
  up to 8,192 tokens.
"""

import re
from typing import Any, ClassVar

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser

from discogym.core import AgentContext, MemoryEvent, UserError

SCAFFOLDS = ("none", "plancraft", "autumnbench")


class Scaffold:
    """One paper's scaffold on its suite; the base reads the whole reply as the suite's action."""

    name: str
    paper: str
    suite: str
    defaults: ClassVar[dict[str, Any]]  # the options it sets unless given with --agent-opt
    scratchpad = False

    def check(self, context: AgentContext) -> None:
        """A UserError unless the episode is of the preset's suite."""
        if context.suite != self.suite:
            played = f"suite '{context.suite}'" if context.suite else "this suite"
            raise UserError(
                f"--agent-opt scaffold={self.name} is {self.paper}'s scaffold for suite '{self.suite}'; "
                f"it cannot play {played} (use scaffold=none there; in a sweep, give it to its suite alone: "
                f"--agent-opt {self.suite}:scaffold={self.name})"
            )

    def system_prompt(self, context: AgentContext) -> str:
        """The system prompt: the suite's text prompt, with whatever the scaffold adds."""
        if context.text_prompt is None:
            raise UserError(f"scaffold={self.name}: this suite has no text syntax of its own")
        return context.text_prompt

    def examples(self, context: AgentContext) -> list[ChatMessage]:
        """The worked examples as past turns, between the system prompt and the brief (none by default)."""
        return []

    def action_text(self, reply: str) -> str:
        """The part of a reply that is the action, handed to the suite's parser; ValueError if there is none."""
        return reply

    def rules(self) -> str:
        """What the model is reminded of after an unreadable reply."""
        return "Answer in the action syntax the instructions describe."

    def reply(self, action: str, words: str) -> str | None:
        """A reply in the scaffold's format that says ``words`` and then acts ``action`` (what
        :meth:`action_text` reads back), or None when the format has no place for words (a cost estimate then sends
        them as reasoning)."""
        return None


class Plancraft(Scaffold):
    """Plancraft's (gautierdag/plancraft): few-shot dialogue, a 40-message window, the first line as the action."""

    name = "plancraft"
    paper = "Plancraft"
    suite = "crafting"
    defaults: ClassVar[dict[str, Any]] = {
        "mode": "suite",
        "context": "messages",
        "window_messages": 40,
        "max_tokens": 256,
        "temperature": 0.6,
        "notes": False,
    }

    def system_prompt(self, context: AgentContext) -> str:
        if context.example_dialogue is not None:  # the prompt without the examples, shown as turns instead
            return context.example_dialogue.text_prompt
        return super().system_prompt(context)

    def examples(self, context: AgentContext) -> list[ChatMessage]:
        if context.example_dialogue is None:
            return []
        messages: list[ChatMessage] = []
        for seen, answer in context.example_dialogue.turns:
            messages += [ChatMessageUser(content=seen), ChatMessageAssistant(content=answer)]
        return messages

    def action_text(self, reply: str) -> str:
        return first_line(reply)


def first_line(reply: str) -> str:
    """The first line of a reply that is not blank (empty for a blank reply)."""
    return next((line.strip() for line in reply.splitlines() if line.strip()), "")


REPLY_FORMAT = """How to reply:
- First think about what you have seen and what to do next, inside <think>...</think>.
- Then give exactly one action from the list above inside <action>...</action>, e.g. <action>click 3 4</action>.
- Keep a scratchpad of what you learn about the world: after </think>, <scratchpad_add>text</scratchpad_add>
  adds text to it and <scratchpad_del>text</scratchpad_del> deletes that exact text from it. Older turns of this
  conversation may not be shown to you later, so write down there the rules and facts you will need: only the
  most recent states may be visible."""

SCRATCHPAD_HEADING = "Your scratchpad (kept with <scratchpad_add> and <scratchpad_del>):"
_ACTION = re.compile(r"<action>(.*?)</action>", re.DOTALL)
_SCRATCHPAD = re.compile(r"<scratchpad_(add|del)>(.*?)</scratchpad_\1>", re.DOTALL)


class AutumnBench(Scaffold):
    """AutumnBench's (MARAProtocol's ``UnifiedReactAgent``): ``<think>``/``<action>`` replies and a scratchpad."""

    name = "autumnbench"
    paper = "AutumnBench"
    suite = "autumn"
    defaults: ClassVar[dict[str, Any]] = {"mode": "suite", "context": "full", "max_tokens": 8192, "notes": False}
    scratchpad = True

    def system_prompt(self, context: AgentContext) -> str:
        return f"{super().system_prompt(context)}\n\n{REPLY_FORMAT}"

    def action_text(self, reply: str) -> str:
        found = _ACTION.findall(reply)
        if not found:
            raise ValueError("the reply has no <action>...</action> tag")
        return str(found[-1]).strip()

    def rules(self) -> str:
        return "Think inside <think>...</think>, then give exactly one action inside <action>...</action>."

    def reply(self, action: str, words: str) -> str | None:
        thought = f"<think>{words}</think>\n" if words else ""
        return f"{thought}<action>{action}</action>"


class Scratchpad:
    """AutumnBench's scratchpad: free text the model edits with tags in its replies."""

    def __init__(self) -> None:
        self.text = ""

    def apply(self, reply: str) -> list[MemoryEvent]:
        """Carry out the reply's ``<scratchpad_add>`` and ``<scratchpad_del>`` tags in order: an add appends its
        text as a new line, a del removes every occurrence of its exact text. One event per tag."""
        events = []
        for kind, body in _SCRATCHPAD.findall(reply):
            text = str(body).strip()
            if kind == "add":
                if text:
                    self.text = f"{self.text}\n{text}" if self.text else text
                events.append(MemoryEvent(kind="notes", action="scratchpad_add", text=text))
                continue
            found = bool(text) and text in self.text
            if found:
                kept = self.text.replace(text, "").splitlines()
                self.text = "\n".join(line for line in kept if line.strip())
            said = text if found else f"{text}\n-> not in the scratchpad; nothing deleted"
            events.append(MemoryEvent(kind="notes", action="scratchpad_del", text=said))
        return events

    def message(self) -> ChatMessage | None:
        """The scratchpad as the model is shown it, or None while it is empty."""
        if not self.text:
            return None
        return ChatMessageUser(content=f"{SCRATCHPAD_HEADING}\n{self.text}")


_PRESETS: dict[str, Scaffold] = {preset.name: preset for preset in (Plancraft(), AutumnBench())}


def scaffold(name: str) -> Scaffold | None:
    """The preset ``--agent-opt scaffold=NAME`` names, or None for ``none``."""
    return _PRESETS.get(name)
