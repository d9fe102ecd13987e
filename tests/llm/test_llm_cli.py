"""``discogym run --agent llm`` end to end: the CLI in a subprocess against the fake endpoint."""

import json

from typer.testing import CliRunner

from discogym.core.running.storage import RunDir
from discogym.interfaces.cli import app
from tests.conftest import run_discogym
from tests.llm.conftest import SECRET, episodes
from tests.llm.fake_endpoint import FakeEndpoint, Kill, Normal


def run_llm_cli(fake: FakeEndpoint, out, *extra: str, **env: str):
    return run_discogym(
        "run", "toy", "--split", "dev", "--model", f"openai-compatible/fake@{fake.url}",
        "--agent-opt", "retries=1", "--agent-opt", "backoff_s=0.05", "--agent-opt", "context_window=128000",
        "--out", str(out), "--quiet", "--json", *extra,
        OPENAI_COMPATIBLE_API_KEY=SECRET, **env,
    )  # fmt: skip


def test_run_plays_complete_episodes_natively_and_through_the_text_protocol(tmp_path):
    with FakeEndpoint() as fake:
        native = run_llm_cli(fake, tmp_path / "native")
        text = run_llm_cli(fake, tmp_path / "text", "--agent-opt", "mode=text", "--workers", "2")
    for result, out in [(native, tmp_path / "native"), (text, tmp_path / "text")]:
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["written"] == 8
        played = episodes(out)
        assert all(e.score.value == 1.0 and e.key.agent == "llm" for e in played)
        assert all(e.usage().input_tokens > 0 and e.usage().output_tokens > 0 for e in played)
    assert not any(
        r.body.get("tools") for r in fake.requests[-sum(len(e.events) for e in episodes(tmp_path / "text")) :]
    )


def test_a_killed_endpoint_leaves_episodes_for_the_next_run_which_ends_as_if_nothing_happened(tmp_path):
    with FakeEndpoint() as fake:
        port = fake.port
        reference = run_llm_cli(fake, tmp_path / "reference")
        assert reference.returncode == 0, reference.stderr
    endpoint = FakeEndpoint(port).start()
    endpoint.replies = 0
    endpoint.script.extend([Normal()] * 9 + [Kill()])  # nine good replies, then the endpoint is gone
    broken = run_llm_cli(endpoint, tmp_path / "run")
    assert broken.returncode == 3, broken.stderr
    assert "failed after retries" in broken.stderr and "rerun the same command" in broken.stderr
    written = len(RunDir(tmp_path / "run").episode_paths())
    assert 0 < written < 8
    with FakeEndpoint(port) as again:
        resumed = run_llm_cli(again, tmp_path / "run")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["skipped"] == written
    expected = {p.name: p.read_bytes() for p in RunDir(tmp_path / "reference").episode_paths()}
    assert {p.name: p.read_bytes() for p in RunDir(tmp_path / "run").episode_paths()} == expected


def test_a_model_without_a_key_is_refused_naming_its_variable_and_a_budget_is_applied(tmp_path):
    missing = run_discogym("run", "toy", "--model", "openai/gpt-5", "--out", str(tmp_path / "none"), OPENAI_API_KEY="")
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr == "error: openai/gpt-5: no API key; set OPENAI_API_KEY to run it\n"
    assert not (tmp_path / "none").exists()
    with FakeEndpoint() as fake:
        beside = run_llm_cli(
            fake, tmp_path / "beside", "--agent", "llm", "--agent", "bisect", "--model", f"anthropic/fake@{fake.root}",
            ANTHROPIC_API_KEY="",
        )  # fmt: skip
        assert (beside.returncode, beside.stderr) == (
            2,
            f"error: anthropic/fake@{fake.root}: no API key; set ANTHROPIC_API_KEY to run it\n",
        )
        budget = run_llm_cli(fake, tmp_path / "budget", "--token-limit", "50", "--agent", "llm", "--agent", "bisect")
    assert budget.returncode == 0, budget.stderr
    by_agent = {e.key.agent: e for e in episodes(tmp_path / "budget")}
    assert by_agent["llm"].outcome.termination == "token_limit" and by_agent["llm"].key.token_limit == 50
    assert by_agent["bisect"].key.token_limit is None


def test_mistakes_known_before_the_run_stop_it_in_one_line_and_write_nothing(tmp_path):
    cases = [
        (["run", "petri", "--model", "openai/gpt-4o-mini", "--agent-opt", "scaffold=plancraft"],
         "error: --agent-opt scaffold=plancraft is Plancraft's scaffold for suite 'crafting'; it cannot play suite "
         "'petri'"),
        (["run", "petri", "--model", "openai/gpt-4o-mini", "--agent-opt", "mode=suite"],
         "error: mode=suite: this suite has no text syntax of its own"),
        (["run", "petri", "--model", "openai/gpt-4o-mini", "--agent-opt", "nope=1"],
         "error: agent 'llm': --agent-opt nope: unknown option"),
        (["run", "petri", "--model", "openai/gpt-4o-mini", "--agent-opt", "window_turns=many"],
         "error: agent 'llm': --agent-opt window_turns: Input should be a valid integer"),
        (["run", "petri", "--model", "openai-compatible/local@http://127.0.0.1:9/v1"],
         "error: --model openai-compatible/local@http://127.0.0.1:9/v1: its context window is not known here "
         "(cannot ask http://127.0.0.1:9/v1/models: ConnectError"),
        (["sweep", "--model", "openai/gpt-4o-mini", "--agent-opt", "scaffold=plancraft"],
         "error: autumn: --agent-opt scaffold=plancraft is Plancraft's scaffold for suite 'crafting'"),
        (["sweep", "--model", "openai/gpt-4o-mini", "--agent-opt", "crafting:scaffold=plancraft", "--split",
          "petri=l9-v9"], "error: petri has no task set 'l9-v9'"),
    ]  # fmt: skip
    runner = CliRunner()  # in this process: eight subprocesses took 24 s, mostly imports
    for index, (args, message) in enumerate(cases):
        out = tmp_path / str(index)
        done = runner.invoke(app, [*args, "--out", str(out), "--quiet"], env={"OPENAI_API_KEY": SECRET})
        assert done.exit_code == 2, (args, done.stderr)
        assert done.stderr.startswith(message) and done.stderr.count("\n") == 1, (args, done.stderr)
        assert not out.exists(), args
    swept = runner.invoke(app, ["sweep", "--model", "openai/gpt-4o-mini", "--out", str(tmp_path / "sweep")],
                          env={"OPENAI_API_KEY": ""})  # fmt: skip
    assert (swept.exit_code, swept.stderr) == (2, "error: autumn: openai/gpt-4o-mini: no API key; set OPENAI_API_KEY "
                                                  "to run it\n")  # fmt: skip
    assert not (tmp_path / "sweep").exists()


def test_models_lists_the_papers_models_with_windows_prices_and_whether_each_key_is_set(tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"vllm/my-llama": {"input": 0.1, "output": 0.2}}))
    shown = run_discogym("models", "--json", OPENAI_API_KEY="sk-x", ANTHROPIC_API_KEY="", DISCOGYM_PRICES=str(prices))
    assert shown.returncode == 0, shown.stderr
    models = {m["model"]: m for m in json.loads(shown.stdout)["models"]}
    papers = [
        "openai/gpt-5.2",
        "google/gemini-3-pro-preview",
        "anthropic/claude-opus-4-5",
        "openrouter/qwen/qwen3-32b",
        "openrouter/qwen/qwen-2.5-72b-instruct",
        "openai/o3",
        "anthropic/claude-sonnet-4",
        "google/gemini-2.5-pro",
        "openai/gpt-4o-mini",
        "openrouter/meta-llama/llama-3.1-8b-instruct",
        "openrouter/meta-llama/llama-3.3-70b-instruct",
    ]
    for name in papers:
        assert models[name]["context_window"] > 0 and models[name]["price"]["input"] > 0, name
    opus = models["anthropic/claude-opus-4-5"]
    assert (opus["context_window"], opus["output_limit"]) == (200_000, 64_000)
    assert (opus["price"]["cache_write"], opus["price"]["cache_read"]) == (6.25, 0.5)
    assert models["openai/gpt-5.2"]["key_set"] and not opus["key_set"]
    assert models["vllm/my-llama"]["price"]["output"] == 0.2 and models["vllm/my-llama"]["key_variable"] is None


def test_sweep_estimate_plays_nothing_and_multiplies_by_its_repeats(tmp_path):
    args = ["sweep", "toy", "--model", "openai/gpt-5", "--out", str(tmp_path / "sweep"), "--estimate", "--json"]
    once = json.loads(run_discogym(*args, OPENAI_API_KEY="").stdout)  # an estimate needs no key
    twice = json.loads(run_discogym(*args, "--repeats", "2", OPENAI_API_KEY=SECRET).stdout)
    (estimate,) = twice["estimates"]
    assert (estimate["suite"], estimate["repeats"]) == ("toy", 2)
    for case in ("low", "expected", "high"):
        assert twice["total"][case]["input_tokens"] == 2 * once["total"][case]["input_tokens"] > 0
    assert not (tmp_path / "sweep").exists()
