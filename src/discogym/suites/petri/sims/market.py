"""market: a heterogeneous-agent asset market with fundamentalists, chartists, noise traders and a market maker.

Agents switch between fundamentalism and chartism by a discrete-choice (logit) rule on herding, a
predisposition and the recent performance of trend following; the time-varying chartist share turns the
chartists' dispersed demand into volatility clustering and fat tails. The target metric is the volatility
(standard deviation) of log returns.

Roles: the drivers act on the size of the demand shocks (price impact, chartist dispersion, noise traders), on
the chartist feedback (extrapolation) or on the chartist share (predisposition, performance memory). The decoys
(fundamentalist reaction, fundamental volatility and drift) act through the mispricing, whose correction is slow
next to the daily noise: they move ``mean_abs_mispricing`` but leave the volatility within about 1%.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

import numpy as np

from discogym.suites.petri.sims.base import Check, Param, Simulation, replicate_rngs

BURN_IN = 500
"""Periods simulated and discarded before measuring (the chartist share and mispricing settle)."""

MAX_LAG = 10
"""Lags 1..MAX_LAG of the autocorrelation metrics and checks."""

VALIDATION_SEEDS = tuple(range(24))
PLOT_LAGS = 50

Series = tuple[np.ndarray, np.ndarray, np.ndarray]

REFERENCE = (
    "Cont, R. (2001). Empirical properties of asset returns: stylized facts and statistical issues. "
    "Quantitative Finance 1(2), 223-236."
)
CAVEAT = (
    "A minimal agent-based market with herding and performance-based switching (in the spirit of Brock & Hommes "
    "1998, Lux & Marchesi 1999, Franke & Westerhoff 2012), not a calibrated one: it reproduces the stylized fact "
    "qualitatively; magnitudes (tail index, decay of the absolute-return autocorrelation) differ from real "
    "markets'. The fact is measured on simulated daily-like periods, not on market data."
)


class Market(Simulation):
    """A heterogeneous-agent asset market (fundamentalists, chartists, noise traders, market maker)."""

    name = "market"
    description = (
        "Heterogeneous-agent asset market in discrete time. The log fundamental v follows a random walk with drift "
        "(fundamental_drift, fundamental_volatility). Each period the excess demand is D = (1-n)*phi*(v-p) + "
        "n*(chi*r_prev + sigma_c*e_c) + sigma_n*e_n: fundamentalists buy in proportion to the mispricing, chartists "
        "extrapolate the last log return with a dispersed (noisy) demand, and noise traders add random orders; a "
        "market maker moves the log price by r = mu*D. The chartist share n is a logit (discrete-choice) function "
        "n = 1/(1+exp(-beta*a)) of the attractiveness a = alpha_0 + alpha_h*(2n-1) + alpha_u*U of chartism: a "
        "predisposition, herding, and U, an exponentially weighted (memory eta) record of how well trend following "
        "has recently performed, 2*r_prev*r/(r_prev^2 + r^2), +1 when the last move continued and -1 when it "
        "reversed. Herding and the performance feedback make the chartist share, and with it the volatility, "
        "wander persistently: volatility clustering and fat-tailed returns. Fundamentalist mean reversion is slow "
        "(mu*phi*(1-n) per period), so phi and the fundamental's path set the mispricing rather than the daily "
        "volatility. Stability: n lies in (0, 1) and U in [-1, 1], and the legal ranges keep the chartist feedback "
        "mu*chi*n <= 0.75 < 1, so returns stay bounded in every legal configuration. References: Brock & Hommes (1998) "
        "for the intensity of choice, Lux & Marchesi (1999) for herding between strategies, Franke & Westerhoff "
        "(2012) for structured stochastic volatility from chartist dispersion; Cont (2001) for the stylized facts."
    )
    params = (
        Param(
            name="price_impact",
            low=0.002,
            high=0.03,
            unit="log price per unit demand",
            meaning="market maker's price impact mu: log return per unit of excess demand",
            role="driver",
            test_values=(0.005, 0.015, 0.02),
        ),
        Param(
            name="chartist_extrapolation",
            low=0.0,
            high=25.0,
            unit="demand per unit log return",
            meaning="chi: chartists' demand per unit of the last log return (trend extrapolation)",
            role="driver",
            test_values=(15.0, 25.0),
        ),
        Param(
            name="chartist_dispersion",
            low=0.0,
            high=5.0,
            unit="demand",
            meaning="sigma_c: standard deviation of the chartists' common demand noise (dispersed trend beliefs)",
            role="driver",
            test_values=(1.0, 3.0, 4.0),
        ),
        Param(
            name="noise_trader_volatility",
            low=0.05,
            high=3.0,
            unit="demand",
            meaning="sigma_n: standard deviation of the noise traders' random demand per period",
            role="driver",
            test_values=(1.0, 2.0),
        ),
        Param(
            name="predisposition",
            low=-2.0,
            high=1.0,
            unit="attractiveness",
            meaning="alpha_0: baseline attractiveness of chartism over fundamentalism (< 0 favours fundamentalism)",
            role="driver",
            test_values=(-1.0, -0.6, 0.0, 0.4),
        ),
        Param(
            name="performance_memory",
            low=0.5,
            high=0.995,
            unit="per period",
            meaning="eta: memory of the trend-following performance record (weight of the past per period)",
            role="driver",
            test_values=(0.8, 0.99),
        ),
        Param(
            name="intensity_of_choice",
            low=0.0,
            high=3.0,
            unit="1 / attractiveness",
            meaning="beta: intensity of choice of the logit switching rule (0: a fixed 50/50 split)",
        ),
        Param(
            name="fundamentalist_reaction",
            low=0.1,
            high=4.0,
            unit="demand per unit log mispricing",
            meaning="phi: fundamentalists' demand per unit of log undervaluation v - p",
            role="decoy",
            test_values=(0.2, 1.0, 2.0),
        ),
        Param(
            name="fundamental_volatility",
            low=0.0,
            high=0.012,
            unit="log value per period",
            meaning="sigma_v: standard deviation of the per-period news shocks to the log fundamental value",
            role="decoy",
            test_values=(0.0, 0.008, 0.012),
        ),
        Param(
            name="fundamental_drift",
            low=-0.0005,
            high=0.0005,
            unit="log value per period",
            meaning="growth rate g of the log fundamental value per period",
            role="decoy",
            test_values=(-0.0004, 0.0004),
        ),
        Param(
            name="herding",
            low=0.0,
            high=3.0,
            unit="attractiveness",
            meaning="alpha_h: herding, pull of the current majority strategy on the attractiveness of chartism",
        ),
        Param(
            name="performance_weight",
            low=0.0,
            high=10.0,
            unit="attractiveness",
            meaning="alpha_u: weight of the trend-following performance record in the attractiveness of chartism",
        ),
        Param(
            name="periods",
            low=1000,
            high=8000,
            kind="int",
            unit="periods",
            meaning=f"number of measured periods (after a discarded burn-in of {BURN_IN})",
        ),
    )
    control: ClassVar[Mapping[str, float]] = {
        "price_impact": 0.01,
        "chartist_extrapolation": 4.0,
        "chartist_dispersion": 2.0,
        "noise_trader_volatility": 0.5,
        "predisposition": -0.3,
        "performance_memory": 0.95,
        "intensity_of_choice": 1.0,
        "fundamentalist_reaction": 0.5,
        "fundamental_volatility": 0.002,
        "fundamental_drift": 0.0,
        "herding": 1.6,
        "performance_weight": 5.5,
        "periods": 4000,
    }
    metrics = (
        "volatility",
        "excess_kurtosis",
        "return_autocorr_lag1",
        "abs_return_autocorr",
        "mean_abs_mispricing",
        "chartist_share",
    )
    target = "volatility"

    def batch(self, config: Mapping[str, float], seeds: np.ndarray) -> np.ndarray:
        """Metric vectors, one row per seed, in the order of :attr:`metrics`.

        ``abs_return_autocorr`` is the mean autocorrelation of |r| over lags 1..10; ``mean_abs_mispricing`` the
        mean of |p - v|; ``chartist_share`` the mean chartist fraction n.
        """
        returns, mispricing, share = simulate(config, seeds)
        return np.stack(
            [
                returns.std(axis=1),
                excess_kurtosis(returns),
                autocorrelation(returns, 1)[:, 0],
                autocorrelation(np.abs(returns), MAX_LAG).mean(axis=1),
                np.abs(mispricing).mean(axis=1),
                share.mean(axis=1),
            ],
            axis=1,
        )

    def validate(self, plot_dir: Path | None = None) -> list[Check]:
        """Cont's (2001) three stylized facts on the control configuration over 24 seeds."""
        returns, _, _ = simulate(self.resolve(), np.asarray(VALIDATION_SEEDS, dtype=np.int64))
        checks = [heavy_tails_check(returns), clustering_check(returns), no_linear_autocorrelation_check(returns)]
        if plot_dir is not None:
            plot_stylized_facts(returns, Path(plot_dir) / f"{self.name}.png")
        return checks


def draw_noise(seeds: np.ndarray, length: int) -> np.ndarray:
    """Standard normal shocks, shape (3, length, replicates): chartist, noise-trader and fundamental news.

    Each replicate's draws come from its own generator, period by period, so a longer run extends a shorter one.
    """
    per_replicate = [rng.standard_normal((length, 3)) for rng in replicate_rngs(seeds)]
    return np.ascontiguousarray(np.stack(per_replicate).transpose(2, 1, 0))


def simulate(config: Mapping[str, float], seeds: np.ndarray) -> Series:
    """Log returns, mispricing p - v and chartist share over the measured periods, each (replicates, periods)."""
    length = BURN_IN + int(config["periods"])
    chartist_noise, trader_noise, news = draw_noise(seeds, length)
    chartist_noise *= config["chartist_dispersion"]
    trader_noise *= config["noise_trader_volatility"]
    # The fundamental is exogenous: its whole path is a cumulative sum, computed outside the time loop.
    value = np.cumsum(config["fundamental_drift"] + config["fundamental_volatility"] * news, axis=0)
    returns, mispricing, shares = trade(config, chartist_noise, trader_noise, value)
    return (measured(returns), measured(mispricing), measured(shares))


def measured(history: np.ndarray) -> np.ndarray:
    """The periods after the burn-in of a (periods, replicates) history, as a (replicates, periods) array."""
    return np.ascontiguousarray(history[BURN_IN:].T)


def trade(
    config: Mapping[str, float], chartist_noise: np.ndarray, trader_noise: np.ndarray, value: np.ndarray
) -> Series:
    """Run the market period by period; histories of returns, mispricing and chartist share, (periods, replicates).

    ``chartist_noise`` and ``trader_noise`` are the scaled demand shocks and ``value`` the log fundamental path,
    all (periods, replicates). The loop runs over time only; every operation is elementwise across replicates.
    """
    mu, chi, phi = config["price_impact"], config["chartist_extrapolation"], config["fundamentalist_reaction"]
    eta, beta = config["performance_memory"], config["intensity_of_choice"]
    # beta * (alpha_0 + alpha_h * (2n - 1) + alpha_u * U), expanded into constant + slope terms.
    bias = beta * (config["predisposition"] - config["herding"])
    herd, weight = 2.0 * beta * config["herding"], beta * config["performance_weight"]
    replicates = value.shape[1]
    price, last, record = np.zeros(replicates), np.zeros(replicates), np.zeros(replicates)
    share = np.full(replicates, 0.5)
    returns, mispricing, shares = np.empty_like(value), np.empty_like(value), np.empty_like(value)
    for t in range(value.shape[0]):
        demand = (1.0 - share) * phi * (value[t] - price) + share * (chi * last + chartist_noise[t]) + trader_noise[t]
        ret = mu * demand
        price = price + ret
        # Trend-following score: +1 if the move repeated the last one, -1 if reversed; scale-free and bounded.
        score = 2.0 * ret * last / (ret * ret + last * last + 1e-300)
        record = eta * record + (1.0 - eta) * score
        share = 1.0 / (1.0 + np.exp(-(bias + herd * share + weight * record)))
        last = ret
        returns[t], mispricing[t], shares[t] = ret, price - value[t], share
    return returns, mispricing, shares


def autocorrelation(series: np.ndarray, max_lag: int) -> np.ndarray:
    """Sample autocorrelation of each row at lags 1..max_lag, shape (rows, max_lag); 0 for a constant row."""
    centred = series - series.mean(axis=1, keepdims=True)
    variance = (centred * centred).sum(axis=1)
    safe = np.where(variance > 0.0, variance, 1.0)
    lags = [(centred[:, lag:] * centred[:, :-lag]).sum(axis=1) / safe for lag in range(1, max_lag + 1)]
    return np.where(variance[:, None] > 0.0, np.stack(lags, axis=1), 0.0)


def excess_kurtosis(series: np.ndarray) -> np.ndarray:
    """Excess kurtosis m4 / m2^2 - 3 of each row; 0 for a constant row."""
    centred = series - series.mean(axis=1, keepdims=True)
    m2 = (centred * centred).mean(axis=1)
    m4 = (centred**4).mean(axis=1)
    safe = np.where(m2 > 0.0, m2, 1.0)
    return np.where(m2 > 0.0, m4 / (safe * safe) - 3.0, 0.0)


def heavy_tails_check(returns: np.ndarray) -> Check:
    """Stylized fact 1: returns are heavy-tailed (positive excess kurtosis)."""
    measured = float(excess_kurtosis(returns).mean())
    return Check(
        simulation="market",
        name="heavy_tails",
        claim="log returns have heavy tails: mean excess kurtosis over seeds clearly positive",
        reference=REFERENCE,
        measured=measured,
        threshold="> 1",
        passed=measured > 1.0,
        caveat=CAVEAT + " Real daily returns show larger excess kurtosis (often 5 or more).",
    )


def clustering_check(returns: np.ndarray) -> Check:
    """Stylized fact 2: volatility clustering (positive autocorrelation of |r| over lags 1..10)."""
    per_lag = autocorrelation(np.abs(returns), MAX_LAG).mean(axis=0)
    measured = float(per_lag.mean())
    return Check(
        simulation="market",
        name="volatility_clustering",
        claim="absolute returns are positively autocorrelated over lags 1..10 (mean over seeds and lags)",
        reference=REFERENCE,
        measured=measured,
        threshold="> 0.05, and the seed mean > 0 at every lag 1..10",
        passed=measured > 0.05 and bool((per_lag > 0.0).all()),
        caveat=CAVEAT + " Clustering comes from the persistent chartist share, a regime-like mechanism.",
    )


def no_linear_autocorrelation_check(returns: np.ndarray) -> Check:
    """Stylized fact 3: no significant linear autocorrelation of returns at lags 1..10."""
    per_lag = autocorrelation(returns, MAX_LAG).mean(axis=0)
    measured = float(np.abs(per_lag).max())
    return Check(
        simulation="market",
        name="no_linear_autocorrelation",
        claim="log returns are nearly uncorrelated: |autocorrelation| (seed mean) small at every lag 1..10",
        reference=REFERENCE,
        measured=measured,
        threshold="< 0.1 (the largest over lags 1..10)",
        passed=measured < 0.1,
        caveat=CAVEAT + " Chartist extrapolation leaves a small positive lag-1 autocorrelation (about 0.02).",
    )


def plot_stylized_facts(returns: np.ndarray, path: Path) -> None:
    """Write the standardized-return density against a Gaussian and the autocorrelations of r and |r|."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    standardized = (returns - returns.mean(axis=1, keepdims=True)) / returns.std(axis=1, keepdims=True)
    edges = np.linspace(-8.0, 8.0, 81)
    density, _ = np.histogram(standardized.ravel(), bins=edges, density=True)
    centres = 0.5 * (edges[1:] + edges[:-1])
    lags = np.arange(1, PLOT_LAGS + 1)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    left.semilogy(centres[density > 0], density[density > 0], "o", ms=3, label="simulated returns")
    left.semilogy(centres, np.exp(-0.5 * centres**2) / np.sqrt(2.0 * np.pi), label="Gaussian, same variance")
    left.set(xlabel="standardized log return", ylabel="probability density (log scale)", ylim=(1e-6, 1.0))
    left.legend()
    right.plot(lags, autocorrelation(returns, PLOT_LAGS).mean(axis=0), "o-", ms=3, label="returns r")
    right.plot(lags, autocorrelation(np.abs(returns), PLOT_LAGS).mean(axis=0), "s-", ms=3, label="|r|")
    right.axhline(0.0, color="grey", lw=0.8)
    right.set(xlabel="lag (periods)", ylabel="autocorrelation (mean over seeds)")
    right.legend()
    fig.suptitle(f"market at control: stylized facts ({returns.shape[0]} seeds, {returns.shape[1]} periods each)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


SIMULATION = Market()
