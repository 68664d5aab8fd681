"""Model and search variants of the default optimizer on the quality problems (issue 15, session 8).

Each arm is ``warmbo.Optimizer`` with its defaults except one thing; 10 seeds, 50 evaluations, the
median simple regret after 10, 25 and 50 evaluations and every seed's regret after 50:

- ``default``: the optimizer's default model (since session 9 the ``map-mean`` arm's);
- ``ml2``: the default before session 9 (``warmbo.models.ml2_model``: ``Constant * Matern-5/2`` ARD,
  plain ML-II, lengthscales in 1e-2..1e2, the data's mean as prior mean);
- ``cap2``: the same with the lengthscales' upper bound 2 on the unit cube;
- ``map``: MAP under the dimension-scaled log-normal prior (``warmbo.models.hyperprior.DIMENSION_SCALED``,
  the density of the lengthscales themselves as BoTorch optimises it, mode ``exp(mu - 3)``);
- ``map-log``: the same priors read as densities of the log lengthscales (mode ``exp(mu)``, 20 times
  longer; ``DIMENSION_SCALED_LOG``, what ``map`` was in session 8);
- ``optuna-prior``: MAP under the priors of Optuna's GPSampler (``optuna/_gp/prior.py``: gamma-shaped
  priors on the inverse squared lengthscales, the amplitude and the noise), written out below;
- ``botorch-model``: BoTorch's standard model inside warmbo's loop (RBF without an amplitude, the
  dimension-scaled prior as BoTorch reads it, lengthscales started at its mode and bounded below by
  0.025, noise above 1e-4); ``botorch-model-log`` with the log reading (session 8's arm);
- ``botorch-model-mean``: ``botorch-model`` with a fitted constant prior mean (``GP(fit_mean=True)``,
  BoTorch's ``ConstantMean``); ``map-mean`` and ``mean``: ``map`` and ``ml2`` with it;
- ``rbf``: ``Constant * RBF`` instead of Matern-5/2;
- ``sobol-only``: the acquisition searched from Sobol candidates only, none around the incumbents
  (with the ``ml2`` model, the default when it was measured);

Problems: the quality section's names (``hartmann6``, ``griewank-10``...) and ``emb:NAME:D``, the
problem on D coordinates of which only its own matter (the others irrelevant, shuffled by a fixed
permutation). Examples (a line per arm and problem; about 10 s each on 2 cores):

    python bench/model_variants.py --arm default --arm cap2 --problem griewank-10 --problem emb:branin:6
    python bench/model_variants.py --arm map --problem levy-10 --out bench/results/model_variants.json
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

import warmbo as wb
from warmbo.benchmarks.quality import problem
from warmbo.kernels import RBF, Constant, Matern
from warmbo.models import GP, ml2_model
from warmbo.models.hyperprior import DIMENSION_SCALED, DIMENSION_SCALED_LOG

BUDGETS = (10, 25, 50)


class OptunaPrior:
    """Optuna GPSampler's log prior as a warmbo hyperprior (minus its log density and gradient in
    log parameters; like Optuna, the density of the parameters themselves, no log-Jacobian)."""

    def penalty(self, names, params, fit_noise, dim):
        params = np.asarray(params, dtype=np.float64)
        grad = np.zeros_like(params)
        value = 0.0
        for j, name in enumerate(names):
            t = params[j]
            if "lengthscale" in name:  # u = l^-2 = exp(-2 t); -log p = 0.1 / u + 0.1 u
                a, b = 0.1 * math.exp(2 * t), 0.1 * math.exp(-2 * t)
                value += a + b
                grad[j] = 2 * a - 2 * b
            elif name.endswith("value"):  # amplitude s = exp(t), Gamma(2, 1): -log p = s - log s
                value += math.exp(t) - t
                grad[j] = math.exp(t) - 1
        if fit_noise:  # noise variance v = exp(p), Gamma(1.1, 30): -log p = 30 v - 0.1 log v
            p = params[len(names)]
            value += 30 * math.exp(p) - 0.1 * p
            grad[len(names)] = 30 * math.exp(p) - 0.1
        return float(value), grad

    def log_density(self, kernel, noise_level, dim):
        params = list(kernel.theta)
        if noise_level is not None:
            params.append(math.log(noise_level))
        return -self.penalty(kernel.theta_names, np.array(params), noise_level is not None, dim)[0]


class SobolOnly(wb.Optimizer):
    _n_anchors = 0  # the subclass hook of the shared BO step: no local candidates


def _gp(kernel, seed, hyperprior=None, noise_bounds=(1e-6, 1.0), fit_mean=False) -> GP:
    return GP(
        kernel,
        noise=max(1e-4, noise_bounds[0]),
        optimizer="ml2",
        normalize_y=True,
        n_restarts=2,
        fit_noise=True,
        noise_bounds=noise_bounds,
        seed=seed,
        hyperprior=hyperprior,
        fit_mean=fit_mean,
    )


def optimizer(arm: str, space, seed: int) -> wb.Optimizer:
    d = space.dim
    amplitude = Constant(1.0, bounds=(1e-2, 1e2))

    def matern(upper: float = 1e2):
        return amplitude * Matern(2.5, np.full(d, 0.3), bounds=(1e-2, upper))

    models = {
        "default": lambda: None,
        "ml2": lambda: ml2_model(d, seed),
        "cap2": lambda: _gp(matern(2.0), seed),
        "map": lambda: _gp(matern(), seed, DIMENSION_SCALED),
        "map-log": lambda: _gp(matern(), seed, DIMENSION_SCALED_LOG),
        "optuna-prior": lambda: _gp(matern(), seed, OptunaPrior()),
        "botorch-model": lambda: _gp(
            RBF(np.full(d, DIMENSION_SCALED.lengthscale_mode(d)), bounds=(0.025, 1e2)),
            seed,
            DIMENSION_SCALED,
            noise_bounds=(1e-4, 1.0),
        ),
        "botorch-model-mean": lambda: _gp(
            RBF(np.full(d, DIMENSION_SCALED.lengthscale_mode(d)), bounds=(0.025, 1e2)),
            seed,
            DIMENSION_SCALED,
            noise_bounds=(1e-4, 1.0),
            fit_mean=True,
        ),
        "map-mean": lambda: _gp(matern(), seed, DIMENSION_SCALED, fit_mean=True),
        "mean": lambda: _gp(matern(), seed, fit_mean=True),
        "botorch-model-log": lambda: _gp(
            RBF(np.full(d, math.exp(math.sqrt(2) + 0.5 * math.log(d) - 3.0)), bounds=(1e-2, 1e2)),
            seed,
            DIMENSION_SCALED_LOG,
        ),
        "rbf": lambda: _gp(amplitude * RBF(np.full(d, 0.3), bounds=(1e-2, 1e2)), seed),
        "sobol-only": lambda: ml2_model(d, seed),  # session 8: with the ML-II default of then
    }
    if arm not in models:
        raise SystemExit(f"unknown arm {arm!r}; arms: {', '.join(models)}")
    model = models[arm]()
    cls = SobolOnly if arm == "sobol-only" else wb.Optimizer
    return cls(space, seed=seed) if model is None else cls(space, model=model, seed=seed)


class Embedded:
    """``fn`` on its own coordinates of a D-dimensional box; the other coordinates are irrelevant."""

    def __init__(self, fn, D: int):
        self.fn = fn
        self.perm = np.random.default_rng(123).permutation(D)
        bounds = [(0.0, 1.0)] * D
        for j, bound in enumerate(fn.bounds):
            bounds[self.perm[j]] = tuple(bound)
        self.bounds, self.optimum_value = bounds, fn.optimum_value

    def __call__(self, x):
        return self.fn(np.asarray(x)[self.perm[: self.fn.dim]])


def make(name: str):
    if name.startswith("emb:"):
        _, base, D = name.split(":")
        return Embedded(problem(base), int(D))
    return problem(name)


def run(arm: str, name: str, runs: int) -> dict:
    fn = make(name)
    regrets = []
    for seed in range(runs):
        space = wb.Space.box(fn.bounds)
        opt = optimizer(arm, space, seed)
        values = []
        for _ in range(max(BUDGETS)):
            p = opt.ask()
            value = float(fn(np.array([p[k] for k in space.names])))
            opt.tell(p, value)
            values.append(value)
        best = np.minimum.accumulate(values) - fn.optimum_value
        regrets.append([float(best[b - 1]) for b in BUDGETS])
    regrets = np.array(regrets)
    return {
        "median": {str(b): float(np.median(regrets[:, j])) for j, b in enumerate(BUDGETS)},
        "per_seed_final": regrets[:, -1].tolist(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arm", action="append", required=True)
    parser.add_argument("--problem", action="append", required=True)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    args = parser.parse_args()
    results = {}
    for arm in args.arm:
        for name in args.problem:
            entry = run(arm, name, args.runs)
            results.setdefault(arm, {})[name] = entry
            medians = " / ".join(f"{v:.3g}" for v in entry["median"].values())
            print(f"{arm:14s} {name:18s} median after {BUDGETS}: {medians}", flush=True)
    if args.out is not None:
        args.out.write_text(json.dumps({"runs": args.runs, "budgets": BUDGETS, "results": results}, indent=2))


if __name__ == "__main__":
    main()
