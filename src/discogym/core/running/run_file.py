"""``run.json``: one record per invocation of ``discogym run`` (or ``sweep``) into a run directory.

Each record is the invocation's :class:`~discogym.core.running.planning.RunConfig` with what it was played
against: the suite's version, the task set's name and content digest, the model facts its agents used, and
when it started. Records are appended, never replaced, so a folder that two task sets (or two sets of agents)
were run into says so. A ``run.json`` written before records existed (a single configuration) reads as one
record.
"""

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, Field

from discogym.core.model.errors import UserError
from discogym.core.model.jsonsafe import JsonDict, json_safe
from discogym.core.model.suite import Suite
from discogym.core.running.agent_lookup import make_agent
from discogym.core.running.planning import RunConfig
from discogym.core.running.storage import RunDir, atomic_write
from discogym.core.running.versions import suite_set_digest

# The keys of an agent's recorded settings (Agent.settings) that say which model facts and which context policy
# were used: kept in run.json's records and shown by reports.
MODEL_FACT_KEYS = (
    "model",
    "context_window",
    "output_limit",
    "price_per_million_tokens",
    "scaffold",
    "context",
    "compact_at",
)


class RunRecord(RunConfig):
    """One invocation's entry in ``run.json``: its configuration and what it was played against.

    ``set_digest`` is the :func:`~discogym.core.running.versions.set_digest` of the whole split (also when
    ``tasks`` chose some of it); ``agent_facts`` holds, for each agent of ``agents`` in order, the
    :data:`MODEL_FACT_KEYS` of its settings (empty for an agent without a model). Every new field is None or
    empty in a record read from an older ``run.json``.
    """

    suite_version: str | None = None
    set_digest: str | None = None
    set_size: int | None = None
    agent_facts: list[JsonDict] = Field(default_factory=list)
    started_at: str | None = None


class RunFile(BaseModel):
    """The content of ``run.json``: the records, oldest first."""

    runs: list[RunRecord]


def model_facts(settings: dict[str, Any]) -> JsonDict:
    """The :data:`MODEL_FACT_KEYS` of an agent's recorded settings that it has."""
    facts: JsonDict = json_safe({key: settings[key] for key in MODEL_FACT_KEYS if key in settings})
    return facts


def _agent_facts(suite: Suite, config: RunConfig) -> list[JsonDict]:
    facts: list[JsonDict] = []
    for options in config.agents:
        if options.model is None:
            facts.append({})
            continue
        agent = make_agent(suite, options)  # as resolve_agents did already: offline, no request is sent
        try:
            facts.append(model_facts(agent.settings()))
        finally:
            agent.close()
    return facts


def run_record(suite: Suite, config: RunConfig) -> RunRecord:
    """The record of running ``config`` now."""
    try:
        digest: str | None = suite_set_digest(suite, config.split)
        size: int | None = suite.task_count(config.split)
    except UserError:  # a split that cannot be loaded here: the run itself will say why
        digest = size = None
    return RunRecord(
        **config.model_dump(include=set(RunConfig.model_fields)),
        suite_version=suite.version,
        set_digest=digest,
        set_size=size,
        agent_facts=_agent_facts(suite, config),
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def parse_run_file(data: bytes) -> list[RunRecord]:
    """The records of a ``run.json``'s bytes: a ``{"runs": [...]}`` document, or one configuration as written
    before records existed. Raises ValueError (ValidationError included) when it is neither."""
    document = orjson.loads(data)
    if isinstance(document, dict) and "runs" in document:
        return RunFile.model_validate(document).runs
    return [RunRecord.model_validate(document)]


def read_run_file(run_dir: RunDir) -> list[RunRecord]:
    """The records of the run's ``run.json``, oldest first; [] when it has none. A file that is not a run
    configuration is a UserError."""
    path = run_dir.config_path
    if not path.is_file():
        return []
    try:
        return parse_run_file(path.read_bytes())
    except (OSError, ValueError):
        raise UserError(f"{path} is not a discogym run configuration; choose another --out") from None


def check_same_run(run_dir: RunDir, config: RunConfig) -> None:
    """Refuse (UserError) to run ``config`` into a folder whose ``run.json`` is of another suite or seed (its
    episodes would be planned with other seeds). Other task sets, agents, conditions and repeats may join."""
    for previous in read_run_file(run_dir):
        if (previous.suite, previous.seed) != (config.suite, config.seed):
            raise UserError(
                f"{run_dir.root} holds a run of suite '{previous.suite}' with seed {previous.seed}; "
                "resume it with the same suite and seed, or choose another --out"
            )


def append_run_record(run_dir: RunDir, record: RunRecord) -> None:
    """Add ``record`` to the run's ``run.json``, keeping the records already there (an old single configuration
    becomes the first record)."""
    runs = [*read_run_file(run_dir), record]
    atomic_write(run_dir.config_path, RunFile(runs=runs).model_dump_json(indent=1) + "\n")


def latest_record(path: Path) -> RunRecord | None:
    """The newest record of the ``run.json`` at ``path``, or None when there is none or it is unreadable."""
    try:
        runs = parse_run_file(path.read_bytes())
    except (OSError, ValueError):
        return None
    return runs[-1] if runs else None
