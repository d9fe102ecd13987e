"""social: bounded-confidence opinion dynamics (Deffuant, Neau, Amblard & Weisbuch 2000).

Agents hold opinions in [0, 1]. Every sweep a random perfect matching pairs them up; a matched pair whose
opinions differ by less than the confidence bound epsilon moves each opinion toward the other by a fraction mu
of the difference. The target metric is the number of major opinion clusters at the end of the run, which
scales about 1/(2 epsilon) (Deffuant et al. 2000; Weisbuch et al. 2002).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import ClassVar

import numpy as np
from scipy import special, stats

from discogym.suites.petri.sims.base import Check, Param, Simulation, make_check, replicate_rngs

CLUSTER_GAP = 0.01
"""Sorted final opinions are split into clusters wherever two consecutive opinions differ by more than this."""

MAJOR_FRACTION = 0.02
"""A cluster is major when it holds at least this fraction of the agents (Deffuant et al. count major clusters)."""

MOVE_TOL = 1e-3
"""An agent is active in a sweep when its opinion changes by more than this."""

ACTIVE_FRACTION = 0.02
"""The run has converged once no later sweep has more than this fraction of active agents."""

VALIDATION_SEEDS = np.arange(7000, 7024, dtype=np.int64)
CONSENSUS_SEEDS = np.arange(7000, 7048, dtype=np.int64)
SWEEP_EPSILONS = (0.05, 0.0625, 0.075, 0.1, 0.125, 0.15, 0.2, 0.25)


@dataclass(frozen=True)
class _Draws:
    """Every random number a batch needs, stacked with a leading replicate axis."""

    initial: np.ndarray  # (R, N) uniforms, mapped to the initial opinions
    pairings: np.ndarray  # (R, T, 2 * (N // 2)) agent indices: first half meets second half
    contact: np.ndarray | None  # (R, T, N // 2) uniforms, a pair talks when below contact_rate; None: always


def _ring_pairings(n: int, half: int) -> np.ndarray:
    """The two nearest-neighbour matchings of agents on a ring, shape (2, 2 * half): offset 0 and offset 1."""
    starts = 2 * np.arange(half)
    return np.stack([np.concatenate([(starts + off) % n, (starts + off + 1) % n]) for off in (0, 1)])


def _replicate_draws(
    rng: np.random.Generator, n: int, sweeps: int, local_fraction: float, contact_rate: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """One replicate's random numbers, drawn in a fixed order so that configs share them (paired seeds)."""
    half = n // 2
    initial = rng.random(n)
    # int16 storage keeps the (T, N) pairings small; n_agents is capped far below 2**15
    pairings = rng.permuted(np.tile(np.arange(n), (sweeps, 1)), axis=1)[:, : 2 * half].astype(np.int16)
    local = rng.random(sweeps) < local_fraction
    offsets = rng.integers(0, 2, sweeps)
    if local.any():
        pairings[local] = _ring_pairings(n, half)[offsets[local]]
    # drawn last and only when needed: at contact_rate = 1 every matched pair talks
    contact = rng.random((sweeps, half)) if contact_rate < 1.0 else None
    return initial, pairings, contact


def _draws(seeds: np.ndarray, n: int, sweeps: int, local_fraction: float, contact_rate: float) -> _Draws:
    """The random numbers of every replicate, each from its own seed alone."""
    parts = [_replicate_draws(rng, n, sweeps, local_fraction, contact_rate) for rng in replicate_rngs(seeds)]
    initial = np.stack([part[0] for part in parts])
    pairings = np.stack([part[1] for part in parts])
    contacts = [part[2] for part in parts]
    contact = None if contacts[0] is None else np.stack([c for c in contacts if c is not None])
    return _Draws(initial=initial, pairings=pairings, contact=contact)


def _initial_opinions(uniforms: np.ndarray, width: float, shape: float) -> np.ndarray:
    """Opinions 0.5 + width * (B - 0.5) with B ~ Beta(shape, shape), by inverse transform of shared uniforms."""
    beta = uniforms if shape == 1.0 else special.betaincinv(shape, shape, uniforms)
    return np.asarray(0.5 + width * (beta - 0.5), dtype=np.float64)


def _evolve(
    opinions: np.ndarray, draws: _Draws, epsilon: float, mu: float, contact_rate: float
) -> tuple[np.ndarray, np.ndarray]:
    """Run every sweep; return the final opinions and the number of active agents per sweep, shape (R, T)."""
    x = opinions.copy()
    reps, sweeps, paired = draws.pairings.shape
    half = paired // 2
    active = np.empty((reps, sweeps), dtype=np.int64)
    for t in range(sweeps):
        left = draws.pairings[:, t, :half]
        right = draws.pairings[:, t, half:]
        x_left = np.take_along_axis(x, left, axis=1)
        x_right = np.take_along_axis(x, right, axis=1)
        diff = x_right - x_left
        talks = np.abs(diff) < epsilon
        if draws.contact is not None:
            talks &= draws.contact[:, t] < contact_rate
        step = np.where(talks, mu * diff, 0.0)
        np.put_along_axis(x, left, x_left + step, axis=1)
        np.put_along_axis(x, right, x_right - step, axis=1)
        active[:, t] = 2 * (np.abs(step) > MOVE_TOL).sum(axis=1)
    return x, active


def _convergence_time(active: np.ndarray, n: int) -> np.ndarray:
    """The sweep after which no sweep has more than ACTIVE_FRACTION of agents active (0: never active)."""
    busy = active > ACTIVE_FRACTION * n
    sweeps = busy.shape[1]
    last = sweeps - np.argmax(busy[:, ::-1], axis=1)
    return np.where(busy.any(axis=1), last, 0).astype(np.float64)


def _cluster_metrics(opinions: np.ndarray) -> dict[str, np.ndarray]:
    """Major-cluster count, largest cluster share and spread of the major clusters, per replicate."""
    reps, n = opinions.shape
    ordered = np.sort(opinions, axis=1)
    labels = np.concatenate(
        [np.zeros((reps, 1), dtype=np.int64), np.cumsum(np.diff(ordered, axis=1) > CLUSTER_GAP, axis=1)], axis=1
    )
    flat = (labels + n * np.arange(reps)[:, None]).ravel()
    sizes = np.bincount(flat, minlength=reps * n).reshape(reps, n)
    major = sizes >= np.ceil(MAJOR_FRACTION * n)
    in_major = np.take_along_axis(major, labels, axis=1)
    high = np.where(in_major, ordered, -np.inf).max(axis=1)
    low = np.where(in_major, ordered, np.inf).min(axis=1)
    spread = np.where(in_major.any(axis=1), high - low, 0.0)
    return {"clusters": major.sum(axis=1).astype(np.float64), "largest_share": sizes.max(axis=1) / n, "spread": spread}


def _simulate(config: Mapping[str, float], seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Final opinions (R, N) and active-agent counts (R, T) of one replicate per seed."""
    n, sweeps = int(config["n_agents"]), int(config["sweeps"])
    draws = _draws(seeds, n, sweeps, config["local_fraction"], config["contact_rate"])
    start = _initial_opinions(draws.initial, config["init_width"], config["init_shape"])
    return _evolve(start, draws, config["epsilon"], config["mu"], config["contact_rate"])


class Social(Simulation):
    """Deffuant bounded-confidence opinion dynamics with synchronous random-matching updates."""

    name: ClassVar[str] = "social"
    description: ClassVar[str] = (
        "Bounded-confidence opinion dynamics after Deffuant, Neau, Amblard & Weisbuch (2000, Advances in Complex "
        "Systems 3, 87-98). N agents hold opinions in [0, 1], initially 0.5 + init_width * (B - 0.5) with B drawn "
        "from Beta(init_shape, init_shape) (uniform on [0, 1] at the control). Each sweep pairs all agents by a "
        "random perfect matching (in a fraction local_fraction of sweeps, by nearest neighbours on a ring instead); "
        "each matched pair talks with probability contact_rate, and if their opinions differ by less than epsilon "
        "both move toward each other by mu times the difference. Updating a whole matching at once is a synchronous "
        "variant of Deffuant's sequential random pairs: every pair is disjoint, so each update is still a Deffuant "
        "pair update and the fixed points (clusters more than epsilon apart) are the same. Final opinions are "
        "sorted and split into clusters at gaps above 0.01; clusters holding at least 2% of the agents are major. "
        "The number of major clusters scales about 1/(2 epsilon) (Deffuant et al. 2000; Weisbuch, Deffuant, "
        "Amblard & Nadal 2002, Complexity 7(3)) and falls to consensus for epsilon above about 0.25 (Hegselmann & "
        "Krause 2002, JASSS 5(3); Lorenz 2007, IJMPC 18), while mu and the contact rate set the convergence time."
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param(
            name="epsilon",
            low=0.05,
            high=0.5,
            unit="opinion units",
            meaning="confidence bound: agents interact only when their opinions differ by less than this",
            role="driver",
            test_values=(0.1, 0.15, 0.3),
        ),
        Param(
            name="init_width",
            low=0.3,
            high=1.0,
            unit="opinion units",
            meaning="width of the initial opinion interval, centred on 0.5",
            role="driver",
            test_values=(0.5, 0.7),
        ),
        Param(
            name="init_shape",
            low=0.3,
            high=1.0,
            meaning="shape a of the Beta(a, a) initial opinions: 1 is uniform, below 1 piles agents at the extremes",
            role="driver",
            test_values=(0.4, 0.6),
        ),
        Param(
            name="mu",
            low=0.1,
            high=0.5,
            meaning="convergence parameter: fraction of the opinion difference each partner moves by",
            role="decoy",
            test_values=(0.1, 0.5),
        ),
        Param(
            name="contact_rate",
            low=0.5,
            high=1.0,
            unit="1/sweep",
            meaning="probability that a matched pair actually talks in a sweep",
            role="decoy",
            test_values=(0.5, 0.75),
        ),
        Param(
            name="local_fraction",
            low=0.0,
            high=0.7,
            meaning="fraction of sweeps in which agents meet their ring neighbours instead of random partners",
            role="decoy",
            test_values=(0.3, 0.6),
        ),
        Param(name="n_agents", low=100, high=1000, kind="int", unit="agents", meaning="number of agents N"),
        Param(name="sweeps", low=100, high=800, kind="int", unit="sweeps", meaning="run length in matching sweeps"),
    )
    control: ClassVar[Mapping[str, float]] = {
        "epsilon": 0.22,
        "init_width": 1.0,
        "init_shape": 1.0,
        "mu": 0.3,
        "contact_rate": 1.0,
        "local_fraction": 0.0,
        "n_agents": 500,
        "sweeps": 500,
    }
    metrics: ClassVar[tuple[str, ...]] = ("clusters", "polarization", "spread", "convergence_time", "largest_share")
    target: ClassVar[str] = "clusters"

    def batch(self, config: Mapping[str, float], seeds: np.ndarray) -> np.ndarray:
        """Metrics per replicate: major clusters, variance of final opinions, range of the major clusters,
        convergence sweep and the share of agents in the largest cluster."""
        opinions, active = _simulate(config, seeds)
        clusters = _cluster_metrics(opinions)
        columns = {
            **clusters,
            "polarization": opinions.var(axis=1),
            "convergence_time": _convergence_time(active, opinions.shape[1]),
        }
        return np.stack([columns[name] for name in self.metrics], axis=1)

    def validate(self, plot_dir: Path | None = None) -> list[Check]:
        """Cluster scaling ~ 1/(2 epsilon), consensus at large epsilon, and mu's effect on time but not clusters."""
        sweep = {eps: self._column({"epsilon": eps}, "clusters") for eps in SWEEP_EPSILONS}
        checks = [
            _check_eps_tenth(sweep[0.1]),
            _check_scaling(sweep),
            _check_consensus(self),
            *_check_mu(self),
        ]
        if plot_dir is not None:
            _plot(sweep, plot_dir / f"{self.name}.png")
        return checks

    def _column(self, overrides: Mapping[str, float], metric: str, seeds: np.ndarray = VALIDATION_SEEDS) -> np.ndarray:
        """One metric over ``seeds`` for the control with ``overrides``."""
        return self.run(overrides, seeds.tolist())[:, self.metrics.index(metric)]


_SCALING_REF = "Deffuant, Neau, Amblard & Weisbuch (2000), Adv. Complex Syst. 3, 87-98; Weisbuch et al. (2002)"
_SYNC_CAVEAT = (
    "synchronous random-matching sweeps instead of sequential random pairs; finite N (500 unless stated) and "
    "500 sweeps; "
    "major clusters are those with at least 2% of the agents, split at opinion gaps above 0.01"
)


_check = partial(make_check, "social")  # a Check of this simulation


def _check_eps_tenth(clusters: np.ndarray) -> Check:
    """At epsilon = 0.1 the mean number of major clusters is near 1/(2 epsilon) = 5."""
    mean = float(clusters.mean())
    return _check(
        "clusters_at_eps_0.1",
        "at epsilon = 0.1 the number of major clusters is about 1/(2 epsilon) = 5",
        _SCALING_REF,
        mean,
        "in [3.5, 6]",
        3.5 <= mean <= 6.0,
        _SYNC_CAVEAT + "; the count is closer to floor(1/(2 epsilon)) than to 1/(2 epsilon) itself",
    )


def _check_scaling(sweep: Mapping[float, np.ndarray]) -> Check:
    """Over epsilon in [0.05, 0.25], mean cluster count is linear in 1/(2 epsilon) with slope near 1."""
    inverse = np.array([1.0 / (2.0 * eps) for eps in sweep])
    means = np.array([values.mean() for values in sweep.values()])
    corr = float(np.corrcoef(inverse, means)[0, 1])
    slope = float(np.polyfit(inverse, means, 1)[0])
    return _check(
        "cluster_scaling_1_over_2eps",
        f"mean cluster count tracks 1/(2 epsilon) over epsilon in [0.05, 0.25] (fitted slope {slope:.2f})",
        _SCALING_REF,
        corr,
        "correlation > 0.95 and slope in [0.6, 1.4]",
        corr > 0.95 and 0.6 <= slope <= 1.4,
        _SYNC_CAVEAT + "; the count is a step function of epsilon, so the fit is over means of 24 seeds",
    )


def _check_consensus(sim: Social) -> Check:
    """For epsilon = 0.3 and 0.4 nearly every run ends in a single major cluster (at N = 1000)."""
    shares = {
        (eps, n): float((sim._column({"epsilon": eps, "n_agents": n}, "clusters", CONSENSUS_SEEDS) == 1).mean())
        for eps in (0.3, 0.4)
        for n in (500, 1000)
    }
    worst = min(shares[(eps, 1000)] for eps in (0.3, 0.4))
    return _check(
        "consensus_large_epsilon",
        "for epsilon of about 0.25 and above the population reaches consensus (one major cluster)",
        "Hegselmann & Krause (2002), JASSS 5(3); Deffuant et al. (2000)",
        worst,
        ">= 0.9 of 48 runs end with one major cluster, at each of epsilon 0.3 and 0.4 (N = 1000)",
        worst >= 0.9,
        _SYNC_CAVEAT + "; run at N = 1000 because the consensus transition (near epsilon 0.28 at N = 500) "
        "sharpens with N: "
        f"at the control N = 500 the single-cluster shares are {shares[(0.3, 500)]:.2f} (epsilon 0.3) and "
        f"{shares[(0.4, 500)]:.2f} (epsilon 0.4), the rest splitting into two large clusters; Hegselmann & "
        "Krause's threshold is for their synchronous averaging model, applied here to the Deffuant pair model",
    )


def _check_mu(sim: Social) -> list[Check]:
    """mu leaves the number of clusters alone but changes the convergence time (at epsilon = 0.15)."""
    runs = {mu: sim.run({"epsilon": 0.15, "mu": mu}, VALIDATION_SEEDS.tolist()) for mu in (0.1, 0.5)}
    col = {name: Social.metrics.index(name) for name in ("clusters", "convergence_time")}
    p_clusters = _mw_p(runs[0.1][:, col["clusters"]], runs[0.5][:, col["clusters"]])
    p_time = _mw_p(runs[0.1][:, col["convergence_time"]], runs[0.5][:, col["convergence_time"]])
    ratio = float(runs[0.1][:, col["convergence_time"]].mean() / runs[0.5][:, col["convergence_time"]].mean())
    caveat = _SYNC_CAVEAT + "; compared at epsilon = 0.15 where the cluster count varies between seeds"
    reference = "Deffuant, Neau, Amblard & Weisbuch (2000), Adv. Complex Syst. 3, 87-98"
    return [
        _check(
            "mu_does_not_change_clusters",
            "the convergence parameter mu does not change the number of major clusters (mu 0.1 vs 0.5)",
            reference,
            p_clusters,
            "Mann-Whitney p > 0.05",
            p_clusters > 0.05,
            caveat,
        ),
        _check(
            "mu_changes_convergence_time",
            f"smaller mu slows convergence: mean time ratio mu 0.1 / mu 0.5 (Mann-Whitney p = {p_time:.1e})",
            reference,
            ratio,
            "> 1 with Mann-Whitney p < 0.01",
            ratio > 1.0 and p_time < 0.01,
            caveat,
        ),
    ]


def _mw_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided Mann-Whitney U p-value (1 when both samples are one identical constant)."""
    return float(stats.mannwhitneyu(a, b, alternative="two-sided").pvalue)


def _plot(sweep: Mapping[float, np.ndarray], path: Path) -> None:
    """Cluster count against 1/(2 epsilon): mean and spread over seeds, with the line y = 1/(2 epsilon)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    inverse = np.array([1.0 / (2.0 * eps) for eps in sweep])
    values = list(sweep.values())
    means = np.array([v.mean() for v in values])
    errors = np.array([[m - v.min(), v.max() - m] for m, v in zip(means, values, strict=True)]).T
    fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.errorbar(
        inverse, means, yerr=errors, fmt="o", capsize=4, label=f"simulation: mean, min-max over {len(values[0])} seeds"
    )
    line = np.linspace(0.0, inverse.max() * 1.05, 50)
    ax.plot(line, line, "--", color="grey", label="y = 1/(2 epsilon)")
    ax.set_xlabel("1 / (2 epsilon)")
    ax.set_ylabel("number of major opinion clusters")
    ax.set_title("social: Deffuant cluster count vs confidence bound")
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


SIMULATION = Social()
