"""swarm: boids-style flocking in a periodic square box, with Vicsek's uniform angular noise.

Every replicate draws its initial positions, initial headings and the noise of every step up front from its own
generator; the time loop then updates all replicates at once with elementwise operations on arrays of shape
(replicates, agents, agents) and reductions along the agent axes only, so a replicate's numbers never depend on
the others in the batch.

The dynamics are chaotic in the disordered regime: a difference in the last bit of one heading grows until whole
trajectories differ. So the time loop uses only IEEE-754 arithmetic (additions, multiplications, divisions,
square roots, rounding) and numpy's pairwise sums, which give the same bits on every machine and numpy version:
headings are carried as unit vectors, and the sines and cosines of the initial headings and of the noise come from
:mod:`discogym.suites.petri.sims.exact`, never from the CPU-dependent ``np.sin``/``np.cos``/``np.arctan2``.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from discogym.suites.petri.sims.base import Check, Param, Simulation, make_check, replicate_rngs
from discogym.suites.petri.sims.exact import sin_cos

BOX = 4.0  # side of the periodic square, in length units (the control interaction radius is 1)
STEPS = 240  # time steps per run
WINDOW = 120  # time-averaged metrics are averaged over the last WINDOW steps (the first half is burn-in)
SNAPSHOT_EVERY = 5  # nearest-neighbour distances are sampled every 5th step of the window
TINY = 1e-12

REFERENCE = (
    'Vicsek, Czirok, Ben-Jacob, Cohen & Shochet (1995), "Novel type of phase transition in a system of '
    'self-driven particles", Phys. Rev. Lett. 75, 1226'
)
CAVEAT = (
    "The model is boids (alignment plus cohesion and separation, with the agent's own heading as inertia), "
    "not the pure Vicsek model, in a small box (64 agents); the claim is the qualitative order-to-disorder "
    "transition, not Vicsek's critical noise or exponent."
)


@dataclass
class _State:
    """Positions and unit headings (ux, uy) of every replicate's agents, shape (replicates, agents)."""

    x: np.ndarray
    y: np.ndarray
    ux: np.ndarray
    uy: np.ndarray

    @classmethod
    def from_angles(cls, x: np.ndarray, y: np.ndarray, theta: np.ndarray) -> "_State":
        """A state whose headings are given as angles."""
        uy, ux = sin_cos(theta)
        return cls(x, y, ux, uy)


@dataclass
class _Pairs:
    """Minimum-image displacements from agent i to agent j and their squared lengths, shape (R, N, N)."""

    dx: np.ndarray
    dy: np.ndarray
    d2: np.ndarray


def _wrap(delta: np.ndarray) -> np.ndarray:
    """``delta`` reduced in place to the minimum image on the periodic box."""
    delta -= BOX * np.rint(delta * (1.0 / BOX))
    return delta


def _pairs(state: _State, pairs: _Pairs) -> _Pairs:
    """Fill ``pairs`` (preallocated buffers) with the current displacements j - i."""
    np.subtract(state.x[:, None, :], state.x[:, :, None], out=pairs.dx)
    np.subtract(state.y[:, None, :], state.y[:, :, None], out=pairs.dy)
    _wrap(pairs.dx)
    _wrap(pairs.dy)
    np.multiply(pairs.dx, pairs.dx, out=pairs.d2)
    pairs.d2 += pairs.dy * pairs.dy
    return pairs


def _separation(pairs: _Pairs, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Sum over agents j closer than ``radius`` of the unit vector away from j, weighted by 1 - distance/radius.

    Close pairs are rare, so they are gathered sparsely; ``bincount`` adds each agent's terms in increasing j,
    the same order whatever the batch.
    """
    replicates, n, _ = pairs.d2.shape
    k, i, j = np.nonzero(pairs.d2 < radius * radius)
    d2 = pairs.d2[k, i, j]
    keep = d2 > 0.0  # the agent itself (and exactly coincident agents, which have no direction)
    k, i, j, d2 = k[keep], i[keep], j[keep], d2[keep]
    distance = np.sqrt(d2)
    weight = (1.0 - distance / radius) / distance
    flat = k * n + i
    size = replicates * n
    sx = -np.bincount(flat, weights=weight * pairs.dx[k, i, j], minlength=size)
    sy = -np.bincount(flat, weights=weight * pairs.dy[k, i, j], minlength=size)
    return sx.reshape(replicates, n), sy.reshape(replicates, n)


def _desired(state: _State, pairs: _Pairs, config: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """The boids steering vector of every agent before noise: inertia + alignment + cohesion + separation."""
    radius = config["interaction_radius"]
    neighbour = (pairs.d2 < radius * radius).astype(np.float64)  # includes the agent itself
    # Sums along the last axis of contiguous arrays: numpy's pairwise summation, the same order everywhere
    # (einsum and matmul may reorder them by CPU).
    ax = (neighbour * state.ux[:, None, :]).sum(axis=2)
    ay = (neighbour * state.uy[:, None, :]).sum(axis=2)
    norm = np.sqrt(ax * ax + ay * ay)
    norm[norm < TINY] = 1.0
    scale = neighbour.sum(axis=2) * radius  # cohesion: mean offset to the neighbours, in interaction radii
    cx = (neighbour * pairs.dx).sum(axis=2) / scale
    cy = (neighbour * pairs.dy).sum(axis=2) / scale
    sx, sy = _separation(pairs, config["separation_radius"])
    align, cohere, separate = config["alignment_weight"], config["cohesion_weight"], config["separation_weight"]
    hx = state.ux + align * ax / norm + cohere * cx + separate * sx
    hy = state.uy + align * ay / norm + cohere * cy + separate * sy
    return hx, hy


def _step(state: _State, pairs: _Pairs, noise: tuple[np.ndarray, np.ndarray], config: Mapping[str, float]) -> _State:
    """One synchronous update: steer, turn by the angular noise (given as its sine and cosine), move at constant
    speed, wrap."""
    hx, hy = _desired(state, pairs, config)
    length = np.sqrt(hx * hx + hy * hy)
    undefined = length < TINY  # a null steering vector keeps the old heading
    safe = np.where(undefined, 1.0, length)
    dx = np.where(undefined, state.ux, hx / safe)
    dy = np.where(undefined, state.uy, hy / safe)
    sine, cosine = noise
    ux = cosine * dx - sine * dy
    uy = sine * dx + cosine * dy
    speed = config["speed"]
    x = np.remainder(state.x + speed * ux, BOX)
    y = np.remainder(state.y + speed * uy, BOX)
    return _State(x, y, ux, uy)


def _polarization(state: _State) -> np.ndarray:
    """|mean unit heading| per replicate, in [0, 1]."""
    return np.asarray(np.hypot(state.ux.mean(axis=1), state.uy.mean(axis=1)))


def _circular_centre(coord: np.ndarray) -> np.ndarray:
    """Centre of each replicate's agents along one periodic axis (the angle of the mean phase)."""
    phase = coord * (2.0 * np.pi / BOX)
    angle = np.arctan2(np.sin(phase).mean(axis=1), np.cos(phase).mean(axis=1))
    return np.asarray(angle * (BOX / (2.0 * np.pi)))


def _milling(state: _State) -> np.ndarray:
    """|sum of r_i x u_i| / sum |r_i| about the flock's periodic centre, per replicate, in [0, 1]."""
    rx = _wrap(state.x - _circular_centre(state.x)[:, None])
    ry = _wrap(state.y - _circular_centre(state.y)[:, None])
    torque = (rx * state.uy - ry * state.ux).sum(axis=1)
    lever = np.hypot(rx, ry).sum(axis=1)
    return np.where(lever > TINY, np.abs(torque) / np.maximum(lever, TINY), 0.0)


def _nearest_distance(pairs: _Pairs) -> np.ndarray:
    """Mean over agents of the distance to the nearest other agent, per replicate."""
    n = pairs.d2.shape[1]
    d2 = pairs.d2 + np.where(np.eye(n, dtype=bool), np.inf, 0.0)
    return np.asarray(np.sqrt(d2.min(axis=2)).mean(axis=1))


def _cluster_count(pairs: _Pairs, radius: float) -> np.ndarray:
    """Connected components of the graph linking agents within ``radius``, per replicate (min-label spreading)."""
    replicates, n, _ = pairs.d2.shape
    linked = pairs.d2 < radius * radius
    labels = np.broadcast_to(np.arange(n), (replicates, n)).copy()
    while True:
        spread = np.where(linked, labels[:, None, :], n).min(axis=2)
        spread = spread[np.arange(replicates)[:, None], spread]  # jump to the label's own label
        if np.array_equal(spread, labels):
            break
        labels = spread
    return np.asarray((labels == np.arange(n)).sum(axis=1), dtype=np.float64)


def _initial(config: Mapping[str, float], seeds: np.ndarray) -> tuple[_State, tuple[np.ndarray, np.ndarray]]:
    """Initial state and the sine and cosine of the (steps, replicates, agents) noise angles, each replicate from its
    own generator."""
    n = int(config["n_agents"])
    draws = [
        (rng.uniform(0.0, BOX, (2, n)), rng.uniform(-np.pi, np.pi, n), rng.uniform(-0.5, 0.5, (STEPS, n)))
        for rng in replicate_rngs(seeds)
    ]
    positions = np.stack([draw[0] for draw in draws])
    theta = np.stack([draw[1] for draw in draws])
    noise = np.stack([draw[2] for draw in draws], axis=1) * config["noise"]
    return _State.from_angles(positions[:, 0].copy(), positions[:, 1].copy(), theta), sin_cos(noise)


def simulate(config: Mapping[str, float], seeds: np.ndarray) -> np.ndarray:
    """Metric vectors (one row per seed, columns as ``Swarm.metrics``) of the resolved ``config``."""
    state, (noise_sin, noise_cos) = _initial(config, seeds)
    replicates, n = state.x.shape
    pairs = _Pairs(*(np.empty((replicates, n, n)) for _ in range(3)))
    polarization, milling, nearest = np.zeros(replicates), np.zeros(replicates), np.zeros(replicates)
    snapshots = 0
    for t in range(STEPS):
        state = _step(state, _pairs(state, pairs), (noise_sin[t], noise_cos[t]), config)
        if t >= STEPS - WINDOW:
            polarization += _polarization(state)
            milling += _milling(state)
            if (STEPS - 1 - t) % SNAPSHOT_EVERY == 0:
                nearest += _nearest_distance(_pairs(state, pairs))
                snapshots += 1
    _pairs(state, pairs)
    clusters = _cluster_count(pairs, config["interaction_radius"])
    neighbours = (pairs.d2 < config["interaction_radius"] ** 2).sum(axis=2).mean(axis=1) - 1.0
    return np.stack([polarization / WINDOW, nearest / snapshots, clusters, milling / WINDOW, neighbours], axis=1)


class Swarm(Simulation):
    """Boids flocking with Vicsek noise; target: the polarization order parameter."""

    name: ClassVar[str] = "swarm"
    description: ClassVar[str] = (
        "Boids-style flocking in a 2-D periodic square box (side 4, minimum-image distances): N agents move at "
        "constant speed. Each synchronous step an agent steers along the sum of its own heading (inertia), the "
        "unit mean heading of the agents within the interaction radius (itself included) times the alignment "
        "weight, the mean offset to those neighbours (in interaction radii) times the cohesion weight, and a "
        "repulsion from agents closer than the separation radius (unit vectors away, weighted 1 - d/radius) times "
        "the separation weight; then a uniform angular noise in [-noise/2, noise/2] is added, as in Vicsek et al. "
        "(1995, Phys. Rev. Lett. 75, 1226), and the agent moves one step. With cohesion and separation off it is "
        "a Vicsek model with inertia; the steering rules are those of Reynolds' boids (1987, SIGGRAPH, 'Flocks, "
        "herds and schools'). Runs last 240 steps from random positions and headings; polarization (|mean unit "
        "heading|) and milling (|sum r x u| / sum |r| about the periodic centre of the positions) are averaged "
        "over the last 120 steps, the mean nearest-neighbour distance over every 5th of them; the clusters "
        "(connected components of agents within the interaction radius) and the mean number of neighbours "
        "are taken at the last step."
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param(
            name="noise",
            low=0.0,
            high=2.0 * np.pi,
            unit="rad",
            meaning="width of the uniform angular noise added to every heading each step (Vicsek's eta)",
            role="driver",
            test_values=(1.0, 3.0, 3.5, 4.5),
        ),
        Param(
            name="alignment_weight",
            low=0.0,
            high=5.0,
            meaning="weight of the neighbours' mean heading relative to the agent's own heading",
            role="driver",
            test_values=(0.2, 0.4, 3.0),
        ),
        Param(
            name="interaction_radius",
            low=0.5,
            high=1.75,
            unit="length",
            meaning="radius within which agents align and cohere, and which links agents into clusters",
            role="driver",
            test_values=(0.5, 0.6, 1.5),
        ),
        Param(
            name="n_agents",
            low=16,
            high=96,
            kind="int",
            unit="agents",
            meaning="number of agents in the box of side 4 (sets the density)",
            role="driver",
            test_values=(16, 24),
        ),
        Param(
            name="separation_radius",
            low=0.05,
            high=0.5,
            unit="length",
            meaning="distance below which agents steer away from each other",
            role="decoy",
            test_values=(0.05, 0.5),
        ),
        Param(
            name="separation_weight",
            low=0.0,
            high=1.0,
            meaning="weight of the repulsion from agents closer than the separation radius",
            role="decoy",
            test_values=(0.0, 1.0),
        ),
        Param(
            name="cohesion_weight",
            low=0.0,
            high=0.2,
            meaning="weight of the steering towards the neighbours' centre",
            role="decoy",
            test_values=(0.0, 0.2),
        ),
        Param(
            name="speed",
            low=0.05,
            high=0.2,
            unit="length/step",
            meaning="distance every agent moves per step",
            role="decoy",
            test_values=(0.05, 0.2),
        ),
    )
    control: ClassVar[Mapping[str, float]] = {
        "noise": 2.0,
        "alignment_weight": 1.0,
        "interaction_radius": 1.0,
        "n_agents": 64,
        "separation_radius": 0.2,
        "separation_weight": 0.5,
        "cohesion_weight": 0.1,
        "speed": 0.1,
    }
    metrics: ClassVar[tuple[str, ...]] = (
        "polarization",
        "nearest_neighbour_distance",
        "n_clusters",
        "milling",
        "mean_neighbours",
    )
    target: ClassVar[str] = "polarization"

    def batch(self, config: Mapping[str, float], seeds: np.ndarray) -> np.ndarray:
        """Metric vectors of one replicate per seed, vectorized across replicates."""
        return simulate(config, seeds)

    def validate(self, plot_dir: Path | None = None) -> list[Check]:
        """Vicsek et al. (1995): the order-to-disorder transition under alignment noise, five checks."""
        return _validate(self, plot_dir)


VALIDATION_SEEDS = tuple(range(1000, 1012))
NOISE_SWEEP = tuple(float(eta) for eta in np.linspace(0.0, 2.0 * np.pi, 12))
LOW_NOISE, HIGH_NOISE = 0.5, 2.0 * np.pi
LOW_THRESHOLD, HIGH_THRESHOLD, MONOTONE_TOLERANCE = 0.8, 0.3, 0.03
DENSITY_NOISE, SPARSE_AGENTS, DENSE_AGENTS, SUPERIORITY = 3.0, 32, 96, 0.9


def _polarizations(sim: Swarm, overrides: Mapping[str, float]) -> np.ndarray:
    """Polarization of every validation seed at the control configuration with ``overrides``."""
    return sim.run(overrides, VALIDATION_SEEDS)[:, sim.metrics.index("polarization")]


def _check(name: str, claim: str, measured: float, threshold: str, passed: bool, caveat: str = CAVEAT) -> Check:
    """A swarm check citing Vicsek et al. (1995)."""
    return make_check("swarm", name, claim, REFERENCE, measured, threshold, passed, caveat)


def _phase_checks(sweep: np.ndarray, low: float, n_agents: int) -> list[Check]:
    """Checks 1-4: ordered at low noise, disordered at high noise, monotone between, random baseline."""
    means = sweep.mean(axis=1)
    rise = float(np.diff(means).max())
    baseline = 3.0 / np.sqrt(n_agents)
    return [
        _check(
            "ordered_at_low_noise",
            f"at low noise (eta = {LOW_NOISE}) the agents move in a common direction: polarization near 1",
            low,
            f"> {LOW_THRESHOLD}",
            low > LOW_THRESHOLD,
        ),
        _check(
            "disordered_at_high_noise",
            "at maximal noise (eta = 2 pi) the headings are disordered: polarization near 0",
            means[-1],
            f"< {HIGH_THRESHOLD}",
            means[-1] < HIGH_THRESHOLD,
        ),
        _check(
            "monotone_in_noise",
            f"mean polarization does not increase with noise along a {len(means)}-point sweep of [0, 2 pi] "
            "(measured: the largest rise between neighbouring noise values)",
            rise,
            f"<= {MONOTONE_TOLERANCE}",
            rise <= MONOTONE_TOLERANCE,
        ),
        _check(
            "random_baseline_at_high_noise",
            f"the disordered phase sits at the finite-size baseline of {n_agents} independent headings "
            "(expected |mean| about 0.886/sqrt(N)), not at a residual order",
            means[-1],
            f"< 3/sqrt({n_agents}) = {baseline:.3f}",
            means[-1] < baseline,
        ),
    ]


def _density_check(sparse: np.ndarray, dense: np.ndarray) -> Check:
    """Check 5: near the transition, a denser system is more ordered (Vicsek's phase diagram)."""
    difference = float(dense.mean() - sparse.mean())
    superiority = float((dense[:, None] > sparse[None, :]).mean())  # Mann-Whitney U / (n1 n2)
    return _check(
        "transition_shifts_with_density",
        f"at a noise near the transition (eta = {DENSITY_NOISE}) the ordered phase extends further at higher "
        f"density: polarization with {DENSE_AGENTS} agents exceeds that with {SPARSE_AGENTS} in the same box "
        f"(measured: the difference of means; the dense run beats the sparse one in {superiority:.0%} of seed pairs)",
        difference,
        f"> 0, and the dense run beats the sparse one in >= {SUPERIORITY:.0%} of seed pairs",
        difference > 0.0 and superiority >= SUPERIORITY,
        caveat=CAVEAT + " Small boxes shift the random baseline with N, so the comparison is made near the "
        "transition, where the baseline (about 0.1-0.16) is far below the measured order.",
    )


def _validate(sim: Swarm, plot_dir: Path | None) -> list[Check]:
    """The five Vicsek checks, and with ``plot_dir`` the polarization-noise figure."""
    sweep = np.stack([_polarizations(sim, {"noise": eta}) for eta in NOISE_SWEEP])
    low = float(_polarizations(sim, {"noise": LOW_NOISE}).mean())
    n_agents = int(sim.control["n_agents"])
    sparse = _polarizations(sim, {"noise": DENSITY_NOISE, "n_agents": SPARSE_AGENTS})
    dense = _polarizations(sim, {"noise": DENSITY_NOISE, "n_agents": DENSE_AGENTS})
    checks = [*_phase_checks(sweep, low, n_agents), _density_check(sparse, dense)]
    if plot_dir is not None:
        _plot(plot_dir / "swarm.png", sweep, n_agents, {SPARSE_AGENTS: sparse, DENSE_AGENTS: dense})
    return checks


def _plot(path: Path, sweep: np.ndarray, n_agents: int, density: Mapping[int, np.ndarray]) -> None:
    """Polarization against noise (mean and spread over seeds) with the check thresholds marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    noise = np.asarray(NOISE_SWEEP)
    means, spread = sweep.mean(axis=1), sweep.std(axis=1)
    figure, axes = plt.subplots(figsize=(6.4, 4.4))
    axes.fill_between(noise, means - spread, means + spread, alpha=0.25, label="mean +/- 1 sd over 12 seeds")
    axes.plot(noise, means, "o-", label=f"{n_agents} agents (control)")
    for count, values in density.items():
        label = f"{count} agents at eta = {DENSITY_NOISE}"
        axes.errorbar([DENSITY_NOISE], [values.mean()], yerr=[values.std()], fmt="s", capsize=3, label=label)
    axes.axhline(LOW_THRESHOLD, color="tab:green", linestyle="--", label=f"low-noise threshold {LOW_THRESHOLD}")
    axes.axhline(HIGH_THRESHOLD, color="tab:red", linestyle="--", label=f"high-noise threshold {HIGH_THRESHOLD}")
    axes.axhline(3.0 / np.sqrt(n_agents), color="grey", linestyle=":", label="random baseline bound 3/sqrt(N)")
    axes.axvline(LOW_NOISE, color="tab:green", linewidth=0.8)
    axes.axvline(HIGH_NOISE, color="tab:red", linewidth=0.8)
    axes.axvline(Swarm.control["noise"], color="black", linestyle=":", linewidth=0.8, label="control noise")
    axes.set_xlabel("alignment noise eta (rad)")
    axes.set_ylabel("polarization (order parameter)")
    axes.set_title("swarm: order-to-disorder transition under noise (Vicsek et al. 1995)")
    axes.set_ylim(0.0, 1.05)
    axes.legend(fontsize=7, loc="upper right")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


SIMULATION = Swarm()
