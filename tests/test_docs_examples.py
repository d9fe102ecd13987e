"""Every example in the README and docs/ runs as written.

Each ``discogym`` line of a ```bash block is parsed by the real command-line parser; then, file by file and in
the order the page gives them (later lines use what earlier ones wrote), every line is run in a fresh folder,
except the few in ``NOT_RUN`` (each with the reason). Placeholders in the text (SUITE, ID, PROGRAM.sexp, ...)
stand for real values of the toy suite and the shipped files; the redstone world the docs show is the world
file they use. Every ```python block runs too, with the world file at hand.
"""

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer
import typer.core
from typer.exceptions import TyperException

from discogym.interfaces.cli import app
from tests.conftest import REPO, cli_environment

DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", flags=re.DOTALL | re.MULTILINE)
ENV_ASSIGNMENT = re.compile(r"[A-Z_][A-Z0-9_]*=\S*")

# What the placeholders of the docs stand for: the example suite of docs/writing-a-suite.md
# (examples/hidden_number.py, installed for these tests through DISCOGYM_SUITES) and shipped files.
EXAMPLE_SUITE = {"DISCOGYM_SUITES": "examples.hidden_number:suite"}
PLACEHOLDERS = {
    "SUITE": "hidden-number",
    "SPLIT": "test",
    "ID": "number-0",
    "ID2": "number-1",
    "CONDITION": "default",
    "runs/SUITE": "runs/hidden-number",
    "runs/mcp/SUITE": "runs/mcp/hidden-number",
    "PROGRAM.sexp": str(REPO / "src/discogym/suites/autumn/programs/paint.sexp"),
    "src/discogym/suites/autumn/programs/paint.sexp": str(REPO / "src/discogym/suites/autumn/programs/paint.sexp"),
    "src/discogym/suites/redstone/taxonomy/w_working.txt": str(
        REPO / "src/discogym/suites/redstone/taxonomy/w_working.txt"
    ),
    "docs/images/crafting-high.png": str(REPO / "docs/images/crafting-high.png"),
    # written by `redstone reference --out devices/` above them
    "my-device.txt": "devices/B_branch_reach_L3.txt",
    "device.txt": "devices/B_branch_reach_L3.txt",
    "mypackage.mysuite:suite": "examples.hidden_number:suite",
}

NOVELTY = "DISCOGYM_AGENTS=examples.novelty_agent:register discogym"  # the agent of docs/writing-an-agent.md

# Lines that are parsed but not run, by the start of the line, with the reason. Lines naming a model are not
# run either: they need a key or a model server.
NOT_RUN = {
    "discogym sweep": "the main job (minutes); `make run` and the sweep tests run it",
    "discogym run --protocol plancraft-table2 --agent planner --out runs/plancraft": "2,925 episodes (20 s): "
    "docs/papers.md runs the same protocol, and tests/core/test_protocols.py a protocol end to end",
    "discogym petri verify": "regenerates every frozen task (minutes); tests/suites/petri run it",
    "discogym petri freeze": "rewrites a packaged task file (maintainers only)",
    "discogym autumn baseline": "50 runs of 1,000 steps per environment (minutes); tests/suites/autumn cover it",
    "discogym autumn verify": "regenerates the packaged task set; tests/suites/autumn run it",
    "discogym run autumn --agent oracle": "129 tasks; test_worldtest.py runs this very command and checks 129/129",
    "discogym run autumn --split v1 --agent oracle": "45 tasks; test_sets.py runs it and checks every score",
    "discogym autumn parity": "needs Autumn.cpp's module, built by the user (test_official_parity.py)",
    "discogym autumn data --fetch": "needs the network; test_official.py runs it offline and checks the one line",
    "discogym autumn data --from DIR": "needs a downloaded release; test_official.py installs a fixture of its own",
    "discogym run autumn --split official": "needs the cached release; test_official.py runs it on its fixture",
    "discogym autumn generate --out tasks.json": "all 45 challenges (40 s); one environment's stand in",
    "discogym models --url": "asks a running model server (tests/llm/test_servers.py asks a fake one)",
    "discogym mcp SUITE": "a server: it runs until stopped (tests/interfaces/test_mcp.py talks to it)",
    "discogym serve": "a server: it runs until stopped (tests/interfaces/test_web.py talks to it)",
    "discogym play": "interactive (tests/core/test_cli.py plays through stdin)",
    "discogym run petri --set l3-v1": "three agents on ten tasks (minutes)",
    "discogym run petri --set blind-v1": "three agents on ten tasks; tests/suites/petri play blind-v1",
    "discogym run petri --set l4-v1": "three agents on ten tasks; tests/suites/petri play l4-v1",
    "discogym petri recheck": "re-measures every task on 48 fresh seeds (minutes a set); a test rechecks one task",
    "discogym petri calibrate": "measures driver edges again (minutes per simulation); tests/suites/petri run one",
    "discogym run petri --set core-v1 --agent ofat-rand": "ten tasks (minutes)",
    "discogym petri validate --plots": "the 28 literature checks (minutes); tests/suites/petri run them",
    "discogym run petri --split core-v0 --agent reference --agent random --agent guess": "minutes: 3 agents x 3 passes",
    "discogym run petri --split l2-v0 --agent reference --agent random --agent guess": "minutes: 3 agents x 3 passes",
    "discogym run petri --split l3-v0 --agent reference --agent random --agent guess": "minutes: 3 agents x 3 passes",
    f"{NOVELTY} sweep --agent novelty": "all four suites (a minute); a sweep of two suites stands in",
    "discogym export-sft crafting --split train --condition ms": "1,145 episodes (25 s); test_sft.py: test.small",
    "discogym run crafting --agent random --backend ray": "580 episodes on Ray; tests/core/test_ray_backend.py",
    "discogym run crafting --split test --agent random --backend ray": "580 episodes on Ray (20 s); tests/core",
    "discogym run crafting --split test --condition image+perception": "two conditions x 580 tasks (a minute); "
    "test.small stands in",
    "discogym run crafting --condition image+perception": "580 tasks (25 s); the test.small line runs",
}

# What the lines that are not run would have written, where a later line reads it, written as the docs write
# commands: a run of the example suite stands in for a model's run or the MCP clients' episodes, a shorter
# sweep or run for a long one.
STAND_INS = {
    "llm.md": ["discogym run SUITE --out runs/SUITE"],
    "mcp.md": ["discogym run SUITE --out runs/mcp/SUITE"],
    "petri.md": ["discogym run petri --split pilot-v0 --agent reference --agent guess --out runs/petri-mix"],
    "agent-clis.md": ["discogym run redstone --split A --out runs/redstone"],
    "autumn-worldtest.md": [
        "discogym autumn generate --env paint --out tasks.json",  # 2 s (ball's takes 70 s)
        "discogym run autumn --split paint --agent oracle",
    ],
    "writing-an-agent.md": [f"{NOVELTY} sweep petri redstone --agent novelty --agent-opt max_calls=20"],
    "web.md": ["discogym run SUITE --out runs/SUITE", "discogym run SUITE --out studies/autumn-people/SUITE"],
    "inspect.md": ["discogym run crafting --split val.small.easy --tasks VAL0187 --out runs/crafting"],
    "local-models.md": ["discogym run crafting --tasks TEST0000 --out runs/local/crafting"],
    "training.md": ["discogym run crafting --split val --tasks VAL0001 --out runs/vf-crafting"],  # vf-eval's episodes
}


@dataclass(frozen=True)
class DocLine:
    """One command line of a ```bash block: where it is, and what it says (without its comment)."""

    path: Path
    line: int
    text: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"

    def words(self) -> tuple[dict[str, str], list[str]]:
        """The environment assignments in front, and the command's words with placeholders filled in."""
        words = shlex.split(self.text)
        env = {}
        while words and ENV_ASSIGNMENT.fullmatch(words[0]):
            name, _, value = words.pop(0).partition("=")
            env[name] = PLACEHOLDERS.get(value, value)
        return env, [PLACEHOLDERS.get(word, word) for word in words]

    def is_discogym(self) -> bool:
        return self.words()[1][:1] == ["discogym"]

    def not_run_because(self) -> str | None:
        if "--model" in self.words()[1]:
            return "needs a model's API key or server"
        return next((why for start, why in NOT_RUN.items() if self.text.startswith(start)), None)


def blocks(path: Path, language: str) -> list[tuple[int, str]]:
    """The code blocks of one language in a markdown file, each with the line number of its first line."""
    text = path.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, match.start(2)) + 1, match.group(2))
        for match in BLOCK.finditer(text)
        if match.group(1) == language
    ]


def bash_lines(path: Path) -> list[DocLine]:
    """Every command of the ```bash blocks of ``path`` (comment-only lines left out; ``a && b`` is two)."""
    lines: list[DocLine] = []
    for first, body in blocks(path, "bash"):
        for offset, raw in enumerate(body.splitlines()):
            text = re.sub(r"\s+#.*$", "", raw).strip()
            if text and not text.startswith("#"):
                lines.extend(DocLine(path, first + offset, command.strip()) for command in text.split(" && "))
    return lines


ALL_LINES = [line for path in DOC_FILES for line in bash_lines(path)]
DISCOGYM_LINES = [line for line in ALL_LINES if line.is_discogym()]


def parse_only(args: list[str]) -> None:
    """Parse ``args`` as the ``discogym`` command would, down to the sub-command, without running anything; a
    TyperException says what does not parse."""
    context = typer.main.get_command(app).make_context("discogym", list(args))
    while isinstance(context.command, typer.core.TyperGroup):
        rest = [*context._protected_args, *context.args]
        name, sub, remaining = context.command.resolve_command(context, rest)
        assert sub is not None and name is not None
        context = sub.make_context(name, remaining, parent=context)


@pytest.mark.parametrize("doc_line", DISCOGYM_LINES, ids=lambda line: line.where)
def test_every_documented_command_parses(doc_line):
    _, words = doc_line.words()
    try:
        parse_only(words[1:])
    except TyperException as err:
        pytest.fail(f"{doc_line.where}: `{doc_line.text}` does not parse: {err.format_message()}")


def test_the_list_of_lines_not_run_matches_the_docs():
    """Every entry of NOT_RUN still names a documented line, and no other line is left out."""
    for start in NOT_RUN:
        assert any(line.text.startswith(start) for line in DISCOGYM_LINES), f"no documented line starts {start!r}"
    others = [line for line in ALL_LINES if not line.is_discogym()]
    # Inspect's own command lines: tests/interfaces/test_inspect.py runs `inspect eval` offline as the docs show it;
    # verifiers' vf-eval: tests/interfaces/test_verifiers.py runs it against a fake endpoint as docs/training.md does
    pattern = r"(make |python3? |\.\./|export |echo |inspect |\.venv-verifiers/bin/vf-eval )"
    assert all(re.match(pattern, line.text) for line in others), others


def world_file_text() -> str:
    """The world file docs/redstone.md shows first (its ```-fenced block without a language after "## World
    files")."""
    text = (REPO / "docs" / "redstone.md").read_text(encoding="utf-8")
    section = text[text.index("## World files") :]
    return BLOCK.search(section).group(2)  # type: ignore[union-attr]


def prepare_folder(folder: Path) -> None:
    """The files the docs' commands name: the docs' own redstone world under every name they use, and a
    schematic of it to import."""
    from discogym.suites.redstone.schematic import write_schematic
    from discogym.suites.redstone.world import read_world

    for name in ("line.txt", "world.txt"):
        (folder / name).write_text(world_file_text(), encoding="utf-8")
    write_schematic(read_world(folder / "world.txt"), folder / "build.litematic")


def run_here(folder: Path, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``discogym ARGS`` run in ``folder``, with the example suite installed."""
    return subprocess.run(
        [sys.executable, "-m", "discogym", *args],
        cwd=folder,
        env=cli_environment(**{**EXAMPLE_SUITE, **env}),
        capture_output=True,
        text=True,
        timeout=600,
    )


RUN_FILES = [
    path
    for path in DOC_FILES
    if any(line.is_discogym() and line.not_run_because() is None for line in bash_lines(path))
]


@pytest.mark.parametrize("path", RUN_FILES, ids=lambda path: path.name)
def test_the_documented_commands_run(path, tmp_path):
    prepare_folder(tmp_path)
    for text in STAND_INS.get(path.name, []):
        env, words = DocLine(path, 0, text).words()
        assert run_here(tmp_path, words[1:], env).returncode == 0, text
    for doc_line in bash_lines(path):
        if not doc_line.is_discogym() or doc_line.not_run_because() is not None:
            continue
        env, words = doc_line.words()
        done = run_here(tmp_path, words[1:], env)
        assert done.returncode == 0, f"{doc_line.where}: `{doc_line.text}` exited {done.returncode}:\n{done.stderr}"


@pytest.mark.parametrize(
    "path, first, code",
    # The README's example is run by tests/test_readme.py, which also checks what it prints.
    [(path, first, code) for path in DOC_FILES[1:] for first, code in blocks(path, "python")],
    ids=lambda value: value.name if isinstance(value, Path) else str(value) if isinstance(value, int) else "",
)
def test_the_documented_python_runs(path, first, code, tmp_path):
    if 'model="' in code:
        compile(code, f"{path.name}:{first}", "exec")  # it would call a model: it must at least be Python
        pytest.skip(f"{path.name}:{first} calls a model (needs an API key); checked to compile only")
    prepare_folder(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=cli_environment(), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{path.relative_to(REPO)}:{first}: the python example fails:\n{done.stderr}"
