"""Plugins: a broken one is one warning line and everything else works; suites and their commands load lazily.

Plugins are installed the way a real package installs them: a ``*.dist-info`` folder with an
``entry_points.txt`` in a directory on the path (``sys.path`` in this process, ``PYTHONPATH`` in a subprocess).
"""

import importlib
import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

import discogym.core.running.generic_agents  # noqa: F401 - the built-in agents register before any test copies the registry
from discogym.core import UserError, all_suites, get_suite
from discogym.core.model import agent as agent_module
from discogym.core.model import plugins
from discogym.core.model import suite as suite_module
from discogym.core.model.agent import generic_agents
from tests.conftest import REPO, cli_environment, discogym_command

FAKE_PREFIX = "fakeplug_"  # every module the fake plugins install starts with it
HEAVY = ("numpy", "scipy", "matplotlib", "mcp", "openai", "anthropic")
SUITE_PACKAGES = ("autumn", "crafting", "petri", "redstone")

GOOD_SUITES = """
from tests.core.toy_suite import DigitSuite

class Alpha(DigitSuite):
    name = "alpha"
    aliases = ("first",)

alpha = Alpha()
"""
OTHER_SUITE = """
from tests.core.toy_suite import DigitSuite

class Beta(DigitSuite):
    name = "beta"
    aliases = ("second",)

beta = Beta()
"""
RAISES_AT_IMPORT = 'raise RuntimeError("the plugin\'s own bug\\nand a second line nobody needs")\n'
WRONG_OBJECTS = """
from tests.core.toy_suite import DigitSuite

NOT_A_SUITE = 42

class Unmakeable(DigitSuite):
    name = "unmakeable"

    def __init__(self):
        raise ValueError("no configuration file")

def register():
    raise KeyError("missing setting")
"""
AGENTS = """
from discogym.core import register_agent
from discogym.core.running.generic_agents import RandomAgent

def register():
    register_agent("fakeagent", lambda options: RandomAgent(), "a plugin's agent")
"""


def install_plugins(root: Path, groups: dict[str, dict[str, str]], modules: dict[str, str]) -> Path:
    """Write a distribution ``discogym-fake-plugins`` with these entry points, and its modules, under ``root``."""
    dist = root / "discogym_fake_plugins-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: discogym-fake-plugins\nVersion: 1.0\n")
    sections = [
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in points.items())
        for group, points in groups.items()
    ]
    (dist / "entry_points.txt").write_text("\n".join(sections))
    for name, source in modules.items():
        (root / f"{FAKE_PREFIX}{name}.py").write_text(source)
    return root


def forget_fake_modules() -> None:
    for name in [name for name in sys.modules if name.startswith(FAKE_PREFIX)]:
        del sys.modules[name]


@pytest.fixture
def fresh_registries(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Empty suite registry, agents discovered again, warnings shown again, no fake module imported."""
    monkeypatch.setattr(suite_module, "_registry", suite_module._Registry())
    monkeypatch.setattr(agent_module, "_GENERIC_AGENTS", dict(agent_module._GENERIC_AGENTS))
    monkeypatch.setattr(agent_module, "_discovered", False)
    monkeypatch.setattr(plugins, "_warned", set())
    monkeypatch.delenv("DISCOGYM_SUITES", raising=False)
    forget_fake_modules()
    yield
    forget_fake_modules()


@pytest.fixture
def on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fresh_registries: None):
    """Install fake plugins in this process: returns a function taking (entry points by group, modules)."""

    def install(groups: dict[str, dict[str, str]], modules: dict[str, str]) -> Path:
        root = install_plugins(tmp_path / "site", groups, modules)
        monkeypatch.syspath_prepend(str(root))
        importlib.invalidate_caches()
        return root

    return install


def warning_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.strip()]


BROKEN_SUITES = {
    "missing module": (
        f"{FAKE_PREFIX}nowhere:suite",
        f"ModuleNotFoundError: No module named '{FAKE_PREFIX}nowhere'",
    ),
    "raises at import": (f"{FAKE_PREFIX}raising:suite", "RuntimeError: the plugin's own bug"),
    "wrong object": (f"{FAKE_PREFIX}wrong:NOT_A_SUITE", "does not name a discogym Suite (got int)"),
    "missing attribute": (f"{FAKE_PREFIX}good:nothing_here", "AttributeError: module"),
    "constructor raises": (f"{FAKE_PREFIX}wrong:Unmakeable", "could not be made: ValueError: no configuration file"),
}
MODULES = {"good": GOOD_SUITES, "other": OTHER_SUITE, "raising": RAISES_AT_IMPORT, "wrong": WRONG_OBJECTS}


@pytest.mark.parametrize("case", sorted(BROKEN_SUITES))
def test_a_broken_suite_plugin_is_one_warning_and_the_others_load(case, on_path, capsys):
    value, cause = BROKEN_SUITES[case]
    on_path({"discogym.suites": {"broken": value, "alpha": f"{FAKE_PREFIX}good:alpha"}}, MODULES)
    names = [suite.name for suite in all_suites()]
    assert names == ["alpha", "autumn", "crafting", "petri", "redstone"]
    lines = warning_lines(capsys.readouterr().err)
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"warning: suite plugin 'broken' ({value})")
    assert cause in lines[0]
    all_suites()  # asked again: no second warning
    assert capsys.readouterr().err == ""


def test_naming_a_broken_suite_is_a_user_error_with_the_cause(on_path):
    value, cause = BROKEN_SUITES["raises at import"]
    on_path({"discogym.suites": {"broken": value}}, MODULES)
    with pytest.raises(UserError, match=f"suite plugin 'broken' .* could not be loaded: {cause}$"):
        get_suite("broken")
    assert get_suite("petri").name == "petri"


def test_get_suite_imports_only_the_plugin_that_carries_the_name(on_path):
    on_path(
        {
            "discogym.suites": {
                "alpha": f"{FAKE_PREFIX}good:alpha",
                "first": f"{FAKE_PREFIX}good:alpha",  # alias declared as an entry point
                "beta": f"{FAKE_PREFIX}other:beta",  # its alias 'second' is not declared
            }
        },
        MODULES,
    )
    assert get_suite("first").name == "alpha"
    assert f"{FAKE_PREFIX}good" in sys.modules and f"{FAKE_PREFIX}other" not in sys.modules
    assert get_suite("alpha") is get_suite("first")
    assert f"{FAKE_PREFIX}other" not in sys.modules
    assert get_suite("second").name == "beta"  # undeclared alias: found by loading every suite
    assert [s.name for s in all_suites()].count("alpha") == 1
    with pytest.raises(UserError, match="unknown suite 'gamma'; known suites: alpha, autumn, beta, crafting"):
        get_suite("gamma")


def test_a_second_suite_of_the_same_name_is_a_warning_and_the_first_stays(on_path, capsys):
    on_path(
        {"discogym.suites": {"alpha": f"{FAKE_PREFIX}good:alpha", "zeta": f"{FAKE_PREFIX}good:Alpha"}},
        MODULES,
    )
    first = get_suite("alpha")
    all_suites()
    assert get_suite("alpha") is first
    lines = warning_lines(capsys.readouterr().err)
    assert lines == [
        f"warning: suite plugin 'zeta' ({FAKE_PREFIX}good:Alpha) is a second suite named 'alpha'; the first one is kept"
    ]


def test_a_broken_discogym_suites_reference_is_a_warning(on_path, monkeypatch, capsys):
    on_path({}, MODULES)
    monkeypatch.setenv("DISCOGYM_SUITES", f"{FAKE_PREFIX}nowhere:suite, tests.core.toy_suite:suite,{FAKE_PREFIX}wrong")
    assert get_suite("digits").name == "toy"
    lines = warning_lines(capsys.readouterr().err)
    assert lines == [
        f"warning: suite '{FAKE_PREFIX}nowhere:suite' from DISCOGYM_SUITES could not be loaded: "
        f"ModuleNotFoundError: No module named '{FAKE_PREFIX}nowhere'"
    ]
    assert "toy" in [s.name for s in all_suites()]
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("value", "cause"),
    [
        (f"{FAKE_PREFIX}raising:register", "could not be loaded: RuntimeError: the plugin's own bug"),
        (f"{FAKE_PREFIX}wrong:register", "failed while registering: KeyError: 'missing setting'"),
        (f"{FAKE_PREFIX}wrong:NOT_A_SUITE", "is not a function that registers agents (got int)"),
    ],
)
def test_a_broken_agent_plugin_is_one_warning_and_the_others_register(value, cause, on_path, capsys):
    on_path(
        {"discogym.agents": {"broken": value, "fine": f"{FAKE_PREFIX}agents:register"}}, {**MODULES, "agents": AGENTS}
    )
    names = [entry.name for entry in generic_agents()]
    assert {"fakeagent", "llm", "random", "replay", "human"} <= set(names)
    lines = warning_lines(capsys.readouterr().err)
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"warning: agent plugin 'broken' ({value}) ")
    assert lines[0].endswith(cause)


# --- the command line, in subprocesses -------------------------------------------------------------------


def run_with_plugins(root: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = cli_environment()
    if root is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(root), env["PYTHONPATH"]])
    return subprocess.run(
        discogym_command(*args), capture_output=True, text=True, env=env, cwd=REPO, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def broken_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A broken suite, a broken agent plugin and broken commands, installed for subprocesses."""
    return install_plugins(
        tmp_path_factory.mktemp("site"),
        {
            "discogym.suites": {"broken": f"{FAKE_PREFIX}raising:suite"},
            "discogym.agents": {"brokenagent": f"{FAKE_PREFIX}nowhere:register"},
            "discogym.commands": {"brokencmds": f"{FAKE_PREFIX}raising:app"},
        },
        MODULES,
    )


def test_the_cli_lists_everything_else_with_one_warning_per_broken_plugin(broken_site):
    done = run_with_plugins(broken_site, "list", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert [s["name"] for s in document["suites"]] == ["autumn", "crafting", "petri", "redstone", "toy"]
    assert "llm" in [a["name"] for a in document["generic_agents"]]
    lines = warning_lines(done.stderr)
    assert sorted(lines) == [
        f"warning: agent plugin 'brokenagent' ({FAKE_PREFIX}nowhere:register) could not be loaded: "
        f"ModuleNotFoundError: No module named '{FAKE_PREFIX}nowhere'",
        f"warning: suite plugin 'broken' ({FAKE_PREFIX}raising:suite) could not be loaded: "
        "RuntimeError: the plugin's own bug",
    ]
    assert "Traceback" not in done.stderr


def test_other_commands_run_beside_broken_plugins(broken_site, tmp_path):
    ran = run_with_plugins(
        broken_site, "run", "toy", "--split", "tiny", "--agent", "random", "--quiet", "--out", str(tmp_path)
    )
    assert ran.returncode == 0, ran.stderr
    assert len(list((tmp_path / "episodes").glob("*.json"))) == 2
    assert "suite plugin" not in ran.stderr  # the broken suite was never imported
    helped = run_with_plugins(broken_site, "petri", "sims", "--json")
    assert helped.returncode == 0 and helped.stderr == ""
    assert json.loads(helped.stdout)["simulations"]


def test_broken_commands_fail_only_themselves_with_one_line(broken_site):
    done = run_with_plugins(broken_site, "brokencmds", "anything")
    assert done.returncode == 2
    assert warning_lines(done.stderr) == [
        f"error: commands plugin 'brokencmds' ({FAKE_PREFIX}raising:app) could not be loaded: "
        "RuntimeError: the plugin's own bug"
    ]
    listed = run_with_plugins(broken_site, "--help")
    assert listed.returncode == 0 and "brokencmds" in listed.stdout and listed.stderr == ""


def imported_after(code: str) -> list[str]:
    """Run ``code`` in a fresh interpreter; the heavy libraries and suite packages it imported."""
    probe = (
        f"import sys\n{code}\n"
        f"names = [*{HEAVY!r}, *('discogym.suites.' + s for s in {SUITE_PACKAGES!r})]\n"
        "print('IMPORTED=' + ','.join(n for n in names if n in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    marker = [line for line in done.stdout.splitlines() if line.startswith("IMPORTED=")]
    return [name for name in marker[-1].removeprefix("IMPORTED=").split(",") if name]


def run_main(*args: str) -> str:
    return (
        "from discogym.interfaces.cli import main\n"
        f"sys.argv = ['discogym', *{args!r}]\n"
        "try:\n    main()\nexcept SystemExit as stop:\n    assert stop.code == 0, stop.code\n"
    )


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_version_and_help_import_no_suite_and_no_heavy_library(flag):
    assert imported_after(run_main(flag)) == []


def suites_in(imported: list[str]) -> list[str]:
    return [name for name in imported if name.startswith("discogym.suites.")]


def test_a_suite_command_imports_only_its_own_suite():
    assert suites_in(imported_after(run_main("petri", "sims", "--json"))) == ["discogym.suites.petri"]


def test_get_suite_imports_only_that_suite():
    code = "from discogym.core import get_suite\nassert get_suite('petri').name == 'petri'"
    assert suites_in(imported_after(code)) == ["discogym.suites.petri"]


def test_every_suite_alias_is_an_entry_point_to_the_suite():
    """So that naming a suite by an alias imports only that suite (see docs/writing-a-suite.md)."""
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]["discogym.suites"]
    for suite in all_suites():
        if suite.name in declared:
            for alias in suite.aliases:
                assert declared.get(alias) == declared[suite.name], (
                    f"pyproject.toml: {alias} = {declared[suite.name]!r}"
                )
