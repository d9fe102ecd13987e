"""Papers' protocols: their data, every suite's protocols checked against the suite, `run --protocol` and the
report's published table (on the toy suite's protocol, tests/core/toy_suite.py)."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from discogym.core import UserError, all_suites, get_suite
from discogym.core.model.protocol import load_figures, with_figures
from discogym.core.reporting.published import mean_interval, published_table
from discogym.core.reporting.run_report import build_report
from discogym.core.running.protocols import find_protocol, part_options, protocol_names
from discogym.interfaces.cli import app
from tests.core.toy_suite import TOY_PROTOCOL

RUNNER = CliRunner()
REAL_SUITES = ("autumn", "crafting", "petri", "redstone")


def invoke(*args: str) -> tuple[int, str]:
    result = RUNNER.invoke(app, list(args))
    return result.exit_code, result.output


def test_figures_match_a_model_with_or_without_its_provider() -> None:
    figure = TOY_PROTOCOL.figures[0]
    assert figure.matches_model("openai/digit-a") and figure.matches_model("digit-a")
    assert not figure.matches_model("openai/digit-b") and not figure.matches_model(None)
    assert [f.model for f in TOY_PROTOCOL.figures_for("plain")] == ["digit-model-a", "digit-model-b"]
    assert TOY_PROTOCOL.figures_for("pictures") == []


def test_a_figure_file_is_read_and_a_malformed_one_refused_in_one_line(tmp_path: Path) -> None:
    figure = TOY_PROTOCOL.figures[1]
    good = tmp_path / "published.json"
    good.write_text(json.dumps({"paper": "toy", "figures": [figure.model_dump(mode="json")]}))
    assert load_figures(good) == [figure]
    assert with_figures(TOY_PROTOCOL.model_copy(update={"figures": ()}), [figure]).figures == (figure,)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"paper": "toy", "figures": [{"model": "x"}]}))
    with pytest.raises(UserError, match="not a file of published figures"):
        load_figures(bad)


@pytest.mark.parametrize("name", REAL_SUITES)
def test_every_suites_protocols_name_what_the_suite_has(name: str) -> None:
    suite = get_suite(name)
    assert suite.protocols(), f"{name} has no protocol"
    conditions = {c.name for c in suite.conditions()}
    for protocol in suite.protocols():
        assert protocol.suite == name and protocol.tables and protocol.differences
        assert protocol.paper in {paper.key for paper in suite.papers}
        assert len({part.name for part in protocol.parts}) == len(protocol.parts)
        for part in protocol.parts:
            assert part.split in suite.splits()
            assert set(part.conditions) <= conditions
        # a figure is of a condition the suite has, with the setting a part plays it in (people's figures are of
        # condition people, which the protocol leaves to the web app)
        settings = {"", *(f"@{p.setting}" for p in protocol.parts if p.setting != "independent")}
        labels = {c + setting for c in conditions for setting in settings}
        assert {f.condition for f in protocol.figures} <= labels
        assert all(f.protocol == protocol.name for f in protocol.figures)


def test_protocol_names_are_unique_and_papers_is_each_suites_first() -> None:
    names = [p.name for suite in all_suites() for p in suite.protocols()]
    assert len(names) == len(set(names))
    headline = protocol_names(["papers"])
    assert len(headline) == len({find_protocol(name)[0].name for name in headline})
    assert protocol_names(["toy-paper", "papers", "toy-paper"]).count("toy-paper") == 1
    with pytest.raises(UserError, match="no protocol 'nope'; protocols: "):
        find_protocol("nope")


def test_the_parts_llm_options_go_to_llm_agents_and_an_agent_opt_wins() -> None:
    from discogym.core import AgentOptions

    part = TOY_PROTOCOL.parts[0]
    llm = part_options(part, AgentOptions(name="llm", model="openai/x", options={"context": "full"}))
    assert llm.options == {"mode": "text", "context": "full"}
    assert part_options(part, AgentOptions(name="llm", options={"mode": "native"})).options == {"mode": "native"}
    assert part_options(part, AgentOptions(name="bisect")).options == {}


def test_run_protocol_plays_every_part_into_its_folder_and_the_report_sets_the_paper_beside(tmp_path: Path) -> None:
    out = tmp_path / "toy-paper"
    code, output = invoke("run", "--protocol", "toy-paper", "--agent", "bisect", "--out", str(out), "--quiet")
    assert code == 0, output
    assert sorted(p.name for p in out.iterdir()) == ["pictures", "twice"]
    assert len(list((out / "twice" / "episodes").glob("*.json"))) == 4  # 2 tasks x 2 repeats
    assert len(list((out / "pictures" / "episodes").glob("*.json"))) == 4  # 2 tasks x 2 conditions
    record = json.loads((out / "twice" / "run.json").read_text())["runs"][-1]
    assert (record["protocol"], record["split"], record["repeats"]) == ("toy-paper", "tiny", 2)
    code, output = invoke("report", str(out), "--no-plots")
    assert code == 0, output
    assert "- protocol: toy-paper" in output
    assert "Published figures beside yours (toy-paper: Table 9)" in output
    # bisect solves every task: beyond the two paper models' range 0.5-0.9
    assert "| plain | bisect | - | success rate | 1.000 |" in output
    assert "0.500-0.900 (2 models)" in output and "beyond range" in output
    assert "the toy paper guessed digits by hand" in output


def test_run_protocol_refuses_what_the_protocol_sets_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "run"
    for extra in (["--split", "dev"], ["--condition", "slow"], ["--repeats", "3"]):
        code, output = invoke("run", "--protocol", "toy-paper", "--agent", "bisect", "--out", str(out), *extra)
        assert code == 2 and "--protocol sets the task set" in output and extra[0] in output
    code, output = invoke("run", "crafting", "--protocol", "toy-paper", "--out", str(out))
    assert code == 2 and "protocol toy-paper is of suite toy, not crafting" in output
    code, output = invoke("run", "--protocol", "nope", "--out", str(out))
    assert code == 2 and "no protocol 'nope'" in output
    assert not out.exists()


def test_the_published_value_is_checked_against_your_interval(tmp_path: Path) -> None:
    out = tmp_path / "toy"
    assert invoke("run", "--protocol", "toy-paper", "--agent", "quitter", "--out", str(out), "--quiet")[0] == 0
    episodes = build_report(out / "twice")._episodes
    as_model_a = [e.model_copy(update={"key": e.key.model_copy(update={"model": "openai/digit-a"})}) for e in episodes]
    table = published_table(TOY_PROTOCOL, as_model_a)
    assert table is not None
    [row] = table.rows
    cells = dict(zip(table.columns, row, strict=True))
    # 0 of 4 solved: Wilson interval (0, 0.49); the paper's 0.5 for this model lies outside it
    assert cells["yours"] == 0.0 and cells["published"] == 0.5 and cells["paper's model"] == "digit-model-a"
    assert cells["check"] == "outside" and cells["source"] == "Table 9, digit-model-a, solved"
    assert published_table(TOY_PROTOCOL.model_copy(update={"figures": ()}), as_model_a) is None


def test_mean_interval_is_a_t_interval() -> None:
    from scipy import stats

    values = [0.2, 0.4, 0.9]
    expected = stats.t.interval(0.95, 2, loc=stats.tmean(values), scale=stats.sem(values))
    assert mean_interval(values) == pytest.approx(expected)
    assert mean_interval([0.3]) is None


def test_protocols_lists_every_protocol_and_json_has_the_figures() -> None:
    code, output = invoke("protocols", "--json")
    assert code == 0, output
    documents = {p["name"]: p for p in json.loads(output)["protocols"]}
    toy = documents["toy-paper"]
    assert toy["tables"] == ["Table 9"] and toy["episodes_per_agent"] == 2 * 2 + 2 * 2
    assert [f["value"] for f in toy["figures"]] == [0.5, 0.9]
    assert {p["suite"] for p in documents.values()} >= set(REAL_SUITES)
    code, output = invoke("protocols", "toy")
    assert code == 0 and "toy-paper" in output and "twice: set tiny, plain, x2, mode=text" in output


def test_sweep_protocol_puts_each_protocol_in_its_folder_and_refuses_a_suite_beside_it(tmp_path: Path) -> None:
    out = tmp_path / "papers"
    code, output = invoke("sweep", "--protocol", "toy-paper", "--agent", "bisect", "--out", str(out), "--quiet")
    assert code == 0, output
    assert sorted(p.relative_to(out).as_posix() for p in out.glob("*/*")) == ["toy-paper/pictures", "toy-paper/twice"]
    code, output = invoke("sweep", "toy", "--protocol", "toy-paper", "--out", str(tmp_path / "other"))
    assert code == 2 and "leave out SUITE" in output and not (tmp_path / "other").exists()


def test_estimate_protocol_estimates_every_part_with_its_repeats_and_options() -> None:
    pytest.importorskip("inspect_ai")
    code, output = invoke("estimate", "--protocol", "toy-paper", "--model", "openai/gpt-4o-mini", "--json")
    assert code == 0, output
    estimates = json.loads(output)["estimates"]
    assert [(e["suite"], e["repeats"]) for e in estimates] == [("toy", 2), ("toy", 1)]
    assert estimates[0]["agent_options"]["mode"] == "text"  # the part's llm option
    assert {row["condition"] for row in estimates[1]["tasks"]} == {"plain", "pictures"}
    code, output = invoke("estimate", "--protocol", "toy-paper", "--model", "openai/gpt-4o-mini", "--split", "dev")
    assert code == 2 and "--protocol sets the task set" in output
