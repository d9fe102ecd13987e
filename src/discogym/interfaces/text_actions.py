"""An episode as text, the way the Gymnasium environments (``discogym.gym``) and ``discogym export-sft`` show it:
the instructions (the suite's text syntax, or its tools as a person types them), the brief, each call as the text
that makes it, each result's text."""

from collections.abc import Callable
from typing import Any

from discogym.core import Env, Episode, ToolCall, ToolError, ToolSpec
from discogym.core.terminal.human import parse_tool_line, tool_line, usage_line


def instructions(text_prompt: str | None, tools: list[ToolSpec]) -> str:
    """How actions are written: the suite's text prompt where it has a syntax, else its tools one per line."""
    return text_prompt or "Act with one tool per step:\n" + "\n".join(usage_line(tool) for tool in tools)


def action_text(env: Env, call: ToolCall, parse: Callable[[str], ToolCall] | None) -> str | None:
    """``call`` as the text that makes it: the suite's syntax where ``parse`` (its reader) is given and the suite
    writes the call in it, else ``TOOL key=value ...``; None when the text does not read back as the same call."""
    text = env.format_text_action(call) if parse is not None else None
    text = text or tool_line(call)
    try:
        read = (parse or parse_tool_line)(text)
    except (ToolError, ValueError):
        return None
    return text if _same_call(read, call) else None


def _same_call(read: ToolCall, call: ToolCall) -> bool:
    """Whether ``read`` makes ``call``: the same tool and arguments, where the reader may have added what the call
    left to its defaults (a placed block's properties, say), at any depth."""
    return read.tool == call.tool and _covers(read.args, call.args)


def _covers(read: Any, given: Any) -> bool:
    if isinstance(read, dict) and isinstance(given, dict):
        return all(key in read and _covers(read[key], value) for key, value in given.items())
    return bool(read == given)


def conversation(env: Env, episode: Episode) -> list[dict[str, str]] | None:
    """``episode`` as chat messages: the instructions (system), the brief (user), then each call (assistant) and
    its result (user), up to the last call; None when a call has no text that makes it or a result shows
    pictures, which text cannot carry. ``env`` is a fresh environment of the episode's task (it writes the calls)."""
    text_prompt = env.text_prompt()
    parse = env.parse_text_action if text_prompt is not None else None
    messages = [
        {"role": "system", "content": instructions(text_prompt, episode.tools)},
        {"role": "user", "content": episode.brief},
    ]
    for position, event in enumerate(episode.events):
        text = action_text(env, event.call, parse)
        if text is None or event.result.images:
            return None
        messages.append({"role": "assistant", "content": text})
        if position < len(episode.events) - 1:
            messages.append({"role": "user", "content": event.result.text})
    return messages


__all__ = ["action_text", "conversation", "instructions"]
