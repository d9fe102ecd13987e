"""The notes tool: memory a model keeps outside its conversation, shown at the end of every prompt.

Older turns of a long episode may be dropped or summarised by the context policy; the notes survive. The agent
answers the tool itself: a notes call costs a model request but no step of the environment, and each one is
logged with the decision it led to (:class:`~discogym.core.MemoryEvent`).
"""

from typing import Any

from discogym.core import MemoryEvent, ToolSpec

NOTES_TOOL = "notes"
NOTES_CHARS = 4_000  # the default bound on all notes together
MAX_NOTE_ROUNDS = 8  # replies in a row that only use the notes before the agent insists on an action


def notes_spec(limit: int) -> ToolSpec:
    """The tool as the model is offered it."""
    return ToolSpec(
        name=NOTES_TOOL,
        description=(
            "Your notes, kept outside the conversation: in a long episode older turns are summarised or dropped, "
            "but your notes are shown at the end of every prompt. action=write adds `text` as a new note, "
            "action=delete removes note `number`, action=read lists them. All notes together may hold "
            f"{limit:,} characters. Using the notes takes no step in the environment."
        ),
        parameters={
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["write", "delete", "read"]},
                "text": {"type": "string", "description": "the note to write"},
                "number": {"type": "integer", "minimum": 1, "description": "the note to delete"},
            },
            "required": ["action"],
            "additionalProperties": False,
        },
    )


class Notes:
    """A model's numbered notes, bounded to ``limit`` characters in all."""

    def __init__(self, limit: int = NOTES_CHARS) -> None:
        self.limit = limit
        self.entries: dict[int, str] = {}
        self.next_number = 1

    def call(self, args: Any) -> tuple[str, MemoryEvent]:
        """Carry out one call of the tool: the answer the model reads, and the event that logs it."""
        action = args.get("action") if isinstance(args, dict) else None
        if action == "write":
            answer = self._write(args.get("text"))
        elif action == "delete":
            answer = self._delete(args.get("number"))
        elif action == "read":
            answer = self.shown() or "You have no notes."
        else:
            answer = 'error: the notes tool takes action "write", "delete" or "read"'
        said = str(args.get("text", "")) if action == "write" else ""
        return answer, MemoryEvent(kind="notes", action=str(action), text=f"{said}\n-> {answer}" if said else answer)

    def shown(self) -> str | None:
        """The notes as every prompt ends with them, or None when there are none."""
        if not self.entries:
            return None
        used = sum(len(text) for text in self.entries.values())
        lines = [f"{number}. {text}" for number, text in self.entries.items()]
        return f"Your notes ({used:,} of {self.limit:,} characters):\n" + "\n".join(lines)

    def _write(self, text: Any) -> str:
        if not isinstance(text, str) or not text.strip():
            return "error: write needs `text`, the note to write"
        used = sum(len(entry) for entry in self.entries.values())
        if used + len(text) > self.limit:
            return (
                f"error: the notes hold {self.limit:,} characters in all; {used:,} are used and this note has "
                f"{len(text):,}. Delete notes you no longer need, or write a shorter one."
            )
        number = self.next_number
        self.entries[number] = text
        self.next_number += 1
        return f"Note {number} written."

    def _delete(self, number: Any) -> str:
        if not isinstance(number, int) or number not in self.entries:
            have = ", ".join(map(str, self.entries)) or "none"
            return f"error: delete needs `number`, one of your notes' numbers ({have})"
        del self.entries[number]
        return f"Note {number} deleted."
