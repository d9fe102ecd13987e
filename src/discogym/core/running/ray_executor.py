"""The Ray backend (``discogym run ... --backend ray``): episodes played as Ray tasks on a cluster, or on a Ray
instance started for the run on this machine. Optional: ``pip install 'discogym[ray]'``.

Ray only carries the work: the runner still plans the episodes, skips the finished ones, retries faults and
stops on Ctrl-C. Each task plays one episode with :func:`~discogym.core.running.executors.play_and_write`, which writes
the episode's file under the run directory: on a cluster that directory must be on a filesystem every node
mounts at the same path (docs/scale.md). Ray's own retries are off (``max_retries=0``): an episode whose
worker or node died is reported as a fault, and the runner decides whether to play it again, so none is played
twice into one file and none is written half-way (files are written whole, then renamed into place).

A Ray instance started here listens on 127.0.0.1 alone (every process it starts: GCS, raylet, workers, agents,
the driver) and has Ray's token authentication on, with a token made for the run unless one is given
(``RAY_AUTH_TOKEN`` or ``RAY_AUTH_TOKEN_PATH``). A cluster (``--address``) is used as it is set up (docs/scale.md).
"""

import ipaddress
import os
import secrets
import sys
from collections import deque
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from discogym.core.model.errors import UserError
from discogym.core.model.suite import Suite
from discogym.core.running.episode_loop import PlannedEpisode
from discogym.core.running.executors import (
    WORKER_DIED,
    EpisodeSummary,
    Executor,
    ExecutorReport,
    Faulted,
    Played,
    play_and_write,
)
from discogym.core.running.storage import UnwritableRun

ADDRESS_VARIABLE = "RAY_ADDRESS"
LOOPBACK = "127.0.0.1"
# Ray's token authentication: its mode, and where the token comes from (first set wins).
AUTH_MODE_VARIABLE = "RAY_AUTH_MODE"
TOKEN_VARIABLES = ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")


def _play_remote(suite: Suite, planned: PlannedEpisode, root: str) -> EpisodeSummary:
    return play_and_write(suite, planned, Path(root))


def _require_token_auth(ray: Any) -> None:
    """Token authentication on for the Ray instance about to start here, whatever ``RAY_AUTH_MODE`` said: this
    process and the ones Ray starts (they inherit the environment) all require the token."""
    if not any(os.environ.get(name) for name in TOKEN_VARIABLES):
        # One secret per discogym process, known to it and its children only (a process's environment is readable
        # by its user alone), never written to a file.
        os.environ[TOKEN_VARIABLES[0]] = secrets.token_hex(32)
    os.environ[AUTH_MODE_VARIABLE] = "token"
    if ray._raylet.get_authentication_mode() != ray._raylet.AuthenticationMode.TOKEN:
        ray._raylet.Config.initialize("")  # Ray reads its settings once per process; read them again


@contextmanager
def _loopback_node(ray: Any) -> Iterator[None]:
    """While a local instance starts: Ray's single-machine mode (its default on macOS and Windows,
    ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``), where the node's address may be loopback. On Linux Ray otherwise
    replaces 127.0.0.1 by the machine's address and binds its servers on every interface. Ray reads the
    variable when imported, so its value is set on Ray's constants for the start, then put back: a later
    connection to a cluster from this process finds its own address again."""
    constants = ray._private.ray_constants
    cluster_mode = constants.ENABLE_RAY_CLUSTER
    constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        constants.ENABLE_RAY_CLUSTER = cluster_mode


class RayExecutor(Executor):
    """Episodes as Ray tasks: against ``address`` (else ``$RAY_ADDRESS``), else a Ray instance started here with
    ``workers`` CPUs (all of this machine's when None), on 127.0.0.1 with token authentication. At most as many
    episodes are in flight as the cluster has CPUs (or ``workers``)."""

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        self.address = address or os.environ.get(ADDRESS_VARIABLE) or None
        self.workers = workers

    def _connect(self) -> bool:
        """Connect to the cluster or start a local instance; True when this call did (and must shut it down)."""
        try:
            import ray
        except ImportError:
            raise UserError("the Ray backend needs Ray: pip install 'discogym[ray]'") from None
        if ray.is_initialized():
            return False
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR"}
        if self.address is not None:
            try:
                ray.init(address=self.address, **options)
            except ConnectionError as err:
                raise UserError(f"cannot reach the Ray cluster at {self.address}: {err}") from None
            return True
        options["num_cpus"] = self.workers or os.cpu_count() or 1
        # Workers on this machine import what the driver imports (a suite from a plugin or a test folder);
        # nodes of a cluster need discogym and the same plugins installed (docs/scale.md).
        options["runtime_env"] = {"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}}
        _require_token_auth(ray)
        with _loopback_node(ray):
            ray.init(_node_ip_address=LOOPBACK, **options)
        node_address = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
        if not ipaddress.ip_address(node_address).is_loopback:
            ray.shutdown()
            raise UserError(f"the local Ray instance took the address {node_address}, not {LOOPBACK}: not started")
        return True

    def play(self, suite: Suite, root: Path, pending: deque[PlannedEpisode]) -> Generator[ExecutorReport, None, None]:
        import ray

        started_here = self._connect()
        remote = ray.remote(max_retries=0, num_cpus=1)(_play_remote)
        in_flight: dict[Any, PlannedEpisode] = {}
        try:
            suite_ref = ray.put(suite)
            cpus = ray.cluster_resources().get("CPU", 1)  # type: ignore[no-untyped-call]
            limit = self.workers or max(1, int(cpus))
            while pending or in_flight:
                while pending and len(in_flight) < limit:
                    planned = pending.popleft()
                    in_flight[remote.remote(suite_ref, planned, str(root))] = planned
                finished, _ = ray.wait(list(in_flight), num_returns=1)
                for ref in finished:
                    yield self._report(ray, in_flight.pop(ref), ref)
        finally:
            # Interrupted or done. A Ray instance started here stops with the episodes in flight (none is written
            # half-way); on a cluster they run to their end and are written whole, for the rerun to skip. They
            # are not cancelled: Ray 2.60 can crash when a cancel meets a task finishing at that moment.
            if started_here:
                ray.shutdown()

    @staticmethod
    def _report(ray: Any, planned: PlannedEpisode, ref: Any) -> ExecutorReport:
        try:
            return Played(planned, ray.get(ref))
        except ray.exceptions.RayTaskError as err:  # the episode raised inside its task
            cause = err.cause if isinstance(err.cause, BaseException) else err
            if isinstance(cause, UnwritableRun):
                raise cause from None
            return Faulted.of(planned, cause)
        except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError, ray.exceptions.TaskCancelledError):
            return Faulted(planned, WORKER_DIED)
        except ray.exceptions.RayError as err:  # the object was lost with its node, the task could not start, ...
            first_line = str(err).strip().splitlines()[0] if str(err).strip() else ""
            return Faulted(planned, f"ray: {type(err).__name__}: {first_line}")
