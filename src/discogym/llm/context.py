"""Context policies: which part of the conversation each request to the model carries.

The agent keeps the whole conversation; a policy chooses what is sent. ``full`` sends it all. ``messages`` sends
the system prompt and the newest messages, whatever they are (Plancraft's history window). ``window`` sends
the system prompt and the brief, then the newest turns: a turn is one reply of the model with what answered
it (its calls' results, or the note that the reply could not be used), so a call is never sent without its
result. ``compact`` sends everything until the prompt passes a threshold, then has the model summarise the
older turns and sends the summary in their place: the prompt's prefix changes only at these rare steps, so
prompt caches survive between them. When a request no longer fits the model's context window, the policy is
asked to drop more; only when it cannot does the episode end as ``context_overflow``.

The policies estimate a prompt's tokens from its characters, scaled by how the endpoint counted the last prompt
it was sent (its usage): a quarter of the characters fell up to a third short of SmolLM2's count on llama.cpp's
server, and a threshold at 80% of a small window was passed before it was seen.
"""

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser, ContentImage, ContentText
from inspect_ai.tool import ToolInfo

HEAD = 2  # the system prompt and the brief, always sent (a scaffold's example dialogue between them adds to it)
CHARS_PER_TOKEN = 4  # the estimate of a prompt's tokens: a quarter of its characters
IMAGE_TOKENS = 1_000  # the estimate of an image's tokens (a 512x512 picture costs 500-1,600 by provider)
COMPACT_TOKENS = 16_000  # compact's default threshold, or 80% of the model's window if that is smaller
COMPACT_SHARE = 0.8
KEEP_TURNS = 2  # the newest turns a compaction keeps word for word
SCALE_BOUNDS = (0.5, 4.0)  # how far the endpoint's count may move the estimate (an odd usage report moves it no more)
SUMMARY_PROMPT = (
    "The conversation has grown long, so its older turns will be replaced by a summary that you write now. "
    "Write it for yourself: after this, you will see the task, your summary and only the newest turns. Keep what "
    "you need to go on: what you have tried and what each try showed, the rules you have found and how sure you "
    "are of them, what you still want to test, and where you are in the task. Be concise but do not drop facts "
    "you will need. Reply with the summary only; do not call a tool."
)


def estimate_tokens(messages: list[ChatMessage], tools: list[ToolInfo]) -> int:
    """A prompt's tokens as the policies estimate them: a quarter of the characters of its text, calls and
    tool definitions, and :data:`IMAGE_TOKENS` per image (real tokenizers differ by 10-30%)."""
    chars = sum(len(json.dumps(tool.model_dump(exclude_none=True))) for tool in tools)
    images = 0
    for message in messages:
        if isinstance(message.content, str):
            chars += len(message.content)
        else:
            for part in message.content:
                if isinstance(part, ContentText):
                    chars += len(part.text)
                elif isinstance(part, ContentImage):
                    images += 1
                else:
                    chars += len(str(getattr(part, "reasoning", "")))
        if isinstance(message, ChatMessageAssistant):
            for call in message.tool_calls or []:
                chars += len(call.function) + len(json.dumps(call.arguments))
    return chars // CHARS_PER_TOKEN + images * IMAGE_TOKENS


def turns(messages: list[ChatMessage], head: int = HEAD) -> list[list[ChatMessage]]:
    """The conversation after its first ``head`` messages, cut before each reply of the model."""
    grouped: list[list[ChatMessage]] = []
    for message in messages[head:]:
        if isinstance(message, ChatMessageAssistant) or not grouped:
            grouped.append([])
        grouped[-1].append(message)
    return grouped


class ContextPolicy(ABC):
    """What of the conversation a request carries."""

    name: str
    head = HEAD  # the leading messages every request carries

    scale = 1.0  # the endpoint's tokens per estimated token, as it counted the last prompt it answered

    def counted(self, prompt: list[ChatMessage], tools: list[ToolInfo], input_tokens: int) -> None:
        """The endpoint counted ``input_tokens`` in ``prompt``: estimates are scaled to its count from now on."""
        estimated = estimate_tokens(prompt, tools)
        if input_tokens > 0 and estimated > 0:
            low, high = SCALE_BOUNDS
            self.scale = min(max(input_tokens / estimated, low), high)

    def estimate(self, messages: list[ChatMessage], tools: list[ToolInfo]) -> int:
        """The tokens of ``messages`` and ``tools`` as the endpoint would count them, by the last prompt's scale."""
        return int(estimate_tokens(messages, tools) * self.scale)

    def pin(self, head: int) -> None:
        """Send the first ``head`` messages with every request (the system prompt, any example dialogue, the
        brief)."""
        self.head = head

    @abstractmethod
    def prompt(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        """The messages of the next request."""

    @abstractmethod
    def shrink(self, messages: list[ChatMessage]) -> bool:
        """Send less from now on, after a request was too long; False when nothing more can be dropped."""

    def compaction(self, messages: list[ChatMessage], tools: list[ToolInfo]) -> "Compaction | None":
        """The compaction to make before the next request, if one is due (only ``compact`` makes them)."""
        return None


@dataclass
class Compaction:
    """Older turns of ``messages`` to be replaced by a summary the model writes (:class:`CompactContext`): the agent
    sends :meth:`request`, drops the oldest turns while that is too long, and hands the summary to :meth:`done`."""

    policy: "CompactContext"
    messages: list[ChatMessage]

    def __post_init__(self) -> None:
        self.began = self.policy.start  # the turns before it were summarised before

    def request(self) -> list[ChatMessage]:
        """What the model is sent to write the summary."""
        return self.policy.summary_request(self.messages)

    def drop_oldest(self) -> bool:
        """The request was too long: leave the older half of the turns unsummarised; False when none can go."""
        return self.policy.drop_oldest(self.messages)

    def done(self, summary: str) -> int:
        """Send ``summary`` instead of the older turns from now on; how many turns went from the prompt (those
        dropped unsummarised included)."""
        self.policy.compacted(self.messages, summary)
        return self.policy.start - self.began


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
        kept = turns(messages, self.head)[-self.size :]
        return [*messages[: self.head], *(message for turn in kept for message in turn)]

    def shrink(self, messages: list[ChatMessage]) -> bool:
        sent = min(self.size, len(turns(messages, self.head)))
        if sent <= 1:
            return False
        self.size = sent // 2
        return True


class MessageWindow(ContextPolicy):
    """The system prompt and the newest ``size`` messages after it, less a leading reply of the model (so the
    window opens on something the model was told); the brief and any example dialogue scroll out like the rest.
    Plancraft's history window. An overflow halves the window, down to one message."""

    name = "messages"
    head = 1

    def __init__(self, size: int) -> None:
        self.size = size

    def pin(self, head: int) -> None:
        """Only the system prompt is pinned: the rest is a window of messages."""

    def prompt(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        kept = messages[1:][-self.size :]
        if kept and isinstance(kept[0], ChatMessageAssistant):
            kept = kept[1:]
        return [*messages[:1], *kept]

    def shrink(self, messages: list[ChatMessage]) -> bool:
        sent = min(self.size, len(messages) - 1)
        if sent <= 1:
            return False
        self.size = sent // 2
        return True


class CompactContext(ContextPolicy):
    """Everything, until the prompt passes ``threshold`` tokens; then all but the newest ``keep`` turns are
    replaced by a summary the model writes (:data:`SUMMARY_PROMPT`). The agent asks for the summary when
    :meth:`due` says so, and hands it to :meth:`compacted`."""

    name = "compact"

    def __init__(self, threshold: int, keep: int = KEEP_TURNS, window: int | None = None) -> None:
        self.threshold = threshold
        self.keep = keep
        self.window = window  # the model's context window, when known
        self.summary: str | None = None
        self.start = 0  # the turns before it are in the summary
        self.forced = False  # a request was too long: compact now, whatever the estimate

    def prompt(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        head = list(messages[: self.head])
        if self.summary is not None:
            head.append(ChatMessageUser(content=summary_message(self.summary, self.start)))
        return [*head, *(message for turn in turns(messages, self.head)[self.start :] for message in turn)]

    def compaction(self, messages: list[ChatMessage], tools: list[ToolInfo]) -> Compaction | None:
        return Compaction(self, messages) if self.due(messages, tools) else None

    def due(self, messages: list[ChatMessage], tools: list[ToolInfo]) -> bool:
        """Whether the next request should first replace older turns by a summary: the prompt passes the
        threshold and the turns that would go hold half of it at least (so that a long head and the kept turns
        alone do not make every step compact), or it would not fit the window at all (then all but the newest
        turn go, as after an overflow)."""
        going = self._going(messages)
        if not going:
            return False
        if self.forced:
            return True
        prompt = self.estimate(self.prompt(messages), tools)
        if prompt <= self.threshold:
            return False
        if self.window is not None and prompt >= self.window:
            return self.shrink(messages)
        return self.estimate([m for turn in going for m in turn], []) >= self.threshold // 2

    def summary_request(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        """What the model is sent to write the summary: the prompt so far and :data:`SUMMARY_PROMPT`."""
        return [*self.prompt(messages), ChatMessageUser(content=SUMMARY_PROMPT)]

    def compacted(self, messages: list[ChatMessage], summary: str) -> int:
        """Send ``summary`` instead of the older turns from now on; returns how many turns it replaced."""
        going = len(self._going(messages))
        self.start += going
        self.summary = summary
        self.forced = False
        return going

    def drop_oldest(self, messages: list[ChatMessage]) -> bool:
        """The summary request itself was too long: the older half of the turns it would replace go unsummarised;
        False when none can go."""
        going = len(self._going(messages))
        if going <= 1:
            return False
        self.start += going // 2
        return True

    def shrink(self, messages: list[ChatMessage]) -> bool:
        self.forced = bool(self._going(messages))
        return self.forced

    def _going(self, messages: list[ChatMessage]) -> list[list[ChatMessage]]:
        """The turns a compaction now would replace: all but the newest ``keep`` (all but the newest one when
        forced by an overflow)."""
        unsummarised = turns(messages, self.head)[self.start :]
        keep = 1 if self.forced else self.keep
        return unsummarised[: max(len(unsummarised) - keep, 0)]


def summary_message(summary: str, replaced: int) -> str:
    """How a summary is shown to the model in place of the turns it replaced."""
    return f"(The first {replaced} turns of this episode were replaced by this summary, which you wrote.)\n\n{summary}"


def compact_threshold(context_window: int | None, compact_at: int | None) -> int:
    """The prompt size that triggers a compaction: ``compact_at`` if given, else :data:`COMPACT_TOKENS` or 80%
    of the model's window, whichever is smaller."""
    if compact_at is not None:
        return compact_at
    if context_window is None:
        return COMPACT_TOKENS
    return min(COMPACT_TOKENS, int(context_window * COMPACT_SHARE))


def context_policy(
    name: str, window_turns: int, threshold: int, window_messages: int = 40, context_window: int | None = None
) -> ContextPolicy:
    """The policy ``--agent-opt context=NAME`` names, for a model of ``context_window`` tokens (None: unknown)."""
    if name == "window":
        return WindowContext(window_turns)
    if name == "messages":
        return MessageWindow(window_messages)
    if name == "compact":
        return CompactContext(threshold, window=context_window)
    return FullContext()
