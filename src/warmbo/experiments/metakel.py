"""Reproduction of Meta-KeL's experiments (000 Appendix E, Figures 4, 5 and 8, and Thm 4 / Prop. 6).

All experiments use the synthetic Legendre setup of :mod:`warmbo.problems.legendre` (p = 20
Legendre features on [-1, 1], |J*| = 5, ``||f||_{k*} = B = 10``, noise sd 0.01, m = n = 50 meta-tasks
and points, lambda = 0.03) and compare three kernels: the oracle ``k*``, the meta-learned ``k_hat``
(:class:`warmbo.MetaKeL`, eq. 7) and the conservative ``k_full = 1/p sum_j k_j`` (eq. A.1).

- :func:`calibration` (Fig. 4): per run a fresh setup, meta-data and target; GP posteriors from 4
  noisy i.i.d. points (noise variance ``noise^2``); empirical coverage of the central
  alpha-intervals ``mu +/- z_{(1+alpha)/2} sd`` at 1000 uniform test points, and sharpness = mean
  posterior variance. The kernel's scale sets the posterior width and 000 does not say which scale
  its figure used, so the kernels appear at the scale they come with (``k*`` with weights summing
  to 1; ``k_hat`` as MetaKeL builds it, ``c1 = min`` active weight so every weight is >= 1, and
  normalised like k* with ``normalize="sum"``; ``k_full``) and multiplied by ``B^2/s``, the factor
  that makes a draw of ``GP(0, k*)`` have ``E ||f||_{k*}^2 = B^2`` like the targets.
- :func:`regret` (Fig. 5): a fixed setup; per instance fresh meta-data and target; GP-UCB on a grid
  of points in [-1, 1] for T rounds with the regulariser ``sbar^2``, ``sbar = 1 + 2/T`` (eq. 2), and
  ``beta_t = nu_t^2`` of Cor. 7 (:class:`warmbo.bounds.MetaKeLBound`) for every kernel:
  ``k_hat`` with ``meta.bound(B, sigma, T)`` (d_hat = |J_hat|, c1 = MetaKeL's c1); ``k*`` with the
  oracle bound that 000 states after Thm 5 (d = |J*|, c1 = 1); ``k_full`` with d = p and c1 = p
  (its weights are 1/p = 1/c1, the form of Lemma 13), once with the same B (the arm "k_full") and
  once with the bound ``sqrt(p) B`` that is valid for ``||f||_{k_full}``
  (``||f||_{k_full}^2 = p sum_j eta*_j beta_j^2 <= p B^2``; arm "k_full (sqrt(p) B)").
  Simple regret ``r_t = f* - max_{tau<=t} f(x_tau)`` and cumulative inference regret
  ``R_t = sum_{tau<=t} f* - f(argmax_x mu_{tau-1}(x))``: 000 App. E writes ``max_x mu_{tau-1}(x)``
  (the value of the mean), which is not a regret of any point; we take the true value at the
  maximiser of the mean (the inference regret of :mod:`warmbo.problems.regret`). At tau = 1 the
  mean is the prior mean 0 and its "maximiser" is the first grid point, the same for every kernel.
  ``f*`` is the optimum over the grid. GP-UCB maximises ``-f`` (it minimises the target, as 000
  Fig. 7 does): with the non-negative coefficients of App. E the maximiser of ``f`` is always
  x = 1, and every kernel finds it in two rounds.
- :func:`lambda_sweep` (Fig. 8): the regret experiment for ``k_hat`` only, over several lambda, on
  the same instances for every lambda.
- :func:`support_recovery` (Thm 4, Prop. 6): how often ``J_hat == J*`` and ``J_hat ⊇ J*`` and the
  mean ``|J_hat|`` as m and n grow, with the theory-backed lambda (``MetaKeL(noise=0.01)``) and with
  lambda = 0.03. "identifiable" counts the runs in which every kernel of J* is used by at least one
  meta-task (000 Section 2 assumes this; with few tasks it can fail by chance).

Every run is a pure function of ``(seed, experiment, run index)`` and runs with BLAS limited to one
thread, so the results do not depend on ``workers``. :func:`run_metakel` runs all four, writes
``results.json``, ``calibration.png``, ``regret.png``, ``lambda.png``, ``support.png`` and a
self-contained ``report.html``.

Why this file is long: four experiments of 000 (calibration, regret, lambda sweep, support recovery)
share one setup and one result type; the plots and report live in :mod:`.metakel_report`. The GP-UCB loop
:func:`gp_ucb` stays here rather than in :func:`warmbo.suggest.suggest` on purpose: 000's algorithm (eq.
A.2) maximises over the whole grid, may query a point again and recommends the posterior mean's argmax,
while ``suggest`` excludes evaluated points by design.
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from scipy.special import ndtri

from .._validation import check_int
from ..acquisition import UCB, PosteriorMean
from ..bounds import MetaKeLBound
from ..maximize import maximize
from ..models import GP
from ..problems.legendre import LegendreSetup
from ..problems.regret import cumulative_inference_regret, simple_regret
from ..space import Space
from ..transfer.metakel import MetaKeL, full_kernel
from ._runner import close_pool, execute, process_pool, warning_texts
from .metakel_report import plot_calibration, plot_regret, plot_support, summary, write_metakel_report

__all__ = [
    "summary",
    "ALPHAS",
    "LAMBDAS",
    "Calibration",
    "CalibrationRun",
    "LambdaSweep",
    "MetaKeLReproduction",
    "Regret",
    "RegretRun",
    "SupportRecovery",
    "SupportRow",
    "SupportRun",
    "calibration",
    "calibration_run",
    "lambda_sweep",
    "regret",
    "regret_run",
    "run_metakel",
    "support_recovery",
    "support_run",
]

#: Confidence levels of the calibration plot.
ALPHAS = tuple(round(a, 2) for a in np.arange(0.05, 0.951, 0.05)) + (0.99,)
#: Lambda values of Fig. 8.
LAMBDAS = (0.003, 0.01, 0.03, 0.1, 0.3)
#: Kernels of the calibration experiment.
CALIBRATION_KERNELS = (
    "k*",
    "k_hat",
    "k_hat (sum=1)",
    "k_full",
    "k* x B^2/s",
    "k_hat (sum=1) x B^2/s",
    "k_full x B^2/s",
)
#: The kernels at the scale they come with, and multiplied by B^2/s (a GP draw then has E||f||_k*^2 = B^2).
NATURAL_SCALE, MATCHED_SCALE = CALIBRATION_KERNELS[:4], CALIBRATION_KERNELS[4:]
#: Arms of the regret experiment.
REGRET_KERNELS = ("k*", "k_hat", "k_full", "k_full (sqrt(p) B)")

# Experiment ids in the seeds, so that the experiments never share random streams.
_CALIBRATION, _REGRET, _SUPPORT = 1, 2, 4


# ---------------------------------------------------------------------------------------------- runs
@dataclass
class CalibrationRun:
    """One run of the calibration experiment: coverage per kernel (one value per alpha) and sharpness."""

    setup_seed: int
    coverage: dict[str, list[float]]
    sharpness: dict[str, float]
    support_exact: bool
    support_superset: bool
    support_size: int
    warnings: list[str] = field(default_factory=list)


@dataclass
class RegretRun:
    """One GP-UCB instance: simple and cumulative inference regret (length T) per kernel."""

    simple: dict[str, list[float]]
    cumulative_inference: dict[str, list[float]]
    nu_1: dict[str, float]
    support_exact: bool
    support_superset: bool
    support_size: int
    warnings: list[str] = field(default_factory=list)


@dataclass
class SupportRun:
    """One support-recovery run: per lambda rule, whether J_hat == J*, J_hat ⊇ J*, |J_hat|, lambda."""

    m: int
    n: int
    identifiable: bool
    exact: dict[str, bool]
    superset: dict[str, bool]
    size: dict[str, int]
    lam: dict[str, float]
    warnings: list[str] = field(default_factory=list)


def _support_stats(meta: MetaKeL, setup: LegendreSetup) -> tuple[bool, bool, int]:
    found = set(meta.support_.tolist())
    true = set(setup.support.tolist())
    return found == true, true <= found, len(found)


def calibration_run(
    index: int,
    seed: int = 0,
    *,
    m: int = 50,
    n: int = 50,
    lam: float = 0.03,
    n_train: int = 4,
    n_test: int = 1000,
    alphas: Sequence[float] = ALPHAS,
) -> CalibrationRun:
    """One calibration run (Fig. 4): a fresh setup, meta-data, target, 4 training and n_test test points."""
    rng = np.random.default_rng([seed, _CALIBRATION, index])
    setup = LegendreSetup(seed=int(rng.integers(2**31)))
    base = list(setup.base)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tasks = setup.meta_data(m, n, rng)
        meta = MetaKeL(base, lam=lam).fit(tasks)
        meta_sum = MetaKeL(base, lam=lam, normalize="sum").fit(tasks)
        f = setup.sample_function(rng)
        X = rng.uniform(-1.0, 1.0, size=(n_train, 1))
        y = setup.observe(f, X, rng)
        X_test = rng.uniform(-1.0, 1.0, size=(n_test, 1))
        f_test = f(X_test)
        kernels = {
            "k*": setup.k_star,
            "k_hat": meta.kernel_,
            "k_hat (sum=1)": meta_sum.kernel_,
            "k_full": full_kernel(base),
        }
        scale = setup.B**2 / setup.s
        kernels |= {f"{name} x B^2/s": scale * kernels[name] for name in ("k*", "k_hat (sum=1)", "k_full")}
        z = ndtri((1.0 + np.asarray(alphas)) / 2.0)
        coverage, sharpness = {}, {}
        for name, kernel in kernels.items():
            mean, sd = GP(kernel, noise=setup.noise**2).fit(X, y).predict(X_test)
            error = np.abs(f_test - mean)
            coverage[name] = [float(np.mean(error <= zi * sd)) for zi in z]
            sharpness[name] = float(np.mean(sd**2))
    exact, superset, size = _support_stats(meta, setup)
    return CalibrationRun(setup.seed, coverage, sharpness, exact, superset, size, warning_texts(caught))


class _OnGrid:
    """A bound acquisition evaluated on a grid space's encoding: ``acq(lower + U * width)``.

    The Legendre features live on [-1, 1], the space's encoding on [0, 1]; the GP is fitted on
    the original inputs, so the maximiser's candidates are mapped back before evaluation.
    """

    def __init__(self, acq, lower: float, width: float):
        self.acq, self.lower, self.width = acq, lower, width

    def __call__(self, U):
        return self.acq(self.lower + np.asarray(U) * self.width)


def gp_ucb(f, kernel, schedule, grid: np.ndarray, T: int, noise: float, regulariser: float, seed) -> dict:
    """GP-UCB on a finite grid (000 eq. A.2): returns the f values of the queries and of the mean's argmax.

    Round t: ``x_t = argmax mu_{t-1} + sqrt(beta_t) sigma_{t-1}`` and ``x_hat_t = argmax mu_{t-1}``
    over the grid (:func:`warmbo.maximize.maximize` on :meth:`Space.grid`); the observation is
    ``f(x_t) + N(0, noise^2)``; the GP's regulariser is ``regulariser``.
    """
    rng = np.random.default_rng(seed)
    space = Space.grid(grid, names=["x"])
    lower, width = float(grid.min()), float(grid.max() - grid.min())
    gp = GP(kernel, noise=regulariser)
    queried, recommended = [], []
    for _ in range(T):
        ucb = _OnGrid(UCB(schedule).bind(gp), lower, width)
        mean = _OnGrid(PosteriorMean().bind(gp), lower, width)
        x = space.decode(maximize(ucb, space).x)[0]["x"]
        x_hat = space.decode(maximize(mean, space).x)[0]["x"]
        value = float(f(np.array([x]))[0])
        queried.append(value)
        recommended.append(float(f(np.array([x_hat]))[0]))
        gp.add(np.array([[x]]), np.array([value + noise * rng.standard_normal()]))
    return {"queried": queried, "recommended": recommended}


class _negated:
    def __init__(self, f):
        self.f = f

    def __call__(self, x):
        return -self.f(x)


def regret_run(
    index: int,
    seed: int = 0,
    *,
    setup_seed: int = 0,
    m: int = 50,
    n: int = 50,
    lam: float = 0.03,
    T: int = 50,
    grid_size: int = 1000,
    delta: float = 0.1,
    kernels: Sequence[str] = REGRET_KERNELS,
    minimize: bool = True,
) -> RegretRun:
    """One GP-UCB instance (Fig. 5) on the fixed setup ``LegendreSetup(seed=setup_seed)``.

    The instance's meta-data and target come from ``(seed, index)`` (not from lam or kernels, so a
    lambda sweep runs every lambda on the same instances); every kernel sees the same noise.
    ``minimize=True`` (default) optimises ``-f``, i.e. minimises the target as 000 Fig. 7 does:
    maximising it is trivial, its maximiser is always x = 1 (:meth:`LegendreFunction.maximum`).
    """
    unknown = set(kernels) - set(REGRET_KERNELS)
    if unknown:
        raise ValueError(f"unknown kernels {sorted(unknown)}; choose from {list(REGRET_KERNELS)}")
    setup = LegendreSetup(seed=setup_seed)
    base = list(setup.base)
    rng = np.random.default_rng([seed, _REGRET, index])
    grid = np.linspace(-1.0, 1.0, grid_size)[:, None]
    B, sigma = setup.B, setup.noise
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tasks = setup.meta_data(m, n, rng)
        f = setup.sample_function(rng)
        meta = MetaKeL(base, lam=lam, delta=delta).fit(tasks)
        p = setup.p
        arms = {
            "k*": lambda: (setup.k_star, MetaKeLBound(B, sigma, d_hat=setup.s, c1=1.0, T=T, delta=delta)),
            "k_hat": lambda: (meta.kernel_, meta.bound(B=B, sigma=sigma, T=T)),
            "k_full": lambda: (
                full_kernel(base),
                MetaKeLBound(B, sigma, d_hat=p, c1=float(p), T=T, delta=delta),
            ),
            "k_full (sqrt(p) B)": lambda: (
                full_kernel(base),
                MetaKeLBound(float(np.sqrt(p)) * B, sigma, d_hat=p, c1=float(p), T=T, delta=delta),
            ),
        }
        objective = _negated(f) if minimize else f
        f_star = -f.minimum(grid) if minimize else f.maximum(grid)
        simple, cumulative, nu_1 = {}, {}, {}
        for name in kernels:
            kernel, schedule = arms[name]()
            trace = gp_ucb(
                objective, kernel, schedule, grid, T, sigma, schedule.regulariser, [seed, _REGRET, index, 1]
            )
            simple[name] = simple_regret(trace["queried"], f_star).tolist()
            cumulative[name] = cumulative_inference_regret(trace["recommended"], f_star).tolist()
            nu_1[name] = schedule.nu_t(1)
    exact, superset, size = _support_stats(meta, setup)
    return RegretRun(simple, cumulative, nu_1, exact, superset, size, warning_texts(caught))


def support_run(index: int, seed: int = 0, *, m: int, n: int, lam: float = 0.03) -> SupportRun:
    """One support-recovery run: fresh setup and (m, n) meta-data; MetaKeL with the theory lambda and lam."""
    rng = np.random.default_rng([seed, _SUPPORT, m, n, index])
    setup = LegendreSetup(seed=int(rng.integers(2**31)))
    exact, superset, size, lams = {}, {}, {}, {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tasks, functions = setup.meta_functions(m, n, rng)
        used = set().union(*(set(g.support.tolist()) for g in functions))
        identifiable = set(setup.support.tolist()) <= used
        for rule, options in (("theory", {"noise": setup.noise}), (f"{lam:g}", {"lam": lam})):
            meta = MetaKeL(list(setup.base), **options).fit(tasks)
            exact[rule], superset[rule], size[rule] = _support_stats(meta, setup)
            lams[rule] = float(meta.lam_)
    return SupportRun(m, n, identifiable, exact, superset, size, lams, warning_texts(caught))


# ---------------------------------------------------------------------------------------------- running
def _mean_sd(rows) -> tuple[list[float], list[float]]:
    arr = np.asarray(rows, dtype=np.float64)
    return arr.mean(axis=0).tolist(), arr.std(axis=0).tolist()


# ---------------------------------------------------------------------------------------------- experiments
@dataclass
class Calibration:
    """Fig. 4: coverage (mean and sd over runs, per alpha) and sharpness per kernel."""

    alphas: list[float]
    kernels: list[str]
    settings: dict
    coverage_mean: dict[str, list[float]]
    coverage_sd: dict[str, list[float]]
    sharpness_mean: dict[str, float]
    sharpness_sd: dict[str, float]
    worst_gap: dict[str, float]
    support_exact: float
    support_superset: float
    runs: list[CalibrationRun]

    def coverage_at(self, kernel: str, alpha: float) -> float:
        """Mean coverage of ``kernel`` at the level ``alpha`` (one of :attr:`alphas`)."""
        return self.coverage_mean[kernel][int(np.argmin(np.abs(np.asarray(self.alphas) - alpha)))]


def calibration(
    runs: int = 50,
    seed: int = 0,
    *,
    m: int = 50,
    n: int = 50,
    lam: float = 0.03,
    n_train: int = 4,
    n_test: int = 1000,
    alphas: Sequence[float] = ALPHAS,
    workers: int | Executor = 1,
    progress=None,
) -> Calibration:
    """The calibration and sharpness experiment (000 Fig. 4); see the module docstring."""
    settings = {"runs": runs, "seed": seed, "m": m, "n": n, "lam": lam, "n_train": n_train, "n_test": n_test}
    jobs = [
        {
            "index": i,
            "seed": seed,
            "m": m,
            "n": n,
            "lam": lam,
            "n_train": n_train,
            "n_test": n_test,
            "alphas": alphas,
        }
        for i in range(runs)
    ]
    results: list[CalibrationRun] = execute(calibration_run, jobs, workers, progress, "calibration (Fig. 4)")
    mean, sd, sharp_mean, sharp_sd, gap = {}, {}, {}, {}, {}
    for name in CALIBRATION_KERNELS:
        mean[name], sd[name] = _mean_sd([r.coverage[name] for r in results])
        sharp = np.array([r.sharpness[name] for r in results])
        sharp_mean[name], sharp_sd[name] = float(sharp.mean()), float(sharp.std())
        gap[name] = float(np.min(np.asarray(mean[name]) - np.asarray(alphas)))
    return Calibration(
        alphas=[float(a) for a in alphas],
        kernels=list(CALIBRATION_KERNELS),
        settings=settings,
        coverage_mean=mean,
        coverage_sd=sd,
        sharpness_mean=sharp_mean,
        sharpness_sd=sharp_sd,
        worst_gap=gap,
        support_exact=float(np.mean([r.support_exact for r in results])),
        support_superset=float(np.mean([r.support_superset for r in results])),
        runs=results,
    )


@dataclass
class Regret:
    """Fig. 5: simple and cumulative inference regret per kernel (mean and sd over instances, per round)."""

    kernels: list[str]
    settings: dict
    setup: dict
    simple_mean: dict[str, list[float]]
    simple_sd: dict[str, list[float]]
    cumulative_mean: dict[str, list[float]]
    cumulative_sd: dict[str, list[float]]
    nu_1: dict[str, float]
    support_exact: float
    support_superset: float
    runs: list[RegretRun]

    def final(self) -> dict[str, dict[str, float]]:
        """Per kernel: mean and sd of r_T and R_T."""
        return {
            name: {
                "simple": self.simple_mean[name][-1],
                "simple_sd": self.simple_sd[name][-1],
                "cumulative": self.cumulative_mean[name][-1],
                "cumulative_sd": self.cumulative_sd[name][-1],
            }
            for name in self.kernels
        }


def _regret_jobs(instances, seed, setup_seed, m, n, lam, T, grid_size, kernels):
    return [
        {
            "index": i,
            "seed": seed,
            "setup_seed": setup_seed,
            "m": m,
            "n": n,
            "lam": lam,
            "T": T,
            "grid_size": grid_size,
            "kernels": tuple(kernels),
        }
        for i in range(instances)
    ]


def _summarise_regret(results: list[RegretRun], kernels, settings, setup: LegendreSetup) -> Regret:
    simple_mean, simple_sd, cum_mean, cum_sd = {}, {}, {}, {}
    for name in kernels:
        simple_mean[name], simple_sd[name] = _mean_sd([r.simple[name] for r in results])
        cum_mean[name], cum_sd[name] = _mean_sd([r.cumulative_inference[name] for r in results])
    return Regret(
        kernels=list(kernels),
        settings=settings,
        setup={"seed": setup.seed, "support": setup.support.tolist(), "eta": setup.eta.tolist()},
        simple_mean=simple_mean,
        simple_sd=simple_sd,
        cumulative_mean=cum_mean,
        cumulative_sd=cum_sd,
        nu_1={name: float(np.mean([r.nu_1[name] for r in results])) for name in kernels},
        support_exact=float(np.mean([r.support_exact for r in results])),
        support_superset=float(np.mean([r.support_superset for r in results])),
        runs=results,
    )


def regret(
    instances: int = 100,
    seed: int = 0,
    *,
    setup_seed: int | None = None,
    m: int = 50,
    n: int = 50,
    lam: float = 0.03,
    T: int = 50,
    grid_size: int = 1000,
    kernels: Sequence[str] = REGRET_KERNELS,
    workers: int | Executor = 1,
    progress=None,
) -> Regret:
    """The GP-UCB regret experiment (000 Fig. 5) on one fixed setup (``setup_seed``, default ``seed``)."""
    setup_seed = seed if setup_seed is None else setup_seed
    settings = {
        "instances": instances,
        "seed": seed,
        "m": m,
        "n": n,
        "lam": lam,
        "T": T,
        "grid_size": grid_size,
    }
    jobs = _regret_jobs(instances, seed, setup_seed, m, n, lam, T, grid_size, kernels)
    results = execute(regret_run, jobs, workers, progress, "GP-UCB regret (Fig. 5)")
    return _summarise_regret(results, kernels, settings, LegendreSetup(seed=setup_seed))


@dataclass
class LambdaSweep:
    """Fig. 8: the regret of GP-UCB with k_hat for several lambda (same instances for every lambda)."""

    lambdas: list[float]
    settings: dict
    results: dict[str, Regret]

    def final(self) -> dict[str, dict[str, float]]:
        """Per lambda: mean and sd of r_T and R_T, mean |J_hat| and the fraction with J_hat ⊇ J*."""
        out = {}
        for key, res in self.results.items():
            row = res.final()["k_hat"]
            row["support_size"] = float(np.mean([r.support_size for r in res.runs]))
            row["support_superset"] = res.support_superset
            out[key] = row
        return out


def lambda_sweep(
    instances: int = 20,
    seed: int = 0,
    *,
    lambdas: Sequence[float] = LAMBDAS,
    setup_seed: int | None = None,
    m: int = 50,
    n: int = 50,
    T: int = 50,
    grid_size: int = 1000,
    workers: int | Executor = 1,
    progress=None,
) -> LambdaSweep:
    """GP-UCB with k_hat for each lambda in ``lambdas`` (000 Fig. 8)."""
    setup_seed = seed if setup_seed is None else setup_seed
    jobs, keys = [], []
    for lam in lambdas:
        jobs += _regret_jobs(instances, seed, setup_seed, m, n, lam, T, grid_size, ("k_hat",))
        keys += [f"{lam:g}"] * instances
    results = execute(regret_run, jobs, workers, progress, "lambda sweep (Fig. 8)")
    setup = LegendreSetup(seed=setup_seed)
    by_lambda = {}
    for lam in lambdas:
        key = f"{lam:g}"
        settings = {
            "instances": instances,
            "seed": seed,
            "m": m,
            "n": n,
            "lam": lam,
            "T": T,
            "grid_size": grid_size,
        }
        runs = [r for r, k in zip(results, keys, strict=True) if k == key]
        by_lambda[key] = _summarise_regret(runs, ("k_hat",), settings, setup)
    settings = {"instances": instances, "seed": seed, "m": m, "n": n, "T": T, "grid_size": grid_size}
    return LambdaSweep([float(lam) for lam in lambdas], settings, by_lambda)


@dataclass
class SupportRow:
    """Support recovery at one (m, n) with one lambda rule, over seeds."""

    m: int
    n: int
    rule: str
    lam: float
    exact: float
    superset: float
    mean_size: float
    identifiable: float
    runs: int


@dataclass
class SupportRecovery:
    """Thm 4 / Prop. 6: rows per (rule, m, n)."""

    ms: list[int]
    ns: list[int]
    rules: list[str]
    settings: dict
    rows: list[SupportRow]
    runs: list[SupportRun]

    def table(self, rule: str, what: str) -> list[list[float]]:
        """``what`` ("exact", "superset", "mean_size", "lam") as an (len(ms), len(ns)) nested list."""
        cell = {(r.m, r.n): getattr(r, what) for r in self.rows if r.rule == rule}
        return [[cell[(m, n)] for n in self.ns] for m in self.ms]


def support_recovery(
    ms: Sequence[int] = (5, 10, 25, 50),
    ns: Sequence[int] = (5, 10, 25, 50),
    seeds: int = 20,
    seed: int = 0,
    *,
    lam: float = 0.03,
    workers: int | Executor = 1,
    progress=None,
) -> SupportRecovery:
    """How often MetaKeL recovers J* (000 Thm 4, Prop. 6), over ``seeds`` fresh setups per (m, n)."""
    jobs = [
        {"index": i, "seed": seed, "m": m, "n": n, "lam": lam} for m in ms for n in ns for i in range(seeds)
    ]
    results: list[SupportRun] = execute(support_run, jobs, workers, progress, "support recovery (Thm 4)")
    rules = ["theory", f"{lam:g}"]
    rows = []
    for rule in rules:
        for m in ms:
            for n in ns:
                cell = [r for r in results if r.m == m and r.n == n]
                rows.append(
                    SupportRow(
                        m=m,
                        n=n,
                        rule=rule,
                        lam=float(np.mean([r.lam[rule] for r in cell])),
                        exact=float(np.mean([r.exact[rule] for r in cell])),
                        superset=float(np.mean([r.superset[rule] for r in cell])),
                        mean_size=float(np.mean([r.size[rule] for r in cell])),
                        identifiable=float(np.mean([r.identifiable for r in cell])),
                        runs=len(cell),
                    )
                )
    settings = {"seeds": seeds, "seed": seed, "lam": lam}
    return SupportRecovery(list(ms), list(ns), rules, settings, rows, results)


# ---------------------------------------------------------------------------------------------- all of it
@dataclass
class MetaKeLReproduction:
    """Everything :func:`run_metakel` measured (``asdict`` gives the JSON written to results.json)."""

    settings: dict
    calibration: Calibration
    regret: Regret
    lambdas: LambdaSweep
    support: SupportRecovery
    seconds: dict[str, float]

    def headline(self) -> dict:
        """The numbers the documentation quotes: coverage, sharpness, final regrets, recovery."""
        cal = self.calibration
        return {
            "coverage": {
                name: {f"{a:g}": cal.coverage_at(name, a) for a in (0.5, 0.8, 0.9, 0.95)}
                for name in cal.kernels
            },
            "worst_calibration_gap": cal.worst_gap,
            "sharpness": cal.sharpness_mean,
            "regret_final": self.regret.final(),
            "lambda_final": self.lambdas.final(),
            "support_at_largest_mn": {
                rule: next(
                    {"exact": r.exact, "superset": r.superset, "mean_size": r.mean_size, "lam": r.lam}
                    for r in self.support.rows
                    if r.rule == rule and r.m == max(self.support.ms) and r.n == max(self.support.ns)
                )
                for rule in self.support.rules
            },
            "seconds": self.seconds["total"],
        }


def run_metakel(
    out: str | Path,
    runs_calibration: int | None = None,
    runs_regret: int | None = None,
    T: int = 50,
    workers: int = 1,
    quick: bool = False,
    progress=None,
    *,
    runs_lambda: int | None = None,
    runs_support: int | None = None,
    seed: int = 0,
) -> MetaKeLReproduction:
    """Run all four experiments and write results.json, the PNG plots and report.html into ``out``.

    The run counts left at None are the paper's: 50 calibration runs, 100 regret instances, 20
    instances per lambda and 20 seeds per support cell. ``quick=True`` shrinks everything (T = 10,
    coarse grids and, where not given, 4 / 3 / 2 / 2 runs) to check the pipeline in seconds; its
    numbers are not meant to be read. Run counts that are given are kept under ``quick`` too.
    """
    if quick:
        counts = (4, 3, 2, 2)
        T, grid_size, n_test, lambdas, ms, ns = 10, 200, 200, (0.01, 0.1), (5, 50), (5, 50)
    else:
        counts = (50, 100, 20, 20)
        grid_size, n_test, lambdas, ms, ns = 1000, 1000, LAMBDAS, (5, 10, 25, 50), (5, 10, 25, 50)
    runs_calibration, runs_regret, runs_lambda, runs_support = (
        default if given is None else given
        for given, default in zip(
            (runs_calibration, runs_regret, runs_lambda, runs_support), counts, strict=True
        )
    )
    for name, value in (
        ("runs_calibration", runs_calibration),
        ("runs_regret", runs_regret),
        ("runs_lambda", runs_lambda),
        ("runs_support", runs_support),
        ("T", T),
        ("workers", workers),
    ):
        check_int(value, name, 1)
    out = Path(out)
    settings = {
        "quick": quick,
        "seed": seed,
        "workers": workers,
        "runs_calibration": runs_calibration,
        "runs_regret": runs_regret,
        "runs_lambda": runs_lambda,
        "runs_support": runs_support,
        "T": T,
        "grid_size": grid_size,
        "n_test": n_test,
        "setup": {"p": 20, "s": 5, "B": 10.0, "noise": 0.01, "m": 50, "n": 50, "lam": 0.03},
    }
    seconds = {}
    start = time.perf_counter()
    pool = process_pool(workers) if workers > 1 else 1
    try:
        t0 = time.perf_counter()
        cal = calibration(runs_calibration, seed, n_test=n_test, workers=pool, progress=progress)
        seconds["calibration"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        reg = regret(runs_regret, seed, T=T, grid_size=grid_size, workers=pool, progress=progress)
        seconds["regret"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        sweep = lambda_sweep(
            runs_lambda, seed, lambdas=lambdas, T=T, grid_size=grid_size, workers=pool, progress=progress
        )
        seconds["lambda_sweep"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        support = support_recovery(ms, ns, runs_support, seed, workers=pool, progress=progress)
        seconds["support_recovery"] = time.perf_counter() - t0
    except BaseException:  # (Ctrl-C: the queued runs are not made, the workers end now)
        close_pool(pool, interrupted=True)
        raise
    close_pool(pool)
    seconds["total"] = time.perf_counter() - start
    result = MetaKeLReproduction(settings, cal, reg, sweep, support, seconds)
    out.mkdir(parents=True, exist_ok=True)
    payload = asdict(result) | {"headline": result.headline()}
    (out / "results.json").write_text(json.dumps(payload, indent=1))
    plot_calibration(cal, out / "calibration.png")
    plot_regret(reg, out / "regret.png", title="GP-UCB regret (Fig. 5)")
    plot_regret(
        {f"lambda = {key}": res for key, res in sweep.results.items()},
        out / "lambda.png",
        title="GP-UCB with k_hat for several lambda (Fig. 8)",
    )
    plot_support(support, out / "support.png")
    write_metakel_report(result, out)
    return result
