"""How an episode ended: one vocabulary of endings, each of one kind.

Every ending an environment, an agent, a limit or the harness can give has a name here, and every name belongs
to one :class:`EndingKind`, in the spirit of Gymnasium's terminated/truncated and Inspect's sample limits: a
report can then tell an episode the task ended from one a limit cut short, an error stopped, or its player left.
The names are what episode files store (``outcome.termination``), so they never change once released.
"""

from enum import StrEnum


class EndingKind(StrEnum):
    """What ended an episode."""

    TASK = "task"  # the environment: the task reached its end (an answer submitted, the goal reached)
    AGENT = "agent"  # the agent chose to stop, or gave nothing usable to go on with
    LIMIT = "limit"  # a limit cut it short: steps, wall-clock time, tokens, dollars, turns, a context window
    ERROR = "error"  # a bug of the environment or the agent, or a setting the run asked for, stopped it
    ABANDONED = "abandoned"  # its player or client left before the end

    @property
    def truncated(self) -> bool:
        """True for endings that cut the episode short of its own end (Gymnasium's ``truncated``)."""
        return self in (EndingKind.LIMIT, EndingKind.ERROR, EndingKind.ABANDONED)


class Termination(StrEnum):
    """Why an episode (or a sub-agent's session) ended. ``Termination.X.kind`` says what ended it."""

    # Ended by the task: the environment's own end.
    SUBMITTED = "submitted"  # a design or an answer handed in for the verdict (redstone, petri)
    ANSWERED = "answered"  # a question answered (autumn's masked-frame test, the redstone scientist)
    GOAL_REACHED = "goal_reached"  # autumn's planning test
    FRAME_CHOSEN = "frame_chosen"  # autumn's change-detection test
    CRAFTED = "crafted"  # crafting: the target item made
    DECLARED_IMPOSSIBLE = "declared_impossible"  # crafting: the agent said the target cannot be made
    # Ended by the agent.
    AGENT_STOPPED = "agent_stopped"  # the agent ended the episode without the task's own end
    NO_ANSWER = "no_answer"  # a model gave no usable reply, even after being told what was wrong
    # Cut short by a limit.
    STEP_LIMIT = "step_limit"  # the environment's cap on calls
    CALL_TIME_LIMIT = "call_time_limit"  # one tool call ran past its wall-clock cap
    TOKEN_LIMIT = "token_limit"  # the agent's token budget (--token-limit)
    COST_LIMIT = "cost_limit"  # the agent's dollar budget (--cost-limit), or an agent CLI's own
    TURN_LIMIT = "turn_limit"  # an agent CLI's turn cap, or an Inspect limit (messages, tokens, time)
    CONFORMANCE_STEP_CAP = "conformance_step_cap"  # discogym check-suite's cap on a random episode
    CONTEXT_OVERFLOW = "context_overflow"  # a model's conversation outgrew its context window, nothing left to drop
    GAME_TIME_LIMIT = "game_time_limit"  # a person's game ran past its study's time (discogym serve --study)
    # Stopped by an error.
    ENV_ERROR = "env_error"  # a bug of the environment (or of a scorer of its tools)
    AGENT_ERROR = "agent_error"  # a bug of the agent
    CONFIG_ERROR = "config_error"  # a setting of the run refused as the episode started (a task, an option)
    SERVER_STOPPED = "server_stopped"  # the web server hosting a person's game stopped before the game's end
    # Left before the end.
    ABANDONED = "abandoned"  # a person or an outside client went away; the episode is scored as it stands

    @property
    def kind(self) -> EndingKind:
        """What ended the episode."""
        return _KINDS[self]


_KINDS: dict[Termination, EndingKind] = {
    **dict.fromkeys(
        [
            Termination.SUBMITTED,
            Termination.ANSWERED,
            Termination.GOAL_REACHED,
            Termination.FRAME_CHOSEN,
            Termination.CRAFTED,
            Termination.DECLARED_IMPOSSIBLE,
        ],
        EndingKind.TASK,
    ),
    Termination.AGENT_STOPPED: EndingKind.AGENT,
    Termination.NO_ANSWER: EndingKind.AGENT,
    **dict.fromkeys(
        [
            Termination.STEP_LIMIT,
            Termination.CALL_TIME_LIMIT,
            Termination.TOKEN_LIMIT,
            Termination.COST_LIMIT,
            Termination.TURN_LIMIT,
            Termination.CONFORMANCE_STEP_CAP,
            Termination.CONTEXT_OVERFLOW,
            Termination.GAME_TIME_LIMIT,
        ],
        EndingKind.LIMIT,
    ),
    Termination.ENV_ERROR: EndingKind.ERROR,
    Termination.AGENT_ERROR: EndingKind.ERROR,
    Termination.CONFIG_ERROR: EndingKind.ERROR,
    Termination.SERVER_STOPPED: EndingKind.ERROR,
    Termination.ABANDONED: EndingKind.ABANDONED,
}


def ending(name: str) -> Termination:
    """The ending called ``name``, or a ValueError that lists the vocabulary (an environment that ends with a name
    of its own is a bug of that environment)."""
    try:
        return Termination(name)
    except ValueError:
        names = ", ".join(member.value for member in Termination)
        raise ValueError(f"{name!r} is not an ending discogym knows; endings: {names}") from None
