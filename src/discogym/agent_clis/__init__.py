"""Agent CLIs (Claude Code, Codex) as agents: ``--agent cli --agent-opt cli=claude-code|codex --model ...``.

Registered through the ``discogym.agents`` entry point; the agent's module is imported only when one is made.
"""

from discogym.core import Agent, AgentOptions, register_agent

DESCRIPTION = (
    "an agent CLI, one process per episode, acting through the episode's MCP tools: --agent-opt "
    "cli=claude-code (--model anthropic/NAME) or cli=codex (--model openai/NAME); see docs/agent-clis.md"
)
# The fields of discogym.agent_clis.agent.CliSettings (a test keeps them equal).
OPTIONS = ("cli", "builtin_tools", "timeout_s", "max_turns")


def _make(options: AgentOptions) -> Agent:
    from discogym.agent_clis.agent import make_cli_agent

    return make_cli_agent(options)


def register() -> None:
    """Make ``--agent cli`` available."""
    register_agent("cli", _make, DESCRIPTION, takes_model=True, options=OPTIONS)
