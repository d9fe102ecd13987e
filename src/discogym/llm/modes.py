"""The three ways the ``llm`` agent acts (its ``mode``), one class each behind :class:`Mode`.

- :class:`NativeTools` (``mode=native``): the endpoint's own tool calling; several calls in one reply are made in
  order before the model is asked again.
- :class:`JsonText` (``mode=text``): for endpoints without tool calling; a reply is exactly one JSON object
  ``{"tool": NAME, "args": {...}}``.
- :class:`SuiteSyntax` (``mode=suite``): the suite's own text syntax and system prompt (e.g. Plancraft's ``move:
  from [I1] to [A1] with quantity 1``), parsed by the environment; a paper's scaffold may stand in for both.

A mode says which tools the request offers, what the system prompt is, how a reply becomes a call (or what was
wrong with it) and how a result goes back into the conversation. The agent keeps the loop, the notes and the
calls of a native reply still to make (:class:`Acting`).
"""

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Protocol

from inspect_ai.model import ChatMessage, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall as InspectToolCall
from inspect_ai.tool import ToolInfo

from discogym.core import AgentContext, ToolCall, ToolImage, ToolSpec, UserError
from discogym.core.model.tools import parse_json
from discogym.llm.engine import Completion, contents, tool_info
from discogym.llm.notes import NOTES_TOOL
from discogym.llm.prompts import SYSTEM_PROMPT
from discogym.llm.scaffolds import Scaffold

TEXT_PROTOCOL = (
    "Act by replying with exactly one JSON object and nothing else, of the form "
    '{"tool": "<tool name>", "args": {<arguments>}}. One call per reply; its result comes back as the '
    "next message. The tools:\n"
)
NOTES_ONLY = "(the reply only used the notes)"  # not a problem: the model is asked again


class Acting(Protocol):
    """What a mode needs of the agent it serves."""

    answering: InspectToolCall | None  # the native call whose result comes next
    queued: list[InspectToolCall]  # the calls of the last native reply still to make
    messages: list[ChatMessage]

    def take_note(self, call: InspectToolCall) -> bool:
        """Answer a native call of the notes tool at once (True), or leave it for the environment (False)."""
        ...

    def use_notes(self, args: Any) -> str | None:
        """The notes tool's answer to ``args``, or None when the agent offers no notes."""
        ...


class Mode(ABC):
    """How the agent acts: see the module's docstring. The defaults are the text modes'."""

    offers_notes = True  # the notes tool is offered beside the suite's tools

    def __init__(self, scaffold: Scaffold | None) -> None:
        self.scaffold = scaffold

    def check(self, context: AgentContext) -> None:  # noqa: B027  (most modes play any episode)
        """Refuse (UserError) an episode this mode cannot play."""

    def tools(self, offered: list[ToolSpec]) -> list[ToolInfo]:
        """The tools the requests offer the endpoint (none: the text modes describe them in the prompt)."""
        return []

    def system_prompt(self, context: AgentContext, offered: list[ToolSpec]) -> tuple[str, list[ChatMessage]]:
        """The system prompt, and worked examples to put after it as past turns."""
        return context.system_prompt or SYSTEM_PROMPT, []

    @abstractmethod
    def rules(self) -> str:
        """What the model is reminded of after a reply that could not be used."""

    @abstractmethod
    def read(self, agent: Acting, completion: Completion) -> tuple[ToolCall | None, str]:
        """The call a reply makes, or None and what was wrong with it (the reply is in the conversation)."""

    def result_message(self, agent: Acting, tool: str, text: str, images: list[ToolImage]) -> ChatMessage:
        """The message that brings the result of the last call (of ``tool``) into the conversation."""
        return ChatMessageUser(content=contents(f"Result of {tool}: {text}", images))


class NativeTools(Mode):
    def tools(self, offered: list[ToolSpec]) -> list[ToolInfo]:
        return [tool_info(spec) for spec in offered]

    def rules(self) -> str:
        return "Call one of the tools."

    def read(self, agent: Acting, completion: Completion) -> tuple[ToolCall | None, str]:
        if not completion.tool_calls:
            return None, "it called no tool"
        acting = [call for call in completion.tool_calls if not agent.take_note(call)]
        if not acting:
            return None, NOTES_ONLY
        agent.answering, *agent.queued = acting
        return decision_call(agent.answering), ""

    def result_message(self, agent: Acting, tool: str, text: str, images: list[ToolImage]) -> ChatMessage:
        if agent.answering is None:
            return super().result_message(agent, tool, text, images)
        call, agent.answering = agent.answering, None
        return ChatMessageTool(content=contents(text, images), tool_call_id=call.id, function=call.function)


class JsonText(Mode):
    def system_prompt(self, context: AgentContext, offered: list[ToolSpec]) -> tuple[str, list[ChatMessage]]:
        system, examples = super().system_prompt(context, offered)
        return system + "\n\n" + TEXT_PROTOCOL + describe_tools(offered), examples

    def rules(self) -> str:
        return TEXT_PROTOCOL.split(" The tools:")[0]

    def read(self, agent: Acting, completion: Completion) -> tuple[ToolCall | None, str]:
        call = parse_json_call(completion.text)
        answer = agent.use_notes(call.args) if call.tool == NOTES_TOOL else None
        if answer is None:
            return call, ""
        agent.messages.append(ChatMessageUser(content=f"Result of {NOTES_TOOL}: {answer}"))
        return None, NOTES_ONLY


class SuiteSyntax(Mode):
    offers_notes = False  # a suite's own syntax has no word for them

    def __init__(self, scaffold: Scaffold | None) -> None:
        super().__init__(scaffold)
        self.parse: Callable[[str], ToolCall] | None = None

    def check(self, context: AgentContext) -> None:
        if context.text_prompt is None or context.parse_text_action is None:
            raise UserError("mode=suite: this suite has no text syntax of its own; use mode=native or text")

    def system_prompt(self, context: AgentContext, offered: list[ToolSpec]) -> tuple[str, list[ChatMessage]]:
        self.parse = context.parse_text_action
        if self.scaffold is not None:
            return self.scaffold.system_prompt(context), self.scaffold.examples(context)
        assert context.text_prompt is not None  # check() made sure
        return context.text_prompt, []

    def rules(self) -> str:
        if self.scaffold is not None:
            return self.scaffold.rules()
        return "Answer in the action syntax the instructions describe."

    def read(self, agent: Acting, completion: Completion) -> tuple[ToolCall | None, str]:
        assert self.parse is not None  # system_prompt() took it
        text = completion.text if self.scaffold is None else self.scaffold.action_text(completion.text)
        return self.parse(text), ""

    def result_message(self, agent: Acting, tool: str, text: str, images: list[ToolImage]) -> ChatMessage:
        return ChatMessageUser(content=contents(text, images))


MODES: dict[str, type[Mode]] = {"native": NativeTools, "text": JsonText, "suite": SuiteSyntax}


def describe_tools(tools: list[ToolSpec]) -> str:
    """The tools as the text protocol lists them: name, description, argument schema."""
    return "\n".join(
        f"- {t.name}: {t.description} Arguments (JSON schema): {json.dumps(t.parameters, sort_keys=True)}"
        for t in tools
    )


_FENCED = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)


def parse_json_call(text: str) -> ToolCall:
    """The single ``{"tool": ..., "args": {...}}`` object a text-protocol reply must be, or ValueError.

    The whole reply must be that object; a surrounding markdown code fence is tolerated.
    """
    body = text.strip()
    fenced = _FENCED.fullmatch(body)
    if fenced:
        body = fenced.group(1)
    value = parse_json(body, "the reply is")
    if not isinstance(value, dict):
        raise ValueError(f"the reply is a JSON {type(value).__name__}, not an object")
    unknown = sorted(set(value) - {"tool", "args"})
    if unknown:
        raise ValueError(f'the object may hold only "tool" and "args", not {", ".join(map(repr, unknown))}')
    if not isinstance(value.get("tool"), str):
        raise ValueError('the object needs "tool": the name of a tool, as a string')
    args = value.get("args", {})
    if not isinstance(args, dict):
        raise ValueError('"args" must be a JSON object')
    return ToolCall(tool=value["tool"], args=args)


def decision_call(call: InspectToolCall) -> ToolCall:
    """A native call as the environment takes it; arguments that did not parse reach it as their parse error,
    which it rejects with a message the model reads."""
    return ToolCall(tool=call.function, args=call.parse_error if call.parse_error else call.arguments)
