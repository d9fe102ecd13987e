"""Context policies: which part of the conversation each request to the model carries.

The agent keeps the whole conversation; a policy chooses what is sent. ``full`` sends it all. ``window`` sends
the system prompt and the brief, then the newest turns: a turn is one reply of the model with what answered
it (its calls' results, or the note that the reply could not be used), so a call is never sent without its
result. When a request no longer fits the model's context window, the policy is asked to drop more; only
when it cannot does the episode end as ``context_overflow``.
"""

from abc import ABC, abstractmethod

from inspect_ai.model import ChatMessage, ChatMessageAssistant

HEAD = 2  # the system prompt and the brief, always sent


def turns(messages: list[ChatMessage]) -> list[list[ChatMessage]]:
    """The conversation after its head, cut before each reply of the model."""
    grouped: list[list[ChatMessage]] = []
    for message in messages[HEAD:]:
        if isinstance(message, ChatMessageAssistant) or not grouped:
            grouped.append([])
        grouped[-1].append(message)
    return grouped


class ContextPolicy(ABC):
    """What of the conversation a request carries."""

    name: str

    @abstractmethod
    def prompt(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        """The messages of the next request."""

    @abstractmethod
    def shrink(self, messages: list[ChatMessage]) -> bool:
        """Send less from now on, after a request was too long; False when nothing more can be dropped."""


class FullContext(ContextPolicy):
    """Every message, every time (the papers' default in AutumnBench; an ablation elsewhere)."""

    name = "full"

    def prompt(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        return list(messages)

    def shrink(self, messages: list[ChatMessage]) -> bool:
        return False


class WindowContext(ContextPolicy):
    """The head and the newest ``size`` turns; an overflow halves the window, down to one turn."""

    name = "window"

    def __init__(self, size: int) -> None:
        self.size = size

    def prompt(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        kept = turns(messages)[-self.size :]
        return [*messages[:HEAD], *(message for turn in kept for message in turn)]

    def shrink(self, messages: list[ChatMessage]) -> bool:
        sent = min(self.size, len(turns(messages)))
        if sent <= 1:
            return False
        self.size = sent // 2
        return True


def context_policy(name: str, window_turns: int) -> ContextPolicy:
    """The policy ``--agent-opt context=NAME`` names."""
    return WindowContext(window_turns) if name == "window" else FullContext()
