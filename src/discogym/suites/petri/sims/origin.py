"""origin: evolutionary population dynamics with a heritable body-size trait.

The state of a replicate is a vector of counts over ``TRAIT_BINS`` body-size classes on [0, 1]. Each step every
class of size x has per-capita birth rate b(x) = b0 (1 + x) (fecundity grows with size), damped logistically by
crowding, b(x) max(0, 1 - N/K), and per-capita death rate d(x) = d0 (1 + c x^2) (the upkeep of a large body;
as a probability per step it is capped at 1). Offspring inherit the parent's size; with probability
``mutation_rate`` it is displaced by a Gaussian step of SD ``mutation_step`` (reflected at 0 and 1, then binned).
The next count of each class is Poisson with mean (expected survivors + expected births landing there): a
Poisson-offspring branching process (Galton-Watson) with density-dependent fecundity, so small populations can
go extinct. Without mutation a population of size x settles at N* = K (1 - d(x)/b(x)) (Verhulst's logistic);
with mutation, selection drives the mean size to x* = sqrt(1 + 1/c) - 1, the size that minimizes d/b and so
maximizes N* (density-regulated, "K"-selection), and mutation against stabilizing selection keeps a standing
trait variance (Kimura 1965).

Poisson draws are made by inverting the Poisson distribution function at uniforms drawn per replicate up front,
so the whole run is one loop over time steps, vectorized across replicates.
"""

from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import ClassVar

import numpy as np
from scipy import optimize, special

from discogym.suites.petri.sims.base import Check, Param, Simulation, make_check, replicate_rngs

STEPS = 300
TRAIT_BINS = 32
TRAIT = (np.arange(TRAIT_BINS) + 0.5) / TRAIT_BINS
EQUILIBRIUM_WINDOW = 20
EQUILIBRIUM_TOLERANCE = 0.1


def mutation_matrix(mutation_rate: float, mutation_step: float) -> np.ndarray:
    """M[j, i]: probability that an offspring of a parent in bin i is born in bin j (columns sum to 1)."""
    edges = np.linspace(0.0, 1.0, TRAIT_BINS + 1)
    # A step is reflected at 0 and 1: the mass of the image sources at -x, 2-x, -2+x and 2+x lands inside.
    images = np.stack([TRAIT, -TRAIT, 2.0 - TRAIT, TRAIT - 2.0, TRAIT + 2.0])
    cdf = special.ndtr((edges[None, :, None] - images[:, None, :]) / mutation_step)
    kernel = np.diff(cdf, axis=1).sum(axis=0)
    kernel /= kernel.sum(axis=0, keepdims=True)
    return np.asarray((1.0 - mutation_rate) * np.eye(TRAIT_BINS) + mutation_rate * kernel)


def poisson_from_uniform(u: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """The Poisson(mean) quantile at u, elementwise (the smallest k with P(X <= k) >= u); 0 where mean is 0."""
    safe = np.maximum(mean, 1e-300)
    k = np.ceil(special.pdtrik(u, safe))
    below = np.maximum(k - 1.0, 0.0)
    k = np.where(special.pdtr(below, safe) >= u, below, k)
    return np.asarray(np.where(mean > 0.0, k, 0.0))


def birth_death_rates(config: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Per-capita birth rate at zero density and death rate of each trait bin."""
    births = config["birth_rate"] * (1.0 + TRAIT)
    deaths = config["death_rate"] * (1.0 + config["size_cost"] * TRAIT**2)
    return births, deaths


def optimal_size(size_cost: float) -> float:
    """The body size minimizing d/b, i.e. maximizing the equilibrium population: sqrt(1 + 1/c) - 1, in [0, 1]."""
    if size_cost <= 0.0:
        return 1.0
    return float(min(1.0, np.sqrt(1.0 + 1.0 / size_cost) - 1.0))


def predicted_equilibrium(config: Mapping[str, float], size: float) -> float:
    """Verhulst's equilibrium K (1 - d/b) of a population fixed at body size ``size`` (0 if d >= b)."""
    birth = config["birth_rate"] * (1.0 + size)
    death = config["death_rate"] * (1.0 + config["size_cost"] * size**2)
    return float(config["carrying_capacity"] * max(0.0, 1.0 - death / birth))


def initial_counts(config: Mapping[str, float], replicates: int) -> np.ndarray:
    """All founders in the trait bin holding ``initial_trait``."""
    counts = np.zeros((replicates, TRAIT_BINS))
    start_bin = min(int(config["initial_trait"] * TRAIT_BINS), TRAIT_BINS - 1)
    counts[:, start_bin] = config["initial_population"]
    return counts


def simulate(config: Mapping[str, float], seeds: np.ndarray) -> np.ndarray:
    """Trait-class counts of every replicate at every time: shape (replicates, steps + 1, TRAIT_BINS)."""
    steps = int(config["steps"])
    births, deaths = birth_death_rates(config)
    survival = np.clip(1.0 - deaths, 0.0, 1.0)
    mutation = mutation_matrix(config["mutation_rate"], config["mutation_step"])
    capacity = config["carrying_capacity"]
    uniforms = np.stack([rng.random((steps, TRAIT_BINS)) for rng in replicate_rngs(seeds)], axis=1)
    counts = initial_counts(config, len(seeds))
    history = np.empty((len(seeds), steps + 1, TRAIT_BINS))
    history[:, 0] = counts
    for step in range(steps):
        crowding = np.maximum(0.0, 1.0 - counts.sum(axis=1, keepdims=True) / capacity)
        newborn = counts * births * crowding
        landing = (newborn[:, None, :] * mutation[None, :, :]).sum(axis=2)
        counts = poisson_from_uniform(uniforms[step], counts * survival + landing)
        history[:, step + 1] = counts
    return history


def time_to_equilibrium(population: np.ndarray) -> np.ndarray:
    """First step from which the trailing running mean of N stays within tolerance of its final level.

    The final level is the mean over the last quarter of the run; the running mean is over the last
    ``EQUILIBRIUM_WINDOW`` steps; the tolerance is ``EQUILIBRIUM_TOLERANCE`` times the final level (so after an
    extinction it is the step at which the whole window is empty). The run length if it never settles.
    """
    steps = population.shape[1] - 1
    final = population[:, -(steps // 4) :].mean(axis=1, keepdims=True)
    cumulative = np.concatenate([np.zeros((population.shape[0], 1)), np.cumsum(population, axis=1)], axis=1)
    index = np.arange(steps + 1)
    start = np.maximum(index + 1 - EQUILIBRIUM_WINDOW, 0)
    running = (cumulative[:, index + 1] - cumulative[:, start]) / (index + 1 - start)
    outside = np.abs(running - final) > EQUILIBRIUM_TOLERANCE * final
    settled = np.where(outside.any(axis=1), steps + 1 - np.argmax(outside[:, ::-1], axis=1), 0)
    return np.asarray(np.minimum(settled, steps), dtype=np.float64)


def trait_moments(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of body size in each row of counts; 0 and 0 for an extinct population."""
    total = counts.sum(axis=-1)
    alive = total > 0
    weight = counts / np.where(alive, total, 1.0)[..., None]
    mean = (weight * TRAIT).sum(axis=-1)
    variance = (weight * (TRAIT - mean[..., None]) ** 2).sum(axis=-1)
    return np.where(alive, mean, 0.0), np.where(alive, variance, 0.0)


VALIDATION_SEEDS = np.arange(24)
GROWTH_FIT_STEPS = 100
ESTABLISHMENT_SEEDS = np.arange(1000)
ESTABLISHMENT_STEPS = 40
LONG_RUN_STEPS = 1500
BALANCE_STEPS = (0.03, 0.05, 0.08, 0.12)


def founder_rates(config: Mapping[str, float]) -> tuple[float, float, float]:
    """Founders' body size (their bin's centre), birth rate at zero density and death rate."""
    index = min(int(config["initial_trait"] * TRAIT_BINS), TRAIT_BINS - 1)
    births, deaths = birth_death_rates(config)
    return float(TRAIT[index]), float(births[index]), float(deaths[index])


def logistic(time: np.ndarray, capacity: float, rate: float, start: float) -> np.ndarray:
    """The continuous logistic N(t) = K / (1 + (K / N0 - 1) exp(-r t))."""
    return np.asarray(capacity / (1.0 + (capacity / start - 1.0) * np.exp(-rate * time)))


class GrowthCurves:
    """Population trajectories without mutation at the control and the logistic fitted to their mean."""

    def __init__(self, config: Mapping[str, float]) -> None:
        self.config = dict(config)
        self.population = simulate(config, VALIDATION_SEEDS).sum(axis=2)
        self.time = np.arange(self.population.shape[1], dtype=np.float64)
        size, self.birth, self.death = founder_rates(config)
        self.predicted = predicted_equilibrium(config, size)
        start = config["initial_population"]
        mean = self.population.mean(axis=0)[:GROWTH_FIT_STEPS]
        time = self.time[:GROWTH_FIT_STEPS]
        fitted, _ = optimize.curve_fit(
            lambda t, k, r: logistic(t, k, r, start), time, mean, p0=(self.predicted, self.birth - self.death)
        )
        self.capacity, self.rate = float(fitted[0]), float(fitted[1])
        residual = mean - logistic(time, self.capacity, self.rate, start)
        self.r_squared = float(1.0 - residual.var() / mean.var())


_check = partial(make_check, "origin")  # a Check of this simulation


def check_verhulst_equilibrium(sim: Simulation) -> Check:
    """Mean final population against K (1 - d/b), over four configurations without mutation."""
    variants: tuple[dict[str, float], ...] = (
        {},
        {"carrying_capacity": 1000, "death_rate": 0.3},
        {"birth_rate": 0.6, "size_cost": 3.0},
        {"birth_rate": 0.7, "death_rate": 0.05, "carrying_capacity": 500},
    )
    errors = []
    for variant in variants:
        config = sim.resolve({"mutation_rate": 0.0, **variant})
        final = simulate(config, VALIDATION_SEEDS)[:, -1].sum(axis=1).mean()
        predicted = predicted_equilibrium(config, founder_rates(config)[0])
        errors.append(abs(final / predicted - 1.0))
    worst = max(errors)
    return _check(
        "verhulst_equilibrium",
        "Density-dependent births b (1 - N/K) against deaths d settle the population at N* = K (1 - d/b)",
        "Verhulst (1838); Pearl & Reed (1920)",
        worst,
        "< 0.05 (worst relative error of the mean final population, 4 configurations, 24 seeds each)",
        worst < 0.05,
        "Mutation off, so every individual has the founders' size. The model is stochastic and in discrete time: "
        "N* is the fixed point of the expected dynamics, and demographic noise lowers the mean slightly.",
    )


def check_logistic_fit(growth: GrowthCurves) -> Check:
    """R^2 of the continuous logistic fitted to the mean growth curve from a small founding population."""
    return _check(
        "logistic_growth_fit",
        "Growth from a small founding population follows the sigmoid logistic curve",
        "Verhulst (1838)",
        growth.r_squared,
        f"> 0.95 (R^2 of a logistic fit to the mean of 24 trajectories, first {GROWTH_FIT_STEPS} steps)",
        growth.r_squared > 0.95,
        "The model is a discrete-time stochastic branching process, not the continuous logistic ODE; "
        "the fit is to the mean trajectory.",
    )


def check_logistic_rate(growth: GrowthCurves) -> Check:
    """The fitted intrinsic growth rate against ln(1 + b - d), the per-step rate of the exponential phase."""
    predicted = float(np.log(1.0 + growth.birth - growth.death))
    error = abs(growth.rate / predicted - 1.0)
    return _check(
        "logistic_growth_rate",
        "The intrinsic rate of increase of the fitted logistic is the founders' net rate, ln(1 + b - d) per step",
        "Verhulst (1838); Malthusian parameter, Fisher (1930)",
        error,
        "< 0.1 (relative error of the fitted r)",
        error < 0.1,
        f"Fitted r = {growth.rate:.4f} per step, predicted {predicted:.4f}. The logistic is fitted to the whole "
        "sigmoid, the prediction is the rate of the low-density phase.",
    )


def check_subcritical_extinction(sim: Simulation) -> Check:
    """Fraction of replicates extinct when deaths outpace births at every size (d > b, subcritical)."""
    config = sim.resolve({"birth_rate": 0.2, "death_rate": 0.35})
    extinct = float((simulate(config, VALIDATION_SEEDS)[:, -1].sum(axis=1) == 0).mean())
    return _check(
        "subcritical_extinction",
        "A subcritical branching process (mean offspring below 1 at every size) goes extinct with probability 1",
        "Galton & Watson (1875); Harris (1963), The Theory of Branching Processes",
        extinct,
        "== 1 (fraction of 24 replicates extinct by the end of the run)",
        extinct == 1.0,
        "birth_rate 0.2 and death_rate 0.35: d(x) > b(x) for every size, so no trait can rescue the population.",
    )


def establishment_theory(birth: float, death: float) -> float:
    """Survival probability of one founder with Poisson(1 + b - d) offspring: 1 - q, q = exp(m (q - 1))."""
    mean = 1.0 + birth - death
    extinction = 0.0
    for _ in range(500):
        extinction = float(np.exp(mean * (extinction - 1.0)))
    return 1.0 - extinction


def check_establishment(sim: Simulation) -> Check:
    """Share of single founders whose lineage survives, against the Galton-Watson prediction."""
    config = {**sim.resolve({"mutation_rate": 0.0, "initial_population": 1}), "steps": ESTABLISHMENT_STEPS}
    final = simulate(config, ESTABLISHMENT_SEEDS)[:, -1].sum(axis=1)
    measured = float((final > 0).mean())
    _, birth, death = founder_rates(config)
    predicted = establishment_theory(birth, death)
    return _check(
        "establishment_probability",
        "A single founder establishes with probability 1 - q, q the smallest root of q = exp(m (q - 1)) for "
        "Poisson offspring of mean m = 1 + b - d",
        "Haldane (1927); Harris (1963)",
        abs(measured - predicted),
        f"< 0.05 (|measured - predicted|; predicted {predicted:.3f}, {len(ESTABLISHMENT_SEEDS)} founders)",
        abs(measured - predicted) < 0.05,
        f"Measured {measured:.3f} after {ESTABLISHMENT_STEPS} steps (by then a lineage is extinct or near K). "
        "Crowding at low density (N/K about 0.0005) is ignored in the prediction.",
    )


def long_run(sim: Simulation, overrides: Mapping[str, float], seeds: np.ndarray) -> np.ndarray:
    """Counts over the second half of a run of LONG_RUN_STEPS (past the trait's transient)."""
    config = {**sim.resolve(overrides), "steps": LONG_RUN_STEPS}
    return simulate(config, seeds)[:, LONG_RUN_STEPS // 2 :]


def check_optimal_size(sim: Simulation) -> Check:
    """Mean size evolved from small founders against x* = sqrt(1 + 1/c) - 1, which maximizes N*."""
    counts = long_run(sim, {"initial_trait": 0.15}, np.arange(8))
    mean, _ = trait_moments(counts)
    optimum = optimal_size(sim.control["size_cost"])
    error = abs(float(mean.mean()) - optimum)
    return _check(
        "selection_to_optimal_size",
        "Under density-regulated selection the trait evolves to the size that maximizes the equilibrium "
        "population (minimizes d/b): x* = sqrt(1 + 1/c) - 1",
        "MacArthur (1962); Roughgarden (1971), density-dependent natural selection",
        error,
        f"< 0.03 (|evolved mean size - x*|; x* = {optimum:.3f}, founders at 0.15, 8 seeds)",
        error < 0.03,
        f"Mean over the last {LONG_RUN_STEPS // 2} of {LONG_RUN_STEPS} steps, a longer run than a task's.",
    )


def kimura_variance(sim: Simulation, mutation_step: float) -> float:
    """Kimura's Gaussian mutation-selection balance V = sqrt(U sigma^2 / (2 s)) around the optimal size.

    U is the rate of mutations per individual per step at equilibrium (birth rate d(x*) times mutation_rate);
    s is the curvature of the per-step growth rate g(x) = b(x) (R* - R(x)) at x*, R = d/b, g ~ -s (x - x*)^2.
    """
    config = sim.resolve()
    optimum = optimal_size(config["size_cost"])
    birth = config["birth_rate"] * (1.0 + optimum)
    death = config["death_rate"] * (1.0 + config["size_cost"] * optimum**2)
    curvature = (config["death_rate"] / config["birth_rate"]) * 2.0 * (1.0 + config["size_cost"]) / (1.0 + optimum) ** 3
    selection = birth * curvature / 2.0
    return float(np.sqrt(death * config["mutation_rate"] * mutation_step**2 / (2.0 * selection)))


def check_mutation_selection_balance(sim: Simulation) -> list[Check]:
    """Standing trait variance against Kimura's prediction, and its growth (slope ~1) with the mutation step."""
    optimum = optimal_size(sim.control["size_cost"])
    measured = []
    for step in BALANCE_STEPS:
        counts = long_run(sim, {"mutation_step": step, "initial_trait": optimum}, np.arange(8))
        measured.append(float(trait_moments(counts)[1].mean()))
    ratios = [v / kimura_variance(sim, step) for v, step in zip(measured, BALANCE_STEPS, strict=True)]
    worst = float(max(abs(np.log(ratios))))
    slope = float(np.polyfit(np.log(BALANCE_STEPS), np.log(measured), 1)[0])
    steps_text = ", ".join(f"{step:g}" for step in BALANCE_STEPS)
    caveat = (
        f"Measured/predicted variance {', '.join(f'{r:.2f}' for r in ratios)} at mutation steps {steps_text}. "
        "Asexual, finite population (drift lowers the variance at small steps) on a 32-bin trait grid; "
        f"averaged over the last {LONG_RUN_STEPS // 2} of {LONG_RUN_STEPS} steps, 8 seeds."
    )
    reference = "Kimura (1965); Crow & Kimura (1970); Lande (1975)"
    return [
        _check(
            "mutation_selection_balance",
            "Mutation against stabilizing selection keeps a trait variance V = sqrt(U sigma^2 / (2 s))",
            reference,
            float(np.exp(worst)),
            "< 1.25 (worst factor between measured and predicted variance over 4 mutation steps)",
            np.exp(worst) < 1.25,
            caveat,
        ),
        _check(
            "variance_grows_with_mutation_step",
            "The standing trait variance grows in proportion to the mutation step size (log-log slope 1)",
            reference,
            slope,
            "in [0.8, 1.2] (slope of log variance against log mutation step), and increasing",
            0.8 <= slope <= 1.2 and bool(np.all(np.diff(measured) > 0)),
            caveat,
        ),
    ]


def plot_growth(growth: GrowthCurves, path: Path) -> None:
    """Population against time for several seeds, the predicted carrying capacity and the fitted logistic."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for row in growth.population[:6]:
        ax.plot(growth.time, row, color="tab:blue", alpha=0.45, linewidth=1)
    start = growth.config["initial_population"]
    ax.plot(
        growth.time,
        logistic(growth.time, growth.capacity, growth.rate, start),
        color="black",
        linestyle="--",
        label=f"fitted logistic (K={growth.capacity:.0f}, r={growth.rate:.3f}, R^2={growth.r_squared:.3f})",
    )
    ax.axhline(
        growth.predicted, color="tab:red", linestyle=":", label=f"predicted N* = K (1 - d/b) = {growth.predicted:.0f}"
    )
    ax.set_xlabel("time step")
    ax.set_ylabel("population size N")
    ax.set_title("origin: logistic growth to the carrying capacity (6 seeds, no mutation)")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


class Origin(Simulation):
    """Evolutionary population dynamics: logistic birth-death with a heritable, mutating body-size trait."""

    name = "origin"
    description = (
        "Evolutionary population dynamics in discrete time: counts of individuals over 32 body-size classes x in "
        "[0, 1], founded by a small population of one size. Per step, per-capita births b0 (1 + x) max(0, 1 - N/K) "
        "(fecundity grows with size, damped logistically by crowding) and deaths d0 (1 + c x^2) (upkeep of a large "
        "body); offspring inherit the parent's size, displaced with probability mu by a Gaussian step of SD sigma; "
        "each class's next count is Poisson with mean expected survivors plus incoming births (a Poisson-offspring "
        "branching process, so extinction is possible). A population of one size settles at N* = K (1 - d/b) "
        "(Verhulst 1838); selection drives size to x* = sqrt(1 + 1/c) - 1, which maximizes N* (density-regulated "
        "selection, MacArthur 1962; Roughgarden 1971); mutation against stabilizing selection keeps a standing "
        "trait variance that grows with the mutation step (Kimura 1965; Crow & Kimura 1970)."
    )
    params = (
        Param(
            name="birth_rate",
            low=0.05,
            high=0.8,
            unit="1/step",
            meaning="per-capita birth rate of the smallest body size at zero density (b0)",
            role="driver",
            test_values=(0.3, 0.6),
        ),
        Param(
            name="death_rate",
            low=0.01,
            high=0.6,
            unit="1/step",
            meaning="per-capita death rate per step of the smallest body size (d0); d >= b at all sizes: extinction",
            role="driver",
            test_values=(0.12, 0.32, 0.45),
        ),
        Param(
            name="carrying_capacity",
            low=50,
            high=10000,
            kind="int",
            unit="individuals",
            meaning="resource-limited crowding scale K: births stop when the population reaches K",
            role="driver",
            test_values=(1000, 1500, 4000),
        ),
        Param(
            name="size_cost",
            low=0.0,
            high=10.0,
            unit="1",
            meaning="strength c of the mortality cost of body size, d = d0 (1 + c x^2)",
            role="driver",
            test_values=(0.1, 5.0),
        ),
        Param(
            name="mutation_rate",
            low=0.0,
            high=1.0,
            unit="per birth",
            meaning="probability that an offspring's body size mutates",
            role="decoy",
            test_values=(0.03, 0.3),
        ),
        Param(
            name="mutation_step",
            low=0.005,
            high=0.2,
            unit="trait units",
            meaning="standard deviation of a mutation's change in body size (size is on [0, 1])",
            role="decoy",
            test_values=(0.025, 0.1),
        ),
        Param(
            name="initial_population",
            low=1,
            high=1000,
            kind="int",
            unit="individuals",
            meaning="number of founders",
            role="decoy",
            test_values=(10, 100),
        ),
        Param(
            name="initial_trait",
            low=0.0,
            high=1.0,
            unit="trait units",
            meaning="body size of the founders (relative size on [0, 1])",
            role="decoy",
            test_values=(0.3, 0.55),
        ),
        Param(
            name="steps",
            low=STEPS,
            high=STEPS,
            kind="int",
            unit="steps",
            meaning="length of the run",
            role="fixed",
        ),
    )
    control: ClassVar[Mapping[str, float]] = {
        "birth_rate": 0.4,
        "death_rate": 0.2,
        "carrying_capacity": 2000,
        "size_cost": 1.0,
        "mutation_rate": 0.1,
        "mutation_step": 0.05,
        "initial_population": 20,
        "initial_trait": 0.4,
        "steps": STEPS,
    }
    metrics = ("final_population", "mean_trait", "trait_variance", "time_to_equilibrium", "extinct")
    target = "final_population"

    def batch(self, config: Mapping[str, float], seeds: np.ndarray) -> np.ndarray:
        """Metric vectors of one replicate per seed (see :attr:`metrics`)."""
        history = simulate(config, seeds)
        final = history[:, -1]
        population = history.sum(axis=2)
        mean, variance = trait_moments(final)
        return np.stack(
            [
                population[:, -1],
                mean,
                variance,
                time_to_equilibrium(population),
                (population[:, -1] == 0).astype(np.float64),
            ],
            axis=1,
        )

    def validate(self, plot_dir: Path | None = None) -> list[Check]:
        """Logistic growth to Verhulst's equilibrium, branching-process extinction and establishment,
        selection to the optimal size, and mutation-selection balance (see the module's check functions)."""
        growth = GrowthCurves(self.resolve({"mutation_rate": 0.0}))
        checks = [
            check_verhulst_equilibrium(self),
            check_logistic_fit(growth),
            check_logistic_rate(growth),
            check_subcritical_extinction(self),
            check_establishment(self),
            check_optimal_size(self),
            *check_mutation_selection_balance(self),
        ]
        if plot_dir is not None:
            plot_growth(growth, Path(plot_dir) / f"{self.name}.png")
        return checks


SIMULATION = Origin()
