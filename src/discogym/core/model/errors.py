"""The exceptions the harness uses to tell apart who is at fault."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from discogym.core.model.agent import Usage


class DiscogymError(Exception):
    """Base class of every error discogym raises on purpose."""


class UserError(DiscogymError):
    """Something the user asked for is wrong (unknown suite, bad option, malformed file).

    The CLI prints the message as one line and exits non-zero, without a traceback.
    """


class MissingCredentials(UserError):
    """A model's API key is not in the environment. A run skips that agent with this message."""


class InfrastructureError(DiscogymError):
    """A fault outside the agent's control: an endpoint that is down, a timeout, a killed worker.

    An episode interrupted by one is not written and is never scored as the agent's failure; the
    runner retries it (``--retries``) and a later run on the same directory picks it up again.

    ``spent`` is what the episode had cost when the fault came (the requests billed before it, and the attempts
    that failed), added on the way out by whoever knew a part (:meth:`add_spent`): the run books it, since no
    episode file will.
    """

    spent: "Usage | None" = None

    def add_spent(self, usage: "Usage | None") -> None:
        """Count ``usage`` in what the fault's episode had cost."""
        if usage is not None:
            self.spent = usage if self.spent is None else self.spent + usage


class ToolError(DiscogymError):
    """Raised by a tool handler for a well-formed but unacceptable request.

    The message goes back to the agent as an error result; the episode continues.
    """
