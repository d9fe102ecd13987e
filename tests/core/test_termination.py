"""Typed endings: one vocabulary, each name of one kind; no ending written as a bare string anywhere else."""

import ast
from pathlib import Path

import pytest

from discogym.core import EndingKind, Env, NoArgs, Termination, ToolResult, tool
from discogym.core.model.termination import ending

REPO = Path(__file__).resolve().parents[2]
NAMES = {member.value for member in Termination}
ENDING_CALLS = {"finish", "stop", "blame", "_fail"}  # methods whose first argument is an ending


def test_every_ending_has_a_kind_and_the_kinds_split_as_gymnasium_does():
    kinds = {member: member.kind for member in Termination}
    assert set(kinds.values()) == set(EndingKind)
    assert Termination.SUBMITTED.kind is EndingKind.TASK and not EndingKind.TASK.truncated
    assert Termination.AGENT_STOPPED.kind is EndingKind.AGENT and not EndingKind.AGENT.truncated
    assert Termination.TOKEN_LIMIT.kind is EndingKind.LIMIT and EndingKind.LIMIT.truncated
    assert Termination.ENV_ERROR.kind is EndingKind.ERROR and EndingKind.ERROR.truncated
    assert Termination.ABANDONED.kind is EndingKind.ABANDONED


def test_the_stored_names_are_the_ones_episode_files_have_always_held():
    assert f"{Termination.STEP_LIMIT}" == "step_limit" == Termination("step_limit")
    assert ending("crafted") is Termination.CRAFTED
    with pytest.raises(ValueError, match="'replied' is not an ending discogym knows; endings: submitted, answered"):
        ending("replied")


class _Finisher(Env):
    def brief(self) -> str:
        return "end it"

    @tool(NoArgs)
    def end(self, args: NoArgs) -> ToolResult:
        """End with a name of its own."""
        self.finish("replied")  # type: ignore[arg-type]
        return ToolResult(text="over")


def test_an_environment_that_ends_with_a_name_of_its_own_is_told_which_names_there_are():
    with pytest.raises(ValueError, match="not an ending discogym knows"):
        _Finisher().call("end")


def _ending_literals(path: Path, root: Path = REPO) -> list[str]:
    """Where ``path`` writes an ending as a bare string: an argument of finish/stop/blame, a ``termination=``
    keyword, or a comparison with something called ``termination``."""
    found: list[str] = []
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        literals: list[ast.expr] = []
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ENDING_CALLS and node.args:
                literals.append(node.args[0])
            literals.extend(k.value for k in node.keywords if k.arg == "termination")
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            named = [s for s in sides if isinstance(s, ast.Attribute | ast.Name) and "termination" in ast.unparse(s)]
            if named:
                literals.extend(sides)
        elif isinstance(node, ast.Dict) and any(
            isinstance(k, ast.Constant) and k.value in {"completed", "max_turns"} for k in node.keys
        ):
            literals.extend(node.values)  # a table of outside words to endings (an agent CLI's)
        found.extend(
            f"{path.relative_to(root)}:{lit.lineno}: {lit.value!r}"
            for lit in literals
            if isinstance(lit, ast.Constant) and lit.value in NAMES
        )
    return found


def test_no_ending_is_written_as_a_string_outside_the_vocabulary():
    sources = sorted([*(REPO / "src").rglob("*.py"), *(REPO / "examples").rglob("*.py")])
    assert len(sources) > 100
    found = [hit for path in sources if path.name != "termination.py" for hit in _ending_literals(path)]
    assert found == []


def test_the_scan_finds_an_ending_written_as_a_string(tmp_path):
    sample = tmp_path / "env.py"
    sample.write_text(
        'self.finish("step_limit")\nok = env.termination == "crafted"\n'
        'AgentDecision(termination="turn_limit")\nENDINGS = {"completed": "agent_stopped"}\n'
    )
    hits = sorted(_ending_literals(sample, tmp_path), key=lambda hit: int(hit.split(":")[1]))
    assert [hit.split(": ", 1)[1] for hit in hits] == ["'step_limit'", "'crafted'", "'turn_limit'", "'agent_stopped'"]
